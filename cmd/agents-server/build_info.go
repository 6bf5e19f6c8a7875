package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set at link time by a release (GoReleaser's ldflags):
// -X main.buildVersion=v1.2.3 -X main.buildRevision=<commit> -X main.buildDate=<RFC 3339>.
var (
	buildVersion  = ""
	buildRevision = ""
	buildDate     = ""
)

// version names this build: the link-time version, else the module version
// or VCS revision Go recorded, else "dev".
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return v
		}
		if rev, _ := vcs(bi); len(rev) >= 12 {
			return "dev-" + rev[:12]
		}
	}
	return "dev"
}

// buildFacts are the revision and the build date: the link-time ones, else
// what Go recorded of the checkout (its commit and that commit's time),
// "unknown" for what neither says.
func buildFacts() (revision, date string) {
	revision, date = buildRevision, buildDate
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, at := vcs(bi)
		if revision == "" {
			revision = rev
		}
		if date == "" {
			date = at
		}
	}
	if revision == "" {
		revision = "unknown"
	}
	if date == "" {
		date = "unknown"
	}
	return revision, date
}

// vcs reads the commit and its time from the build's VCS stamp.
func vcs(bi *debug.BuildInfo) (revision, at string) {
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.time":
			at = s.Value
		}
	}
	return revision, at
}

// versionText is what "agents-server version" prints.
func versionText() string {
	rev, date := buildFacts()
	return fmt.Sprintf("agents-server %s\nrevision %s\nbuilt %s\n%s %s/%s\n", version(), rev, date, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
