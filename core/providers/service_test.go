package providers_test

import (
	"context"
	"crypto/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

var (
	ann   = domain.Principal{User: domain.User{ID: "ann", Role: domain.RoleMember}}
	bob   = domain.Principal{User: domain.User{ID: "bob", Role: domain.RoleMember}}
	admin = domain.Principal{User: domain.User{ID: "root", Role: domain.RoleAdmin}}
)

var start = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// world is a providers service over in-memory stores, sealing under a
// real key so a test sees what is stored at rest.
type world struct {
	svc   *providers.Service
	store *porttest.ConfigStore
	clock *porttest.Clock
	box   *secrets.Box
}

func newWorld(t *testing.T) *world {
	t.Helper()
	key := make([]byte, secrets.KeySize)
	rand.Read(key)
	box, err := secrets.NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{store: &porttest.ConfigStore{}, clock: porttest.NewClock(start), box: box}
	if w.svc, err = providers.New(providers.Deps{Store: w.store, Box: box, IDs: &porttest.IDs{}, Clock: w.clock}); err != nil {
		t.Fatal(err)
	}
	return w
}

// agentOn stores an agent of owner (in scope) on the provider.
func (w *world) agentOn(t *testing.T, id, owner string, scope domain.Scope, providerID string, spec domain.AgentSpec) {
	t.Helper()
	spec.Name, spec.Model, spec.ProviderID = id, "gpt-5", providerID
	a := domain.Agent{ID: id, Ownership: domain.Ownership{Scope: scope, OwnerID: owner}, AgentSpec: spec, CreatedAt: start, UpdatedAt: start}
	ctx := context.Background()
	if err := w.store.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.InsertAgent(ctx, a) }); err != nil {
		t.Fatal(err)
	}
}

func mustCreate(t *testing.T, w *world, p domain.Principal, scope domain.Scope, in providers.Input) domain.Provider {
	t.Helper()
	pr, err := w.svc.Create(context.Background(), p, scope, in)
	if err != nil {
		t.Fatalf("create %+v: %v", in, err)
	}
	return pr
}

// TestAProviderInputIsRefusedFieldByField holds that every bad field is
// named in the validation error, and that nothing is stored.
func TestAProviderInputIsRefusedFieldByField(t *testing.T) {
	ok := providers.Input{Name: "OpenAI"}
	for _, tc := range []struct {
		name  string
		edit  func(*providers.Input)
		field string
		says  string
	}{
		{"no name", func(in *providers.Input) { in.Name = "  " }, "name", "required"},
		{"spaces around the name", func(in *providers.Input) { in.Name = " OpenAI" }, "name", "spaces"},
		{"a name over the bound", func(in *providers.Input) { in.Name = strings.Repeat("é", providers.MaxName+1) }, "name", "one line"},
		{"a name of two lines", func(in *providers.Input) { in.Name = "Open\nAI" }, "name", "one line"},
		{"an unknown type", func(in *providers.Input) { in.Type = "cohere" }, "type", "openai, anthropic"},
		{"an auth mode the type lacks", func(in *providers.Input) { in.Type, in.AuthMode = "anthropic", domain.AuthChatGPTLogin }, "auth_mode", "api_key"},
		{"an API the type lacks", func(in *providers.Input) { in.API = "messages" }, "api", "responses or chat_completions"},
		{"a base URL that is not http", func(in *providers.Input) { in.BaseURL = "ftp://models.example" }, "base_url", "absolute http(s)"},
		{"a relative base URL", func(in *providers.Input) { in.BaseURL = "/v1" }, "base_url", "absolute http(s)"},
		{"a base URL with a query", func(in *providers.Input) { in.BaseURL = "https://models.example/v1?k=1" }, "base_url", "query"},
		{"a base URL with credentials", func(in *providers.Input) { in.BaseURL = "https://me:pw@models.example" }, "base_url", "credentials"},
		{"a key over the bound", func(in *providers.Input) { in.APIKey = strings.Repeat("k", 4097) }, "api_key", "too long"},
		{"chatgpt_login on chat completions", func(in *providers.Input) { in.AuthMode, in.API = domain.AuthChatGPTLogin, "chat_completions" }, "api", "responses"},
		{"chatgpt_login with a base URL", func(in *providers.Input) {
			in.AuthMode, in.BaseURL = domain.AuthChatGPTLogin, "https://api.openai.com/v1"
		}, "base_url", "leave it empty"},
		{"chatgpt_login with a key", func(in *providers.Input) { in.AuthMode, in.APIKey = domain.AuthChatGPTLogin, "sk-1" }, "api_key", "sign in instead"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			in := ok
			tc.edit(&in)
			_, err := w.svc.Create(context.Background(), ann, "", in)
			if got := errs.FieldsOf(err)[tc.field]; !strings.Contains(got, tc.says) {
				t.Fatalf("%s: field %s says %q (%v), want it to say %q", tc.name, tc.field, got, err, tc.says)
			}
			if all, _ := w.svc.List(context.Background(), ann); len(all) != 0 {
				t.Fatalf("a refused provider was stored: %+v", all)
			}
		})
	}
}

