package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/errs"
)

// Sandbox types.
const (
	SandboxDocker = "docker"
	SandboxE2B    = "e2b"
)

// Sandbox is one place project trees live: WHERE it runs and WHAT runs on
// it. Host configuration: read by everyone, written by admins.
type Sandbox struct {
	ID       string
	Name     string
	Type     string
	Docker   *DockerConfig // Type docker
	E2B      *E2BConfig    // Type e2b
	Prompt   string        // appended to the instructions of agents working on it
	Revision int64
	// SSHHostKey is the host key pinned for an ssh:// docker host. It is
	// not configuration: pinning or resetting it moves no revision, and
	// only the pin's own store calls write it.
	SSHHostKey SSHHostKey
	// CreatedAt and UpdatedAt are when the row was made and last changed.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// DockerConfig is a docker sandbox's config. Secret fields hold their stored
// (sealed) form inside the server.
type DockerConfig struct {
	Host             string  `json:"host"`
	SSHPassword      string  `json:"ssh_password"`
	SSHKey           string  `json:"ssh_key"`
	Image            string  `json:"image"`
	Runtime          string  `json:"runtime"`
	User             string  `json:"user"`
	Network          string  `json:"network"`
	MemoryMB         int     `json:"memory_mb"`
	CPUs             float64 `json:"cpus"`
	MaxReadFileBytes int64   `json:"max_read_file_bytes"`
}

// E2BConfig is an E2B-compatible sandbox's config. Secret fields (the key
// and every header value) hold their stored (sealed) form inside the
// server.
type E2BConfig struct {
	APIURL           string `json:"api_url"`
	Domain           string `json:"domain"`
	APIKey           string `json:"api_key"`
	DataPlaneAuth    string `json:"data_plane_auth"`
	TemplateID       string `json:"template_id"`
	TimeoutSeconds   int    `json:"timeout_seconds"`
	AutoPause        *bool  `json:"auto_pause"`
	AllowInternet    bool   `json:"allow_internet"`
	MaxReadFileBytes int64  `json:"max_read_file_bytes"`
	// Headers are sent with every call to the service (some compatible
	// services need their own); the values are secrets, held by pointer so
	// Secrets can seal, open and mask them in place.
	Headers map[string]*string `json:"headers"`
}

// E2B limits.
const (
	DefaultE2BTimeoutSeconds = 300   // the lease when timeout_seconds is 0
	MaxE2BTimeoutSeconds     = 86400 // E2B's longest lease (a day)
	MaxE2BHeaders            = 32
)

// reservedE2BHeaders are set by the backend itself: configuring one would
// break a call or forge its credentials.
var reservedE2BHeaders = []string{"Host", "Content-Length", "Content-Type", "Content-Encoding", "Accept", "Accept-Encoding",
	"Connection", "Transfer-Encoding", "Upgrade", "Te", "Authorization", "X-Api-Key", "X-Access-Token",
	"Connect-Protocol-Version", "Connect-Timeout-Ms", "E2b-Sandbox-Id", "E2b-Sandbox-Port"}

// SandboxSupports are a type's capability flags: clients offer actions from
// these, never from the type string.
type SandboxSupports struct {
	// Runs: this build has a runtime for the type, so Test, project
	// instances and terminals work. A type without one is validated and
	// stored, and refused by name wherever something would run.
	Runs       bool `json:"runs"`
	Rebuild    bool `json:"rebuild"`     // the container can be replaced while the tree survives
	PublicHost bool `json:"public_host"` // ports are reachable on a public host name
}

// SandboxType describes one sandbox type: one descriptor owns its
// semantics (the config form is the only other type switch).
type SandboxType struct {
	Name     string
	Supports SandboxSupports
}

// SandboxTypes is every sandbox type. Runs is never set here: a type runs
// when the server has a backend for it (sandboxes.Service.Supports).
var SandboxTypes = map[string]SandboxType{
	SandboxDocker: {Name: SandboxDocker, Supports: SandboxSupports{Rebuild: true}},
	SandboxE2B:    {Name: SandboxE2B, Supports: SandboxSupports{PublicHost: true}},
}

// SandboxTypeNames lists the sandbox types, sorted.
func SandboxTypeNames() []string {
	out := make([]string, 0, len(SandboxTypes))
	for name := range SandboxTypes {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Secrets are the config's write-only fields by JSON name, as pointers so
// the service seals, keeps or masks them in place.
func (s *Sandbox) Secrets() map[string]*string {
	switch {
	case s.Docker != nil:
		return map[string]*string{"ssh_password": &s.Docker.SSHPassword, "ssh_key": &s.Docker.SSHKey}
	case s.E2B != nil:
		out := map[string]*string{"api_key": &s.E2B.APIKey}
		for name, v := range s.E2B.Headers {
			out["headers."+name] = v
		}
		return out
	}
	return nil
}

// WithOwnConfig returns the sandbox with a copy of its config, so secrets
// can be opened or masked in place without touching the original.
func (s Sandbox) WithOwnConfig() Sandbox {
	if s.Docker != nil {
		d := *s.Docker
		s.Docker = &d
	}
	if s.E2B != nil {
		e := *s.E2B
		e.Headers = make(map[string]*string, len(s.E2B.Headers))
		for name, v := range s.E2B.Headers {
			own := *v
			e.Headers[name] = &own
		}
		s.E2B = &e
	}
	return s
}

// Config is the type's config value (*DockerConfig, *E2BConfig): what the
// type's backend is handed.
func (s *Sandbox) Config() any {
	switch {
	case s.Docker != nil:
		return s.Docker
	case s.E2B != nil:
		return s.E2B
	}
	return nil
}

// Defaults of a docker sandbox: never "unlimited", since agent code runs
// there.
const (
	DefaultMemoryMB         = 4096
	DefaultCPUs             = 2.0
	DefaultMaxReadFileBytes = 8 << 20
)

// ReadLimit is how large a file the read tool loads at all.
func (s Sandbox) ReadLimit() int64 {
	n := int64(0)
	if s.Docker != nil {
		n = s.Docker.MaxReadFileBytes
	}
	if s.E2B != nil {
		n = s.E2B.MaxReadFileBytes
	}
	if n <= 0 {
		return DefaultMaxReadFileBytes
	}
	return n
}

// ParseSandboxConfig decodes a config object for a type strictly and
// canonically: a field of the wrong JSON type is a 400, unknown keys are
// dropped, values are checked. One decoder answers every question about a
// config, so save-time validation and later comparisons cannot disagree.
func ParseSandboxConfig(typ string, raw json.RawMessage) (*DockerConfig, *E2BConfig, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage(`{}`)
	}
	var f errs.FieldErrors
	switch typ {
	case SandboxDocker:
		var c DockerConfig
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, nil, configTypeError(err)
		}
		c.Image = strings.TrimSpace(c.Image)
		if c.Image == "" {
			f.Add("config.image", "is required")
		}
		if err := checkDockerHost(c.Host); err != nil {
			f.Add("config.host", "%v", err)
		}
		if c.MemoryMB < 0 || c.MemoryMB > 1<<20 {
			f.Add("config.memory_mb", "must be between 0 (default %d) and 1048576", DefaultMemoryMB)
		}
		if c.CPUs < 0 || c.CPUs > 256 {
			f.Add("config.cpus", "must be between 0 (default 2) and 256")
		}
		if c.MaxReadFileBytes < 0 {
			f.Add("config.max_read_file_bytes", "must not be negative")
		}
		if strings.ContainsAny(c.User, " \t\n") {
			f.Add("config.user", "must be user[:group]")
		}
		return &c, nil, f.Err()
	case SandboxE2B:
		var c E2BConfig
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, nil, configTypeError(err)
		}
		if strings.TrimSpace(c.TemplateID) == "" {
			f.Add("config.template_id", "is required: the workbench builds no templates")
		}
		if c.APIURL != "" {
			if u, err := url.Parse(c.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				f.Add("config.api_url", "must be an absolute http(s) URL")
			}
		}
		switch c.DataPlaneAuth {
		case "", "access_token", "api_key", "none":
		default:
			f.Add("config.data_plane_auth", "must be access_token, api_key or none (or empty)")
		}
		if c.TimeoutSeconds < 0 || c.TimeoutSeconds > MaxE2BTimeoutSeconds {
			f.Add("config.timeout_seconds", "must be between 0 (default %d) and %d", DefaultE2BTimeoutSeconds, MaxE2BTimeoutSeconds)
		}
		if strings.ContainsAny(c.Domain, "/:@ \t") {
			f.Add("config.domain", "must be a bare host name such as e2b.app (no scheme, port or path)")
		}
		if c.MaxReadFileBytes < 0 {
			f.Add("config.max_read_file_bytes", "must not be negative")
		}
		checkE2BHeaders(&c, &f)
		if c.AutoPause == nil {
			t := true // an expired lease pauses rather than destroys the tree
			c.AutoPause = &t
		}
		return nil, &c, f.Err()
	}
	return nil, nil, errs.Field("type", "must be docker or e2b")
}

