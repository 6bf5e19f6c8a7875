package docker

import (
	"os"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/internal/sshdtest"
	"github.com/agents-server/agents-server/ports"
)

// localDockerSocket is the unix socket the test daemon listens on.
func localDockerSocket(t *testing.T) string {
	host := os.Getenv("DOCKER_HOST")
	if host == "" {
		return "/var/run/docker.sock"
	}
	path, ok := strings.CutPrefix(host, "unix://")
	if !ok {
		t.Skipf("the ssh test forwards to a unix socket; DOCKER_HOST is %s", host)
	}
	return path
}

func TestSSHHostReachesDaemonThroughStreamlocal(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t)
	sshd := sshdtest.Start(t, "tester", "s3cret-pw", localDockerSocket(t))
	target := testTarget()
	target.Host = "ssh://tester@" + sshd.Addr + "/remote/docker.sock"
	target.SSHPassword = "s3cret-pw"
	ctx := testContext(t)

	ok, out, err := rt.Test(ctx, dockerSandbox(target))
	if err != nil || !ok || out != "ok\n" {
		t.Fatalf("Test over ssh = %v, %q, %v", ok, out, err)
	}
	if asked := sshd.Asked(); len(asked) == 0 || asked[0] != "/remote/docker.sock" {
		t.Errorf("streamlocal paths asked = %v", asked)
	}

	// Exec and its stdin half-close ride hijacked connections over the channel.
	in := newInstance(t, rt)
	in.Target = dockerSandbox(target)
	ensure(t, rt, in)
	if _, out, _ := run(t, rt, in, ports.ExecRequest{Stdin: strings.NewReader("through ssh\n")}, "cat"); out != "through ssh\n" {
		t.Errorf("cat over ssh = %q", out)
	}

	wrong := target
	wrong.SSHPassword = "not-the-password"
	_, _, err = rt.Test(ctx, dockerSandbox(wrong))
	if !errs.Is(err, errs.Upstream) || strings.Contains(errs.MessageOf(err), "not-the-password") {
		t.Errorf("Test with a wrong password: %v, want upstream without the password", err)
	}
}
