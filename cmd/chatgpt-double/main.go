// Command chatgpt-double runs the local stand-ins for OpenAI's auth server
// and the Codex backend (adapters/chatgpt/chatgptdouble) as a program, for
// the browser suite: it prints one line, "chatgpt-double ready
// issuer=… backend=…", and serves until it is stopped. Point a server at it
// with --chatgpt-auth-url and --chatgpt-backend-url. Its consent page
// signs in at once as the account the flags name.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agents-server/agents-server/adapters/chatgpt/chatgptdouble"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	email := flag.String("email", "ann@example.com", "the account's email")
	plan := flag.String("plan", "plus", "the account's ChatGPT plan")
	flag.Parse()
	d, err := chatgptdouble.NewAt(*addr, chatgptdouble.Options{Account: chatgptdouble.Account{ID: "acct_double", Email: *email, Plan: *plan}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "chatgpt-double:", err)
		os.Exit(1)
	}
	defer d.Close()
	fmt.Printf("chatgpt-double ready issuer=%s backend=%s\n", d.Issuer(), d.BackendURL())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
}
