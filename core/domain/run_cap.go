package domain

import (
	"time"

	"github.com/agents-server/agents-server/core/errs"
)

// A user's live runs are capped (the max_runs_per_user setting) so that one
// account cannot spend a shared provider key without bound. A run is live
// while it can call a model: running, or paused with every one of its
// calls decided (it is resuming). A run paused for a person's decision
// costs nothing while it waits — and may wait for a day — so it does not
// hold a slot: counting it would let forgotten approvals lock an account
// out of new work. The decision that resumes it is what takes the slot.

// CapRetryAfter is the wait a refusal for a per-user cap (live runs, MCP
// sessions) is told to take: a slot frees when one of the user's runs ends
// or a session closes, seconds to minutes away, so the client is told to
// come back soon rather than when exactly.
const CapRetryAfter = 10 * time.Second

// TooManyRuns is the refusal of a run past the user's max_runs_per_user
// (max): rate_limited, naming the setting.
func TooManyRuns(max int) *errs.Error {
	return errs.E(errs.RateLimited, "this account already has %d runs going, its limit (max_runs_per_user): retry when one ends", max)
}
