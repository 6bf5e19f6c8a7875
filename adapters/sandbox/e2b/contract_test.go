package e2b

import (
	"testing"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/e2bdouble"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/sandboxtest"
)

// TestSandboxContract runs the sandbox port's contract against the E2B
// double, as the docker suite runs it against a daemon.
func TestSandboxContract(t *testing.T) {
	t.Parallel()
	f := newFixture(t, e2bdouble.Options{Templates: []string{"base"}})
	target := f.target()
	sandboxtest.Contract(t, sandboxtest.Harness{
		Backend:     f.rt,
		NewInstance: func(t *testing.T) ports.ProjectInstance { return f.instance(t, target) },
		Target:      target,
	})
}
