package sessions

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Page selects entries: Limit 0 returns all, oldest first; Limit N the
// newest N content entries; BeforeRowID pages backwards (exclusive).
type Page struct {
	Limit       int
	BeforeRowID string
}

// MaxPageLimit bounds one page.
const MaxPageLimit = 1000

// Listed is a content entry as listed: updates folded in, its place on the
// tree, and — at a branch point — its siblings. The body stays as stored
// (re-encoded only when an update folded into it), so a page passes bytes
// through instead of parsing them.
type Listed struct {
	domain.RawEntry
	// Parent is the nearest content entry before it on its branch: the
	// tree people see (branch markers and updates are not listed).
	Parent   string
	OnPath   bool
	Siblings *domain.SiblingGroup
	// SiblingIndex is this entry's place among Siblings.Heads.
	SiblingIndex int
}

// Messages lists a session's content entries (see Page), read from one
// snapshot. A page is never short because of folded rows: update entries are
// not counted. Returns not_found, or validation for a foreign cursor.
func (s *Journal) Messages(ctx context.Context, p domain.Principal, id string, page Page) ([]Listed, error) {
	if page.Limit < 0 || page.Limit > MaxPageLimit {
		return nil, errs.Field("limit", "must be a whole number from 1 to %d", MaxPageLimit)
	}
	var out []Listed
	err := s.store.ReadSession(ctx, id, func(r ports.SessionReader) error {
		sess, err := r.Session(ctx)
		if err != nil {
			return err
		}
		if err := sess.CheckContent(p); err != nil {
			return err
		}
		var before int64
		if page.BeforeRowID != "" {
			if before, err = r.SeqOfRow(ctx, page.BeforeRowID); errs.Is(err, errs.NotFound) {
				return errs.Field("before_id", "is not an entry of this session")
			} else if err != nil {
				return err
			}
		}
		entries, err := r.ContentEntries(ctx, before, page.Limit)
		if err != nil || len(entries) == 0 {
			out = []Listed{}
			return err
		}
		// Only the rows from the page's oldest entry on are walked: the path
		// descends in seq, so nothing older can put a page entry on it.
		metas, err := r.EntryMetas(ctx, entries[0].Meta.Seq)
		if err != nil {
			return err
		}
		index := domain.IndexMetas(metas)
		path := domain.ActivePath(index, sess.TipID)
		if err := s.fold(ctx, r, entries, index); err != nil {
			return err
		}
		out = make([]Listed, len(entries))
		for i, e := range entries {
			out[i] = Listed{RawEntry: e, Parent: e.Meta.BranchParent, OnPath: path[e.Meta.ID]}
		}
		return s.attachSiblings(ctx, r, sess, out, metas, index, path)
	})
	return out, err
}

// fold applies the update entries aimed at the page's entries; only the
// entries an update names are parsed and re-encoded.
func (s *Journal) fold(ctx context.Context, r ports.SessionReader, page []domain.RawEntry, metas map[string]domain.EntryMeta) error {
	targets := make([]string, 0, len(page))
	for _, e := range page {
		targets = append(targets, e.Meta.ID)
		if e.Meta.CallID != "" {
			targets = append(targets, e.Meta.CallID)
		}
	}
	updates, err := r.UpdatesTargeting(ctx, targets)
	if err != nil || len(updates) == 0 {
		return err
	}
	named := map[string]bool{}
	for _, u := range updates {
		named[u.TargetID], named[u.TargetCallID] = true, true
	}
	var at []int
	var decoded []domain.Entry
	for i, e := range page {
		if named[e.Meta.ID] || (e.Meta.CallID != "" && named[e.Meta.CallID]) {
			d, err := e.Decode()
			if err != nil {
				return errs.Wrap(errs.Internal, err, "entry %s has a malformed body", e.Meta.RowID)
			}
			at, decoded = append(at, i), append(decoded, d)
		}
	}
	domain.FoldUpdates(decoded, metas, updates)
	for j, i := range at {
		body, err := json.Marshal(decoded[j])
		if err != nil {
			return errs.Wrap(errs.Internal, err, "encode entry %s", decoded[j].ID)
		}
		page[i].Body = body
	}
	return nil
}

