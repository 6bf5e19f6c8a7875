package livestreams

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
)

// tokenStanding is what the fake store says of a token.
type tokenStanding struct {
	p   domain.Principal
	exp *time.Time
	err error
}

// fakeCreds is the token store as Revalidate reads it, counting the reads.
type fakeCreds struct {
	mu     sync.Mutex
	tokens map[string]tokenStanding
	reads  int
}

func (f *fakeCreds) Revalidate(_ context.Context, p domain.Principal) (domain.Principal, *time.Time, error) {
	tokenID := p.TokenID
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	t, ok := f.tokens[tokenID]
	if !ok {
		return domain.Principal{}, nil, errs.E(errs.Unauthorized, "invalid or expired token")
	}
	return t.p, t.exp, t.err
}

func (f *fakeCreds) set(tokenID string, t tokenStanding) {
	f.mu.Lock()
	f.tokens[tokenID] = t
	f.mu.Unlock()
}

func (f *fakeCreds) drop(tokenID string) {
	f.mu.Lock()
	delete(f.tokens, tokenID)
	f.mu.Unlock()
}

func (f *fakeCreds) readCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

type fixedLimit int

func (l fixedLimit) Int(_ context.Context, key string) (int, error) {
	if key != settings.KeyMaxStreamsPerUser {
		return 0, errs.E(errs.Internal, "unexpected key %s", key)
	}
	return int(l), nil
}

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	t     *testing.T
	reg   *Registry
	creds *fakeCreds
	clock *testClock
}

func newFixture(t *testing.T, limit int) *fixture {
	creds := &fakeCreds{tokens: map[string]tokenStanding{}}
	clock := &testClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return &fixture{t: t, reg: New(creds, fixedLimit(limit), clock), creds: creds, clock: clock}
}

// principal makes userID's token tokenID valid in the store and returns
// the caller it authenticates.
func (f *fixture) principal(userID, tokenID string, role domain.Role, exp *time.Time) domain.Principal {
	p := domain.Principal{User: domain.User{ID: userID, Role: role}, TokenID: tokenID}
	f.creds.set(tokenID, tokenStanding{p: p, exp: exp})
	return p
}

// opened is a registered stream and the reasons it was closed with.
type opened struct {
	st     *Stream
	closed chan string
}

func (f *fixture) open(p domain.Principal) (opened, error) {
	o := opened{closed: make(chan string, 1)}
	st, err := f.reg.Open(context.Background(), p, func(reason string) { o.closed <- reason })
	o.st = st
	return o, err
}

func (f *fixture) mustOpen(p domain.Principal) opened {
	f.t.Helper()
	o, err := f.open(p)
	if err != nil {
		f.t.Fatalf("open for %s/%s: %v", p.User.ID, p.TokenID, err)
	}
	return o
}

// wantClosed waits (with a generous bound) for the register to call the
// stream's close with reason.
func (o opened) wantClosed(t *testing.T, reason string) {
	t.Helper()
	select {
	case got := <-o.closed:
		if got != reason {
			t.Fatalf("closed with %q, want %q", got, reason)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("stream not closed (want %q)", reason)
	}
}

// wantOpen checks the stream is still registered: the register detaches a
// stream in the same step that decides to close it, so a registered one
// has not been and will not be closed by that decision.
func (f *fixture) wantOpen(o opened) {
	f.t.Helper()
	f.reg.mu.Lock()
	_, ok := f.reg.byUser[o.st.userID][o.st]
	f.reg.mu.Unlock()
	if !ok {
		f.t.Fatalf("stream of %s/%s was closed", o.st.userID, o.st.tokenID)
	}
}

func TestTheCapRefusesPastTheLimitAndAReleaseFreesASlot(t *testing.T) {
	f := newFixture(t, 2)
	ann := f.principal("ann", "ann-1", domain.RoleMember, nil)
	a := f.mustOpen(ann)
	f.mustOpen(ann)
	_, err := f.open(ann)
	if errs.CodeOf(err) != errs.RateLimited {
		t.Fatalf("third stream: %v, want rate_limited", err)
	}
	// The cap is per account: someone else is not refused for ann's streams.
	f.mustOpen(f.principal("bob", "bob-1", domain.RoleMember, nil))

	a.st.Release()
	a.st.Release() // twice is harmless, and frees one slot only
	f.mustOpen(ann)
	if _, err := f.open(ann); errs.CodeOf(err) != errs.RateLimited {
		t.Fatalf("after one release and one reopen: %v, want rate_limited", err)
	}
}

func TestATokenCloseEndsOnlyThatTokensStreams(t *testing.T) {
	f := newFixture(t, 10)
	laptop := f.principal("ann", "ann-laptop", domain.RoleMember, nil)
	script := f.principal("ann", "ann-script", domain.RoleMember, nil)
	a1, a2 := f.mustOpen(laptop), f.mustOpen(laptop)
	s := f.mustOpen(script)

	if n := f.reg.CloseToken("ann", "ann-laptop", "token revoked"); n != 2 {
		t.Fatalf("closed %d streams, want 2", n)
	}
	a1.wantClosed(t, "token revoked")
	a2.wantClosed(t, "token revoked")
	f.wantOpen(s)
	// A token id names a stream only together with its user.
	if n := f.reg.CloseToken("bob", "ann-script", "token revoked"); n != 0 {
		t.Fatalf("another user's close reached %d of ann's streams", n)
	}
	f.wantOpen(s)
	// A holder releasing a stream the register already closed changes nothing.
	a1.st.Release()
	f.wantOpen(s)
}

func TestAUserCloseEndsEveryStreamOfThatUserOnly(t *testing.T) {
	f := newFixture(t, 2)
	a := f.mustOpen(f.principal("ann", "ann-1", domain.RoleAdmin, nil))
	b := f.mustOpen(f.principal("ann", "ann-2", domain.RoleAdmin, nil))
	other := f.mustOpen(f.principal("bob", "bob-1", domain.RoleMember, nil))

	if n := f.reg.CloseUser("ann", "account disabled"); n != 2 {
		t.Fatalf("closed %d, want 2", n)
	}
	a.wantClosed(t, "account disabled")
	b.wantClosed(t, "account disabled")
	f.wantOpen(other)
	if n := f.reg.CloseUser("ann", "again"); n != 0 {
		t.Fatalf("closed %d streams twice", n)
	}
	// Their slots are free at once.
	again := f.principal("ann", "ann-3", domain.RoleAdmin, nil)
	f.mustOpen(again)
	f.mustOpen(again)
}

func TestOpenRefusesACredentialChangedSinceItAuthenticated(t *testing.T) {
	f := newFixture(t, 1)
	// The token was revoked between the caller's authentication and the
	// registration: the store says so, and the slot is not kept.
	gone := domain.Principal{User: domain.User{ID: "ann", Role: domain.RoleMember}, TokenID: "ann-gone"}
	if _, err := f.open(gone); errs.CodeOf(err) != errs.Unauthorized {
		t.Fatalf("revoked token: %v, want unauthorized", err)
	}
	// Demoted in between: the admin caller must open again as a member.
	admin := f.principal("ann", "ann-1", domain.RoleAdmin, nil)
	f.principal("ann", "ann-1", domain.RoleMember, nil)
	if _, err := f.open(admin); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("demoted caller: %v, want conflict", err)
	}
	// Neither refusal held the single slot.
	f.mustOpen(f.principal("ann", "ann-1", domain.RoleMember, nil))
	// A store that cannot answer refuses with its own code.
	f.creds.set("ann-2", tokenStanding{err: errs.E(errs.Unavailable, "credential store unavailable")})
	if _, err := f.open(domain.Principal{User: domain.User{ID: "bob"}, TokenID: "ann-2"}); errs.CodeOf(err) != errs.Unavailable {
		t.Fatalf("store down: %v, want unavailable", err)
	}
}

