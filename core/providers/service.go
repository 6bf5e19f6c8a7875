package providers

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/ports"
)

const what = "provider"

// MaxName bounds a provider's name, in characters.
const MaxName = 100

// Input is what a client writes about a provider. PUT is a full replace:
// omitted fields take their defaults, except APIKey, where the mask keeps
// the stored key.
type Input struct {
	Name     string
	Type     string
	AuthMode string
	API      string
	BaseURL  string
	APIKey   string
}

// Service manages providers.
type Service struct {
	store ports.ProviderStore
	box   *secrets.Box
	ids   ports.IDs
	clock ports.Clock
	gpt   *chatgpt // nil: no ChatGPT sign-in (Deps.ChatGPT)
	types Types    // Registry, then the embedding program's types
}

// Deps are what a Service needs.
type Deps struct {
	Store ports.ProviderStore
	Box   *secrets.Box // seals keys and sign-ins
	IDs   ports.IDs
	Clock ports.Clock
	// ChatGPT lets chatgpt_login providers sign in through OpenAI's auth
	// server, keeping the sign-ins in ChatGPTStore (nil: the sign-in
	// routes answer unavailable).
	ChatGPT      ports.ChatGPTAuth
	ChatGPTStore ports.ChatGPTStore
	// NativeTypes are provider types whose model calls the embedding
	// program answers in Go (see NativeType), after the registry's.
	NativeTypes []string
	// Log hears the revocations of forgotten sign-ins that failed (nil:
	// none is logged).
	Log *slog.Logger
}

