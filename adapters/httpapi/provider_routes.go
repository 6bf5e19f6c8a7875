package httpapi

import (
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/ports"
)

// ProviderInput is what a client writes about a provider (PUT replaces it
// whole: omitted fields take their defaults).
type ProviderInput struct {
	Name     string `json:"name" required:"true"`
	Type     string `json:"type,omitempty" doc:"A type from /provider-types; default openai"`
	AuthMode string `json:"auth_mode,omitempty" doc:"api_key (default) or chatgpt_login (openai only)"`
	API      string `json:"api,omitempty" doc:"The wire protocol; default responses for the official OpenAI endpoint, chat_completions for any other base_url"`
	BaseURL  string `json:"base_url,omitempty" doc:"Empty = the type's official endpoint"`
	APIKey   string `json:"api_key,omitempty" doc:"Write-only: ******** keeps the stored key, empty clears it"`
}

func (in ProviderInput) core() providers.Input {
	return providers.Input{Name: in.Name, Type: in.Type, AuthMode: in.AuthMode, API: in.API, BaseURL: in.BaseURL, APIKey: in.APIKey}
}

// CreateProviderRequest adds a provider; scope global is admin-only.
type CreateProviderRequest struct {
	ProviderInput
	Scope string `json:"scope,omitempty" enum:"scope" doc:"Default private"`
}