// checkE2BHeaders validates the extra headers and gives a null value the
// empty string, so every header has a value to seal.
func checkE2BHeaders(c *E2BConfig, f *errs.FieldErrors) {
	if len(c.Headers) > MaxE2BHeaders {
		f.Add("config.headers", "at most %d headers", MaxE2BHeaders)
	}
	seen := map[string]string{}
	names := make([]string, 0, len(c.Headers))
	for name := range c.Headers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		field := "config.headers." + name
		lower := strings.ToLower(name)
		switch {
		case !isHeaderName(name):
			f.Add(field, "is not a valid header name")
		case slices.ContainsFunc(reservedE2BHeaders, func(r string) bool { return strings.EqualFold(r, name) }):
			f.Add(field, "is set by the server itself")
		case seen[lower] != "":
			f.Add(field, "is given twice (as %s; header names are case-insensitive)", seen[lower])
		}
		seen[lower] = name
		if c.Headers[name] == nil {
			empty := ""
			c.Headers[name] = &empty
		}
		if v := *c.Headers[name]; strings.ContainsAny(v, "\r\n\x00") || len(v) > 8<<10 {
			f.Add(field, "must be one line of at most 8 KiB")
		}
	}
	if c.Headers == nil {
		c.Headers = map[string]*string{}
	}
}

