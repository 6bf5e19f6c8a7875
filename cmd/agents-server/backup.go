package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/agents-server/agents-server/workbench"
)

// runBackup is "agents-server backup --to FILE [server flags]": a
// consistent copy of the SQLite store of --data-dir, taken while the
// server runs. Exit 1 when it failed, 2 for bad flags.
func runBackup(args []string, stdout, stderr io.Writer) int {
	var to string
	cfg, err := parseCommandFlags("backup", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&to, "to", "", "the new file to write the backup to")
	})
	if err != nil {
		return flagExit(err, stderr)
	}
	if err := workbench.Backup(context.Background(), workbench.Options{DataDir: cfg.DataDir, DatabaseURL: cfg.DatabaseURL}, to); err != nil {
		fmt.Fprintln(stderr, "agents-server: backup:", workbench.Describe(err))
		return 1
	}
	fmt.Fprintln(stdout, "backed up", cfg.DataDir, "to", to)
	return 0
}

// runRestore is "agents-server restore --from FILE [server flags]": the
// backup put in place as --data-dir's store, refused for a data directory
// that has one, or without the key the backup was sealed with.
func runRestore(args []string, stdout, stderr io.Writer) int {
	var from string
	cfg, err := parseCommandFlags("restore", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&from, "from", "", "the backup file to restore")
	})
	if err != nil {
		return flagExit(err, stderr)
	}
	key, err := loadSecretKey(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "agents-server:", err)
		return 2
	}
	log, _ := newLogger("warn", "text", stderr)
	o := workbench.Options{DataDir: cfg.DataDir, DatabaseURL: cfg.DatabaseURL, SecretKey: key, Logger: log}
	if err := workbench.Restore(context.Background(), o, from); err != nil {
		fmt.Fprintln(stderr, "agents-server: restore:", workbench.Describe(err))
		return 1
	}
	fmt.Fprintln(stdout, "restored", from, "into", cfg.DataDir)
	return 0
}

// parseCommandFlags reads the server's flags for a command that shares
// them (backup and restore find the store, health the address, as the
// server does) and the command's own.
func parseCommandFlags(name string, args []string, stderr io.Writer, own func(*flag.FlagSet)) (config, error) {
	return parseConfigAs("agents-server "+name, args, stderr, own)
}

// flagExit is a command's exit for a flag error: 0 after -h, else 2.
func flagExit(err error, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "agents-server:", err)
	return 2
}
