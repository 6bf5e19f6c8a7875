package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// ConfigStores is one database as the configuration contract uses it.
type ConfigStores struct {
	Config ports.ConfigStore
	// NewOwner stores a user called name and returns their id: every
	// configuration row names a real owner.
	NewOwner func(t *testing.T, name string) string
}

// configEpoch is when the configuration contract's rows happen: a time a
// store keeps to the millisecond.
var configEpoch = time.Date(2026, 6, 7, 8, 9, 10, 1500000, time.UTC)

// Config is the contract of ports.ConfigStore and its transactions, as the
// configuration services lean on them: rows stored as written (but what a
// write may not change), their order, names unique per scope but for case,
// the references the services check before a delete, memories going with
// their agent, and a transaction that commits whole or not at all. open
// returns a database with no configuration of its own (but the built-in
// guardrails a store seeds).
func Config(t *testing.T, open func(t *testing.T) ConfigStores) {
	t.Run("providers: stored as written, newest first", func(t *testing.T) { configProviders(t, open(t)) })
	t.Run("agents: stored as written, found by what they name", func(t *testing.T) { configAgents(t, open(t)) })
	t.Run("names are unique per scope but for case", func(t *testing.T) { configNames(t, open(t)) })
	t.Run("skills are unique per repo label and name", func(t *testing.T) { configSkills(t, open(t)) })
	t.Run("guardrails: one name space, built-ins first", func(t *testing.T) { configGuardrails(t, open(t)) })
	t.Run("memories: keys unique per scope, going with their agent", func(t *testing.T) { configMemories(t, open(t)) })
	t.Run("workflows: stored as written, found by the agents they run", func(t *testing.T) { configWorkflows(t, open(t)) })
	t.Run("a transaction commits whole or not at all", func(t *testing.T) { configTx(t, open(t)) })
	t.Run("each noun's transaction commits whole or not at all", func(t *testing.T) { configNounTxs(t, open(t)) })
	t.Run("updates and deletes of a missing row are not_found", func(t *testing.T) { configMissing(t, open(t)) })
}

// write runs fn in one configuration transaction.
func write(s ConfigStores, fn func(tx ports.ConfigTx) error) error {
	return s.Config.InConfigTx(context.Background(), fn)
}

func mustWrite(t *testing.T, s ConfigStores, fn func(tx ports.ConfigTx) error) {
	t.Helper()
	if err := write(s, fn); err != nil {
		t.Fatal(err)
	}
}

func private(owner string) domain.Ownership {
	return domain.Ownership{Scope: domain.ScopePrivate, OwnerID: owner}
}

func global(owner string) domain.Ownership {
	return domain.Ownership{Scope: domain.ScopeGlobal, OwnerID: owner}
}

