package runs

import "testing"

func TestTrustStoreMatchesExactly(t *testing.T) {
	ts := NewTrustStore()
	ts.Grant("s1", "once", "ls")
	if ts.Trusted("s1", "ls") {
		t.Fatal("scope once trusted the command for later")
	}
	ts.Grant("s1", "same", "go test ./...")
	if !ts.Trusted("s1", "go test ./...") || ts.Trusted("s1", "go test ./... && rm -rf /") || ts.Trusted("s2", "go test ./...") {
		t.Fatal("scope same must match one exact command in one session")
	}
	ts.Grant("s2", "all", "anything")
	if !ts.Trusted("s2", "rm -rf /tmp/x") || ts.Trusted("s1", "rm -rf /tmp/x") {
		t.Fatal("scope all is per session")
	}
	ts.Forget("s2")
	if ts.Trusted("s2", "anything") {
		t.Fatal("forgotten trust still holds")
	}
}