// TestAProviderTakesItsTypesDefaults holds the defaults a provider that
// names no type, auth mode or API gets, and how its base URL is kept.
func TestAProviderTakesItsTypesDefaults(t *testing.T) {
	for _, tc := range []struct {
		in                      providers.Input
		typ, auth, api, baseURL string
	}{
		{providers.Input{Name: "a"}, "openai", domain.AuthAPIKey, "responses", ""},
		{providers.Input{Name: "a", BaseURL: "https://API.openai.com/v1/"}, "openai", domain.AuthAPIKey, "responses", "https://API.openai.com/v1"},
		{providers.Input{Name: "a", BaseURL: " http://localhost:11434/v1/ "}, "openai", domain.AuthAPIKey, "chat_completions", "http://localhost:11434/v1"},
		{providers.Input{Name: "a", BaseURL: "http://localhost:8000", API: "responses"}, "openai", domain.AuthAPIKey, "responses", "http://localhost:8000"},
		{providers.Input{Name: "a", Type: "anthropic"}, "anthropic", domain.AuthAPIKey, "messages", ""},
		{providers.Input{Name: "a", AuthMode: domain.AuthChatGPTLogin}, "openai", domain.AuthChatGPTLogin, "responses", ""},
	} {
		w := newWorld(t)
		pr := mustCreate(t, w, ann, "", tc.in)
		if pr.Type != tc.typ || pr.AuthMode != tc.auth || pr.API != tc.api || pr.BaseURL != tc.baseURL {
			t.Errorf("%+v made %s/%s/%s at %q, want %s/%s/%s at %q", tc.in, pr.Type, pr.AuthMode, pr.API, pr.BaseURL,
				tc.typ, tc.auth, tc.api, tc.baseURL)
		}
		if pr.Scope != domain.ScopePrivate || pr.OwnerID != ann.User.ID || !pr.CreatedAt.Equal(start) {
			t.Errorf("created %+v, want ann's private provider made now", pr)
		}
	}
}

