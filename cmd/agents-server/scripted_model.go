package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	scripted "github.com/agents-server/agents-server/workbench/scriptedmodel"
)

// runScriptedModel serves the scripted model standalone, so a person can try
// the workbench with no API key: point a provider at it and chat.
func runScriptedModel(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("scripted-model", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:9528", "listen address")
	file := fs.String("scripts", "", `a JSON file of scripts: {"<model>": {"exchanges": [{"when": "...", "steps": [...]}]}}`)
	key := fs.String("api-key", "", "require this API key (default: accept any)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	srv := scripted.New(scripted.Options{APIKey: *key})
	scripts := scripted.DefaultScripts()
	if *file != "" {
		more, err := scripted.LoadScripts(*file)
		if err != nil {
			fmt.Fprintln(stderr, "scripted-model:", err)
			return 1
		}
		for name, sc := range more {
			scripts[name] = sc
		}
	}
	names := make([]string, 0, len(scripts))
	for name, sc := range scripts {
		srv.SetScript(name, sc)
		names = append(names, name)
	}
	slices.Sort(names)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "scripted-model:", err)
		return 1
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "scripted model ready: OpenAI-compatible base URL %s/v1 (responses or chat_completions), Anthropic base URL %s\n", base, base)
	fmt.Fprintf(stdout, "models: %s (any other model name echoes)\n", strings.Join(names, ", "))
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-signals
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(ctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "scripted-model:", err)
		return 1
	}
	return 0
}
