package domain

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agents-server/agents-server/core/errs"
)

// Project is one user's working tree on one sandbox: the unit a session
// binds and a container mounts at /workspace. Personal: its owner manages
// it; admins may list, stop, rebuild and delete it, never read it.
type Project struct {
	ID        string
	OwnerID   string
	Name      string
	SandboxID string
	// Env is the environment the container is created with; values are
	// stored sealed and never read back by a client.
	Env      []EnvVar
	Revision int64
	// Generation is the runtime generation: a change of environment or of
	// the sandbox's content moves it, which replaces the container at the
	// next use (the tree survives).
	Generation int64
	// InstanceRef is the backend instance holding the tree, for types
	// whose instance is its storage (e2b); written only by the backend
	// through ports.InstanceRefStore.
	InstanceRef string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// EnvVar is one environment variable; Value is its stored (sealed) form.
type EnvVar struct {
	Name  string
	Value string
}

// EnvNamePattern is what an environment variable name must match: a shell
// variable name of at most 128 characters.
const EnvNamePattern = `^[A-Za-z_][A-Za-z0-9_]{0,127}$`

// MaxProjectEnv bounds how many variables a project's environment holds.
const MaxProjectEnv = 200

var envName = regexp.MustCompile(EnvNamePattern)

// ValidateProject checks a project's name and environment names. Returns
// validation naming every offending field.
func ValidateProject(name string, env []EnvVar) error {
	var f errs.FieldErrors
	switch n := strings.TrimSpace(name); {
	case n == "":
		f.Add("name", "is required")
	case utf8.RuneCountInString(n) > 100 || strings.ContainsAny(n, "\r\n"):
		f.Add("name", "must be one line of at most 100 characters")
	}
	seen := map[string]bool{}
	for i, e := range env {
		switch {
		case !envName.MatchString(e.Name):
			f.Add(fmt.Sprintf("env[%d].name", i), "must be a shell variable name (letters, digits, _)")
		case seen[e.Name]:
			f.Add(fmt.Sprintf("env[%d].name", i), "%s is set twice", e.Name)
		}
		seen[e.Name] = true
		if len(e.Value) > 64<<10 {
			f.Add(fmt.Sprintf("env[%d].value", i), "must be at most 64 KiB")
		}
	}
	if len(env) > MaxProjectEnv {
		f.Add("env", "at most %d variables", MaxProjectEnv)
	}
	return f.Err()
}

// CheckOwner refuses anyone but the owner, as if the project did not exist.
// Returns not_found.
func (p Project) CheckOwner(pr Principal) error {
	if p.OwnerID != pr.User.ID {
		return errs.E(errs.NotFound, "project not found")
	}
	return nil
}

// CheckManage allows the owner and admins (list, stop, rebuild, delete).
// Returns not_found.
func (p Project) CheckManage(pr Principal) error {
	if p.OwnerID != pr.User.ID && !pr.IsAdmin() {
		return errs.E(errs.NotFound, "project not found")
	}
	return nil
}

// tail is the last twelve hex digits of the project id: its storage names.
func (p Project) tail() string {
	id := strings.ReplaceAll(p.ID, "-", "")
	if len(id) > 12 {
		id = id[len(id)-12:]
	}
	return id
}

// InstanceName is the name of the project's one persistent instance on its
// sandbox (a docker container's name).
func (p Project) InstanceName() string { return "agents-" + p.tail() }

// StorageName is the name of the storage holding the project's tree where
// a backend keeps it apart from the instance (a docker volume).
func (p Project) StorageName() string { return "agents-proj-" + p.tail() }