// TestAProvidersKeyIsSealedAndTheMaskKeepsItOnlyForItsEndpoint holds that
// the key is stored sealed and opens for the model adapter; that the mask
// keeps it, "" clears it, and a changed endpoint with the mask is refused,
// since the key would go to another backend.
func TestAProvidersKeyIsSealedAndTheMaskKeepsItOnlyForItsEndpoint(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	pr := mustCreate(t, w, ann, "", providers.Input{Name: "OpenAI", APIKey: "sk-secret"})
	stored, _ := w.store.FindProvider(ctx, pr.ID)
	if !strings.HasPrefix(stored.SealedAPIKey, "enc:v2:") || strings.Contains(stored.SealedAPIKey, "sk-secret") {
		t.Fatalf("the key is stored as %q, want it sealed", stored.SealedAPIKey)
	}
	if key, err := w.svc.APIKey(ctx, pr.ID); err != nil || key != "sk-secret" {
		t.Fatalf("APIKey = %q, %v", key, err)
	}
	if _, err := w.svc.Update(ctx, ann, pr.ID, providers.Input{Name: "Renamed", APIKey: secrets.Mask}); err != nil {
		t.Fatal(err)
	}
	if key, _ := w.svc.APIKey(ctx, pr.ID); key != "sk-secret" {
		t.Fatalf("the mask on a rename lost the key: %q", key)
	}
	_, err := w.svc.Update(ctx, ann, pr.ID, providers.Input{Name: "Renamed", BaseURL: "https://evil.example/v1", APIKey: secrets.Mask})
	if !strings.Contains(errs.FieldsOf(err)["api_key"], "previous type and base_url") {
		t.Fatalf("the mask with a new base URL: %v", err)
	}
	if got, _ := w.store.FindProvider(ctx, pr.ID); got.BaseURL != "" {
		t.Fatalf("a refused update moved the provider to %q", got.BaseURL)
	}
	if _, err := w.svc.Update(ctx, ann, pr.ID, providers.Input{Name: "Renamed", BaseURL: "https://other.example/v1", APIKey: "sk-other"}); err != nil {
		t.Fatalf("a new endpoint with a new key: %v", err)
	}
	if key, _ := w.svc.APIKey(ctx, pr.ID); key != "sk-other" {
		t.Fatalf("the new key is %q", key)
	}
	if _, err := w.svc.Update(ctx, ann, pr.ID, providers.Input{Name: "Renamed", BaseURL: "https://other.example/v1"}); err != nil {
		t.Fatal(err)
	}
	if key, _ := w.svc.APIKey(ctx, pr.ID); key != "" {
		t.Fatalf("an empty key left %q stored", key)
	}
	if _, err := w.svc.APIKey(ctx, "missing"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("the key of a missing provider: %v", err)
	}
}

// TestProvidersFollowTheOwnershipRules holds who sees, edits, publishes
// and deletes a provider, and the listing order: others' shared ones
// first, then the caller's own, newest first within each.
func TestProvidersFollowTheOwnershipRules(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	annOld := mustCreate(t, w, ann, "", providers.Input{Name: "ann-old"})
	shared := mustCreate(t, w, admin, domain.ScopeGlobal, providers.Input{Name: "shared"})
	annNew := mustCreate(t, w, ann, "", providers.Input{Name: "ann-new"})
	bobs := mustCreate(t, w, bob, "", providers.Input{Name: "bob's"})

	list, err := w.svc.List(ctx, ann)
	names := []string{}
	for _, p := range list {
		names = append(names, p.Name)
	}
	if err != nil || !slices.Equal(names, []string{"shared", "ann-new", "ann-old"}) {
		t.Fatalf("ann lists %v, %v", names, err)
	}
	if all, _ := w.svc.List(ctx, admin); len(all) != 4 {
		t.Fatalf("an admin lists %d providers, want all 4", len(all))
	}
	if _, err := w.svc.Get(ctx, ann, bobs.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("ann reads bob's private provider: %v", err)
	}
	if _, err := w.svc.Create(ctx, ann, domain.ScopeGlobal, providers.Input{Name: "mine for all"}); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("a member creates a global provider: %v", err)
	}
	if _, err := w.svc.Create(ctx, ann, "public", providers.Input{Name: "x"}); errs.FieldsOf(err)["scope"] == "" {
		t.Fatalf("an unknown scope: %v", err)
	}
	if _, err := w.svc.Create(ctx, ann, "", providers.Input{Name: "ANN-OLD"}); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a taken name in the scope: %v", err)
	}
	for _, tc := range []struct {
		what string
		err  error
		want errs.Code
	}{
		{"ann edits bob's private provider", func() error { _, err := w.svc.Update(ctx, ann, bobs.ID, providers.Input{Name: "x"}); return err }(), errs.NotFound},
		{"ann edits the shared provider", func() error { _, err := w.svc.Update(ctx, ann, shared.ID, providers.Input{Name: "x"}); return err }(), errs.Forbidden},
		{"an admin edits ann's private provider", func() error { _, err := w.svc.Update(ctx, admin, annOld.ID, providers.Input{Name: "x"}); return err }(), errs.Forbidden},
		{"ann deletes the shared provider", w.svc.Delete(ctx, ann, shared.ID), errs.Forbidden},
		{"ann publishes her provider", func() error { _, err := w.svc.SetScope(ctx, ann, annNew.ID, domain.ScopeGlobal); return err }(), errs.Forbidden},
		{"the shared provider published again", func() error { _, err := w.svc.SetScope(ctx, admin, shared.ID, domain.ScopeGlobal); return err }(), errs.Conflict},
	} {
		if errs.CodeOf(tc.err) != tc.want {
			t.Errorf("%s: %v, want %s", tc.what, tc.err, tc.want)
		}
	}
	w.clock.Advance(time.Minute)
	pub, err := w.svc.SetScope(ctx, admin, annNew.ID, domain.ScopeGlobal)
	if err != nil || pub.Scope != domain.ScopeGlobal || !pub.UpdatedAt.Equal(w.clock.Now()) {
		t.Fatalf("an admin publishes ann's provider: %+v, %v", pub, err)
	}
	if got, _ := w.svc.Get(ctx, bob, annNew.ID); got.Name != "ann-new" {
		t.Fatalf("bob does not see the published provider: %+v", got)
	}
	if err := w.svc.Delete(ctx, admin, bobs.ID); err != nil {
		t.Fatalf("an admin deletes bob's private provider: %v", err)
	}
	if _, err := w.svc.Get(ctx, bob, bobs.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a deleted provider is still there: %v", err)
	}
}

