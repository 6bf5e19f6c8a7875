package e2b

import (
	"context"
	"io"
	"testing"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/e2bdouble"
	"github.com/agents-server/agents-server/ports"
)

// benchInstance is a running project instance on a fresh double.
func benchInstance(b *testing.B) (*Runtime, ports.ProjectInstance) {
	b.Helper()
	if err := e2bdouble.Supported(); err != nil {
		b.Skip(err)
	}
	d, err := e2bdouble.New(e2bdouble.Options{APIKey: testKey})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	f := &fixture{double: d, refs: newRefs(b)}
	f.rt = New(Options{Refs: f.refs, HTTP: d.Client()})
	in := ports.ProjectInstance{ProjectID: "bench", Target: f.target()}
	f.refs.add(b, in.ProjectID)
	if err := f.rt.Ensure(context.Background(), in); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.rt.Destroy(context.Background(), in) })
	return f.rt, in
}

// BenchmarkExecOnTheDouble is one `true` through the backend: the Start
// stream over TLS through the proxy, the double's namespace helper, the
// end event. Its figure bounds what the backend itself adds per command.
func BenchmarkExecOnTheDouble(b *testing.B) {
	rt, in := benchInstance(b)
	for b.Loop() {
		if code, err := rt.Exec(context.Background(), in, ports.ExecRequest{Cmd: []string{"true"}, Stdout: io.Discard, Stderr: io.Discard}); err != nil || code != 0 {
			b.Fatalf("exec = %d, %v", code, err)
		}
	}
}

// BenchmarkReadFileOnTheDouble is one 64 KiB read: stat, then download.
func BenchmarkReadFileOnTheDouble(b *testing.B) {
	rt, in := benchInstance(b)
	ctx := context.Background()
	if err := rt.WriteFile(ctx, in, "/workspace/f", make([]byte, 64<<10)); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(64 << 10)
	for b.Loop() {
		if _, err := rt.ReadFile(ctx, in, "/workspace/f", 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}