func configProviders(t *testing.T, s ConfigStores) {
	ctx := context.Background()
	u, v := s.NewOwner(t, "u"), s.NewOwner(t, "v")
	p := domain.Provider{ID: "p2", Ownership: private(u), Name: "OpenAI", Type: "openai", AuthMode: domain.AuthAPIKey, API: "responses",
		BaseURL: "https://api.example.com/v1", SealedAPIKey: "enc:v2:x:y", SealedChatGPTToken: "not written", CreatedAt: configEpoch,
		UpdatedAt: configEpoch}
	mustWrite(t, s, func(tx ports.ConfigTx) error { return tx.InsertProvider(ctx, p) })
	// The sign-in token is written only by ChatGPTStore.SwapChatGPTToken.
	want := p
	want.SealedChatGPTToken, want.CreatedAt, want.UpdatedAt = "", kept(p.CreatedAt), kept(p.UpdatedAt)
	if got, err := s.Config.FindProvider(ctx, p.ID); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("stored provider:\n%+v, %v\nwant\n%+v", got, err, want)
	}
	for _, id := range []string{"p3", "p1"} {
		mustWrite(t, s, func(tx ports.ConfigTx) error {
			return tx.InsertProvider(ctx, domain.Provider{ID: id, Ownership: global(u), Name: id, CreatedAt: configEpoch, UpdatedAt: configEpoch})
		})
	}
	if list, err := s.Config.ListProviders(ctx); err != nil || !slices.Equal(idsOf(list, func(p domain.Provider) string { return p.ID }), []string{"p3", "p2", "p1"}) {
		t.Fatalf("providers = %v, %v; want newest (greatest id) first", idsOf(list, func(p domain.Provider) string { return p.ID }), err)
	}

	// An update changes what a client writes; the owner and creation time
	// stay, and the sign-in token is not written.
	later := configEpoch.Add(time.Hour)
	up := domain.Provider{ID: p.ID, Ownership: global(v), Name: "OpenAI 2", Type: "anthropic", AuthMode: domain.AuthChatGPTLogin, API: "messages",
		BaseURL: "https://b.example.com", SealedAPIKey: "enc:v2:z", SealedChatGPTToken: "not written either", CreatedAt: later, UpdatedAt: later}
	mustWrite(t, s, func(tx ports.ConfigTx) error { return tx.UpdateProvider(ctx, up) })
	want = up
	want.OwnerID, want.CreatedAt, want.UpdatedAt, want.SealedChatGPTToken = u, kept(p.CreatedAt), kept(later), ""
	if got, err := s.Config.FindProvider(ctx, p.ID); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("updated provider:\n%+v, %v\nwant\n%+v", got, err, want)
	}
	mustWrite(t, s, func(tx ports.ConfigTx) error { return tx.DeleteProvider(ctx, p.ID) })
	if _, err := s.Config.FindProvider(ctx, p.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a deleted provider: %v, want not_found", err)
	}
}

// idsOf lists the ids of rows.
func idsOf[T any](rows []T, id func(T) string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = id(r)
	}
	return out
}

func agentID(a domain.Agent) string { return a.ID }

