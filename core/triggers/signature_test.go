package triggers

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/errs"
)

const secret = "ags_wh_test-secret"

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// reference signs the way a sender would, written out independently of Sign.
func reference(secret, ts, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "." + body))
	return hex.EncodeToString(m.Sum(nil))
}

func TestVerifyAcceptsASignedDelivery(t *testing.T) {
	ts := strconv.FormatInt(now.Unix(), 10)
	body := `{"build":"failed"}`
	sig := reference(secret, ts, body)
	if Sign(secret, ts, []byte(body)) != sig {
		t.Fatal("Sign differs from HMAC-SHA256(secret, ts + \".\" + body)")
	}
	for _, header := range []string{sig, "sha256=" + sig, "SHA256=" + strings.ToUpper(sig), " sha256=" + sig + " "} {
		if err := Verify(secret, ts, header, []byte(body), now); err != nil {
			t.Errorf("signature header %q refused: %v", header, err)
		}
	}
	// Within the window on either side.
	for _, skew := range []time.Duration{-5 * time.Minute, 5 * time.Minute, -time.Second} {
		ts := strconv.FormatInt(now.Add(skew).Unix(), 10)
		if err := Verify(secret, ts, reference(secret, ts, body), []byte(body), now); err != nil {
			t.Errorf("a timestamp %s off refused: %v", skew, err)
		}
	}
}

func TestVerifyRefusesWithReasons(t *testing.T) {
	ts := strconv.FormatInt(now.Unix(), 10)
	good := reference(secret, ts, "payload")
	stale := strconv.FormatInt(now.Add(-5*time.Minute-time.Second).Unix(), 10)
	early := strconv.FormatInt(now.Add(5*time.Minute+time.Second).Unix(), 10)
	for name, c := range map[string]struct{ secret, ts, sig, body, reason string }{
		"wrong secret":     {"other", ts, good, "payload", "does not match"},
		"body changed":     {secret, ts, good, "payload!", "does not match"},
		"timestamp moved":  {secret, strconv.FormatInt(now.Unix()+1, 10), good, "payload", "does not match"},
		"stale":            {secret, stale, reference(secret, stale, "payload"), "payload", "more than 5 minutes"},
		"from the future":  {secret, early, reference(secret, early, "payload"), "payload", "more than 5 minutes"},
		"no timestamp":     {secret, "", good, "payload", "UNIX seconds"},
		"timestamp in ms":  {secret, strconv.FormatInt(now.UnixMilli(), 10), good, "payload", "more than 5 minutes"},
		"no signature":     {secret, ts, "", "payload", "hex HMAC-SHA256"},
		"not hex":          {secret, ts, "sha256=zz" + good[2:], "payload", "hex HMAC-SHA256"},
		"truncated":        {secret, ts, good[:40], "payload", "hex HMAC-SHA256"},
		"another hash":     {secret, ts, "sha1=" + good, "payload", "hex HMAC-SHA256"},
		"no secret stored": {"", ts, reference("", ts, "payload"), "payload", "does not match"},
	} {
		err := Verify(c.secret, c.ts, c.sig, []byte(c.body), now)
		if errs.CodeOf(err) != errs.Unauthorized || !strings.Contains(errs.MessageOf(err), c.reason) {
			t.Errorf("%s: %v, want unauthorized saying %q", name, err, c.reason)
		}
	}
}

// FuzzVerify holds the check to its contract for any delivery: it accepts
// exactly a fresh timestamp with the matching HMAC, and never panics.
func FuzzVerify(f *testing.F) {
	f.Add("ags_wh_x", "1764590400", "sha256=00", []byte("{}"), int64(0))
	f.Add("k", "1764590400", "", []byte{0xff, 0}, int64(299))
	f.Add("k", "-1", "sha256=", []byte(""), int64(-301))
	f.Fuzz(func(t *testing.T, secret, ts, sig string, body []byte, skew int64) {
		at := time.Unix(1764590400+skew, 0)
		err := Verify(secret, ts, sig, body, at)
		if err != nil && errs.CodeOf(err) != errs.Unauthorized {
			t.Fatalf("refused with %v, want unauthorized", err)
		}
		if err == nil {
			// Accepted: it must really be signed, and fresh.
			n, perr := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
			s := strings.TrimSpace(sig)
			if len(s) >= 7 && strings.EqualFold(s[:7], "sha256=") {
				s = s[7:]
			}
			if secret == "" || perr != nil || !strings.EqualFold(s, reference(secret, strings.TrimSpace(ts), string(body))) ||
				at.Sub(time.Unix(n, 0)).Abs() > 5*time.Minute {
				t.Fatalf("accepted an unsigned or stale delivery: secret %q ts %q sig %q", secret, ts, sig)
			}
		}
		// The genuine signature of the same delivery passes when fresh.
		if secret != "" {
			fresh := strconv.FormatInt(at.Unix(), 10)
			if err := Verify(secret, fresh, Sign(secret, fresh, body), body, at); err != nil {
				t.Fatalf("a genuine fresh signature refused: %v", err)
			}
		}
	})
}
