package mcp

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/secrets"
)

// Bounds of a stdio server's program.
const (
	MaxCommand  = 1024
	MaxArgs     = 64
	MaxArg      = 4096
	MaxEnv      = 64
	MaxEnvValue = 8 << 10
)

// envName is a portable environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// applyStdio validates a stdio server's input (the name already checked
// into f) and writes it into s. The environment's values are secrets kept
// by the mask as headers are, but only for the same program: a new
// command, arguments or project must be given them again, or an edit
// could hand the stored secrets to a program of its choosing.
func (svc *Service) applyStdio(s *domain.MCPServer, in Input, stored domain.MCPServer, f *errs.FieldErrors) (dropGrant bool, err error) {
	c := in.Config
	if c.Endpoint != "" || len(c.Headers) > 0 || (c.AuthMode != "" && c.AuthMode != domain.MCPAuthHeader) ||
		c.OAuthClientID != "" || c.OAuthClientSecret != "" || len(c.OAuthScopes) > 0 || c.PerPersonAuth {
		f.Add("config.transport", "a stdio server is a program the workbench starts: endpoint, headers, OAuth and per-person sign-in do not apply")
	}
	command := strings.TrimSpace(c.Command)
	switch {
	case command == "":
		f.Add("config.command", "is required: the program to start, such as npx, uvx or an absolute path")
	case len(command) > MaxCommand || strings.ContainsAny(command, "\r\n\x00"):
		f.Add("config.command", "must be one line of at most %d bytes", MaxCommand)
	}
	if len(c.Args) > MaxArgs {
		f.Add("config.args", "at most %d arguments", MaxArgs)
	}
	for i, a := range c.Args {
		if len(a) > MaxArg || strings.ContainsRune(a, 0) {
			f.Add(fmt.Sprintf("config.args[%d]", i), "must be at most %d bytes, without NUL", MaxArg)
		}
	}
	if len(c.ProjectID) > 64 || strings.ContainsAny(c.ProjectID, " \t\r\n\x00/") {
		f.Add("config.project_id", "is not a project id")
	}
	before := stored.Config
	same := stored.ID != "" && before.Stdio() && before.Command == command && slices.Equal(before.Args, c.Args) &&
		before.ProjectID == c.ProjectID
	if len(c.Env) > MaxEnv {
		f.Add("config.env", "at most %d variables", MaxEnv)
	}
	env := map[string]string{}
	for name, v := range c.Env {
		field := "config.env." + name
		switch {
		case !envName.MatchString(name):
			f.Add(field, "is not a valid variable name (letters, digits and '_', not starting with a digit)")
		case v == secrets.Mask:
			kept, ok := before.Env[name]
			switch {
			case !ok:
				f.Add(field, "has no stored value to keep: send the value")
			case !same:
				f.Add(field, "the stored value belongs to the previous command: send it again or clear it")
			default:
				env[name] = kept
			}
		case v == "":
			// cleared
		case len(v) > MaxEnvValue || strings.ContainsRune(v, 0):
			f.Add(field, "must be at most %d bytes, without NUL", MaxEnvValue)
		default:
			sealed, err := svc.box.Seal(envPlace(s.ID, name), v)
			if err != nil {
				return false, err
			}
			env[name] = sealed
		}
	}
	if err := f.Err(); err != nil {
		return false, err
	}
	s.Name = in.Name
	s.Enabled = in.Enabled == nil || *in.Enabled
	s.Config = domain.MCPConfig{Transport: domain.MCPStdio, AuthMode: domain.MCPAuthHeader, Headers: map[string]string{},
		OAuthScopes: []string{}, Command: command, Args: append([]string{}, c.Args...), Env: env, ProjectID: c.ProjectID}
	// A server that was an OAuth endpoint keeps no grant as a program.
	return stored.ID != "" && !before.Stdio(), nil
}

func envPlace(serverID, name string) string {
	return secrets.Place("mcp_servers", "config", "env", name, serverID)
}
