package main

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
)

// A bounded value the document states: where it sits, and its schema.
type boundedField struct {
	owner string   // the component (or operation, for a parameter) stating it
	name  string   // the property (or parameter)
	path  []string // where it sits in a body; "0" steps into an array
	s     *openapi3.Schema
}

// TestDocumentedBoundsAreEnforced proves every minimum, maximum, length,
// size and pattern the document states against the running server: a value
// at the bound is accepted, one past it is refused with a 400 naming the
// field — so the document says neither less nor more than the server
// checks. Every bounded property of every request body and parameter in the
// document must be probed here.
func TestDocumentedBoundsAreEnforced(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("m", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{Text: "hello"}}}}})
	h := startServer(t, testConfig(t))
	prov := h.createProvider(h.admin, protocols(url)["openai-responses"])
	agent := h.createAgent(h.admin, map[string]any{"name": "base", "model": "m", "provider_id": prov.ID})
	edited := h.createAgent(h.admin, map[string]any{"name": "edited", "model": "m"})
	member := h.createUser("bounded", "password-of-bounded", "member")
	sb := h.createSandbox(map[string]any{"name": "base", "type": "docker", "config": map[string]any{"image": "x"}})
	sess := h.createSession(h.admin, map[string]any{"agent_config_id": agent.ID})
	run, _ := h.runEvents(h.admin, sess.ID, map[string]any{"input": "hi"})
	spanID := ""
	for _, sp := range h.traces(h.admin, sess.ID, "?summary=true") {
		if sp.Kind == domain.SpanGeneration {
			spanID = sp.SpanID
		}
	}

	p := &boundProber{h: h, probed: map[string]bool{}}
	p.body("POST", "/api/v1/agents", func(n int) map[string]any { return map[string]any{"name": fmt.Sprintf("a%d", n), "model": "m"} })
	p.body("PUT", "/api/v1/agents/"+edited.ID, func(n int) map[string]any { return map[string]any{"name": fmt.Sprintf("e%d", n), "model": "m"} })
	p.body("POST", "/api/v1/playground/generate", func(int) map[string]any { return map[string]any{"span_id": spanID} })
	p.body("POST", "/api/v1/auth/users", func(n int) map[string]any {
		return map[string]any{"username": fmt.Sprintf("u%d", n), "password": "long-enough"}
	})
	p.body("PATCH", "/api/v1/auth/users/"+member, func(int) map[string]any { return map[string]any{"password": "long-enough"} })
	p.body("POST", "/api/v1/auth/tokens", func(n int) map[string]any { return map[string]any{"name": fmt.Sprintf("t%d", n)} })
	p.body("POST", "/api/v1/providers", func(n int) map[string]any { return map[string]any{"name": fmt.Sprintf("p%d", n)} })
	p.body("PUT", "/api/v1/providers/"+prov.ID, func(int) map[string]any {
		return map[string]any{"name": "base", "api": "responses", "base_url": url + "/v1", "api_key": "********"}
	})
	p.body("POST", "/api/v1/memories", func(n int) map[string]any { return map[string]any{"key": fmt.Sprintf("k%d", n)} })
	p.body("POST", "/api/v1/guardrails", func(n int) map[string]any {
		return map[string]any{"name": fmt.Sprintf("g%d", n), "stages": []any{"input"}, "mode": "max_length", "max_chars": 10}
	})
	p.body("POST", "/api/v1/sandboxes", func(n int) map[string]any {
		return map[string]any{"name": fmt.Sprintf("s%d", n), "type": "docker", "config": map[string]any{"image": "x"}}
	})
	p.body("POST", "/api/v1/projects", func(n int) map[string]any {
		return map[string]any{"name": fmt.Sprintf("pr%d", n), "sandbox_id": sb.ID, "env": []any{map[string]any{"name": "FOO", "value": "bar"}}}
	})
	p.query("/api/v1/sessions/"+sess.ID+"/messages", "limit")
	p.query("/api/v1/sessions/"+sess.ID+"/traces", "limit")
	p.query("/api/v1/runs/"+run+"/events", "from_seq")
	p.query("/api/v1/tasks", "limit")
	p.query("/api/v1/tasks", "offset")
	p.query("/api/v1/search/messages", "q")
	p.query("/api/v1/search/messages?q=hello", "limit")
	p.query("/api/v1/audit", "limit")
	p.query("/api/v1/usage", "limit")
	p.query("/api/v1/usage/me", "limit")
	p.header("/api/v1/runs/"+run+"/events", "Last-Event-ID")

	stated := documentedBounds(h.doc)
	for _, k := range slices.Sorted(maps.Keys(stated)) {
		if !p.probed[k] {
			t.Errorf("the document bounds %s, which no probe here checks against the server", k)
		}
	}
}

