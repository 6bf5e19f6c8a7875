package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// MessageSearch is the contract of ports.MessageSearch over the sessions
// the store holds: the words of user messages and assistant answers match
// (each term the start of a word, every term needed), tool payloads,
// reasoning, notes and task notifications never do; only the owner's
// visible sessions are searched; a deleted session's messages are gone;
// hits come newest first and page without gaps or repeats; and terms that
// are query syntax words to an engine ("or", "near", "not") are plain
// words. open returns an empty database.
func MessageSearch(t *testing.T, open func(t *testing.T) Stores) {
	t.Run("user and assistant words match, tool payloads do not", func(t *testing.T) { searchWhat(t, open(t)) })
	t.Run("only the owner's visible sessions are searched", func(t *testing.T) { searchWhose(t, open(t)) })
	t.Run("a deleted session's messages are gone", func(t *testing.T) { searchDeleted(t, open(t)) })
	t.Run("pages newest first, without gaps or repeats", func(t *testing.T) { searchPages(t, open(t)) })
	t.Run("engine keywords and accents are plain words", func(t *testing.T) { searchPlainWords(t, open(t)) })
}

// searchEpoch is when the search contract's messages are written.
var searchEpoch = time.Date(2026, 7, 8, 9, 10, 11, 0, time.UTC)

// said is a line of entries of a session, each continuing the last, one
// second apart from searchEpoch+start seconds; row ids are <session>-<n>.
func said(sessionID string, start int, items ...domain.Entry) []domain.Entry {
	for i := range items {
		n := start + i
		items[i].ID, items[i].RowID = fmt.Sprintf("%s-e%d", sessionID, n), fmt.Sprintf("%s-%04d", sessionID, n)
		items[i].Seq, items[i].CreatedAt = int64(i+1), searchEpoch.Add(time.Duration(n)*time.Second)
		if i > 0 {
			items[i].ParentID = items[i-1].ID
		}
	}
	return items
}

func userSays(text string) domain.Entry {
	return domain.Entry{Kind: domain.KindItem, Source: domain.SourceUser, Item: domain.TextMessage("user", "input_text", text)}
}

func assistantSays(text string) domain.Entry {
	return domain.Entry{Kind: domain.KindItem, Source: domain.SourceModel, Item: domain.AssistantMessage("", text)}
}

func search(t *testing.T, s Stores, owner string, limit int, after ports.MessageCursor, terms ...string) []ports.MessageHit {
	t.Helper()
	hits, err := s.Search.SearchMessages(context.Background(), ports.MessageQuery{OwnerID: owner, Terms: terms, Limit: limit, After: after})
	if err != nil {
		t.Fatalf("search %q: %v", terms, err)
	}
	return hits
}

func hitIDs(hits []ports.MessageHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.EntryID
	}
	return out
}

func wantHits(t *testing.T, s Stores, owner string, terms []string, want ...string) {
	t.Helper()
	if got := hitIDs(search(t, s, owner, 50, ports.MessageCursor{}, terms...)); !slices.Equal(got, want) {
		t.Fatalf("search %q = %v, want %v", terms, got, want)
	}
}