// attachSiblings marks the entries that sit at a branch point with their
// siblings and each sibling's newest entry (what switching to it means).
// Siblings are younger than their branch parent, so when the parent is among
// the metas already read (everything from the page's oldest entry on), so are
// they; only parents older than the page need a query.
func (s *Journal) attachSiblings(ctx context.Context, r ports.SessionReader, sess domain.Session, listed []Listed,
	metas []domain.EntryMeta, index map[string]domain.EntryMeta, path map[string]bool) error {
	older := []string{}
	for _, l := range listed {
		if _, read := index[l.Parent]; !read && !slices.Contains(older, l.Parent) {
			older = append(older, l.Parent)
		}
	}
	more, err := r.MetasByBranchParent(ctx, older)
	if err != nil {
		return err
	}
	candidates := []domain.EntryMeta{}
	for _, m := range more {
		if _, read := index[m.ID]; !read {
			candidates = append(candidates, m) // older than the page: they go first
		}
	}
	candidates = append(candidates, metas...)
	groups := domain.Siblings(candidates)
	if len(groups) == 0 {
		return nil
	}
	current, err := s.contentTip(ctx, r, sess.TipID)
	if err != nil {
		return err
	}
	resolved := map[string]*domain.SiblingGroup{}
	for i := range listed {
		g, ok := groups[listed[i].Parent]
		if !ok {
			continue
		}
		sg := resolved[listed[i].Parent]
		if sg == nil {
			sg = &domain.SiblingGroup{}
			for _, head := range g {
				tip := current
				if !path[head.ID] {
					if tip, err = r.SubtreeTip(ctx, head.ID); err != nil {
						return err
					}
				}
				sg.Heads = append(sg.Heads, head.ID)
				sg.Tips = append(sg.Tips, tip)
			}
			resolved[listed[i].Parent] = sg
		}
		listed[i].Siblings = sg
		listed[i].SiblingIndex = slices.Index(sg.Heads, listed[i].Meta.ID)
	}
	return nil
}

// contentTip is the newest content entry on the active branch.
func (s *Journal) contentTip(ctx context.Context, r ports.SessionReader, tipID string) (string, error) {
	m, err := s.metaOf(ctx, r, tipID)
	if err != nil || m == nil {
		return "", err
	}
	if domain.IsContentKind(m.Kind) {
		return m.ID, nil
	}
	return m.BranchParent, nil
}

// ContextReport is what the session's active branch occupies of its model's
// window. Provider counts (InputTokens…) and character estimates
// (ConversationTokens) are different rulers and are never summed.
type ContextReport struct {
	InputTokens        int64
	CachedTokens       int64
	CacheWriteTokens   int64
	ContextWindow      int
	ConversationTokens int64
	CompactionTokens   int64
	SessionInputTokens int64
	// Prompt is the newest run's build profile; nil before any run.
	Prompt json.RawMessage
}

// Context reports the session's context occupancy. It reads the session
// row's running totals, so it costs the same for ten entries or a million.
// Returns not_found.
func (s *Journal) Context(ctx context.Context, p domain.Principal, id string) (ContextReport, error) {
	var rep ContextReport
	var agent domain.Agent
	var owner string
	err := s.store.ReadSession(ctx, id, func(r ports.SessionReader) error {
		sess, err := r.Session(ctx)
		if err != nil {
			return err
		}
		if err := sess.CheckContent(p); err != nil {
			return err
		}
		owner = sess.OwnerID
		t := sess.Totals
		rep = ContextReport{InputTokens: t.AnchorUsage.InputTokens, CachedTokens: t.AnchorUsage.CachedTokens,
			CacheWriteTokens: t.AnchorUsage.CacheWriteTokens, ConversationTokens: t.ConversationTokens(),
			CompactionTokens: t.CompactionTokens(), SessionInputTokens: t.SessionInputTokens}
		if profile, ok, err := r.LatestContextProfile(ctx); err != nil {
			return err
		} else if ok {
			rep.Prompt = profile
		}
		if sess.AgentConfigID != "" {
			if agent, err = s.agents.FindAgent(ctx, sess.AgentConfigID); err != nil && !errs.Is(err, errs.NotFound) {
				return err
			}
			rep.ContextWindow = agent.ContextWindow
		}
		return nil
	})
	if err != nil || rep.Prompt == nil {
		return rep, err
	}
	// Outside the snapshot: asking the servers takes up to their bound.
	rep.Prompt, err = s.liveMCP(ctx, agent, owner, rep.Prompt)
	return rep, err
}

// liveMCP puts the MCP tools the agent selects into a build profile as
// they are now, per server ("mcp": [{server, chars, unavailable}]), in
// place of the build's one bucket: their definitions live on the servers,
// and a server that cannot answer is reported as such, not as zero.
func (s *Journal) liveMCP(ctx context.Context, agent domain.Agent, owner string, profile json.RawMessage) (json.RawMessage, error) {
	if s.mcp == nil || !slices.ContainsFunc(agent.Tools, func(n string) bool { _, _, ok := domain.SplitMCPToolName(n); return ok }) {
		return profile, nil
	}
	chars, err := s.mcp.ToolChars(ctx, agent.Ownership, owner, agent.Tools)
	if err != nil {
		return nil, err
	}
	var p map[string]any
	if err := json.Unmarshal(profile, &p); err != nil {
		return profile, nil // an unreadable snapshot is shown as stored
	}
	if tools, ok := p["tools"].(map[string]any); ok {
		delete(tools, "mcp")
	}
	type server struct {
		Server      string `json:"server"`
		Chars       int    `json:"chars"`
		Unavailable bool   `json:"unavailable,omitempty"`
	}
	servers := []server{}
	for name, n := range chars {
		servers = append(servers, server{Server: name, Chars: max(n, 0), Unavailable: n < 0})
	}
	slices.SortFunc(servers, func(a, b server) int { return strings.Compare(a.Server, b.Server) })
	p["mcp"] = servers
	return json.Marshal(p)
}
