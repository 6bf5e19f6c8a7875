package triggers

import (
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zone database, so the test needs none on the machine

	"github.com/agents-server/agents-server/core/errs"
)

func TestParseScheduleReadsFieldsMacrosAndEvery(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 17, 42, 0, time.UTC) // a Monday
	for _, c := range []struct {
		text string
		want time.Time
	}{
		{"*/15 * * * *", time.Date(2026, 11, 30, 10, 30, 0, 0, time.UTC)},
		{"0 9 * * 1-5", time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)},
		{"  30   2 * * *  ", time.Date(2026, 12, 1, 2, 30, 0, 0, time.UTC)},
		{"@hourly", time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)},
		{"@Daily", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"@weekly", time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)},
		{"@every 30m", at.Add(30 * time.Minute)},
		{"@every 1m", at.Add(time.Minute)},
		{"@every 2h30m", at.Add(150 * time.Minute)},
	} {
		s, err := ParseSchedule(c.text)
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		got, err := s.Next(at, time.UTC)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("%q: next after %s = %s (%v), want %s", c.text, at, got, err, c.want)
		}
	}
}

func TestParseScheduleRefusesWithReasons(t *testing.T) {
	for text, reason := range map[string]string{
		"":                  "required",
		"@every 30s":        "at most once a minute",
		"@every 59s":        "at most once a minute",
		"@every":            "takes a duration",
		"@every soon":       "takes a duration",
		"@everysecond":      "not a schedule",
		"@reboot":           "not a schedule",
		"* * * *":           "has 4 fields",
		"0 * * * * *":       "has 6 fields",
		"0 0 1 1 * 2030":    "has 6 fields",
		"61 * * * *":        "not a valid cron expression",
		"* * * * funday":    "not a valid cron expression",
		"0 0 30 2 *":        "never comes due",
		"0 0 31 4,6,9,11 *": "never comes due",
	} {
		_, err := ParseSchedule(text)
		if errs.CodeOf(err) != errs.Validation || !strings.Contains(errs.FieldsOf(err)["schedule"], reason) {
			t.Errorf("%q: %v, want a schedule fault saying %q", text, err, reason)
		}
	}
}

func TestScheduleReadsTheServersTimeZone(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ParseSchedule("0 9 * * *")
	got, _ := s.Next(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC), berlin)
	if want := time.Date(2026, 7, 1, 7, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Fatalf("09:00 in Berlin (summer) = %s, want %s", got, want)
	}
}

func TestNextIsStrictlyLaterEvenInsideTheTicksSecond(t *testing.T) {
	s, _ := ParseSchedule("* * * * *")
	tick := time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC)
	for _, after := range []time.Time{tick, tick.Add(400 * time.Millisecond)} {
		got, err := s.Next(after, time.UTC)
		if err != nil || !got.Equal(tick.Add(time.Minute)) {
			t.Fatalf("next after %s = %s (%v), want the following minute", after, got, err)
		}
	}
}

// FuzzParseSchedule holds the parser wrapper to its promises for any text:
// no panic; an accepted schedule comes due, strictly later, and never twice
// inside a minute.
func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{"*/5 * * * *", "0 9 * * 1-5", "@daily", "@every 90m", "@every 1s", "0 0 30 2 *", "1-59/7 */3 1,15 * SUN",
		"* * * * * *", "@every -5m", "0 0 L * *", "0 0 * * 5L"} {
		f.Add(s)
	}
	at := time.Date(2026, 11, 30, 10, 17, 42, 0, time.UTC)
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSchedule(text)
		if err != nil {
			if errs.CodeOf(err) != errs.Validation {
				t.Fatalf("%q refused with %v, want a validation error", text, err)
			}
			return
		}
		first, err := s.Next(at, time.UTC)
		if err != nil {
			return // an accepted expression may still run out of ticks years on
		}
		second, err := s.Next(first, time.UTC)
		if err != nil {
			return
		}
		if !first.After(at) || second.Sub(first) < time.Minute {
			t.Fatalf("%q: ticks %s then %s after %s: not strictly later, or under a minute apart", text, first, second, at)
		}
	})
}