func TestSweepClosesStreamsWhoseTokenExpired(t *testing.T) {
	f := newFixture(t, 10)
	ctx := context.Background()
	inAnHour := f.clock.Now().Add(time.Hour)
	pat := f.mustOpen(f.principal("ann", "ann-pat", domain.RoleMember, &inAnHour))
	session := f.mustOpen(f.principal("ann", "ann-session", domain.RoleMember, &inAnHour))
	forever := f.mustOpen(f.principal("ann", "ann-forever", domain.RoleMember, nil))

	reads := f.creds.readCount()
	if n, err := f.reg.Sweep(ctx); n != 0 || err != nil {
		t.Fatalf("early sweep closed %d: %v", n, err)
	}
	if f.creds.readCount() != reads {
		t.Fatal("a sweep read the store for tokens not yet due")
	}

	f.clock.add(2 * time.Hour)
	// The personal token expired; the session token was used elsewhere
	// meanwhile and slid forward; the third never expires.
	f.creds.drop("ann-pat")
	slid := f.clock.Now().Add(30 * 24 * time.Hour)
	f.principal("ann", "ann-session", domain.RoleMember, &slid)
	if n, err := f.reg.Sweep(ctx); n != 1 || err != nil {
		t.Fatalf("sweep closed %d: %v", n, err)
	}
	pat.wantClosed(t, ReasonTokenExpired)
	f.wantOpen(session)
	f.wantOpen(forever)
	// The slid expiry is remembered: the next sweep reads nothing.
	reads = f.creds.readCount()
	if n, err := f.reg.Sweep(ctx); n != 0 || err != nil || f.creds.readCount() != reads {
		t.Fatalf("second sweep closed %d, read %d times: %v", n, f.creds.readCount()-reads, err)
	}
}

func TestSweepKeepsStreamsWhenTheStoreCannotAnswer(t *testing.T) {
	f := newFixture(t, 10)
	soon := f.clock.Now().Add(time.Minute)
	s := f.mustOpen(f.principal("ann", "ann-1", domain.RoleAdmin, &soon))
	f.clock.add(time.Hour)
	f.creds.set("ann-1", tokenStanding{err: errs.E(errs.Unavailable, "credential store unavailable")})
	if n, err := f.reg.Sweep(context.Background()); n != 0 || errs.CodeOf(err) != errs.Unavailable {
		t.Fatalf("sweep with the store down closed %d: %v", n, err)
	}
	f.wantOpen(s)
	// Back up, and the admin was demoted meanwhile without a word: the
	// sweep that re-reads the token notices.
	later := f.clock.Now().Add(time.Hour)
	f.principal("ann", "ann-1", domain.RoleMember, &later)
	if n, err := f.reg.Sweep(context.Background()); n != 1 || err != nil {
		t.Fatalf("sweep closed %d: %v", n, err)
	}
	s.wantClosed(t, ReasonRoleChanged)
}