// storedSpec is spec as a store reads it back: through its JSON.
func storedSpec(t *testing.T, spec domain.AgentSpec) domain.AgentSpec {
	t.Helper()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var out domain.AgentSpec
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func configAgents(t *testing.T, s ConfigStores) {
	ctx := context.Background()
	u := s.NewOwner(t, "u")
	temp, maxOut, yes := 0.5, 2000, true
	full := domain.Agent{ID: "a1", Ownership: private(u), CreatedAt: configEpoch, UpdatedAt: configEpoch, AgentSpec: domain.AgentSpec{
		Name: "lead", Avatar: "🦊", Description: "d", Instructions: "be brief", Model: "m", ProviderID: "p1", ContextWindow: 128000,
		Behavior:      domain.AgentBehavior{MaxTurns: 9, HandoffDescription: "h", StopAtTools: "t", MaxToolConcurrency: 3, Subagents: &yes},
		Resilience:    domain.AgentResilience{RetryEnabled: true, FallbackModels: []domain.FallbackModel{{ProviderID: "p2", Model: "x"}}},
		Guardrails:    domain.AgentGuardrails{Guardrails: []string{"Content_Filter"}, OutputSchema: json.RawMessage(`{"type":"object"}`)},
		Session:       domain.AgentSession{PromptID: "pr", PromptVersion: "1", HistoryLimit: 20},
		Approval:      domain.AgentApproval{ApproveTools: []string{"exec_command"}},
		Compaction:    domain.AgentCompaction{Enabled: true, ThresholdTokens: 1000, Window: 4, Model: "small", Prompt: "fold"},
		ModelSettings: domain.ModelSettings{Temperature: &temp, MaxOutputTokens: &maxOut, ToolChoice: "auto", ParallelToolCalls: &yes},
		Tools:         []string{}, Skills: nil, Handoffs: []string{"a2"},
		ErrorHandlers: domain.ErrorHandlers{MaxTurns: &domain.ErrorHandler{FinalOutput: json.RawMessage(`"stopped"`), ExcludeFromHistory: true}},
	}}
	helper := domain.Agent{ID: "a2", Ownership: private(u), CreatedAt: configEpoch, UpdatedAt: configEpoch,
		AgentSpec: domain.AgentSpec{Name: "helper", Model: "m", ProviderID: "p2", Skills: []string{}}}
	other := domain.Agent{ID: "a3", Ownership: global(u), CreatedAt: configEpoch, UpdatedAt: configEpoch,
		AgentSpec: domain.AgentSpec{Name: "other", Model: "m", Handoffs: []string{"a2"}, Guardrails: domain.AgentGuardrails{Guardrails: []string{"pii"}}}}
	mustWrite(t, s, func(tx ports.ConfigTx) error {
		return errors.Join(tx.InsertAgent(ctx, full), tx.InsertAgent(ctx, other), tx.InsertAgent(ctx, helper))
	})
	want := full
	want.AgentSpec, want.CreatedAt, want.UpdatedAt = storedSpec(t, full.AgentSpec), kept(configEpoch), kept(configEpoch)
	got, err := s.Config.FindAgent(ctx, full.ID)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("stored agent:\n%+v, %v\nwant\n%+v", got, err, want)
	}
	// What a caller does to a returned agent changes nothing stored; the
	// tri-state skills keep null apart from [].
	got.Handoffs[0], got.Tools = "changed", append(got.Tools, "x")
	if again, _ := s.Config.FindAgent(ctx, full.ID); again.Handoffs[0] != "a2" || len(again.Tools) != 0 || again.Tools == nil || again.Skills != nil {
		t.Fatalf("a stored agent changed with a returned one, or lost its tri-states: %+v", again.AgentSpec)
	}
	if h, _ := s.Config.FindAgent(ctx, helper.ID); h.Skills == nil {
		t.Fatal("skills [] came back as null")
	}
	if list, err := s.Config.ListAgents(ctx); err != nil || !slices.Equal(idsOf(list, agentID), []string{"a3", "a2", "a1"}) {
		t.Fatalf("agents = %v, %v; want newest first", idsOf(list, agentID), err)
	}
	refs := func(what string, list []domain.Agent, err error, want ...string) {
		t.Helper()
		ids := idsOf(list, agentID)
		slices.Sort(ids)
		if err != nil || !slices.Equal(ids, want) && (len(ids) != 0 || len(want) != 0) {
			t.Fatalf("%s = %v, %v; want %v", what, ids, err, want)
		}
	}
	list, err := s.Config.AgentsUsingProvider(ctx, "p2")
	refs("agents using p2 (as provider or fallback)", list, err, "a1", "a2")
	list, err = s.Config.AgentsUsingProvider(ctx, "p9")
	refs("agents using p9", list, err)
	list, err = s.Config.AgentsUsingGuardrail(ctx, "content_filter")
	refs("agents using content_filter (but for case)", list, err, "a1")
	list, err = s.Config.AgentsHandingOffTo(ctx, "a2")
	refs("agents handing off to a2", list, err, "a1", "a3")

	// An update changes the spec and scope; owner and creation time stay.
	later := configEpoch.Add(time.Hour)
	up := helper
	up.Ownership, up.Name, up.Model, up.CreatedAt, up.UpdatedAt = global("someone-else"), "helper 2", "m2", later, later
	mustWrite(t, s, func(tx ports.ConfigTx) error { return tx.UpdateAgent(ctx, up) })
	wantUp := up
	wantUp.OwnerID, wantUp.AgentSpec, wantUp.CreatedAt, wantUp.UpdatedAt = u, storedSpec(t, up.AgentSpec), kept(configEpoch), kept(later)
	if got, err := s.Config.FindAgent(ctx, helper.ID); err != nil || !reflect.DeepEqual(got, wantUp) {
		t.Fatalf("updated agent:\n%+v, %v\nwant\n%+v", got, err, wantUp)
	}
}

