package agentsserver_test

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The layering rule of DESIGN.md, enforced: core/errs → core/domain → ports
// → core/<module> → adapters/* → workbench → cmd and examples. Core never
// reaches an HTTP framework, database/sql or a vendor SDK, even indirectly;
// one adapter never imports another; migrations, frontend and internal/
// are leaves; core's tests keep core's rules; core's modules import one
// another in tiers (coreTiers).
// The commands and the examples use the public package alone (workbench and
// its subpackages), so the server is an embedder like any other; the other
// commands are test peers serving an adapter's double.

const module = "github.com/agents-server/agents-server"

type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string // of the package's own tests
	XTestImports []string // of its external (_test package) tests
	Deps         []string
}

// touchSources reads every Go file and the module files, so the test cache
// (which tracks files a test opens, not what a subprocess reads) reruns these
// tests whenever an import could have changed.
func touchSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "dist" || strings.HasPrefix(d.Name(), ".") && p != ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".go") || p == "go.mod" || p == "go.sum") {
			_, err = os.ReadFile(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	touchSources(t)
	out, err := exec.Command("go", "list", "-deps=false", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 5 {
		t.Fatalf("only %d packages listed", len(pkgs))
	}
	return pkgs
}

// layer names where a package sits; "" is outside the rules (the root).
func layer(path string) string {
	rel := strings.TrimPrefix(path, module+"/")
	switch {
	case rel == "core/errs":
		return "errs"
	case rel == "core/domain":
		return "domain"
	case rel == "ports" || strings.HasPrefix(rel, "ports/"):
		return "ports"
	case strings.HasPrefix(rel, "core/"):
		return "core"
	case strings.HasPrefix(rel, "adapters/"):
		return "adapters"
	case rel == "workbench" || strings.HasPrefix(rel, "workbench/"), rel == workbenchParts:
		// The workbench's parts beneath its facades belong to the
		// workbench; only the agents-server command reaches them
		// (TestOnlyTheServerReachesTheParts).
		return "workbench"
	case rel == "cmd/agents-server":
		return "embedder"
	case strings.HasPrefix(rel, "examples/"):
		// An example embeds the workbench, and speaks its services'
		// vocabulary (core's types) as any program would.
		return "example"
	case strings.HasPrefix(rel, "cmd/"):
		// The other commands are test peers (the e2b and ChatGPT doubles)
		// that serve an adapter's double.
		return "cmd"
	case rel == "migrations", rel == "frontend", strings.HasPrefix(rel, "internal/"):
		// Self-contained packages the layers may use (internal/testenv: how
		// a test helper such as adapters/mcp/mcptest treats a missing peer;
		// internal/egress: the one dialer every adapter's outbound calls
		// share; internal/loopbacktest and internal/sshdtest: test peers).
		return "leaf"
	}
	return ""
}

// allowed lists, per layer, the project layers it may import.
var allowed = map[string][]string{
	"errs":      {},
	"domain":    {"errs"},
	"ports":     {"errs", "domain", "ports"},
	"core":      {"errs", "domain", "ports", "core"},
	"adapters":  {"errs", "domain", "ports", "core", "adapters", "leaf"},
	"workbench": {"errs", "domain", "ports", "core", "adapters", "leaf", "workbench"},
	"embedder":  {"workbench"},
	"example":   {"errs", "domain", "ports", "core", "workbench"},
	"cmd":       {"errs", "domain", "ports", "core", "adapters", "leaf", "workbench", "cmd"},
	"leaf":      {},
}

// Core and ports may reach, directly or not, only the standard library
// (less what belongs at the edges), each other, and the third-party modules
// listed here with why — an allowlist, so a new dependency is a decision
// made here and not an accident of an import.
var (
	// stdDeniedInCore are standard packages that belong to adapters: a
	// database driver API, HTTP, raw sockets, processes.
	stdDeniedInCore = []string{"database/sql", "net/http", "net/rpc", "net/smtp", "os/exec", "plugin"}
	// stdDeniedExact are denied as themselves but not their subpackages
	// (net/url and net/netip are pure value types).
	stdDeniedExact = []string{"net"}
	// thirdPartyInCore are module path prefixes core may use.
	thirdPartyInCore = []string{
		"github.com/santhosh-tekuri/jsonschema/", // validating structured output and tool arguments against JSON Schema
		"golang.org/x/crypto/argon2",             // password hashing (auth)
		"golang.org/x/crypto/blake2b",            // argon2's hash
		"golang.org/x/sys/cpu",                   // argon2's and blake2b's CPU feature detection
		"golang.org/x/text/",                     // jsonschema's messages
		"golang.org/x/image/",                    // scaling attached images down (attachments)
		"github.com/adhocore/gronx",              // reading cron schedules (triggers): pure, no I/O
		"go.yaml.in/yaml/",                       // reading SKILL.md frontmatter (skills): pure, no I/O
		"github.com/google/jsonschema-go/",       // deriving the built-in tools' schemas from their argument structs (tools): pure, no I/O
	}
)

// allowedInCore says whether a core or ports package may depend on dep.
func allowedInCore(dep string) bool {
	if dep == module || strings.HasPrefix(dep, module+"/") {
		switch layer(dep) {
		case "errs", "domain", "ports", "core":
			return true
		}
		return false
	}
	first, _, _ := strings.Cut(dep, "/")
	if !strings.Contains(first, ".") { // the standard library
		for _, bad := range stdDeniedInCore {
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				return false
			}
		}
		return !slices.Contains(stdDeniedExact, dep)
	}
	for _, ok := range thirdPartyInCore {
		if dep == strings.TrimSuffix(ok, "/") || strings.HasPrefix(dep, ok) {
			return true
		}
	}
	return false
}

// adapterOf returns the adapter a package belongs to (adapters/llm/openai
// for adapters/llm/openai/x), or "" — also for a group's internal support
// packages (adapters/llm/internal/…), which adapters of the group share and
// which are not adapters themselves.
func adapterOf(path string) string {
	rel, ok := strings.CutPrefix(path, module+"/adapters/")
	if !ok {
		return ""
	}
	parts := strings.Split(rel, "/")
	if len(parts) > 1 && parts[1] == "internal" {
		return ""
	}
	if parts[0] == "llm" || parts[0] == "sandbox" {
		if len(parts) > 1 {
			return parts[0] + "/" + parts[1]
		}
	}
	return parts[0]
}

// coreLayers are the layers whose tests keep their rules too: a core test
// that reached an adapter, an HTTP framework or the store would test core
// through what core may not know.
var coreLayers = []string{"errs", "domain", "ports", "core"}

func TestImportsPointInward(t *testing.T) {
	for _, p := range listPackages(t) {
		from := layer(p.ImportPath)
		if from == "" {
			continue
		}
		imports := p.Imports
		if slices.Contains(coreLayers, from) {
			imports = slices.Concat(p.Imports, p.TestImports, p.XTestImports)
			for _, imp := range slices.Concat(p.TestImports, p.XTestImports) {
				if !allowedInCore(imp) {
					t.Errorf("a test of %s imports %s, which is not on core's allowlist (arch_test.go)", p.ImportPath, imp)
				}
			}
		}
		for _, imp := range imports {
			if !strings.HasPrefix(imp, module+"/") && imp != module {
				continue
			}
			to := layer(imp)
			ok := false
			for _, l := range allowed[from] {
				ok = ok || l == to
			}
			if !ok {
				t.Errorf("%s (%s) imports %s (%s)", p.ImportPath, from, imp, to)
			}
			if a, b := adapterOf(p.ImportPath), adapterOf(imp); a != "" && b != "" && a != b {
				t.Errorf("adapter %s imports adapter %s (%s → %s)", a, b, p.ImportPath, imp)
			}
		}
	}
}

func TestCoreReachesOnlyWhatItIsAllowed(t *testing.T) {
	touchSources(t)
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`,
		"./core/...", "./ports/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 3 {
		t.Fatalf("only %d core packages listed", len(lines))
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		for _, dep := range fields[1:] {
			if !allowedInCore(dep) {
				t.Errorf("%s depends on %s, which is not on core's allowlist (arch_test.go)", fields[0], dep)
			}
		}
	}
}

func TestCoreAllowlistRefuses(t *testing.T) {
	for _, dep := range []string{"database/sql", "net/http", "net/http/httptest", "net", "os/exec",
		"github.com/labstack/echo/v4", "modernc.org/sqlite", "github.com/openai/openai-go/v3", "github.com/containerd/errdefs",
		module + "/adapters/sqlstore", module + "/cmd/agents-server"} {
		if allowedInCore(dep) {
			t.Errorf("%s is allowed in core", dep)
		}
	}
	for _, dep := range []string{"net/url", "encoding/json", module + "/core/domain", module + "/ports", "golang.org/x/crypto/argon2"} {
		if !allowedInCore(dep) {
			t.Errorf("%s is refused in core", dep)
		}
	}
}

// TestWireWordsLiveAtTheEdge keeps the API document's words out of core:
// core types carry json tags; descriptions and enum lists belong to the
// HTTP edge (adapters/httpapi/wire_notes.go), enums' values to core's
// Values methods.
func TestWireWordsLiveAtTheEdge(t *testing.T) {
	err := filepath.WalkDir("core", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			if strings.Contains(line, "`json:") && (strings.Contains(line, ` doc:"`) || strings.Contains(line, ` enum:"`)) {
				t.Errorf("%s:%d: a doc or enum tag in core; describe the field in adapters/httpapi/wire_notes.go", p, i+1)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTheServerIsAnEmbedder: the agents-server command may import the
// public package and nothing else of the module, so it composes nothing by
// hand that an embedding program could not.
func TestTheServerIsAnEmbedder(t *testing.T) {
	from := layer(module + "/cmd/agents-server")
	if got := allowed[from]; !slices.Equal(got, []string{"workbench"}) {
		t.Fatalf("cmd/agents-server (%s) may import %v; want the workbench package alone", from, got)
	}
	for _, p := range []string{"/workbench", "/workbench/scriptedmodel"} {
		if layer(module+p) != "workbench" {
			t.Errorf("%s is not in the workbench layer", p)
		}
	}
	if layer(module+"/adapters/httpapi") == "workbench" {
		t.Error("an adapter counts as the public package")
	}
}

// workbenchParts is the internal hook that hands the agents-server
// command the parts beneath the workbench's public facades.
const workbenchParts = "internal/workbenchparts"

// TestOnlyTheServerReachesTheParts: the parts beneath the facades are for
// the agents-server command (its tests and diagnostics) alone; an example
// is documentation of the public package, and uses the facades.
func TestOnlyTheServerReachesTheParts(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		if rel == "workbench" || rel == "cmd/agents-server" {
			continue
		}
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			if imp == module+"/"+workbenchParts {
				t.Errorf("%s imports %s, which only the workbench and the agents-server command may", p.ImportPath, workbenchParts)
			}
		}
	}
}

