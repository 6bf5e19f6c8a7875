package domain

import "fmt"

// ConfigError is work that cannot proceed because of configuration (an
// agent that is gone, a provider it names that no longer exists, a
// guardrail that does not compile, a project deleted under a session): a
// run ends with code config_error and Msg, which names what to fix.
type ConfigError struct{ Msg string }

// Error is the message naming what to fix.
func (e *ConfigError) Error() string { return e.Msg }

// ConfigErr is a *ConfigError with a formatted message.
func ConfigErr(format string, args ...any) error {
	return &ConfigError{Msg: fmt.Sprintf(format, args...)}
}
