// Command mount is a Go web service with its own sign-in that adds the
// workbench — its API, its live sockets and its web UI — to its pages
// under /agents. The service's signed-in user is the workbench's user:
// the workbench never asks them for a password.
//
//	go run ./examples/mount --users 'ada:change-me:admin,grace:change-me'
//	open http://127.0.0.1:8080/ and sign in
//
// (The web UI is embedded when it was built first: go tool task build.)
package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/agents-server/agents-server/workbench"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mount", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	dataDir := fs.String("data-dir", filepath.Join(os.TempDir(), "agents-mount-example"), "where the workbench keeps its data")
	users := fs.String("users", "admin:admin:admin", "the service's accounts: name:password[:admin], comma-separated")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	accounts, err := parseUsers(*users)
	if err != nil {
		fmt.Fprintln(stderr, "mount:", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	wb, err := workbench.Open(context.Background(), workbench.Options{DataDir: *dataDir, Logger: log})
	if err != nil {
		fmt.Fprintln(stderr, "mount:", workbench.Describe(err))
		return 1
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		wb.Close()
		fmt.Fprintln(stderr, "mount:", err)
		return 1
	}
	srv := &http.Server{Handler: newService(wb, accounts), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "mount example ready: http://%s/ (the workbench is under /agents/)\n", ln.Addr())
	go func() {
		signals := make(chan os.Signal, 1)
		signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
		<-signals
		wb.Drain() // live runs finish, sockets close
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "mount:", err)
	}
	if err := wb.Close(); err != nil {
		fmt.Fprintln(stderr, "mount:", err)
		return 1
	}
	return 0
}

// account is one of the service's users.
type account struct {
	password string
	admin    bool
}

func parseUsers(spec string) (map[string]account, error) {
	out := map[string]account{}
	for _, u := range strings.Split(spec, ",") {
		parts := strings.Split(strings.TrimSpace(u), ":")
		if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
			return nil, fmt.Errorf("--users: %q is not name:password[:admin]", u)
		}
		out[parts[0]] = account{password: parts[1], admin: len(parts) > 2 && parts[2] == "admin"}
	}
	return out, nil
}

// service is the host program: its pages, its sign-in, and the workbench
// mounted at /agents.
type service struct {
	accounts map[string]account
	key      []byte // signs the session cookie
}

const cookieName = "example_session"

func newService(wb *workbench.Workbench, accounts map[string]account) http.Handler {
	s := &service{accounts: accounts, key: make([]byte, 32)}
	_, _ = rand.Read(s.key)
	agents := wb.Handler(workbench.MountOptions{Prefix: "/agents", SignIn: s.identity})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.home)
	mux.HandleFunc("GET /login", s.loginForm)
	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("POST /logout", s.logout)
	mux.Handle("/agents/", s.pagesNeedSignIn(agents))
	return mux
}

// identity is the workbench's SignIn hook: the service's session cookie,
// checked, names the user.
func (s *service) identity(r *http.Request) (workbench.Identity, error) {
	name, ok := s.signedIn(r)
	if !ok {
		return workbench.Identity{}, errors.New("sign in to the service first")
	}
	return workbench.Identity{Username: name, Admin: s.accounts[name].admin}, nil
}

// pagesNeedSignIn sends a browser asking for a page of the UI to the
// service's sign-in instead of the workbench's 401; API calls and sockets
// get the 401 from the hook.
func (s *service) pagesNeedSignIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, ok := s.signedIn(r)
		page := r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/html")
		if !ok && page && r.Header.Get("Authorization") == "" {
			http.Redirect(w, r, "/login?next="+r.URL.EscapedPath(), http.StatusSeeOther)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *service) home(w http.ResponseWriter, r *http.Request) {
	name, ok := s.signedIn(r)
	if !ok {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	page(w, "Home", fmt.Sprintf(`<p>Signed in as <b>%s</b>.</p><p><a href="/agents/">Open the agent workbench</a></p>
<form method="post" action="/logout"><button>Sign out</button></form>`, html.EscapeString(name)))
}

func (s *service) loginForm(w http.ResponseWriter, r *http.Request) {
	page(w, "Sign in", fmt.Sprintf(`<form method="post" action="/login">
<input type="hidden" name="next" value="%s">
<label>Name <input name="user" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button>Sign in</button></form>`, html.EscapeString(r.URL.Query().Get("next"))))
}

func (s *service) login(w http.ResponseWriter, r *http.Request) {
	name := r.FormValue("user")
	acc, ok := s.accounts[name]
	if !ok || subtle.ConstantTimeCompare([]byte(acc.password), []byte(r.FormValue("password"))) != 1 {
		w.WriteHeader(http.StatusUnauthorized)
		page(w, "Sign in", `<p>Wrong name or password. <a href="/login">Try again</a></p>`)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.sign(name), Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, localPath(r.FormValue("next")), http.StatusSeeOther)
}

// localPath is where a sign-in may send the browser next: a path on this
// service, or "/" when next is anything else. It must start with one
// slash: "//host" is another site, and so is "/\host", since browsers
// read a backslash as a slash (and drop tabs and newlines, so no control
// character passes either); the same holds for the path it decodes to.
func localPath(next string) string {
	u, err := url.Parse(next)
	switch {
	case err != nil, !strings.HasPrefix(next, "/"), strings.HasPrefix(next, "//"),
		strings.ContainsRune(next, '\\'), strings.ContainsFunc(next, unicode.IsControl),
		u.Host != "", strings.HasPrefix(u.Path, "//"), strings.ContainsRune(u.Path, '\\'):
		return "/"
	}
	return next
}

func (s *service) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// sign makes the cookie value: the name and its HMAC.
func (s *service) sign(name string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(name))
	return base64.RawURLEncoding.EncodeToString([]byte(name)) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// signedIn reads and checks the session cookie.
func (s *service) signedIn(r *http.Request) (string, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return "", false
	}
	enc, _, ok := strings.Cut(c.Value, ".")
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if !ok || err != nil || !hmac.Equal([]byte(c.Value), []byte(s.sign(string(raw)))) {
		return "", false
	}
	_, known := s.accounts[string(raw)]
	return string(raw), known
}

func page(w http.ResponseWriter, title, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>%s · mount example</title></head>
<body><h1>%s</h1>%s</body></html>`, title, title, body)
}
