package ports

import "github.com/agents-server/agents-server/core/domain"

// RunObserver hears how every run ended (and every trace span stored), for
// metrics and trace export. Calls must not block: they come from the run's
// own goroutine.
type RunObserver interface {
	// RunEnded is told a run's final row: status, error code, times.
	RunEnded(r domain.Run)
	// SpanSaved is told each trace span once it is stored.
	SpanSaved(s domain.Span)
}
