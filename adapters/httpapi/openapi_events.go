package httpapi

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/traces"
)

// The event table: every event the server sends on the WebSocket bus and
// on a run's SSE stream, with the Go type of its payload. The document
// describes each payload as a component, each event as the envelope
// {type, seq?, payload}, and all of them as the ServerEvent union, so the
// UI's event types are generated rather than copied. A test fails when an
// event type of core/domain has no row.
var serverEvents = []wireMessage{
	message[domain.RunStartedPayload](domain.EventRunStarted),
	message[domain.AgentStartPayload](domain.EventAgentStart),
	message[domain.DeltaPayload](domain.EventStep),
	message[domain.DeltaPayload](domain.EventReasoning),
	message[domain.TextPayload](domain.EventMessage),
	message[domain.TextPayload](domain.EventReasoningItem),
	message[domain.ToolCallPayload](domain.EventToolCall),
	message[domain.ToolProgressPayload](domain.EventToolProgress),
	message[domain.ToolResultPayload](domain.EventToolResult),
	message[domain.HandoffPayload](domain.EventHandoff),
	message[domain.CompactionPayload](domain.EventCompaction),
	message[domain.OutputPayload](domain.EventOutput),
	message[domain.RunIDPayload](domain.EventInterrupted),
	message[domain.DiagnosticPayload](domain.EventDiagnostic),
	message[domain.GapPayload](domain.EventGap),
	message[domain.ErrorPayload](domain.EventError),
	message[domain.CancelledPayload](domain.EventCancelled),
	message[domain.InjectedPayload](domain.EventInjected),
	message[domain.TitleUpdatedPayload](domain.EventTitleUpdated),
	message[domain.ProjectBoundPayload](domain.EventProjectBound),
	message[domain.TaskUpdatedPayload](domain.EventTaskUpdated),
	message[traces.SpanPayload](domain.EventTraceSpan),
}

// The command table: what a client sends on the WebSocket bus, described
// as the ClientCommand union of {type, payload} envelopes. A test fails
// when a command of core/domain has no row.
var clientCommands = []wireMessage{
	message[domain.RunCreatePayload](domain.CommandRunCreate),
	message[domain.RunSubscribePayload](domain.CommandRunSubscribe),
	message[domain.RunCancelPayload](domain.CommandRunCancel),
	message[domain.RunInjectPayload](domain.CommandRunInject),
	message[domain.ToolDecisionPayload](domain.CommandToolApprove),
	message[domain.ToolDecisionPayload](domain.CommandToolReject),
}

// commandFields states what the bus checks in a command's payload, which
// core/domain's types (JSON tags only) cannot say: the fields it refuses
// to go without (the values a field may take come from its enum type).
var commandFields = map[reflect.Type]fieldRules{
	reflect.TypeFor[domain.RunCreatePayload]():    {Requires: []string{"session_id"}},
	reflect.TypeFor[domain.RunSubscribePayload](): {Requires: []string{"run_id"}},
	reflect.TypeFor[domain.RunCancelPayload]():    {Requires: []string{"run_id"}},
	reflect.TypeFor[domain.RunInjectPayload]():    {Requires: []string{"run_id", "queue", "input"}},
	reflect.TypeFor[domain.ToolDecisionPayload](): {Requires: []string{"tool_call_id"}},
}

// wireMessage is one row of the event or command table.
type wireMessage struct {
	Type    string       // the envelope's type, e.g. run.started
	Payload reflect.Type // the Go type of its payload
}

func message[P any](typ string) wireMessage {
	return wireMessage{Type: typ, Payload: reflect.TypeFor[P]()}
}

// fieldRules are a request payload's demands beyond its Go type.
type fieldRules struct {
	Requires []string
}

// The union components, and the suffixes of their members' names.
const (
	serverEventUnion   = "ServerEvent"
	clientCommandUnion = "ClientCommand"
	eventSuffix        = "Event"
	commandSuffix      = "Command"
	componentPrefix    = "#/components/schemas/"
)

// addServerEvents writes the event table into the document's components
// with the response side's generator: a payload carries every field it
// has no omitempty on, like any response.
func addServerEvents(doc *openapi3.T, g *schemaGen) error {
	_, err := addUnion(doc, g, serverEvents, serverEventUnion, eventSuffix,
		"A frame the server sends on the WebSocket bus, and the data of a run's SSE event: one envelope per event type, "+
			"told apart by type. A client shows an event type it does not know generically, never drops it.")
	return err
}

