package porttest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

func TestLLMScripts(t *testing.T) {
	ctx := context.Background()
	m := &porttest.LLM{}
	m.Route(porttest.ForModel("b"), porttest.Reply{Text: "from b"})
	m.Queue(porttest.Reply{Reasoning: "hm", Text: "two words", Calls: []porttest.Call{{Name: "f"}}},
		porttest.Fail(ports.ModelRateLimited, "slow"))
	var deltas []ports.ModelDelta
	resp, err := m.Generate(ctx, ports.ModelRequest{Model: "a"}, func(d ports.ModelDelta) { deltas = append(deltas, d) })
	if err != nil || len(resp.Output) != 3 || len(deltas) != 4 || deltas[3].Kind != ports.DeltaArguments || deltas[3].Text != "{}" {
		t.Fatalf("resp %+v, deltas %+v, %v", resp, deltas, err)
	}
	if resp, err := m.Generate(ctx, ports.ModelRequest{Model: "b"}, nil); err != nil || resp.Model != "b" {
		t.Fatalf("routed: %+v, %v", resp, err)
	}
	_, err = m.Generate(ctx, ports.ModelRequest{Model: "a", Endpoint: ports.ProviderEndpoint{Name: "p"}}, nil)
	var me *ports.ModelError
	if !errors.As(err, &me) || me.Kind != ports.ModelRateLimited || me.Status != 429 || me.Provider != "p" {
		t.Fatalf("scripted failure: %v", err)
	}
	if _, err := m.Generate(ctx, ports.ModelRequest{Model: "a"}, nil); !errors.As(err, &me) || me.Kind != ports.ModelInvalid {
		t.Fatalf("an unscripted call: %v", err)
	}
	m.Queue(porttest.Reply{Block: true})
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		_, err := m.Generate(cctx, ports.ModelRequest{Model: "a"}, nil)
		done <- err
	}()
	if _, err := m.Await(ctx, 5, nil); err != nil {
		t.Fatal(err)
	}
	if m.Open() != 1 {
		t.Fatalf("%d calls open", m.Open())
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || m.Open() != 0 {
		t.Fatalf("a blocked call: %v (%d open)", err, m.Open())
	}
	if n := len(m.Requests()); n != 5 {
		t.Fatalf("%d requests recorded", n)
	}
}
