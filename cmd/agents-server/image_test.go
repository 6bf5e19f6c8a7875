package main

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
)

// docker runs the docker CLI against the daemon the suite uses and returns
// its standard output, failing the test on an error.
func docker(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Env = append(os.Environ(), "DOCKER_API_VERSION=1.41") // Debian's daemon speaks 1.41
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return strings.TrimSpace(out.String())
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// TestTheImageServesAndKeepsItsDataOnDocker builds the image as `go tool
// task image` does (FROM scratch: nothing pulled), runs it with a volume,
// chats through it with the scripted model, restarts it and finds the
// conversation; the process is not root, its health check is the binary's,
// and the image holds the binary, the CA bundle and /data alone.
func TestTheImageServesAndKeepsItsDataOnDocker(t *testing.T) {
	t.Parallel()
	needDocker(t)
	if _, err := exec.LookPath("docker"); err != nil {
		t.Fatal("the docker CLI is not installed (scripts/docker/up.sh installs it)")
	}
	tag := fmt.Sprintf("agents-server:test-%d", time.Now().UnixNano())
	build := exec.Command("../../scripts/image/build.sh", tag)
	build.Env = append(os.Environ(), "DOCKER_API_VERSION=1.41")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("scripts/image/build.sh: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", tag).Run() })

	// The image: only what it needs, run as 65532, checked by the binary.
	if user := docker(t, "image", "inspect", "--format", "{{.Config.User}}", tag); user != "65532:65532" {
		t.Errorf("the image runs as %q", user)
	}
	if hc := docker(t, "image", "inspect", "--format", "{{json .Config.Healthcheck.Test}}", tag); hc != `["CMD","/agents-server","health"]` {
		t.Errorf("health check %s", hc)
	}
	if rev := docker(t, "image", "inspect", "--format", `{{index .Config.Labels "org.opencontainers.image.revision"}}`, tag); len(rev) < 7 {
		t.Errorf("revision label %q", rev)
	}
	fresh := docker(t, "create", tag)
	files := exportedFiles(t, fresh)
	docker(t, "rm", fresh)
	want := []string{"agents-server", "data/", "etc/", "etc/ssl/", "etc/ssl/certs/", "etc/ssl/certs/ca-certificates.crt"}
	if !slices.Equal(files, want) {
		t.Errorf("the image holds %v, want %v", files, want)
	}

	// Run it with a volume, on the host's network (the test daemon has no
	// bridge): a chat through it with the scripted model.
	model, url := startScripted(t)
	model.SetScript("boxed", oneStep(scripted.Step{Text: "answered from the container"}))
	port, volume, token := freePort(t), strings.ReplaceAll(strings.TrimPrefix(tag, "agents-server:"), ".", "-"), "image-test-token-0123456789"
	c := docker(t, "run", "-d", "--network", "host", "-v", volume+":/data", "-e", "AGENTS_ADDR=127.0.0.1:"+port, "-e", "AGENTS_TOKEN="+token, tag)
	t.Cleanup(func() {
		_ = exec.Command("docker", "rm", "-f", c).Run()
		_ = exec.Command("docker", "volume", "rm", "-f", volume).Run()
	})
	base := "http://127.0.0.1:" + port
	waitHealthy(t, base, c)
	// The daemon is this host's: the server's process is in its /proc.
	pid := docker(t, "inspect", "--format", "{{.State.Pid}}", c)
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^Uid:\s+65532\s+65532\s+65532\s+65532$`).Match(status) {
		t.Errorf("the server's process runs as:\n%s", status)
	}
	h := &harness{t: t, base: base, admin: token}
	h.doc, h.router = h.loadRouter()
	prov := h.createProvider(token, map[string]any{"name": "scripted", "base_url": url + "/v1", "api_key": "any"})
	agent := h.createAgent(token, map[string]any{"name": "boxed", "model": "boxed", "provider_id": prov.ID})
	s := h.createSession(token, map[string]any{"agent_config_id": agent.ID, "name": "kept in the volume"})
	if v := h.chat(token, s.ID, "hello"); v.Status != "completed" || v.FinalOutput == nil || *v.FinalOutput != "answered from the container" {
		t.Fatalf("a chat through the container: %+v", v)
	}

	// Restarted, it finds the conversation in its volume.
	docker(t, "restart", c)
	waitHealthy(t, base, c)
	var msgs []httpapi.EntryView
	h.call("GET", "/api/v1/sessions/"+s.ID+"/messages", token, nil).want(t, 200).decode(t, &msgs)
	if len(msgs) < 2 {
		t.Fatalf("after the restart the conversation has %d entries", len(msgs))
	}
}

// waitHealthy waits until the server at base answers /health (printing
// the container's log if it never does).
func waitHealthy(t *testing.T, base, container string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	logs, _ := exec.Command("docker", "logs", container).CombinedOutput()
	t.Fatalf("the container never answered /health:\n%s", logs)
}

// exportedFiles lists a created container's filesystem, without what the
// daemon itself puts in every container (/.dockerenv, /dev, /proc, /sys
// and /etc's hosts, hostname and resolv.conf mount points).
func exportedFiles(t *testing.T, container string) []string {
	t.Helper()
	cmd := exec.Command("docker", "export", container)
	cmd.Env = append(os.Environ(), "DOCKER_API_VERSION=1.41")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docker export: %v", err)
	}
	var files []string
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(hdr.Name, "./")
		switch {
		case name == "" || name == ".dockerenv" || name == "dev/" || strings.HasPrefix(name, "dev/") || name == "proc/" ||
			name == "sys/" || name == "etc/hosts" || name == "etc/hostname" || name == "etc/resolv.conf" || name == "etc/mtab":
			continue
		}
		files = append(files, name)
	}
	slices.Sort(files)
	return files
}
