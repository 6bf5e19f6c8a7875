// Command oidcop is a real OpenID Provider for tests: zitadel's certified
// OP implementation (github.com/zitadel/oidc/v3/pkg/op) with its example
// server's login page and in-memory storage, listening on loopback, with
// one registered web client and the users its flags name. The agents-server
// tests and browser tests sign in through its own login page.
//
//	oidcop --client-id web --client-secret s3cret \
//	  --redirect-uri http://127.0.0.1:9527/api/v1/auth/oidc/callback \
//	  --users '[{"username":"ann","password":"pw","email":"ann@example.com","email_verified":true,"groups":["admins"]}]'
//
// It prints "oidcop ready: <issuer>" on stdout once it serves. The storage
// wrapper adds what the example storage lacks: the users from the flag, a
// groups claim in the ID token, and the profile and email claims asserted
// into the ID token (as most providers do).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// user is one account of the provider, as the --users flag gives it.
type user struct {
	Username      string `json:"username"`
	Password      string `json:"password"`
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
	// Groups is the groups claim; absent (null): the token has none.
	Groups *[]string `json:"groups"`
}

type redirects []string

func (r *redirects) String() string     { return strings.Join(*r, ",") }
func (r *redirects) Set(v string) error { *r = append(*r, v); return nil }

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "oidcop:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("oidcop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address (loopback)")
	issuer := fs.String("issuer", "", "the issuer URL (default http://<the address it listens on>)")
	clientID := fs.String("client-id", "web", "the registered web client's id")
	clientSecret := fs.String("client-secret", "secret", "the registered web client's secret (a test peer's: flags are fine here)")
	usersJSON := fs.String("users", "[]", `the users, JSON: [{"username","password","email","email_verified","groups":[...]}]`)
	var uris redirects
	fs.Var(&uris, "redirect-uri", "a redirect URI the client may use (repeat for more)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var list []user
	if err := json.Unmarshal([]byte(*usersJSON), &list); err != nil {
		return fmt.Errorf("--users: %w", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if *issuer == "" {
		*issuer = "http://" + ln.Addr().String()
	}
	users := userStore{byID: map[string]*storage.User{}}
	groups := map[string][]string{}
	for i, u := range list {
		id := fmt.Sprintf("sub-%d-%s", i+1, u.Username)
		users.byID[id] = &storage.User{ID: id, Username: u.Username, Password: u.Password, Email: u.Email,
			EmailVerified: u.EmailVerified, FirstName: u.Username, PreferredLanguage: language.English}
		if u.Groups != nil {
			groups[id] = *u.Groups
		}
	}
	clients := map[string]*storage.Client{*clientID: storage.WebClient(*clientID, *clientSecret, uris...)}
	st := &claimsStorage{Storage: storage.NewStorageWithClients(users, clients), groups: groups}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	router := exampleop.SetupServer(*issuer, st, log, false)
	srv := &http.Server{Handler: router}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	fmt.Fprintf(stdout, "oidcop ready: %s\n", *issuer)
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// userStore is the example storage's user store over the flag's users.
type userStore struct{ byID map[string]*storage.User }

func (u userStore) GetUserByID(id string) *storage.User { return u.byID[id] }

func (u userStore) GetUserByUsername(name string) *storage.User {
	for _, x := range u.byID {
		if x.Username == name {
			return x
		}
	}
	return nil
}

func (u userStore) ExampleClientID() string { return storage.ServiceUserID }

// claimsStorage is the example storage, asserting the profile and email
// claims into ID tokens and adding each user's groups claim.
type claimsStorage struct {
	*storage.Storage
	groups map[string][]string
}

// GetClientByClientID implements op.Storage: the client asserts the
// userinfo claims into its ID tokens.
func (s *claimsStorage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return claimsClient{c}, nil
}

// SetUserinfoFromRequest implements op.CanSetUserinfoFromRequest: the
// example's claims, plus groups.
func (s *claimsStorage) SetUserinfoFromRequest(ctx context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, info, req, scopes); err != nil {
		return err
	}
	if g, ok := s.groups[req.GetSubject()]; ok {
		info.AppendClaims("groups", g)
	}
	return nil
}

type claimsClient struct{ op.Client }

func (claimsClient) IDTokenUserinfoClaimsAssertion() bool { return true }