// boundProber sends the probes of one server.
type boundProber struct {
	h      *harness
	probed map[string]bool // owner.name of every bound checked
	sent   int             // makes every accepted value new (names are unique)
}

// body probes every bound in the request schema of an operation, starting
// from a minimal accepted body.
func (p *boundProber) body(method, path string, base func(n int) map[string]any) {
	h := p.h
	h.t.Helper()
	var fields []boundedField
	walkBounds(h.requestSchema(method, path), "", nil, &fields)
	for _, f := range fields {
		p.probed[f.owner+"."+f.name] = true
		for _, v := range p.values(f.s) {
			p.sent++
			b := base(p.sent)
			setAt(b, f.path, v.value)
			p.expect(method+" "+path, v, errorField(f.path), h.call(method, path, h.admin, b))
		}
	}
}

// query probes a bounded query parameter on a GET.
func (p *boundProber) query(path, name string) {
	sep := "?" // a path may carry the other parameters its operation needs
	if strings.Contains(path, "?") {
		sep = "&"
	}
	p.param(path, name, func(v any) reply {
		return p.h.call("GET", path+sep+url.Values{name: {fmt.Sprint(v)}}.Encode(), p.h.admin, nil)
	})
}

// header probes a bounded request header on a GET.
func (p *boundProber) header(path, name string) {
	p.param(path, name, func(v any) reply { return p.h.call("GET", path, p.h.admin, nil, name, fmt.Sprint(v)) })
}

func (p *boundProber) param(path, name string, send func(any) reply) {
	h := p.h
	h.t.Helper()
	op := h.operation("GET", path)
	for _, pr := range op.Parameters {
		if pr.Value.Name != name {
			continue
		}
		p.probed[op.OperationID+"."+name] = true
		for _, v := range p.values(pr.Value.Schema.Value) {
			p.expect("GET "+path+" "+name, v, name, send(v.value))
		}
		return
	}
	h.t.Fatalf("%s documents no parameter %s", path, name)
}

// probeValue is a value to send and whether the server must accept it.
type probeValue struct {
	value  any
	accept bool
	what   string
}

// values returns, for each bound of s, a value at it (accepted) and one
// past it (refused). A list at its largest size is not sent: its entries
// would have to be valid and distinct (tools that exist, agents to hand off
// to); the constant it comes from is the validator's own.
func (p *boundProber) values(s *openapi3.Schema) []probeValue {
	var out []probeValue
	integer := s.Type.Includes("integer")
	step := 0.5
	if integer {
		step = 1
	}
	num := func(f float64) any {
		if integer {
			return int64(f)
		}
		return f
	}
	if s.Max != nil {
		out = append(out, probeValue{num(*s.Max), true, "the maximum"}, probeValue{num(*s.Max + step), false, "past the maximum"})
	}
	if s.Min != nil {
		out = append(out, probeValue{num(*s.Min), true, "the minimum"}, probeValue{num(*s.Min - step), false, "below the minimum"})
	}
	if lo := s.ExclusiveMin.Value; lo != nil {
		out = append(out, probeValue{*lo + 0.001, true, "just above the exclusive minimum"}, probeValue{*lo, false, "the exclusive minimum"})
	}
	// Characters, not bytes: é is two bytes in UTF-8.
	chars := func(n uint64) string {
		p.sent++
		id := strconv.Itoa(p.sent)
		return id + strings.Repeat("é", int(n)-len(id))
	}
	if s.MaxLength != nil {
		out = append(out, probeValue{chars(*s.MaxLength), true, "the longest"}, probeValue{chars(*s.MaxLength + 1), false, "too long"})
	}
	if n := s.MinLength; n > 0 {
		out = append(out, probeValue{chars(n), true, "the shortest"}, probeValue{strings.Repeat("é", int(n)-1), false, "too short"})
	}
	if s.MaxItems != nil {
		out = append(out, probeValue{listOf(s.Items.Value, int(*s.MaxItems)+1), false, "too many entries"})
	}
	if n := s.MinItems; n > 0 {
		out = append(out, probeValue{listOf(s.Items.Value, int(n)-1), false, "too few entries"})
	}
	if s.Pattern != "" {
		sample, ok := patternSamples[s.Pattern]
		if !ok {
			p.h.t.Fatalf("no samples for the pattern %s", s.Pattern)
		}
		out = append(out, probeValue{sample[0], true, "a match"}, probeValue{sample[1], false, "a mismatch"})
	}
	return out
}

