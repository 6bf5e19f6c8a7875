package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/sessions"
)

// MessageSearchView is a page of message search hits, newest first.
type MessageSearchView struct {
	Hits       []MessageHitView `json:"hits"`
	NextCursor string           `json:"next_cursor,omitempty" doc:"Pass as cursor for the next page; absent on the last page"`
}

// MessageHitView is one message that matched: where it is, and a snippet.
type MessageHitView struct {
	SessionID   string            `json:"session_id"`
	SessionName string            `json:"session_name"`
	EntryID     string            `json:"entry_id" doc:"The entry's id, as /sessions/:id/messages lists it"`
	RowID       string            `json:"row_id"`
	Role        string            `json:"role" doc:"user or assistant"`
	CreatedAt   time.Time         `json:"created_at"`
	Snippet     []SnippetPartView `json:"snippet" doc:"A short window of the message around the first match, in runs of plain text; never markup"`
}

// SnippetPartView is one run of a snippet; hit marks a matched word.
type SnippetPartView struct {
	Text string `json:"text"`
	Hit  bool   `json:"hit,omitempty" doc:"A word the search matched: show it marked"`
}

func (s *Server) searchRoutes() []Route {
	return []Route{
		op(http.MethodGet, APIPrefix+"/search/messages", "searchMessages", "sessions",
			"Full-text search over the words of the caller's own conversations (user messages and assistant answers; not tool "+
				"payloads, notes or hidden task sessions), newest first. Every word of q must start a word of the message; "+
				"punctuation and operators are plain separators. Page with cursor",
			http.StatusOK, s.handleSearchMessages).WithQuery(
			QueryParam{Name: "q", Type: "string", Description: "The words to find (required)",
				Bound: maxChars(domain.MaxSearchQueryChars)},
			QueryParam{Name: "limit", Type: "integer", Description: "Hits per page; default " + strconv.Itoa(sessions.DefaultSearchLimit),
				Bound: between(1, sessions.MaxSearchLimit)},
			QueryParam{Name: "cursor", Type: "string", Description: "The next_cursor of the previous page"}).
			WithRefusals(http.StatusBadRequest),
	}
}

func (s *Server) handleSearchMessages(c echo.Context, _ *NoBody) (MessageSearchView, error) {
	limit, err := limitQuery(c)
	if err != nil {
		return MessageSearchView{}, err
	}
	// An empty q is core's to refuse, with the other queries that hold no word.
	page, err := s.deps.Sessions.SearchMessages(c.Request().Context(), caller(c),
		sessions.SearchQuery{Q: c.QueryParam("q"), Limit: limit, Cursor: c.QueryParam("cursor")})
	if err != nil {
		return MessageSearchView{}, err
	}
	out := MessageSearchView{Hits: make([]MessageHitView, len(page.Hits)), NextCursor: page.NextCursor}
	for i, h := range page.Hits {
		parts := make([]SnippetPartView, len(h.Snippet))
		for j, p := range h.Snippet {
			parts[j] = SnippetPartView{Text: p.Text, Hit: p.Hit}
		}
		out.Hits[i] = MessageHitView{SessionID: h.SessionID, SessionName: h.SessionName, EntryID: h.EntryID, RowID: h.RowID,
			Role: h.Role, CreatedAt: h.CreatedAt, Snippet: parts}
	}
	return out, nil
}