// addClientCommands writes the command table into the document's
// components with the request side's generator, plus commandFields.
func addClientCommands(doc *openapi3.T, g *schemaGen) error {
	payloads, err := addUnion(doc, g, clientCommands, clientCommandUnion, commandSuffix,
		"A command a client sends on the WebSocket bus, once authenticated. Success is seen in the events that follow; "+
			"a refused command is answered with run.error (no seq).")
	if err != nil {
		return err
	}
	for t, rules := range commandFields {
		ref, ok := payloads[t]
		if !ok {
			return fmt.Errorf("commandFields: %s is no command's payload", t)
		}
		if err := rules.apply(doc.Components.Schemas[strings.TrimPrefix(ref.Ref, componentPrefix)], t); err != nil {
			return err
		}
	}
	return nil
}

// addUnion describes each message of a table as the envelope component
// <Type><suffix> — {type, payload}, plus seq for events — and their union
// as the component named union, discriminated by type. It returns the
// payload component of each payload type.
func addUnion(doc *openapi3.T, g *schemaGen, table []wireMessage, union, suffix, description string) (map[reflect.Type]*openapi3.SchemaRef, error) {
	payloads := map[reflect.Type]*openapi3.SchemaRef{}
	u := &openapi3.Schema{Description: description,
		Discriminator: &openapi3.Discriminator{PropertyName: "type", Mapping: map[string]openapi3.MappingRef{}}}
	for _, m := range table {
		payload, err := payloadSchema(doc, g, m.Payload)
		if err != nil {
			return nil, err
		}
		payloads[m.Payload] = payload
		name := messageName(m.Type) + suffix
		if doc.Components.Schemas[name] != nil {
			return nil, fmt.Errorf("component %s would describe two messages (%s)", name, m.Type)
		}
		env := openapi3.NewObjectSchema().
			WithPropertyRef("type", openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString}, Const: m.Type})).
			WithPropertyRef("payload", payload)
		env.Required = []string{"payload", "type"}
		if suffix == eventSuffix {
			seq := openapi3.NewInt64Schema().WithMin(1)
			seq.Description = "The event's number in its run (the SSE id); absent on an event of the connection alone " +
				"(run.gap, a refused command's run.error)"
			env.WithPropertyRef("seq", openapi3.NewSchemaRef("", seq))
		}
		doc.Components.Schemas[name] = openapi3.NewSchemaRef("", env)
		ref := componentPrefix + name
		u.OneOf = append(u.OneOf, openapi3.NewSchemaRef(ref, nil))
		u.Discriminator.Mapping[m.Type] = openapi3.MappingRef{Ref: ref}
	}
	doc.Components.Schemas[union] = openapi3.NewSchemaRef("", u)
	return payloads, nil
}

// payloadSchema is the component reference of a payload type. The
// generator names struct types only; a payload of another kind (an open
// object) is named here, after its Go type, all the same.
func payloadSchema(doc *openapi3.T, g *schemaGen, t reflect.Type) (*openapi3.SchemaRef, error) {
	ref, err := g.schemaOf(t)
	if err != nil || ref.Ref != "" {
		return ref, err
	}
	if prev := doc.Components.Schemas[t.Name()]; prev != nil && prev.Value != ref.Value {
		return nil, fmt.Errorf("component %s would describe two payload types", t.Name())
	}
	doc.Components.Schemas[t.Name()] = ref
	return openapi3.NewSchemaRef(componentPrefix+t.Name(), nil), nil
}

// messageName turns a message type into a component name: run.tool_call
// becomes RunToolCall.
func messageName(typ string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(typ, func(r rune) bool { return r == '.' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// apply writes the rules into the payload's component, refusing a rule on
// a field the type does not have (it would state nothing, silently).
func (r fieldRules) apply(ref *openapi3.SchemaRef, t reflect.Type) error {
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("the component of %s is missing", t)
	}
	s := ref.Value
	for _, f := range r.Requires {
		if s.Properties[f] == nil {
			return fmt.Errorf("%s requires %q, which it does not have", t, f)
		}
		if !slices.Contains(s.Required, f) {
			s.Required = append(s.Required, f)
		}
	}
	slices.Sort(s.Required)
	return nil
}
