// Command e2b-double runs the local E2B-compatible service the tests use
// (adapters/sandbox/e2b/e2bdouble) as a program, for the browser suite: it
// prints one line, "e2b-double ready api=… proxy=… domain=… ca=…", and
// serves until it is stopped. A server reaches its sandboxes with
// HTTPS_PROXY set to the proxy and SSL_CERT_FILE to the CA file. It is a
// test double: its sandboxes are directories and local processes, not
// isolation.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/e2bdouble"
)

func main() {
	e2bdouble.RunHelperIfAsked()
	key := flag.String("api-key", "", "the API key the control plane requires (empty: any)")
	templates := flag.String("templates", "", "comma-separated template ids it knows (empty: any)")
	caFile := flag.String("ca-file", "", "where to write the CA certificate (default: a file in the temp dir)")
	var require headers
	flag.Var(&require, "require-header", "Name=value every call must carry (repeatable), as some compatible services require")
	flag.Parse()
	if err := e2bdouble.Supported(); err != nil {
		fmt.Fprintln(os.Stderr, "e2b-double:", err)
		os.Exit(1)
	}
	o := e2bdouble.Options{APIKey: *key, Log: os.Stderr, RequireHeaders: require}
	if *templates != "" {
		o.Templates = strings.Split(*templates, ",")
	}
	d, err := e2bdouble.New(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2b-double:", err)
		os.Exit(1)
	}
	defer d.Close()
	if *caFile == "" {
		*caFile = filepath.Join(os.TempDir(), fmt.Sprintf("e2b-double-ca-%d.pem", os.Getpid()))
	}
	if err := os.WriteFile(*caFile, d.CACert(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "e2b-double:", err)
		os.Exit(1)
	}
	fmt.Printf("e2b-double ready api=%s proxy=%s domain=%s ca=%s\n", d.APIURL(), d.ProxyURL(), d.Domain(), *caFile)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
}

// headers collects --require-header Name=value flags.
type headers map[string]string

func (h *headers) String() string { return fmt.Sprint(map[string]string(*h)) }

func (h *headers) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want Name=value, got %q", v)
	}
	if *h == nil {
		*h = headers{}
	}
	(*h)[name] = value
	return nil
}
