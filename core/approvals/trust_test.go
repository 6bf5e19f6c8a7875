package approvals

import "testing"

func TestTrustStoreMatchesExactly(t *testing.T) {
	ts := NewTrustStore()
	ts.Grant("s1", "r1", "once", "ls")
	if ts.Trusted("s1", "r1", "ls") {
		t.Fatal("scope once trusted the command for later")
	}
	ts.Grant("s1", "r1", "same", "go test ./...")
	if !ts.Trusted("s1", "r2", "go test ./...") || ts.Trusted("s1", "r2", "go test ./... && rm -rf /") ||
		ts.Trusted("s2", "r3", "go test ./...") {
		t.Fatal("scope same must match one exact command in one session")
	}
	ts.Grant("s2", "r3", "all", "anything")
	if !ts.Trusted("s2", "r4", "rm -rf /tmp/x") || ts.Trusted("s1", "r1", "rm -rf /tmp/x") {
		t.Fatal("scope all is per session")
	}
	ts.Forget("s2")
	if ts.Trusted("s2", "r4", "anything") {
		t.Fatal("forgotten trust still holds")
	}
}

func TestATriggeredRunKeepsItsGrantsToItself(t *testing.T) {
	ts := NewTrustStore()
	ts.Grant("s1", "person", "all", "")
	ts.Triggered("cron")
	if ts.Trusted("s1", "cron", "rm -rf /") {
		t.Fatal("a triggered run used the session's standing trust")
	}
	ts.Grant("s1", "cron", "same", "make report")
	if !ts.Trusted("s1", "cron", "make report") {
		t.Fatal("a triggered run's own grant does not hold within the run")
	}
	ts.Forget("s1")
	if ts.Trusted("s1", "later", "make report") || !ts.Trusted("s1", "cron", "make report") {
		t.Fatal("a triggered run's grant leaked into the session, or the session's forgetting reached the run")
	}
}