func searchWhat(t *testing.T, s Stores) {
	sess := s.NewSession(t, "chat")
	call := domain.Entry{Kind: domain.KindItem, Source: domain.SourceModel,
		Item: domain.FunctionCall("", "c1", "launch_rocket", `{"rocket":"saturn"}`)}
	output := domain.Entry{Kind: domain.KindItem, Source: domain.SourceTool,
		Item: domain.FunctionCallOutput("c1", "rocket saturn launched")}
	reasoning := domain.Entry{Kind: domain.KindItem, Source: domain.SourceModel,
		Item: []byte(`{"type":"reasoning","summary":[{"type":"summary_text","text":"the rocket saturn"}]}`)}
	note := domain.Entry{Kind: domain.KindAnnotation, Text: "rocket saturn stopped"}
	wake := userSays("rocket saturn: the background task finished")
	wake.Source = domain.SourceTaskNotification
	appendEntries(t, s, sess.ID, said(sess.ID, 0,
		userSays("Deploy the Rocket to staging, please."), call, output, reasoning, note, wake,
		assistantSays("The rocket is on its way;\nstaging took it."))...)

	hits := search(t, s, sess.OwnerID, 50, ports.MessageCursor{}, "rocket")
	if len(hits) != 2 {
		t.Fatalf("rocket: %+v, want the answer and the question", hits)
	}
	answer, question := hits[0], hits[1]
	wantAnswer := ports.MessageHit{SessionID: sess.ID, SessionName: sess.Name, EntryID: "chat-e6", RowID: "chat-0006", Role: "assistant",
		CreatedAt: searchEpoch.Add(6 * time.Second), Text: "The rocket is on its way;\nstaging took it."}
	if answer != wantAnswer {
		t.Fatalf("the answer's hit:\n%+v\nwant\n%+v", answer, wantAnswer)
	}
	if question.EntryID != "chat-e0" || question.Role != "user" || question.Text != "Deploy the Rocket to staging, please." {
		t.Fatalf("the question's hit: %+v", question)
	}
	wantHits(t, s, sess.OwnerID, []string{"deplo"}, "chat-e0")            // a term is a word's start
	wantHits(t, s, sess.OwnerID, []string{"rocket", "please"}, "chat-e0") // every term is needed
	wantHits(t, s, sess.OwnerID, []string{"staging", "rocket"}, "chat-e6", "chat-e0")
	wantHits(t, s, sess.OwnerID, []string{"ocket"})  // not a word's middle
	wantHits(t, s, sess.OwnerID, []string{"saturn"}) // tool arguments and output, reasoning, notes, notifications
	wantHits(t, s, sess.OwnerID, []string{"launch"})
	wantHits(t, s, sess.OwnerID, []string{"finished"})
	if hits := search(t, s, sess.OwnerID, 50, ports.MessageCursor{}); len(hits) != 0 {
		t.Fatalf("no terms: %+v, want nothing", hits)
	}
}

