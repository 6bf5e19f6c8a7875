package docker

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/errs"
)

func TestFingerprintCoversTheContainerConfig(t *testing.T) {
	base := dockerInstance{
		ProjectID: "p", Generation: 1,
		Env:    map[string]string{"A": "1", "B": "2"},
		Target: dockerTarget{Image: "img", MemoryMB: 0, CPUs: 0},
	}
	seen := map[string]string{fingerprint(base): "base"}
	for name, change := range map[string]func(*dockerInstance){
		"image":      func(in *dockerInstance) { in.Target.Image = "other" },
		"runtime":    func(in *dockerInstance) { in.Target.Runtime = "runsc" },
		"user":       func(in *dockerInstance) { in.Target.User = "agent" },
		"network":    func(in *dockerInstance) { in.Target.Network = "bridge" },
		"memory":     func(in *dockerInstance) { in.Target.MemoryMB = 512 },
		"cpus":       func(in *dockerInstance) { in.Target.CPUs = 1.5 },
		"env value":  func(in *dockerInstance) { in.Env = map[string]string{"A": "1", "B": "3"} },
		"env name":   func(in *dockerInstance) { in.Env = map[string]string{"A": "1", "C": "2"} },
		"generation": func(in *dockerInstance) { in.Generation = 2 },
	} {
		in := base
		change(&in)
		fp := fingerprint(in)
		if other, dup := seen[fp]; dup {
			t.Errorf("%s: same fingerprint as %s", name, other)
		}
		seen[fp] = name
	}

	same := base
	same.Env = map[string]string{"B": "2", "A": "1"}
	same.Target.MemoryMB, same.Target.CPUs = 4096, 2 // the defaults, spelled out
	same.Target.Host, same.Target.SSHPassword = "ssh://me@elsewhere", "pw"
	if fingerprint(same) != fingerprint(base) {
		t.Error("defaults, env order or connection details changed the fingerprint")
	}
}

func TestPIDSnifferTakesOnlyThePIDLine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		pid    int
		out    string
	}{
		{name: "alone", writes: []string{"42\n"}, pid: 42, out: ""},
		{name: "split and followed", writes: []string{"4", "2\nerr", "or\n"}, pid: 42, out: "error\n"},
		{name: "not a pid", writes: []string{"OCI runtime exec failed\n"}, out: "OCI runtime exec failed\n"},
		{name: "long first line", writes: []string{strings.Repeat("x", 30)}, out: strings.Repeat("x", 30)},
		{name: "short unterminated", writes: []string{"oops"}, out: "oops"},
	} {
		var out bytes.Buffer
		p := &pidSniffer{next: &out, found: make(chan struct{})}
		for _, w := range tc.writes {
			if n, err := p.Write([]byte(w)); err != nil || n != len(w) {
				t.Fatalf("%s: Write = %d, %v", tc.name, n, err)
			}
		}
		p.flush()
		if got := p.wait(time.Second); got != tc.pid || out.String() != tc.out {
			t.Errorf("%s: pid %d, passed %q; want %d, %q", tc.name, got, out.String(), tc.pid, tc.out)
		}
	}
}

func TestFailNeverShowsSSHSecrets(t *testing.T) {
	d := &daemon{display: "ssh://me@h", secrets: []string{"hunter2"}}
	err := d.fail(errors.New("dial failed: password hunter2 rejected"), "connect")
	if !errs.Is(err, errs.Upstream) || strings.Contains(errs.MessageOf(err), "hunter2") {
		t.Errorf("fail = %q, want upstream without the password", errs.MessageOf(err))
	}
}