// coreTiers orders the core modules: a module imports only modules of a
// lower tier, so dependencies among them point one way and no module
// reaches sideways into its peers. A new module, or an import against the
// order, is a decision made here. (Tests may reach further: a test
// drives its module through the modules that use it.)
var coreTiers = map[string]int{
	"audit":   -2, // the audit log's records, staged by every service that changes something: below them all
	"scoped":  -1, // the scoped-CRUD shape the configuration services share: below them all
	"secrets": 0, "patch": 0, "tools": 0, "hub": 0, "outbound": 0, "attachments": 0, "guardrails": 0, "memories": 0,
	"sessions": 0,
	"settings": 1, "providers": 1, "workflows": 1, "transcript": 1, "follow": 1, "remote": 1,
	"livestreams": 2, "runcap": 2, "mcp": 2, "sandboxes": 2, "skills": 2, "traces": 2, "models": 2,
	"auth": 3, "sandboxtools": 3, "agents": 3, "approvals": 3, "usage": 3,
	"runs":  4,
	"tasks": 5, "replicas": 5, "ask": 5, "recovery": 5,
	"triggers": 6,
}

// coreModule names the core module of a package ("" outside core's
// modules: errs and domain are layers of their own).
func coreModule(path string) string {
	rel, ok := strings.CutPrefix(path, module+"/core/")
	if !ok || rel == "errs" || rel == "domain" {
		return ""
	}
	name, _, _ := strings.Cut(rel, "/")
	return name
}

func TestCoreModulesImportDownward(t *testing.T) {
	for _, p := range listPackages(t) {
		from := coreModule(p.ImportPath)
		if from == "" {
			continue
		}
		tier, ok := coreTiers[from]
		if !ok {
			t.Errorf("core/%s has no tier in coreTiers (arch_test.go): give it one below the modules that use it", from)
			continue
		}
		for _, imp := range p.Imports {
			to := coreModule(imp)
			if to == "" || to == from {
				continue
			}
			if toTier, ok := coreTiers[to]; ok && toTier >= tier {
				t.Errorf("core/%s (tier %d) imports core/%s (tier %d): a module imports only lower tiers", from, tier, to, toTier)
			}
		}
	}
}
