package domain

import (
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/errs"
)

func TestCheckAdminRemains(t *testing.T) {
	admin := User{Username: "a", Role: RoleAdmin}
	boot := User{Username: "b", Role: RoleAdmin, Bootstrap: true}
	member := User{Username: "m", Role: RoleMember}
	demoted := func(u User) *User { u.Role = RoleMember; return &u }
	disabled := func(u User) *User { u.Disabled = true; return &u }
	promoted := func(u User) *User { u.Role = RoleAdmin; return &u }
	cases := []struct {
		name   string
		before User
		after  *User
		others int
		ok     bool
	}{
		{"demote the last admin", admin, demoted(admin), 0, false},
		{"disable the last admin", admin, disabled(admin), 0, false},
		{"delete the last admin", admin, nil, 0, false},
		{"demote with another admin left", admin, demoted(admin), 1, true},
		{"delete with another admin left", admin, nil, 2, true},
		{"demote the bootstrap admin", boot, demoted(boot), 5, false},
		{"disable the bootstrap admin", boot, disabled(boot), 5, false},
		{"delete the bootstrap admin", boot, nil, 5, false},
		{"change the bootstrap admin's password", boot, &boot, 0, true},
		{"disable a member", member, disabled(member), 0, true},
		{"delete a member", member, nil, 0, true},
		{"promote a member", member, promoted(member), 0, true},
	}
	for _, c := range cases {
		err := CheckAdminRemains(c.before, c.after, c.others)
		if c.ok != (err == nil) || (err != nil && errs.CodeOf(err) != errs.Conflict) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestUsernamesAndPasswords(t *testing.T) {
	for _, ok := range []string{"ann", "ann.lee", "a_b-c@example.com", "Zoë"} {
		if err := ValidateUsername(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "x/y", string(make([]byte, 65))} {
		if err := ValidateUsername(bad); errs.FieldsOf(err)["username"] == "" {
			t.Errorf("%q accepted", bad)
		}
	}
	// One account per name once case and compatibility spellings fold.
	for _, same := range [][2]string{{"ａlice", "alice"}, {"Alice", "ALICE"}, {"Straße", "STRASSE"}, {"ǅemal", "ǆemal"}, {"ﬁne", "FINE"}} {
		if UsernameKey(same[0]) != UsernameKey(same[1]) {
			t.Errorf("%q and %q are two keys: %q, %q", same[0], same[1], UsernameKey(same[0]), UsernameKey(same[1]))
		}
	}
	if UsernameKey("alice") == UsernameKey("alicia") || NormalizeUsername("ａlice") != "alice" || NormalizeUsername("Zoë") != "Zoë" {
		t.Error("UsernameKey or NormalizeUsername folds too much")
	}
	if ValidatePassword("1234567") == nil || ValidatePassword("12345678") != nil || ValidatePassword(string(make([]byte, 300))) == nil {
		t.Error("password bounds")
	}
	if !RevokesTokens(User{}, User{Disabled: true}) || RevokesTokens(User{Disabled: true}, User{Disabled: true}) {
		t.Error("RevokesTokens")
	}
}

func TestTokenLifetimes(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tok := Token{Kind: TokenSession, CreatedAt: created}
	if got := tok.SlidExpiry(created.Add(time.Hour)); !got.Equal(created.Add(time.Hour + SessionIdle)) {
		t.Errorf("slide = %v", got)
	}
	if got := tok.SlidExpiry(created.Add(80 * 24 * time.Hour)); !got.Equal(created.Add(SessionCap)) {
		t.Errorf("slide past the cap = %v", got)
	}
	exp := created.Add(time.Hour)
	tok.ExpiresAt = &exp
	if tok.Expired(created) || !tok.Expired(exp) {
		t.Error("Expired")
	}
	if !(Token{Kind: TokenLaunch}).Slides() || (Token{Kind: TokenPersonal}).Slides() || (Token{Kind: TokenStatic}).Slides() {
		t.Error("Slides")
	}
	if e, err := PersonalTokenExpiry(created, 0); e != nil || err != nil {
		t.Error("0 days must never expire")
	}
	if e, _ := PersonalTokenExpiry(created, 2); !e.Equal(created.Add(48 * time.Hour)) {
		t.Errorf("2 days = %v", e)
	}
	for _, bad := range []int{-1, MaxPersonalTokenDays + 1} {
		if _, err := PersonalTokenExpiry(created, bad); errs.FieldsOf(err)["expires_in_days"] == "" {
			t.Errorf("%d accepted", bad)
		}
	}
	if err := (Principal{User: User{Role: RoleMember}}).RequireAdmin(); errs.CodeOf(err) != errs.Forbidden {
		t.Error("RequireAdmin")
	}
}

func TestSettingNormalize(t *testing.T) {
	i := SettingDef{Key: "n", Kind: SettingInt, Min: 1, Max: 32}
	b := SettingDef{Key: "b", Kind: SettingBool}
	u := SettingDef{Key: "u", Kind: SettingURL, Schemes: []string{"http", "socks5"}}
	s := SettingDef{Key: "s", Kind: SettingString}
	x := SettingDef{Key: "x", Kind: SettingText}
	ok := []struct {
		d        SettingDef
		in, want string
	}{
		{i, "", ""}, {i, " 7 ", "7"}, {i, "32", "32"}, {i, "1", "1"},
		{b, "TRUE", "true"}, {b, "0", "false"},
		{u, "socks5://h:1080", "socks5://h:1080"}, {u, "HTTP://u:p@h:8080/", "http://u:p@h:8080/"},
		{s, "one line", "one line"}, {x, "two\nlines", "two\nlines"},
	}
	for _, c := range ok {
		got, err := c.d.Normalize(c.in)
		if err != nil || got != c.want {
			t.Errorf("%s(%q) = %q %v, want %q", c.d.Key, c.in, got, err, c.want)
		}
	}
	bad := []struct {
		d  SettingDef
		in string
	}{
		{i, "0"}, {i, "33"}, {i, "x"}, {i, "1e3"}, {b, "yes"}, {u, "ftp://h"}, {u, "h:80"}, {u, "http://"},
		{s, "two\nlines"}, {x, string(make([]byte, MaxSettingLen+1))},
	}
	for _, c := range bad {
		if _, err := c.d.Normalize(c.in); errs.FieldsOf(err)["value"] == "" {
			t.Errorf("%s(%.20q) accepted: %v", c.d.Key, c.in, err)
		}
	}
}
