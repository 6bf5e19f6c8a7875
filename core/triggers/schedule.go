package triggers

import (
	"fmt"
	"strings"
	"time"

	"github.com/adhocore/gronx"

	"github.com/agents-server/agents-server/core/errs"
)

// MinEvery is the shortest @every interval: schedules have no seconds.
const MinEvery = time.Minute

// macros are the @-names a schedule may use, as gronx spells them; gronx's
// @everysecond is left out (no seconds field).
var macros = map[string]bool{
	"@yearly": true, "@annually": true, "@monthly": true, "@weekly": true, "@daily": true, "@hourly": true,
	"@always": true, "@5minutes": true, "@10minutes": true, "@15minutes": true, "@30minutes": true,
}

// Schedule is a parsed cron schedule: five fields or a macro, read by
// gronx, or an @every interval.
type Schedule struct {
	expr  string        // the cron expression or macro gronx reads
	every time.Duration // an @every interval instead
}

// ParseSchedule reads a trigger's schedule: five cron fields (minute hour
// day-of-month month day-of-week), an @hourly-style macro, or @every with
// a Go duration of at least a minute. It refuses a seconds or year field,
// and an expression that never comes due, with the reason. Returns
// validation.
func ParseSchedule(text string) (Schedule, error) {
	text = strings.TrimSpace(text)
	lower := strings.ToLower(text)
	switch {
	case text == "":
		return Schedule{}, errs.Field("schedule", "is required for a cron trigger")
	case lower == "@every" || strings.HasPrefix(lower, "@every ") || strings.HasPrefix(lower, "@every\t"):
		arg := strings.TrimSpace(text[len("@every"):])
		d, err := time.ParseDuration(arg)
		if err != nil || arg == "" {
			return Schedule{}, errs.Field("schedule", "@every takes a duration such as 30m or 2h")
		}
		if d < MinEvery {
			return Schedule{}, errs.Field("schedule", "@every %s is too often: a schedule fires at most once a minute", arg)
		}
		return Schedule{every: d}, nil
	case strings.HasPrefix(lower, "@"):
		if !macros[lower] {
			return Schedule{}, errs.Field("schedule", "%s is not a schedule: use @hourly, @daily, @weekly, @monthly, @yearly or @every 30m", text)
		}
		return Schedule{expr: lower}, nil
	}
	if n := len(strings.Fields(text)); n != 5 {
		return Schedule{}, errs.Field("schedule", "has %d fields: a schedule has five (minute hour day-of-month month day-of-week), no seconds", n)
	}
	expr := strings.Join(strings.Fields(text), " ")
	if !gronx.IsValid(expr) {
		return Schedule{}, errs.Field("schedule", "%q is not a valid cron expression", text)
	}
	s := Schedule{expr: expr}
	// An expression that names no real day (30 2 = the 30th of February)
	// is valid syntax that would never fire: refused now, not found later.
	if _, err := s.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.UTC); err != nil {
		return Schedule{}, errs.Field("schedule", "%q never comes due", text)
	}
	return s, nil
}

// Next is the first tick strictly after after, reading the fields in loc
// (the server's time zone), returned in UTC to the millisecond.
func (s Schedule) Next(after time.Time, loc *time.Location) (time.Time, error) {
	if s.every > 0 {
		return after.Add(s.every).UTC().Truncate(time.Millisecond), nil
	}
	next, err := gronx.NextTickAfter(s.expr, after.In(loc), false)
	if err != nil {
		return time.Time{}, fmt.Errorf("schedule %q: %w", s.expr, err)
	}
	if !next.After(after) {
		// gronx works in whole seconds: a tick inside after's own second
		// is already behind it.
		if next, err = gronx.NextTickAfter(s.expr, after.In(loc).Truncate(time.Second).Add(time.Second), false); err != nil {
			return time.Time{}, fmt.Errorf("schedule %q: %w", s.expr, err)
		}
	}
	return next.UTC().Truncate(time.Millisecond), nil
}