// TestAProviderAgentsUseCannotBeBrokenUnderThem holds the refusals that
// keep agents working: no delete while any uses it, no unpublish that
// strands a shared or another's agent, no change of type or API that
// drops a feature an agent's settings rely on.
func TestAProviderAgentsUseCannotBeBrokenUnderThem(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	pr := mustCreate(t, w, admin, domain.ScopeGlobal, providers.Input{Name: "OpenAI"})
	spec := domain.AgentSpec{}
	spec.ModelSettings.Verbosity = "low"
	w.agentOn(t, "bobs-agent", bob.User.ID, domain.ScopePrivate, pr.ID, spec)

	if err := w.svc.Delete(ctx, admin, pr.ID); errs.CodeOf(err) != errs.Conflict || !strings.Contains(err.Error(), "1 agent(s)") {
		t.Fatalf("delete while an agent uses it: %v", err)
	}
	if _, err := w.svc.SetScope(ctx, admin, pr.ID, domain.ScopePrivate); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("unpublish under another person's agent: %v", err)
	}
	_, err := w.svc.Update(ctx, admin, pr.ID, providers.Input{Name: "OpenAI", Type: "anthropic"})
	if errs.CodeOf(err) != errs.Conflict || !strings.Contains(err.Error(), "model_settings.verbosity") {
		t.Fatalf("a type change dropping a feature in use: %v", err)
	}
	if got, _ := w.store.FindProvider(ctx, pr.ID); got.Type != "openai" {
		t.Fatalf("a refused change was stored: %+v", got)
	}
	// Chat Completions carries verbosity, so that change is fine.
	if _, err := w.svc.Update(ctx, admin, pr.ID, providers.Input{Name: "OpenAI", API: "chat_completions"}); err != nil {
		t.Fatalf("a change every agent survives: %v", err)
	}

	// The owner's own private agent does not hold the provider global.
	mine := mustCreate(t, w, admin, domain.ScopeGlobal, providers.Input{Name: "Mine"})
	w.agentOn(t, "roots-agent", admin.User.ID, domain.ScopePrivate, mine.ID, domain.AgentSpec{})
	if got, err := w.svc.SetScope(ctx, admin, mine.ID, domain.ScopePrivate); err != nil || got.Scope != domain.ScopePrivate {
		t.Fatalf("unpublish under the owner's own private agent: %+v, %v", got, err)
	}
}

