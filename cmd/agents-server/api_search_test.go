package main

import (
	"net/url"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
)

func (h *harness) searchMessages(token, query string) httpapi.MessageSearchView {
	h.t.Helper()
	var out httpapi.MessageSearchView
	h.call("GET", "/api/v1/search/messages?"+query, token, nil).want(h.t, 200).decode(h.t, &out)
	return out
}

// snippetText renders a hit's snippet with its marks as [word].
func snippetText(hit httpapi.MessageHitView) string {
	var b strings.Builder
	for _, p := range hit.Snippet {
		if p.Hit {
			b.WriteString("[" + p.Text + "]")
		} else {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// GET /search/messages finds the words of the caller's own messages (an
// admin's search included), marks them in a snippet of plain text, pages
// with a cursor, reads any input as plain words and refuses an empty one.
func TestSearchMessagesOverTheAPI(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	ann, bob := h.member("ann"), h.member("bob")
	s := h.createSession(ann, map[string]any{"name": "zoo plans"})
	h.appendEntries(s.ID, userMsg("Where should the <b>walrus</b> live?", "r1"), toolCall("c1", "r1"),
		assistantMsg("The walrus pool goes by the north gate.", "r1", nil))
	theirs := h.createSession(bob, map[string]any{"name": "bob's"})
	h.appendEntries(theirs.ID, userMsg("bob's walrus", "r2"))

	page := h.searchMessages(ann, "q=walrus")
	if len(page.Hits) != 2 || page.NextCursor != "" {
		t.Fatalf("ann's search: %+v", page)
	}
	first, second := page.Hits[0], page.Hits[1]
	if first.SessionID != s.ID || first.SessionName != "zoo plans" || first.Role != "assistant" || second.Role != "user" {
		t.Fatalf("hits: %+v", page.Hits)
	}
	if got := snippetText(first); got != "The [walrus] pool goes by the north gate." {
		t.Fatalf("snippet %q", got)
	}
	if got := snippetText(second); got != "Where should the <b>[walrus]</b> live?" { // text, never markup
		t.Fatalf("snippet %q", got)
	}
	msgs := h.messages(ann, s.ID, "")
	if msgs[len(msgs)-1].ID != first.EntryID {
		t.Fatalf("the hit names entry %s; the transcript's last is %s", first.EntryID, msgs[len(msgs)-1].ID)
	}

	// Pages of one, the cursor carrying on.
	one := h.searchMessages(ann, "q=walrus&limit=1")
	if len(one.Hits) != 1 || one.Hits[0].EntryID != first.EntryID || one.NextCursor == "" {
		t.Fatalf("page 1: %+v", one)
	}
	two := h.searchMessages(ann, "q=walrus&limit=1&cursor="+url.QueryEscape(one.NextCursor))
	if len(two.Hits) != 1 || two.Hits[0].EntryID != second.EntryID || two.NextCursor != "" {
		t.Fatalf("page 2: %+v", two)
	}

	// Only one's own: another member's, and an admin's, searches miss ann's.
	if got := h.searchMessages(bob, "q=walrus"); len(got.Hits) != 1 || got.Hits[0].SessionID != theirs.ID {
		t.Fatalf("bob's search: %+v", got)
	}
	if got := h.searchMessages(h.admin, "q=walrus"); len(got.Hits) != 0 {
		t.Fatalf("the admin's search: %+v", got)
	}

	// Query syntax of either engine is plain words, never a 500.
	for _, q := range []string{`"walrus`, `walrus*`, `-walrus`, `walrus:`, `wal" OR "rus`, `NEAR(walrus`, `'walrus':* & !`, `w*a*l`} {
		h.searchMessages(ann, "q="+url.QueryEscape(q))
	}
	if got := h.searchMessages(ann, "q="+url.QueryEscape(`"north" -gate:*`)); len(got.Hits) != 1 || got.Hits[0].EntryID != first.EntryID {
		t.Fatalf("quoted words: %+v", got)
	}

	for _, q := range []string{"", "q=", "q=" + url.QueryEscape(`*** "" -:`)} {
		if d := h.call("GET", "/api/v1/search/messages?"+q, ann, nil).wantErr(t, 400, "validation"); d.Fields["q"] == "" {
			t.Fatalf("%q: %+v", q, d)
		}
	}
	h.call("GET", "/api/v1/search/messages?q=walrus&cursor=nope", ann, nil).wantErr(t, 400, "validation")
	h.call("GET", "/api/v1/search/messages?q=walrus&limit=51", ann, nil).wantErr(t, 400, "validation")
}