// patternSamples are a matching and a mismatching value of each pattern the
// document states.
var patternSamples = map[string][2]string{domain.EnvNamePattern: {"A_1", "1A"}}

// expect checks one probe's answer.
func (p *boundProber) expect(where string, v probeValue, field string, r reply) {
	t := p.h.t
	t.Helper()
	if v.accept {
		if r.Status < 200 || r.Status >= 300 {
			t.Fatalf("%s: %s of %s (%v) was refused: %d %s", where, v.what, field, v.value, r.Status, r.Body)
		}
		return
	}
	d := r.wantErr(t, 400, "validation")
	if _, ok := d.Fields[field]; !ok {
		t.Fatalf("%s: %s of %s was refused, but not for that field: %v", where, v.what, field, d.Fields)
	}
}

// documentedBounds lists every bounded property of every request body and
// every bounded parameter in the document, as owner.name.
func documentedBounds(doc *openapi3.T) map[string]bool {
	out := map[string]bool{}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, pr := range op.Parameters {
				if isBounded(pr.Value.Schema.Value) {
					out[op.OperationID+"."+pr.Value.Name] = true
				}
			}
			if op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json") == nil {
				continue // no body, or an upload: its bound is the body limit
			}
			var fields []boundedField
			walkBounds(op.RequestBody.Value.Content.Get("application/json").Schema, "", nil, &fields)
			for _, f := range fields {
				out[f.owner+"."+f.name] = true
			}
		}
	}
	return out
}

// walkBounds collects the bounded properties under a schema, each owned by
// the component that states it.
func walkBounds(ref *openapi3.SchemaRef, owner string, path []string, out *[]boundedField) {
	if ref.Ref != "" {
		owner = ref.Ref[strings.LastIndex(ref.Ref, "/")+1:]
	}
	s := ref.Value
	for _, part := range s.AllOf {
		walkBounds(part, owner, path, out)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		prop := s.Properties[name]
		at := append(slices.Clone(path), name)
		if isBounded(prop.Value) {
			*out = append(*out, boundedField{owner: owner, name: name, path: at, s: prop.Value})
		}
		walkBounds(prop, owner, at, out)
	}
	if s.Items != nil {
		walkBounds(s.Items, owner, append(slices.Clone(path), "0"), out)
	}
}

func isBounded(s *openapi3.Schema) bool {
	return s.Min != nil || s.Max != nil || s.ExclusiveMin.IsSet() || s.MaxLength != nil || s.MinLength > 0 ||
		s.MaxItems != nil || s.MinItems > 0 || s.Pattern != ""
}

// listOf returns n entries fit for an items schema: strings, or objects with
// their required properties set.
func listOf(items *openapi3.Schema, n int) []any {
	out := make([]any, n)
	for i := range out {
		if !items.Type.Includes("object") && len(items.Properties) == 0 {
			out[i] = fmt.Sprintf("x%d", i)
			continue
		}
		obj := map[string]any{}
		for _, r := range items.Required {
			obj[r] = fmt.Sprintf("X%d", i)
		}
		out[i] = obj
	}
	return out
}

// setAt sets a value at a body path, making the objects on the way.
func setAt(body map[string]any, path []string, v any) {
	var cur any = body
	for i, step := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[step] = v
				return
			}
			if c[step] == nil {
				c[step] = map[string]any{}
			}
			cur = c[step]
		case []any:
			k, _ := strconv.Atoi(step)
			if last {
				c[k] = v
				return
			}
			cur = c[k]
		}
	}
}

// errorField is how the server names a body path in a validation error:
// env[0].name for env.0.name.
func errorField(path []string) string {
	var b strings.Builder
	for i, step := range path {
		if _, err := strconv.Atoi(step); err == nil {
			b.WriteString("[" + step + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(step)
	}
	return b.String()
}
