package docker

import (
	"testing"

	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/sandboxtest"
)

// TestSandboxContract runs the sandbox port's contract on a real daemon.
func TestSandboxContract(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t)
	sandboxtest.Contract(t, sandboxtest.Harness{
		Backend:     rt,
		NewInstance: func(t *testing.T) ports.ProjectInstance { return newInstance(t, rt) },
		Target:      dockerSandbox(testTarget()),
	})
}
