// Command agents-server is the self-hosted AI agent workbench: one binary
// serving the REST API, the WebSocket bus and the embedded web UI.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/agents-server/agents-server/workbench"
)

func main() {
	tuneGC()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the exit, so tests can drive it.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "version":
			fmt.Fprint(stdout, versionText())
			return 0
		case "health":
			return runHealth(args[1:], stdout, stderr)
		case "scripted-model":
			return runScriptedModel(args[1:], stdout, stderr)
		case "backup":
			return runBackup(args[1:], stdout, stderr)
		case "restore":
			return runRestore(args[1:], stdout, stderr)
		case "openapi":
			doc, err := workbench.OpenAPI()
			if err != nil {
				fmt.Fprintln(stderr, "agents-server:", err)
				return 1
			}
			stdout.Write(doc)
			return 0
		}
	}
	cfg, err := parseConfig(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "agents-server:", err)
		return 2
	}
	log, err := newLogger(cfg.LogLevel, cfg.LogFormat, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "agents-server:", err)
		return 2
	}

	// Signals are caught before anything starts, so a signal during start-up
	// is a shutdown rather than a kill halfway through a migration.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)

	a, err := newApp(context.Background(), cfg, log)
	if err != nil {
		fmt.Fprintln(stderr, "agents-server: cannot start:", workbench.Describe(err))
		return 1
	}
	served := make(chan error, 1)
	go func() { served <- a.serve() }()
	log.Info("serving", "url", a.URL(), "store", a.wb.StoreName(), "version", version())
	fmt.Fprintln(stdout, a.ReadyLine())

	select {
	case err := <-served:
		log.Error("server stopped", "err", err)
		a.shutdown()
		return 1
	case sig := <-signals:
		log.Info("draining; send the signal again to exit at once", "signal", sig.String())
	}
	go func() {
		<-signals
		log.Warn("second signal: exiting without finishing the drain")
		os.Exit(1)
	}()
	if err := a.shutdown(); err != nil {
		log.Error("shutdown", "err", err)
		return 1
	}
	log.Info("stopped")
	return 0
}