// TestTheRegistryTellsWhatEachTypeSpeaks holds the registry's answers the
// validation of agents relies on.
func TestTheRegistryTellsWhatEachTypeSpeaks(t *testing.T) {
	openai, ok := providers.LookupType("openai")
	if !ok || !slices.Equal(openai.APINames(), []string{"responses", "chat_completions"}) {
		t.Fatalf("openai: %+v, %v", openai, ok)
	}
	for _, tc := range []struct {
		typ, api, feature string
		want              bool
	}{
		{"openai", "responses", providers.FeatureStoredPrompts, true},
		{"openai", "chat_completions", providers.FeatureStoredPrompts, false},
		{"openai", "chat_completions", providers.FeatureVerbosity, true},
		{"openai", "messages", providers.FeatureVerbosity, false}, // not its API
		{"anthropic", "messages", providers.FeatureVerbosity, false},
		{"anthropic", "messages", "some_new_feature", true},
	} {
		ti, _ := providers.LookupType(tc.typ)
		if got := ti.Supports(tc.api, tc.feature); got != tc.want {
			t.Errorf("%s on %s supports %s: %v, want %v", tc.typ, tc.api, tc.feature, got, tc.want)
		}
	}
	if _, ok := providers.LookupType("cohere"); ok {
		t.Fatal("an unknown type was found")
	}
	var spec domain.AgentSpec
	if got := providers.AgentFeatures(spec); len(got) != 0 {
		t.Fatalf("a plain agent relies on %v", got)
	}
	spec.Session.PromptID = "pmpt_1"
	spec.Behavior.ReasoningItemIDPolicy = "omit"
	spec.ModelSettings.ReasoningSummary = "auto"
	spec.ModelSettings.Verbosity = "high"
	var fields []string
	for _, f := range providers.AgentFeatures(spec) {
		fields = append(fields, f.Field+"="+f.Feature)
	}
	want := []string{"session.prompt_id=stored_prompts", "behavior.reasoning_item_id_policy=reasoning_item_ids",
		"model_settings.reasoning_summary=reasoning_summary", "model_settings.verbosity=verbosity"}
	if !slices.Equal(fields, want) {
		t.Fatalf("features %v, want %v", fields, want)
	}
}

// TestANativeTypeIsOneRowMoreOfTheRegistry holds that an embedding
// program's types come after the built-in ones, speak only the native API
// with none of the vendor features, and that a bad or taken name is
// refused.
func TestANativeTypeIsOneRowMoreOfTheRegistry(t *testing.T) {
	w := newWorld(t)
	with := func(names ...string) (*providers.Service, error) {
		return providers.New(providers.Deps{Store: w.store, Box: w.box, IDs: &porttest.IDs{}, Clock: w.clock, NativeTypes: names})
	}
	for _, bad := range []string{"", " local", strings.Repeat("x", 65), "openai"} {
		if _, err := with(bad); err == nil {
			t.Errorf("the native type %q was taken", bad)
		}
	}
	if _, err := with("local", "local"); err == nil || !strings.Contains(err.Error(), "taken") {
		t.Fatalf("one native type twice: %v", err)
	}
	var err error
	if w.svc, err = with("local"); err != nil {
		t.Fatal(err)
	}
	types := w.svc.Types()
	if len(types) != 3 || types[0].Type != "openai" || types[2].Type != "local" {
		t.Fatalf("types %+v, want the built-ins then local", types)
	}
	if _, ok := providers.LookupType("local"); ok {
		t.Fatal("a workbench's native type leaked into the package registry")
	}
	pr := mustCreate(t, w, ann, "", providers.Input{Name: "In-process", Type: "local", APIKey: "k"})
	if pr.API != providers.NativeAPI || pr.AuthMode != domain.AuthAPIKey {
		t.Fatalf("a native provider %+v", pr)
	}
	ti, _ := w.svc.LookupType("local")
	for _, f := range []string{providers.FeatureStoredPrompts, providers.FeatureReasoningItemIDs, providers.FeatureReasoningSummary, providers.FeatureVerbosity} {
		if ti.Supports(providers.NativeAPI, f) {
			t.Errorf("a native type supports %s", f)
		}
	}
	if _, err := w.svc.Create(context.Background(), ann, "", providers.Input{Name: "x", Type: "nope"}); !strings.Contains(errs.FieldsOf(err)["type"], "local") {
		t.Fatalf("the type error does not list the native type: %v", err)
	}
}