func searchWhose(t *testing.T, s Stores) {
	ctx := context.Background()
	mine, theirs := s.NewSession(t, "mine"), s.NewSession(t, "theirs")
	also := domain.Session{ID: "also", OwnerID: mine.OwnerID, Name: "Another of mine", CreatedAt: searchEpoch, UpdatedAt: searchEpoch}
	task := domain.Session{ID: "task", OwnerID: mine.OwnerID, Name: "a task", Hidden: true, ParentSessionID: mine.ID,
		CreatedAt: searchEpoch, UpdatedAt: searchEpoch}
	for _, sess := range []domain.Session{also, task} {
		if err := s.Sessions.CreateSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	appendEntries(t, s, mine.ID, said(mine.ID, 0, userSays("where is the walrus"))...)
	appendEntries(t, s, theirs.ID, said(theirs.ID, 1, userSays("my walrus is private"))...)
	appendEntries(t, s, also.ID, said(also.ID, 2, assistantSays("a walrus here too"))...)
	appendEntries(t, s, task.ID, said(task.ID, 3, assistantSays("the task's walrus"))...)

	hits := search(t, s, mine.OwnerID, 50, ports.MessageCursor{}, "walrus")
	if got := hitIDs(hits); !slices.Equal(got, []string{"also-e2", "mine-e0"}) {
		t.Fatalf("mine: %v, want my two visible sessions' messages, not another owner's or a hidden task's", got)
	}
	if hits[0].SessionName != "Another of mine" || hits[1].SessionName != mine.Name {
		t.Fatalf("session names: %q, %q", hits[0].SessionName, hits[1].SessionName)
	}
	wantHits(t, s, theirs.OwnerID, []string{"walrus"}, "theirs-e1")
	wantHits(t, s, "nobody", []string{"walrus"})
}

func searchDeleted(t *testing.T, s Stores) {
	ctx := context.Background()
	kept, gone := s.NewSession(t, "kept"), s.NewSession(t, "gone")
	appendEntries(t, s, kept.ID, said(kept.ID, 0, userSays("the heron stays"))...)
	appendEntries(t, s, gone.ID, said(gone.ID, 1, userSays("the heron goes"), assistantSays("heron gone"))...)
	wantHits(t, s, gone.OwnerID, []string{"heron"}, "gone-e2", "gone-e1")
	if err := s.Sessions.DeleteSession(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	wantHits(t, s, gone.OwnerID, []string{"heron"})
	wantHits(t, s, kept.OwnerID, []string{"heron"}, "kept-e0")
	// A fork's copies are messages of the fork.
	fork := domain.Session{ID: "fork", OwnerID: kept.OwnerID, Name: "a fork", CreatedAt: searchEpoch, UpdatedAt: searchEpoch}
	entries := said(fork.ID, 5, userSays("the heron stays"))
	metas := []domain.EntryMeta{domain.MetaOf(entries[0], "")}
	if err := s.Sessions.CreateSessionWithEntries(ctx, fork, entries, metas); err != nil {
		t.Fatal(err)
	}
	wantHits(t, s, kept.OwnerID, []string{"heron"}, "fork-e5", "kept-e0")
}

func searchPages(t *testing.T, s Stores) {
	sess := s.NewSession(t, "long")
	var lines []domain.Entry
	var want []string
	for i := range 23 {
		lines = append(lines, userSays(fmt.Sprintf("otter number %d", i)))
		if i%4 == 0 {
			lines = append(lines, assistantSays("no match here"))
		}
	}
	lines = said(sess.ID, 0, lines...)
	// Two messages of one millisecond: the row id orders them.
	lines[len(lines)-1].CreatedAt = lines[len(lines)-2].CreatedAt
	for i := len(lines) - 1; i >= 0; i-- {
		if _, text, _ := domain.ReadableText(lines[i]); text != "no match here" {
			want = append(want, lines[i].ID)
		}
	}
	appendEntries(t, s, sess.ID, lines...)
	var got []string
	var after ports.MessageCursor
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatalf("paging does not end: %v", got)
		}
		hits := search(t, s, sess.OwnerID, 10, after, "otter")
		if len(hits) > 10 {
			t.Fatalf("a page of %d hits, limit 10", len(hits))
		}
		if len(hits) == 0 {
			break
		}
		got = append(got, hitIDs(hits)...)
		last := hits[len(hits)-1]
		after = ports.MessageCursor{CreatedAt: last.CreatedAt, RowID: last.RowID}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages:\n%v\nwant\n%v", got, want)
	}
}

func searchPlainWords(t *testing.T, s Stores) {
	sess := s.NewSession(t, "words")
	appendEntries(t, s, sess.ID, said(sess.ID, 0,
		userSays("NOT or AND near: NEAR(x y) col:umn"),
		assistantSays("Le café Übermaß, naïve — 東京 2026"))...)
	wantHits(t, s, sess.OwnerID, []string{"not", "or", "and", "near"}, "words-e0")
	wantHits(t, s, sess.OwnerID, []string{"col", "umn"}, "words-e0")
	wantHits(t, s, sess.OwnerID, []string{"café", "übermaß"}, "words-e1")
	wantHits(t, s, sess.OwnerID, []string{"cafe"}) // accents are kept
	wantHits(t, s, sess.OwnerID, []string{"東京"}, "words-e1")
	wantHits(t, s, sess.OwnerID, []string{"202"}, "words-e1")
	// What a person types goes through domain.SearchTerms: syntax is gone.
	terms, err := domain.SearchTerms(`"naïve" -café* über(ü:`)
	if err != nil {
		t.Fatal(err)
	}
	wantHits(t, s, sess.OwnerID, terms, "words-e1")
}
