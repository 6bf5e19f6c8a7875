package httpapi

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/traces"
)

// domainStrings reads the string constants of core/domain whose names
// start with prefix, from the source: a constant added there without a row
// in a table here is found even if nothing else lists it.
func domainStrings(t *testing.T, prefix string) map[string]string {
	t.Helper()
	const dir = "../../core/domain"
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, fi := range files {
		if !strings.HasSuffix(fi.Name(), ".go") || strings.HasSuffix(fi.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, fi.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					lit, ok := valueAt(vs, i).(*ast.BasicLit)
					if !strings.HasPrefix(name.Name, prefix) || !ok || lit.Kind != token.STRING {
						continue
					}
					v, _ := strconv.Unquote(lit.Value)
					out[name.Name] = v
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("core/domain declares no %s… constants: is the path right?", prefix)
	}
	return out
}

func valueAt(vs *ast.ValueSpec, i int) ast.Expr {
	if i < len(vs.Values) {
		return vs.Values[i]
	}
	return nil
}

// TestEveryEventAndCommandHasARow: an event type (Event…) or bus command
// (Command…) of core/domain missing from its table would be missing from
// the document, and from the UI's generated types.
func TestEveryEventAndCommandHasARow(t *testing.T) {
	for _, c := range []struct {
		prefix string
		table  []wireMessage
	}{{"Event", serverEvents}, {"Command", clientCommands}} {
		rows := map[string]bool{}
		for _, m := range c.table {
			if rows[m.Type] {
				t.Errorf("%s is in the %s table twice", m.Type, c.prefix)
			}
			rows[m.Type] = true
		}
		declared := domainStrings(t, c.prefix)
		for _, name := range slices.Sorted(maps.Keys(declared)) {
			if !rows[declared[name]] {
				t.Errorf("domain.%s (%s) has no row in the %s table (openapi_events.go)", name, declared[name], c.prefix)
			}
			delete(rows, declared[name])
		}
		for typ := range rows {
			t.Errorf("the %s table lists %s, which core/domain does not declare", c.prefix, typ)
		}
	}
}

// TestEveryEventIsAnEnvelopeOfTheUnion: each row is a member of its union,
// mapped by its type, with the payload's component.
func TestEveryEventIsAnEnvelopeOfTheUnion(t *testing.T) {
	doc, err := BuildOpenAPI(testServer(t).Routes())
	if err != nil {
		t.Fatal(err)
	}
	for union, table := range map[string][]wireMessage{serverEventUnion: serverEvents, clientCommandUnion: clientCommands} {
		u := doc.Components.Schemas[union]
		if u == nil {
			t.Fatalf("no %s component", union)
		}
		if len(u.Value.OneOf) != len(table) || len(u.Value.Discriminator.Mapping) != len(table) {
			t.Errorf("%s: %d members, %d mapped, %d rows", union, len(u.Value.OneOf), len(u.Value.Discriminator.Mapping), len(table))
		}
		for _, m := range table {
			ref := u.Value.Discriminator.Mapping[m.Type].Ref
			env := doc.Components.Schemas[strings.TrimPrefix(ref, componentPrefix)]
			if env == nil {
				t.Errorf("%s maps %s to %q, which is not a component", union, m.Type, ref)
				continue
			}
			if c := env.Value.Properties["type"].Value.Const; c != m.Type {
				t.Errorf("%s: type is %v", ref, c)
			}
			if p := env.Value.Properties["payload"].Ref; p != componentPrefix+m.Payload.Name() {
				t.Errorf("%s: payload is %s, want %s", ref, p, m.Payload.Name())
			}
		}
	}
}

// TestTheUnionsTellFramesApart validates frames as the server encodes them
// (and a client's commands) against the document, both ways.
func TestTheUnionsTellFramesApart(t *testing.T) {
	doc, err := BuildOpenAPI(testServer(t).Routes())
	if err != nil {
		t.Fatal(err)
	}
	check := func(union string, frame []byte, valid bool) {
		t.Helper()
		var v any
		if err := json.Unmarshal(frame, &v); err != nil {
			t.Fatal(err)
		}
		err := doc.Components.Schemas[union].Value.VisitJSON(v)
		if valid && err != nil {
			t.Errorf("%s refuses %s: %v", union, frame, err)
		}
		if !valid && err == nil {
			t.Errorf("%s accepts %s", union, frame)
		}
	}
	event := func(typ string, seq int64, payload any) []byte {
		ev := domain.NewEvent(typ, payload)
		ev.Seq = seq
		return ev.Envelope()
	}
	now := time.Unix(1700000000, 0)
	span := traces.LiveSpan(domain.Span{ID: "s", RunID: "r", Kind: domain.SpanGeneration, Name: "m", StartedAt: now, EndedAt: now})

	check(serverEventUnion, event(domain.EventRunStarted, 1, domain.RunStartedPayload{RunID: "r", SessionID: "s"}), true)
	check(serverEventUnion, event(domain.EventGap, 0, domain.GapPayload{RunID: "r", Dropped: 3, LastGood: 2, Next: 6}), true)
	check(serverEventUnion, event(domain.EventError, 0, domain.ErrorPayload{SessionID: "s", Code: domain.CodeSessionBusy, Message: "busy"}), true)
	check(serverEventUnion, event(domain.EventTraceSpan, 4, span), true)
	check(serverEventUnion, event(domain.EventTaskUpdated, 5, domain.Task{ID: "t", RunID: "r", Kind: domain.TaskAgent,
		Status: domain.TaskWorking, Attempt: 1}.Info()), true)
	check(serverEventUnion, event(domain.EventRunStarted, 1, domain.RunStartedPayload{RunID: "r", SessionID: "s"}.
		WithTask(domain.Task{ID: "t", ParentSessionID: "p", Label: "l"}.Link())), true)
	check(serverEventUnion, event(domain.EventTitleUpdated, 6, domain.TitleUpdatedPayload{SessionID: "s", RunID: "r", Title: "t"}), true)
	// A payload without a field it always carries, another type's payload,
	// an unknown type.
	check(serverEventUnion, []byte(`{"type":"run.started","seq":1,"payload":{"run_id":"r","session_id":"s"}}`), false)
	check(serverEventUnion, event(domain.EventStep, 2, domain.GapPayload{RunID: "r"}), false)
	check(serverEventUnion, event("run.nonesuch", 2, domain.RunIDPayload{RunID: "r"}), false)

	check(clientCommandUnion, []byte(`{"type":"run.cancel","payload":{"run_id":"r","mode":"graceful"}}`), true)
	check(clientCommandUnion, []byte(`{"type":"run.create","payload":{"session_id":"s","input":"hi","plan":null}}`), true)
	check(clientCommandUnion, []byte(`{"type":"tool.reject","payload":{"tool_call_id":"c","reason":"no"}}`), true)
	check(clientCommandUnion, []byte(`{"type":"run.cancel","payload":{"run_id":"r","mode":"later"}}`), false)
	check(clientCommandUnion, []byte(`{"type":"run.inject","payload":{"run_id":"r","input":"x"}}`), false)
	check(clientCommandUnion, []byte(`{"type":"run.subscribe","payload":{"from_seq":3}}`), false)
}

// TestEveryCommandRuleNamesAField: a rule on a field the payload lacks, or
// on a type no command carries, refuses to build the document.
func TestEveryCommandRuleNamesAField(t *testing.T) {
	build := func() error {
		_, err := BuildOpenAPI(nil)
		return err
	}
	if err := build(); err != nil {
		t.Fatal(err)
	}
	saved := commandFields
	t.Cleanup(func() { commandFields = saved })
	typ := reflect.TypeFor[domain.RunCancelPayload]()
	commandFields = map[reflect.Type]fieldRules{typ: {Requires: []string{"nonesuch"}}}
	if err := build(); err == nil {
		t.Error("a required field the payload lacks was documented")
	}
	commandFields = map[reflect.Type]fieldRules{reflect.TypeFor[domain.GapPayload](): {}}
	if err := build(); err == nil {
		t.Error("rules of a type no command carries were accepted")
	}
}