// isHeaderName reports whether s is an HTTP header field name (an RFC 9110
// token).
func isHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r >= 0x80 || !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}

func configTypeError(err error) error {
	var te *json.UnmarshalTypeError
	if ok := asTypeError(err, &te); ok && te.Field != "" {
		return errs.Field("config."+te.Field, "must be %s", te.Type.String())
	}
	return errs.Field("config", "must be a JSON object")
}

func asTypeError(err error, target **json.UnmarshalTypeError) bool {
	te, ok := err.(*json.UnmarshalTypeError)
	if ok {
		*target = te
	}
	return ok
}

// checkDockerHost accepts "" (this machine), tcp://, unix:// and ssh://.
func checkDockerHost(h string) error {
	if h == "" {
		return nil
	}
	u, err := url.Parse(h)
	if err != nil {
		return fmt.Errorf("is not a URL")
	}
	switch u.Scheme {
	case "unix":
		if u.Path == "" {
			return fmt.Errorf("unix:// needs a socket path")
		}
	case "tcp", "ssh":
		if u.Host == "" {
			return fmt.Errorf("%s:// needs a host", u.Scheme)
		}
		if u.Scheme == "ssh" && u.User == nil {
			return fmt.Errorf("ssh:// needs a user: ssh://user@host")
		}
	default:
		return fmt.Errorf("must be empty (this machine), tcp://host:port, unix:///path or ssh://user@host")
	}
	return nil
}

// Destination is where a sandbox's storage lives: projects can move only
// between sandboxes of one destination — the files do not travel.
func (s Sandbox) Destination() string {
	switch {
	case s.Docker != nil:
		return SandboxDocker + "|" + s.Docker.Host
	case s.E2B != nil:
		return SandboxE2B + "|" + s.E2B.APIURL + "|" + s.E2B.Domain
	}
	return s.Type
}

// Identity is what freezes while projects live on a sandbox: the
// destination, and for e2b what a resumed instance cannot re-apply.
func (s Sandbox) Identity() string {
	if s.E2B != nil {
		return fmt.Sprintf("%s|%s|%v|%v", s.Destination(), s.E2B.TemplateID, *s.E2B.AutoPause, s.E2B.AllowInternet)
	}
	return s.Destination()
}

// Content is what runs: a change here replaces the projects' containers at
// their next use (the name, the prompt and credentials are not content).
func (s Sandbox) Content() string {
	if s.Docker != nil {
		d := s.Docker
		return fmt.Sprintf("%s|%s|%s|%s|%d|%g", d.Image, d.Runtime, d.User, d.Network, d.MemoryMB, d.CPUs)
	}
	if s.E2B != nil {
		return s.E2B.TemplateID
	}
	return ""
}