func configNames(t *testing.T, s ConfigStores) {
	ctx := context.Background()
	u, v := s.NewOwner(t, "u"), s.NewOwner(t, "v")
	kinds := map[string]struct {
		insert func(tx ports.ConfigTx, id string, own domain.Ownership, name string) error
		update func(tx ports.ConfigTx, id string, own domain.Ownership, name string) error
	}{
		"provider": {
			func(tx ports.ConfigTx, id string, own domain.Ownership, name string) error {
				return tx.InsertProvider(ctx, domain.Provider{ID: id, Ownership: own, Name: name, CreatedAt: configEpoch, UpdatedAt: configEpoch})
			},
			func(tx ports.ConfigTx, id string, own domain.Ownership, name string) error {
				return tx.UpdateProvider(ctx, domain.Provider{ID: id, Ownership: own, Name: name, UpdatedAt: configEpoch})
			}},
		"agent": {
			func(tx ports.ConfigTx, id string, own domain.Ownership, name string) error {
				return tx.InsertAgent(ctx, domain.Agent{ID: id, Ownership: own, AgentSpec: domain.AgentSpec{Name: name, Model: "m"}, CreatedAt: configEpoch,
					UpdatedAt: configEpoch})
			},
			func(tx ports.ConfigTx, id string, own domain.Ownership, name string) error {
				return tx.UpdateAgent(ctx, domain.Agent{ID: id, Ownership: own, AgentSpec: domain.AgentSpec{Name: name, Model: "m"}, UpdatedAt: configEpoch})
			}},
		"workflow": {
			func(tx ports.ConfigTx, id string, own domain.Ownership, name string) error {
				return tx.InsertWorkflow(ctx, domain.Workflow{ID: id, Ownership: own, WorkflowSpec: domain.WorkflowSpec{Name: name}, CreatedAt: configEpoch,
					UpdatedAt: configEpoch})
			},
			func(tx ports.ConfigTx, id string, own domain.Ownership, name string) error {
				return tx.UpdateWorkflow(ctx, domain.Workflow{ID: id, Ownership: own, WorkflowSpec: domain.WorkflowSpec{Name: name}, UpdatedAt: configEpoch})
			}},
		"skill": {
			func(tx ports.ConfigTx, id string, own domain.Ownership, name string) error {
				return tx.InsertSkill(ctx, domain.Skill{ID: id, Ownership: own, Name: name, CreatedAt: configEpoch, UpdatedAt: configEpoch})
			},
			func(tx ports.ConfigTx, id string, own domain.Ownership, name string) error {
				return tx.UpdateSkill(ctx, domain.Skill{ID: id, Ownership: own, Name: name, UpdatedAt: configEpoch})
			}},
	}
	for kind, k := range kinds {
		insert := func(id string, own domain.Ownership, name string) error {
			return write(s, func(tx ports.ConfigTx) error { return k.insert(tx, id, own, name) })
		}
		update := func(id string, own domain.Ownership, name string) error {
			return write(s, func(tx ports.ConfigTx) error { return k.update(tx, id, own, name) })
		}
		for _, ok := range []struct {
			id   string
			own  domain.Ownership
			name string
		}{
			{"1", private(u), "Helper"},
			{"2", private(v), "helper"}, // another owner's privates
			{"3", global(u), "HELPER"},  // a global beside privates
			{"4", global(u), "other"},
			// Only ASCII letters fold, as the columns compare (NOCASE;
			// CITEXT on a cluster without a locale).
			{"6", global(u), "Ärger"},
			{"7", global(u), "ärger"},
		} {
			if err := insert(ok.id, ok.own, ok.name); err != nil {
				t.Fatalf("%s %s (%s): %v", kind, ok.id, ok.name, err)
			}
		}
		for what, err := range map[string]error{
			"a private name taken but for case": insert("5", private(u), "hELPER"),
			"a global name taken but for case":  insert("5", global(v), "helper"),
			"an id taken":                       insert("1", private(v), "fresh"),
			"a rename onto a taken global":      update("4", global(u), "Helper"),
			"a move onto a taken global":        update("1", global(u), "helper"),
		} {
			if errs.CodeOf(err) != errs.Conflict {
				t.Fatalf("%s: %s: %v, want conflict", kind, what, err)
			}
		}
		// An owner is not changed by an update, so a row moved to private
		// is judged among its owner's privates.
		if err := update("4", private(v), "Helper"); errs.CodeOf(err) != errs.Conflict {
			t.Fatalf("%s: a move onto its owner's taken private name: %v, want conflict", kind, err)
		}
		if err := update("3", global(u), "helper"); err != nil {
			t.Fatalf("%s: an update keeping its own name but for case: %v", kind, err)
		}
	}
}

