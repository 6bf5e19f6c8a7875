package providers

import "github.com/agents-server/agents-server/core/domain"

// FeatureUse is an agent knob that needs a request feature.
type FeatureUse struct {
	Field   string
	Feature string
}

// AgentFeatures lists the request features an agent's settings rely on, so
// validation can refuse a knob its provider cannot honour.
func AgentFeatures(s domain.AgentSpec) []FeatureUse {
	var out []FeatureUse
	if s.Session.PromptID != "" {
		out = append(out, FeatureUse{"session.prompt_id", FeatureStoredPrompts})
	}
	if s.Behavior.ReasoningItemIDPolicy != "" {
		out = append(out, FeatureUse{"behavior.reasoning_item_id_policy", FeatureReasoningItemIDs})
	}
	if s.ModelSettings.ReasoningSummary != "" {
		out = append(out, FeatureUse{"model_settings.reasoning_summary", FeatureReasoningSummary})
	}
	if s.ModelSettings.Verbosity != "" {
		out = append(out, FeatureUse{"model_settings.verbosity", FeatureVerbosity})
	}
	return out
}