// New returns a Service. Returns an error for a native type whose name is
// empty, padded, too long or taken.
func New(d Deps) (*Service, error) {
	s := &Service{store: d.Store, box: d.Box, ids: d.IDs, clock: d.Clock, types: slices.Clone(Registry)}
	if d.ChatGPT != nil {
		log := d.Log
		if log == nil {
			log = slog.New(slog.DiscardHandler)
		}
		s.gpt = &chatgpt{auth: d.ChatGPT, store: d.ChatGPTStore, log: log, locks: map[string]*sync.Mutex{}, revoked: map[string]bool{}}
	}
	for _, name := range d.NativeTypes {
		if err := s.addNativeType(name); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// addNativeType adds a provider type whose model calls the embedding
// program answers in Go.
func (s *Service) addNativeType(name string) error {
	if name == "" || strings.TrimSpace(name) != name || len(name) > 64 {
		return fmt.Errorf("provider type %q: use a short name without spaces around it", name)
	}
	if _, ok := s.LookupType(name); ok {
		return fmt.Errorf("provider type %q is taken", name)
	}
	s.types = append(s.types, NativeType(name))
	return nil
}

// Types returns every provider type this workbench knows, the built-in
// ones first.
func (s *Service) Types() []TypeInfo { return slices.Clone(s.types) }

// LookupType returns this workbench's provider type of that name.
func (s *Service) LookupType(t string) (TypeInfo, bool) { return s.types.Lookup(t) }

func keyPlace(providerID string) string { return secrets.Place("providers", "api_key", providerID) }

// List returns the providers the caller can see: others' shared ones first,
// then the caller's own, newest first within each.
func (s *Service) List(ctx context.Context, p domain.Principal) ([]domain.Provider, error) {
	all, err := s.store.ListProviders(ctx)
	if err != nil {
		return nil, err
	}
	return domain.VisibleOrdered(all, p, func(x domain.Provider) domain.Ownership { return x.Ownership }), nil
}

// Get returns one provider; another user's private one is not_found.
func (s *Service) Get(ctx context.Context, p domain.Principal, id string) (domain.Provider, error) {
	pr, err := s.store.FindProvider(ctx, id)
	if err != nil {
		return pr, err
	}
	return pr, pr.CheckRead(p, what)
}

// Create adds a provider owned by the caller, private unless an admin asks
// for global. Returns validation, forbidden, or conflict for a taken name.
func (s *Service) Create(ctx context.Context, p domain.Principal, scope domain.Scope, in Input) (domain.Provider, error) {
	if scope == "" {
		scope = domain.ScopePrivate
	}
	if err := domain.CheckCreate(p, scope, what); err != nil {
		return domain.Provider{}, err
	}
	now := s.clock.Now()
	pr := domain.Provider{ID: s.ids.NewID(), Ownership: domain.Ownership{Scope: scope, OwnerID: p.User.ID}, CreatedAt: now, UpdatedAt: now}
	if err := s.apply(&pr, in, ""); err != nil {
		return domain.Provider{}, err
	}
	actx := audit.Change(ctx, now, "provider.create", audit.Object{Kind: "provider", ID: pr.ID, Name: pr.Name}, audit.Diff(nil, pr)...)
	return pr, s.store.InProviderTx(actx, func(tx ports.ProviderTx) error { return tx.InsertProvider(ctx, pr) })
}

// Update replaces a provider's fields. The mask keeps the stored key, but
// only for the endpoint it was stored for: a changed type or base_url with
// the mask is refused, since restoring the key would send one backend's
// credential to another. A provider that stops signing in with ChatGPT
// forgets its sign-in, which is revoked (see revokeForgotten). Returns
// not_found, forbidden, validation, conflict.
func (s *Service) Update(ctx context.Context, p domain.Principal, id string, in Input) (domain.Provider, error) {
	var out, before domain.Provider
	actx, rec := audit.Stage(ctx, s.clock.Now(), "provider.update", audit.Object{Kind: "provider", ID: id})
	err := s.store.InProviderTx(actx, func(tx ports.ProviderTx) error {
		pr, err := tx.FindProvider(ctx, id)
		if err != nil {
			return err
		}
		if err := pr.CheckUpdate(p, what); err != nil {
			return err
		}
		before = pr
		if err := s.apply(&pr, in, before.SealedAPIKey); err != nil {
			return err
		}
		if in.APIKey == secrets.Mask && before.SealedAPIKey != "" && (pr.Type != before.Type || pr.BaseURL != before.BaseURL) {
			return errs.Field("api_key", "the stored key belongs to the previous type and base_url: send a new key or clear it")
		}
		if err := s.checkUses(ctx, tx, pr); err != nil {
			return err
		}
		pr.UpdatedAt = s.clock.Now()
		out = pr
		audit.Changed(rec, pr.Name, before, pr)
		return tx.UpdateProvider(ctx, pr)
	})
	if err == nil && before.ChatGPTLoggedIn() && out.AuthMode != domain.AuthChatGPTLogin {
		s.revokeForgotten(ctx, before, before.SealedChatGPTToken) // the store dropped it with the switch
	}
	return out, err
}

// checkUses refuses a change that would break an agent using the provider:
// an agent knob whose request feature the new type or API lacks.
func (s *Service) checkUses(ctx context.Context, tx ports.ProviderTx, pr domain.Provider) error {
	users, err := tx.AgentsUsingProvider(ctx, pr.ID)
	if err != nil {
		return err
	}
	ti, _ := s.LookupType(pr.Type)
	for _, a := range users {
		if a.ProviderID != pr.ID {
			continue
		}
		for _, feature := range AgentFeatures(a.AgentSpec) {
			if !ti.Supports(pr.API, feature.Feature) {
				return errs.E(errs.Conflict, "an agent using this provider sets %s, which %s (%s) does not support", feature.Field, pr.Type, pr.API)
			}
		}
	}
	return nil
}

// apply validates in and writes it into pr; storedKey is the sealed key the
// mask keeps. Returns validation naming every offending field.
func (s *Service) apply(pr *domain.Provider, in Input, storedKey string) error {
	var f errs.FieldErrors
	name := strings.TrimSpace(in.Name)
	switch {
	case name == "":
		f.Add("name", "is required")
	case name != in.Name:
		f.Add("name", "must not start or end with spaces")
	case utf8.RuneCountInString(name) > MaxName || strings.ContainsAny(name, "\r\n"):
		f.Add("name", "must be one line of at most %d characters", MaxName)
	}
	typ := in.Type
	if typ == "" {
		typ = DefaultType
	}
	ti, ok := s.LookupType(typ)
	if !ok {
		f.Add("type", "must be one of %s", strings.Join(s.typeNames(), ", "))
		return f.Err()
	}
	auth := in.AuthMode
	if auth == "" {
		auth = domain.AuthAPIKey
	}
	if !slices.Contains(ti.AuthModes, auth) {
		f.Add("auth_mode", "%s providers take auth_mode %s", typ, strings.Join(ti.AuthModes, " or "))
	}
	base, err := normalizeBaseURL(in.BaseURL)
	if err != nil {
		f.Add("base_url", "%v", err)
	}
	api := in.API
	if api == "" {
		api = ti.defaultAPI(base)
	}
	if _, ok := ti.API(api); !ok {
		f.Add("api", "%s providers speak %s", typ, strings.Join(ti.APINames(), " or "))
	}
	key := secrets.ResolveWrite(in.APIKey, "")
	keepStored := in.APIKey == secrets.Mask
	if auth == domain.AuthChatGPTLogin {
		checkChatGPTInput(&f, api, base, key != "" || (keepStored && storedKey != ""))
	}
	if len(key) > 4096 {
		f.Add("api_key", "is too long")
	}
	if err := f.Err(); err != nil {
		return err
	}
	pr.Name, pr.Type, pr.AuthMode, pr.API, pr.BaseURL = name, typ, auth, api, base
	switch {
	case keepStored:
		pr.SealedAPIKey = storedKey
	default:
		sealed, err := s.box.Seal(keyPlace(pr.ID), key)
		if err != nil {
			return err
		}
		pr.SealedAPIKey = sealed
	}
	return nil
}

func (s *Service) typeNames() []string {
	out := make([]string, len(s.types))
	for i, t := range s.types {
		out[i] = t.Type
	}
	return out
}

// normalizeBaseURL accepts "" (the official endpoint) or an absolute http(s)
// URL without query or fragment, returned without a trailing slash.
func normalizeBaseURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("must be an absolute http(s) URL")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("must not carry a query, fragment or credentials (the key goes in api_key)")
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// Delete removes a provider no agent uses; its ChatGPT sign-in, if any, is
// revoked (see revokeForgotten). Returns not_found, forbidden, or conflict
// while agents reference it.
func (s *Service) Delete(ctx context.Context, p domain.Principal, id string) error {
	var gone domain.Provider
	actx, rec := audit.Stage(ctx, s.clock.Now(), "provider.delete", audit.Object{Kind: "provider", ID: id})
	err := s.store.InProviderTx(actx, func(tx ports.ProviderTx) error {
		pr, err := tx.FindProvider(ctx, id)
		if err != nil {
			return err
		}
		if err := pr.CheckDelete(p, what); err != nil {
			return err
		}
		users, err := tx.AgentsUsingProvider(ctx, id)
		if err != nil {
			return err
		}
		if len(users) > 0 {
			return errs.E(errs.Conflict, "%d agent(s) use this provider; point them elsewhere first", len(users))
		}
		gone, rec.ObjectName = pr, pr.Name
		return tx.DeleteProvider(ctx, id)
	})
	if err == nil && gone.ChatGPTLoggedIn() {
		s.revokeForgotten(ctx, gone, gone.SealedChatGPTToken)
	}
	return err
}

// SetScope publishes (admin) or unpublishes (admin or author) a provider.
// Unpublishing is refused while an agent it would strand uses it: a shared
// agent, or another person's. Returns not_found, forbidden, conflict.
func (s *Service) SetScope(ctx context.Context, p domain.Principal, id string, to domain.Scope) (domain.Provider, error) {
	var out domain.Provider
	actx, rec := audit.Stage(ctx, s.clock.Now(), audit.ScopeAction("provider", to), audit.Object{Kind: "provider", ID: id}, "scope")
	err := s.store.InProviderTx(actx, func(tx ports.ProviderTx) error {
		pr, err := tx.FindProvider(ctx, id)
		if err != nil {
			return err
		}
		rec.ObjectName = pr.Name
		if err := pr.CheckScopeChange(p, to, what); err != nil {
			return err
		}
		users, err := tx.AgentsUsingProvider(ctx, id)
		if err != nil {
			return err
		}
		stranded := 0
		for _, a := range users {
			if !domain.ReferenceSurvives(a.Ownership, pr.Ownership, to) {
				stranded++
			}
		}
		if stranded > 0 {
			return errs.E(errs.Conflict, "%d shared or other people's agent(s) use this provider; it must stay global", stranded)
		}
		pr.Scope, pr.UpdatedAt = to, s.clock.Now()
		out = pr
		return tx.UpdateProvider(ctx, pr)
	})
	return out, err
}

// APIKey opens a provider's stored key, for the model adapter building a
// call. It never leaves the server.
func (s *Service) APIKey(ctx context.Context, id string) (string, error) {
	pr, err := s.store.FindProvider(ctx, id)
	if err != nil {
		return "", err
	}
	return s.KeyOf(pr)
}

// KeyOf opens the key sealed in a provider row the caller has read, so a
// run building its call reads the row once.
func (s *Service) KeyOf(pr domain.Provider) (string, error) {
	return s.box.Open(keyPlace(pr.ID), pr.SealedAPIKey)
}