func configSkills(t *testing.T, s ConfigStores) {
	ctx := context.Background()
	ann, bob := s.NewOwner(t, "ann"), s.NewOwner(t, "bob")
	skill := func(id string, own domain.Ownership, label, name string) domain.Skill {
		return domain.Skill{ID: id, Ownership: own, Name: name, Description: "d", Content: "c", RepoLabel: label, CreatedAt: configEpoch,
			UpdatedAt: configEpoch}
	}
	insert := func(sk domain.Skill) error {
		return write(s, func(tx ports.ConfigTx) error { return tx.InsertSkill(ctx, sk) })
	}
	for _, sk := range []domain.Skill{
		skill("1", global(ann), "", "review"),
		skill("2", global(ann), "acme/tools", "review"), // another repository may ship a review
		skill("3", global(ann), "docs.example.com", "review"),
		skill("4", private(ann), "", "review"), // a private one beside the global
		skill("5", private(bob), "", "review"), // and another owner's
	} {
		if err := insert(sk); err != nil {
			t.Fatalf("insert %s (%s): %v", sk.ID, sk.ModelName(), err)
		}
	}
	for _, sk := range []domain.Skill{skill("6", global(bob), "ACME/tools", "Review"), skill("7", private(ann), "", "REVIEW")} {
		if err := insert(sk); errs.CodeOf(err) != errs.Conflict {
			t.Fatalf("insert %s (%s): %v, want conflict", sk.ID, sk.ModelName(), err)
		}
	}
	full := domain.Skill{ID: "8", Ownership: private(bob), Name: "lint", Description: "d", Content: "c", SourceRepo: "https://github.com/acme/tools",
		RepoLabel: "acme/tools", SourcePath: "skills/lint/SKILL.md", SourceCommit: "abc123", Detached: true, CreatedAt: configEpoch, UpdatedAt: configEpoch}
	if err := insert(full); err != nil {
		t.Fatal(err)
	}
	want := full
	want.CreatedAt, want.UpdatedAt = kept(configEpoch), kept(configEpoch)
	if got, err := s.Config.FindSkill(ctx, full.ID); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("stored skill:\n%+v, %v\nwant\n%+v", got, err, want)
	}
	later := configEpoch.Add(time.Hour)
	up := full
	up.Ownership, up.Content, up.Detached, up.CreatedAt, up.UpdatedAt = global(ann), "c2", false, later, later
	mustWrite(t, s, func(tx ports.ConfigTx) error { return tx.UpdateSkill(ctx, up) })
	want = up
	want.OwnerID, want.CreatedAt, want.UpdatedAt = bob, kept(configEpoch), kept(later)
	if got, err := s.Config.FindSkill(ctx, full.ID); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("updated skill:\n%+v, %v\nwant\n%+v", got, err, want)
	}
	if list, err := s.Config.ListSkills(ctx); err != nil || !slices.Equal(idsOf(list, func(s domain.Skill) string { return s.ID }),
		[]string{"8", "5", "4", "3", "2", "1"}) {
		t.Fatalf("skills = %v, %v; want newest first", idsOf(list, func(s domain.Skill) string { return s.ID }), err)
	}
}
