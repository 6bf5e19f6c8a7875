package ports

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
)

// FetchRequest is one GET an import makes.
type FetchRequest struct {
	URL     string
	Headers map[string]string
	// MaxBytes bounds the body read; a longer body comes back cut, with
	// Truncated set.
	MaxBytes int64
	// Outbound is what the URL may reach (and every redirect): the
	// caller's policy. The zero value refuses private addresses.
	Outbound domain.OutboundPolicy
}

// FetchResponse is what a GET answered (always a 200).
type FetchResponse struct {
	Body      []byte
	Truncated bool
}

// Fetcher reads documents from the web for skill imports, bounded in time
// by its caller's context and in size by the request.
type Fetcher interface {
	// Fetch returns validation when the URL is not http(s) or reaches a
	// refused address (its host resolving to one counts, redirects
	// included), and upstream for a network failure, a timeout or a
	// status other than 200 — saying which URL and what went wrong.
	Fetch(ctx context.Context, req FetchRequest) (FetchResponse, error)
}
