package domain

import "maps"

// ActivePath returns the ids on the active branch: the walk from tip back
// through parent links. It stops at the root, at a parent it does not hold
// (metas may start at some seq), and at an id it has already seen, so a
// damaged tree can never loop.
func ActivePath(metas map[string]EntryMeta, tipID string) map[string]bool {
	on := map[string]bool{}
	for id := tipID; id != ""; {
		m, ok := metas[id]
		if !ok || on[id] {
			break
		}
		on[id] = true
		id = m.ParentID
	}
	return on
}

// IndexMetas maps metas by entry id.
func IndexMetas(metas []EntryMeta) map[string]EntryMeta {
	out := make(map[string]EntryMeta, len(metas))
	for _, m := range metas {
		out[m.ID] = m
	}
	return out
}

// FoldUpdates applies update entries to their targets, in stored order: the
// last write of each display field wins, an empty field writes nothing, and
// extras merge per key. An update may precede its target; one whose target
// is absent is ignored. A target named by call id is the card of that call:
// its function_call item, else any entry carrying the id. metas holds the
// entries' lifted columns (call id, item type), so no item is parsed.
func FoldUpdates(entries []Entry, metas map[string]EntryMeta, updates []Entry) {
	byID := map[string]int{}
	byCall := map[string]int{}
	for i, e := range entries {
		byID[e.ID] = i
		m := metas[e.ID]
		if m.CallID != "" {
			if j, seen := byCall[m.CallID]; !seen || (m.ItemType == "function_call" && metas[entries[j].ID].ItemType != "function_call") {
				byCall[m.CallID] = i
			}
		}
	}
	for _, u := range updates {
		if u.Display == nil {
			continue
		}
		i, ok := byID[u.TargetID]
		if u.TargetID == "" {
			i, ok = byCall[u.TargetCallID]
		}
		if !ok {
			continue
		}
		entries[i].Display = mergeDisplay(entries[i].Display, u.Display)
	}
}

func mergeDisplay(cur, upd *Display) *Display {
	out := Display{}
	if cur != nil {
		out = *cur
		out.Extra = maps.Clone(cur.Extra)
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&out.Kind, upd.Kind)
	set(&out.Title, upd.Title)
	set(&out.Summary, upd.Summary)
	set(&out.Renderer, upd.Renderer)
	for k, v := range upd.Extra {
		if v == "" {
			continue
		}
		if out.Extra == nil {
			out.Extra = map[string]string{}
		}
		out.Extra[k] = v
	}
	return &out
}

// BranchRoot is the entry id a branch names to continue from the very
// start: the next message opens a new first branch beside the old one.
const BranchRoot = "root"

// SiblingGroup is a branch point: the content entries sharing one branch
// parent, oldest first, with the newest content entry of each one's subtree
// (switching to an attempt means branching to its tip).
type SiblingGroup struct {
	Heads []string
	Tips  []string
}

// Siblings groups content metas by branch parent and keeps the groups with
// more than one head: the places a regenerate or a branch forked the
// conversation.
func Siblings(metas []EntryMeta) map[string][]EntryMeta {
	groups := map[string][]EntryMeta{}
	for _, m := range metas {
		if IsContentKind(m.Kind) {
			groups[m.BranchParent] = append(groups[m.BranchParent], m)
		}
	}
	for k, g := range groups {
		if len(g) < 2 {
			delete(groups, k)
		}
	}
	return groups
}

// ForkPlan is a copy of entries rewritten into a new session's namespace.
type ForkPlan struct {
	Entries []Entry
	TipID   string
}

// PlanFork copies entries (every kind, oldest first) under fresh ids: parent
// links and update targets are rewritten through the same map, so the copy is
// a self-consistent tree with no id pointing back at the source. tipID is the
// source entry the fork continues from ("" for an empty fork). Row ids and
// seqs are the new session's to assign.
func PlanFork(entries []Entry, tipID string, newID func() string) ForkPlan {
	ids := make(map[string]string, len(entries))
	for _, e := range entries {
		ids[e.ID] = newID()
	}
	out := make([]Entry, 0, len(entries))
	for _, e := range entries {
		c := e
		c.ID = ids[e.ID]
		c.ParentID = ids[e.ParentID] // "" when the parent was not copied
		if e.TargetID != "" {
			c.TargetID = ids[e.TargetID] // an update whose target was cut now targets nothing
		}
		if e.Checkpoint != nil {
			cp := *e.Checkpoint
			cp.ExcludedIDs = make([]string, 0, len(e.Checkpoint.ExcludedIDs))
			for _, x := range e.Checkpoint.ExcludedIDs {
				if id, ok := ids[x]; ok {
					cp.ExcludedIDs = append(cp.ExcludedIDs, id)
				}
			}
			c.Checkpoint = &cp
		}
		c.RowID, c.Seq = "", 0
		out = append(out, c)
	}
	return ForkPlan{Entries: out, TipID: ids[tipID]}
}
