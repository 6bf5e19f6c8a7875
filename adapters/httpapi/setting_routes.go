package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/settings"
)

// SettingDefView is one registry row, for the settings panel.
type SettingDefView struct {
	Key         string   `json:"key"`
	Kind        string   `json:"kind" enum:"setting_kind"`
	Default     string   `json:"default"`
	Min         *int64   `json:"min,omitempty"`
	Max         *int64   `json:"max,omitempty"`
	Schemes     []string `json:"schemes,omitempty" doc:"Allowed URL schemes, for url settings"`
	Group       string   `json:"group"`
	Label       string   `json:"label"`
	Description string   `json:"description"`
	Secret      bool     `json:"secret" doc:"Masked on read and sealed at rest"`
}

func settingDefView(d domain.SettingDef) SettingDefView {
	v := SettingDefView{Key: d.Key, Kind: string(d.Kind), Default: d.Default, Schemes: d.Schemes, Group: d.Group,
		Label: d.Label, Description: d.Description, Secret: d.Secret}
	if d.Kind == domain.SettingInt {
		lo, hi := d.Min, d.Max
		v.Min, v.Max = &lo, &hi
	}
	return v
}

// SettingView is a key's effective value.
type SettingView struct {
	Key     string `json:"key"`
	Value   string `json:"value" doc:"The effective value as text; ******** for a secret that is set"`
	Set     bool   `json:"set" doc:"An explicit value is stored; false means the default applies"`
	Secret  bool   `json:"secret,omitempty"`
	Unknown bool   `json:"unknown,omitempty" doc:"Stored but no longer defined by this build; it can be deleted"`
}

func settingView(s settings.Setting) SettingView {
	return SettingView{Key: s.Key, Value: s.Value, Set: s.Set, Secret: s.Secret, Unknown: s.Unknown}
}

// PutSettingRequest sets a key: its kind must accept the text; "" (or no
// value at all) resets it.
type PutSettingRequest struct {
	Value string `json:"value" doc:"The new value as text; empty or absent returns the key to its default"`
}

func (s *Server) settingRoutes() []Route {
	return []Route{
		op(http.MethodGet, APIPrefix+"/setting-defs", "listSettingDefs", "settings",
			"The settings registry: every key with its kind, default, bounds and group", http.StatusOK, s.handleSettingDefs),
		op(http.MethodGet, APIPrefix+"/settings", "listSettings", "settings",
			"Every setting's effective value (secrets masked), then stored keys this build no longer defines",
			http.StatusOK, s.handleListSettings),
		op(http.MethodPut, APIPrefix+"/settings/:key", "putSetting", "settings",
			"Set a setting (admin only); an empty value returns it to its default", http.StatusOK, s.handlePutSetting).
			WithRefusals(http.StatusForbidden),
		op(http.MethodDelete, APIPrefix+"/settings/:key", "deleteSetting", "settings",
			"Remove a stored value (admin only): a defined key returns to its default, an unknown one disappears",
			http.StatusNoContent, s.handleDeleteSetting).WithRefusals(http.StatusForbidden),
	}
}

func (s *Server) handleSettingDefs(c echo.Context, _ *NoBody) ([]SettingDefView, error) {
	defs := s.deps.Settings.Defs()
	out := make([]SettingDefView, 0, len(defs))
	for _, d := range defs {
		out = append(out, settingDefView(d))
	}
	return out, nil
}

func (s *Server) handleListSettings(c echo.Context, _ *NoBody) ([]SettingView, error) {
	list, err := s.deps.Settings.List(c.Request().Context())
	if err != nil {
		return nil, err
	}
	out := make([]SettingView, 0, len(list))
	for _, st := range list {
		out = append(out, settingView(st))
	}
	return out, nil
}

func (s *Server) handlePutSetting(c echo.Context, req *PutSettingRequest) (SettingView, error) {
	st, err := s.deps.Settings.Put(c.Request().Context(), caller(c), c.Param("key"), req.Value)
	if err != nil {
		return SettingView{}, err
	}
	return settingView(st), nil
}

func (s *Server) handleDeleteSetting(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Settings.Delete(c.Request().Context(), caller(c), c.Param("key"))
}
