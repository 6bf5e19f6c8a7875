// Command e2bgen generates the E2B clients (and the server interfaces the
// test double implements) from the specifications in
// adapters/sandbox/e2b/spec: the
// control plane and the in-sandbox daemon's HTTP API with oapi-codegen, the
// daemon's process and filesystem services with protoc-gen-go and
// protoc-gen-connect-go. No protoc is needed: the .proto files are compiled
// by protocompile (pure Go) and the plugins are fed the request protoc
// would send them. Run it with `go tool task gen:e2b`; -out writes the
// tree elsewhere (the staleness test compares it with the committed one).
// It lives in the tools module so its compiler (protocompile) stays out of
// the graph of every program that imports the workbench.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

// genPkg is the import path the generated packages live under.
const genPkg = "github.com/agents-server/agents-server/adapters/sandbox/e2b/gen"

// genDir is the generated tree, relative to the module root.
const genDir = "adapters/sandbox/e2b/gen"

// specDir holds the specifications, relative to the module root.
const specDir = "adapters/sandbox/e2b/spec"

// protos are the daemon's services and the Go package each lands in.
var protos = map[string]string{"process.proto": "process", "filesystem.proto": "filesystem"}

// openapis are the REST specifications, their oapi-codegen configs and
// where their code lands.
var openapis = []struct{ spec, config, out string }{
	{"openapi.yml", "oapi-api.yaml", "api/api.gen.go"},
	{"envd.yaml", "oapi-envd.yaml", "envd/envd.gen.go"},
}

func main() {
	out := flag.String("out", "", "where the generated tree goes (default: the committed one)")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "e2bgen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join(root, genDir)
	}
	if out, err = filepath.Abs(out); err != nil {
		return err
	}
	// oapi-codegen reads its overlay paths relative to the working directory.
	if err := os.Chdir(root); err != nil {
		return err
	}
	for _, o := range openapis {
		code, err := goTool(nil, "oapi-codegen", "-config", filepath.Join(genDir, o.config), filepath.Join(specDir, o.spec))
		if err != nil {
			return fmt.Errorf("oapi-codegen %s: %w", o.spec, err)
		}
		if err := write(out, o.out, code); err != nil {
			return err
		}
	}
	req, err := pluginRequest()
	if err != nil {
		return err
	}
	for _, plugin := range []string{"protoc-gen-go", "protoc-gen-connect-go"} {
		files, err := runPlugin(plugin, req)
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := write(out, f.GetName(), []byte(f.GetContent())); err != nil {
				return err
			}
		}
	}
	return nil
}

// moduleRoot is the directory of the main module's go.mod.
func moduleRoot() (string, error) {
	// The generator lives in tools/, a module of its own the workspace
	// joins: the workbench's module is found through the workspace, not as
	// the module of the working directory.
	b, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", workbenchModule).Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s (run it inside the repository's workspace): %w", workbenchModule, err)
	}
	dir := strings.TrimSpace(string(b))
	if dir == "" {
		return "", errors.New("the workbench's module has no directory here")
	}
	return dir, nil
}

// workbenchModule is the module whose clients are generated.
const workbenchModule = "github.com/agents-server/agents-server"

// goTool runs a tool of the module with stdin and returns its stdout.
func goTool(stdin []byte, name string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", append([]string{"tool", name}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return b, nil
}

// write puts one generated file under out.
func write(out, name string, code []byte) error {
	path := filepath.Join(out, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, code, 0o644)
}

// pluginRequest compiles the .proto files and builds the request protoc
// would hand a plugin: every file in dependency order, the services to
// generate, and where their Go packages live (the files declare none).
func pluginRequest() (*pluginpb.CodeGeneratorRequest, error) {
	var names []string
	params := []string{"module=" + genPkg}
	for _, name := range []string{"filesystem.proto", "process.proto"} {
		names = append(names, name)
		params = append(params, fmt.Sprintf("M%s=%s/%s;%s", name, genPkg, protos[name], protos[name]))
	}
	c := protocompile.Compiler{
		Resolver:       protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{specDir}}),
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	files, err := c.Compile(context.Background(), names...)
	if err != nil {
		return nil, fmt.Errorf("compiling the protos: %w", err)
	}
	var all []*descriptorpb.FileDescriptorProto
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		imports := fd.Imports()
		for i := 0; i < imports.Len(); i++ {
			add(imports.Get(i).FileDescriptor)
		}
		all = append(all, protodesc.ToFileDescriptorProto(fd))
	}
	for _, f := range files {
		add(f)
	}
	return &pluginpb.CodeGeneratorRequest{
		FileToGenerate: names,
		Parameter:      proto.String(strings.Join(params, ",")),
		ProtoFile:      all,
	}, nil
}

// runPlugin feeds the request to a protoc plugin (a tool of the module).
func runPlugin(plugin string, req *pluginpb.CodeGeneratorRequest) ([]*pluginpb.CodeGeneratorResponse_File, error) {
	in, err := proto.Marshal(req)
	if err != nil {
		return nil, err
	}
	out, err := goTool(in, plugin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", plugin, err)
	}
	var resp pluginpb.CodeGeneratorResponse
	if err := proto.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("%s answered: %w", plugin, err)
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("%s: %s", plugin, resp.GetError())
	}
	return resp.File, nil
}
