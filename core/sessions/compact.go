package sessions

import (
	"context"
	"fmt"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Fold is a compaction pass's plan: the prefix of the active branch to
// fold (bodies read), and how much the model sees now.
type Fold struct {
	Entries      []domain.Entry
	BeforeTokens int64 // the conversation's estimate before the fold
	activeChars  int64 // what the model sees now, in characters
	foldedChars  int64 // of which the fold takes away
}

// AfterTokens is the conversation's estimate once the fold has put
// checkpoint in place of its entries.
func (f Fold) AfterTokens(checkpoint domain.Entry) int64 {
	after := domain.ContextTotals{ActiveChars: f.activeChars - f.foldedChars + domain.MetaOf(checkpoint, "").Chars}
	return after.ConversationTokens()
}

// Empty reports a plan with nothing to fold.
func (f Fold) Empty() bool { return len(f.Entries) == 0 }

// CompactionDue reports whether the session's active history sizes past
// threshold tokens: the newest usage plus the estimate after it, read off
// the session row — what every turn boundary costs, however long the
// session.
func (s *Journal) CompactionDue(ctx context.Context, sessionID string, threshold int64) (bool, error) {
	sess, err := s.store.FindSession(ctx, sessionID)
	if err != nil {
		return false, err
	}
	return sess.Totals.CompactionTokens() > threshold, nil
}

// PlanFold picks what a pass over the session folds, keeping the newest
// window entries (see domain.FoldPrefix). It reads the lifted columns of
// every entry and the bodies of the folded ones only.
func (s *Journal) PlanFold(ctx context.Context, sessionID string, window int) (Fold, error) {
	var f Fold
	err := s.store.ReadSession(ctx, sessionID, func(r ports.SessionReader) error {
		sess, err := r.Session(ctx)
		if err != nil {
			return err
		}
		visible, err := activeMetas(ctx, r)
		if err != nil {
			return err
		}
		// In the order the model reads them (see ModelInput): the summary
		// first, where it stands for what came before the kept window.
		var active, items []domain.EntryMeta
		for _, m := range visible {
			if m.Kind == domain.KindCompaction {
				active = append(active, m)
			} else {
				items = append(items, m)
			}
		}
		active = append(active, items...)
		f.BeforeTokens, f.activeChars = sess.Totals.ConversationTokens(), sess.Totals.ActiveChars
		prefix := domain.FoldPrefix(active, window)
		if len(prefix) == 0 {
			return nil
		}
		ids := make([]string, len(prefix))
		for i, m := range prefix {
			ids[i] = m.ID
			f.foldedChars += m.Chars
		}
		f.Entries, err = r.EntriesByID(ctx, ids)
		return err
	})
	return f, err
}

// ApplyFold folds a plan's entries under checkpoint (a compaction entry
// whose Checkpoint carries the summary; its excluded ids are set here) in
// one transaction: the entries leave what the model sees (the totals drop
// their characters), then the checkpoint is appended (which resets the
// usage anchor). Returns the stored checkpoint, or conflict when another
// pass folded one of the entries first.
func (s *Journal) ApplyFold(ctx context.Context, sessionID string, f Fold, checkpoint domain.Entry) (domain.Entry, error) {
	ids := make([]string, len(f.Entries))
	for i, e := range f.Entries {
		ids[i] = e.ID
	}
	cp := *checkpoint.Checkpoint
	cp.ExcludedIDs = ids
	checkpoint.Checkpoint = &cp
	var out domain.Entry
	err := s.store.WriteSession(ctx, sessionID, func(tx ports.SessionTx) error {
		n, err := tx.MarkCompacted(ctx, ids)
		if err != nil {
			return err
		}
		if n != len(ids) {
			return errs.E(errs.Conflict, "another compaction folded this history first")
		}
		sess, err := tx.Session(ctx)
		if err != nil {
			return err
		}
		totals := sess.Totals
		totals.ActiveChars -= f.foldedChars
		if err := tx.SaveState(ctx, sess.TipID, sess.LastSeq, totals, s.clock.Now()); err != nil {
			return err
		}
		appended, err := s.appendIn(ctx, tx, []domain.Entry{checkpoint})
		if err == nil {
			out = appended[0]
		}
		return err
	})
	return out, err
}

// maxFoldedChars bounds what one folded entry contributes to the
// summarizer's transcript; the head is kept.
const maxFoldedChars = 4000

// FoldTranscript renders folded entries as one plain-text transcript, the
// single user message a summarizer reads.
func FoldTranscript(entries []domain.Entry) string {
	var b strings.Builder
	for _, e := range entries {
		var line string
		if e.Kind == domain.KindCompaction && e.Checkpoint != nil {
			line = "[summary of what came before]\n" + e.Checkpoint.Summary
		} else {
			it := domain.ParseItem(e.Item)
			switch it.Kind() {
			case domain.ItemMessage:
				line = it.Role + ": " + it.Text()
			case domain.ItemFunctionCall:
				line = fmt.Sprintf("[tool call %s %s]", it.Name, it.Arguments)
			case domain.ItemFunctionCallOutput:
				line = "[tool result] " + it.OutputText()
			case domain.ItemReasoning:
				line = "[reasoning] " + it.ReasoningText()
			default:
				continue
			}
		}
		if len(line) > maxFoldedChars {
			line = line[:maxFoldedChars] + " […]"
		}
		b.WriteString(line)
		b.WriteString("\n\n")
	}
	return strings.TrimSpace(b.String())
}