// ProviderView is a provider as read: the key only ever masked.
type ProviderView struct {
	ID              string    `json:"id"`
	Name            string    `json:"name"`
	Type            string    `json:"type"`
	AuthMode        string    `json:"auth_mode"`
	API             string    `json:"api"`
	BaseURL         string    `json:"base_url"`
	APIKey          string    `json:"api_key" doc:"******** when a key is stored, else empty"`
	Scope           string    `json:"scope" enum:"scope"`
	OwnerID         string    `json:"owner_id"`
	ChatGPTLoggedIn bool      `json:"chatgpt_logged_in" doc:"For chatgpt_login providers: whether it is signed in (see /providers/{id}/chatgpt)"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
}

func providerView(p domain.Provider) ProviderView {
	return ProviderView{ID: p.ID, Name: p.Name, Type: p.Type, AuthMode: p.AuthMode, API: p.API, BaseURL: p.BaseURL,
		APIKey: secrets.Masked(p.SealedAPIKey), Scope: string(p.Scope), OwnerID: p.OwnerID, ChatGPTLoggedIn: p.ChatGPTLoggedIn(),
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

// ScopeRequest publishes (global) or unpublishes (private) a row.
type ScopeRequest struct {
	Scope string `json:"scope" required:"true" enum:"scope"`
}

// ProviderAPIView is one wire protocol of a provider type.
type ProviderAPIView struct {
	Name        string   `json:"name"`
	Unsupported []string `json:"unsupported" doc:"Request features this API does not accept"`
}

// ProviderTypeView is one row of the provider registry.
type ProviderTypeView struct {
	Type           string            `json:"type"`
	AuthModes      []string          `json:"auth_modes"`
	APIs           []ProviderAPIView `json:"apis"`
	DefaultBaseURL string            `json:"default_base_url"`
	Unsupported    []string          `json:"unsupported" doc:"Request features no API of this type accepts"`
}

func (s *Server) providerRoutes() []Route {
	p := APIPrefix + "/providers"
	return []Route{
		op(http.MethodGet, APIPrefix+"/provider-types", "listProviderTypes", "providers",
			"The provider registry: types, auth modes, APIs and unsupported request features", http.StatusOK, s.handleProviderTypes),
		op(http.MethodGet, p, "listProviders", "providers",
			"Providers the caller can see: shared ones first, then the caller's own", http.StatusOK, s.handleListProviders),
		op(http.MethodPost, p, "createProvider", "providers",
			"Add a provider (private unless an admin asks for global)", http.StatusCreated, s.handleCreateProvider).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodGet, p+"/:id", "getProvider", "providers", "One provider", http.StatusOK, s.handleGetProvider),
		op(http.MethodPut, p+"/:id", "updateProvider", "providers",
			"Replace a provider; the key mask keeps the stored key only for the same type and base_url",
			http.StatusOK, s.handleUpdateProvider).WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodDelete, p+"/:id", "deleteProvider", "providers",
			"Delete a provider no agent uses", http.StatusNoContent, s.handleDeleteProvider).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodPost, p+"/:id/scope", "setProviderScope", "providers",
			"Publish (admin) or unpublish (admin or author) a provider", http.StatusOK, s.handleProviderScope).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodGet, p+"/:id/models", "listProviderModels", "providers",
			"The models the provider offers, from the vendor's models endpoint (reused for a minute); 503 with the vendor's error",
			http.StatusOK, s.handleProviderModels).WithRefusals(http.StatusBadRequest, http.StatusServiceUnavailable),
		op(http.MethodPost, p+"/:id/test", "testProvider", "providers",
			"One tiny call (the model list, uncached): the latency, or the vendor's error", http.StatusOK, s.handleTestProvider).
			WithOptionalBody().WithRefusals(http.StatusBadRequest),
	}
}

// ProviderModelsView lists a provider's models.
type ProviderModelsView struct {
	Models []ports.ModelInfo `json:"models"`
}

// ProviderTestView is how a provider answered a test call.
type ProviderTestView struct {
	OK        bool   `json:"ok"`
	LatencyMS int64  `json:"latency_ms"`
	Models    int    `json:"models" doc:"How many models it listed"`
	Error     string `json:"error,omitempty" doc:"The vendor's error, when not ok"`
	Kind      string `json:"kind,omitempty" doc:"The error's class: auth, rate_limited, unavailable, invalid_request, …"`
}

func (s *Server) handleProviderModels(c echo.Context, _ *NoBody) (ProviderModelsView, error) {
	models, err := s.deps.Models.ProviderModels(c.Request().Context(), caller(c), c.Param("id"))
	if models == nil {
		models = []ports.ModelInfo{}
	}
	return ProviderModelsView{Models: models}, err
}

func (s *Server) handleTestProvider(c echo.Context, _ *NoBody) (ProviderTestView, error) {
	t, err := s.deps.Models.TestProvider(c.Request().Context(), caller(c), c.Param("id"))
	return ProviderTestView{OK: t.OK, LatencyMS: t.Latency.Milliseconds(), Models: t.Models, Error: t.Error, Kind: t.Kind}, err
}

func (s *Server) handleProviderTypes(c echo.Context, _ *NoBody) ([]ProviderTypeView, error) {
	out := []ProviderTypeView{}
	for _, t := range s.deps.Providers.Types() {
		v := ProviderTypeView{Type: t.Type, AuthModes: t.AuthModes, DefaultBaseURL: t.DefaultBaseURL, Unsupported: []string{}}
		for i, a := range t.APIs {
			v.APIs = append(v.APIs, ProviderAPIView{Name: a.Name, Unsupported: append([]string{}, a.Unsupported...)})
			if i == 0 {
				v.Unsupported = append(v.Unsupported, a.Unsupported...)
				continue
			}
			v.Unsupported = slices.DeleteFunc(v.Unsupported, func(f string) bool { return !slices.Contains(a.Unsupported, f) })
		}
		out = append(out, v)
	}
	return out, nil
}

func (s *Server) handleListProviders(c echo.Context, _ *NoBody) ([]ProviderView, error) {
	list, err := s.deps.Providers.List(c.Request().Context(), caller(c))
	return mapAll(list, providerView), err
}

func (s *Server) handleCreateProvider(c echo.Context, req *CreateProviderRequest) (ProviderView, error) {
	p, err := s.deps.Providers.Create(c.Request().Context(), caller(c), domain.Scope(req.Scope), req.core())
	return providerView(p), err
}

func (s *Server) handleGetProvider(c echo.Context, _ *NoBody) (ProviderView, error) {
	p, err := s.deps.Providers.Get(c.Request().Context(), caller(c), c.Param("id"))
	return providerView(p), err
}

func (s *Server) handleUpdateProvider(c echo.Context, req *ProviderInput) (ProviderView, error) {
	p, err := s.deps.Providers.Update(c.Request().Context(), caller(c), c.Param("id"), req.core())
	return providerView(p), err
}

func (s *Server) handleDeleteProvider(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Providers.Delete(c.Request().Context(), caller(c), c.Param("id"))
}

func (s *Server) handleProviderScope(c echo.Context, req *ScopeRequest) (ProviderView, error) {
	p, err := s.deps.Providers.SetScope(c.Request().Context(), caller(c), c.Param("id"), domain.Scope(req.Scope))
	return providerView(p), err
}

// mapAll converts a list for the wire, never returning null.
func mapAll[T, V any](in []T, f func(T) V) []V {
	out := make([]V, 0, len(in))
	for _, v := range in {
		out = append(out, f(v))
	}
	return out
}
