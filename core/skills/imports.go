package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
)

// Import bounds: skills per repository, time per fetch, time per import.
const (
	MaxPerRepo   = 200
	FetchTimeout = 30 * time.Second
	ImportBudget = 5 * time.Minute
	// FileName is the file an import looks for, at any depth.
	FileName = "SKILL.md"
	// treeLimit bounds a tree listing's JSON (GitHub cuts a tree at
	// 100,000 entries or 7 MB, and says so).
	treeLimit = 16 << 20
)

// Settings reads the import settings.
type Settings interface {
	String(ctx context.Context, key string) (string, error)
}

// Policies gives the outbound policy of a person's own request.
type Policies interface {
	ForCaller(ctx context.Context, caller domain.Principal) (domain.OutboundPolicy, error)
}

// Importer upserts skills from a GitHub repository or a raw SKILL.md URL.
type Importer struct {
	svc      *Service
	fetch    ports.Fetcher
	settings Settings
	policies Policies
}

// NewImporter returns an Importer writing through svc. A raw URL is fetched
// under the importing person's outbound policy; the GitHub API an admin
// configured (skills_github_api_url) is reached whatever its address.
func NewImporter(svc *Service, fetch ports.Fetcher, s Settings, policies Policies) *Importer {
	return &Importer{svc: svc, fetch: fetch, settings: s, policies: policies}
}

// ImportedFile is one skill an import wrote or found as it was.
type ImportedFile struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	ModelName string `json:"model_name"`
	Path      string `json:"path"`
}

// SkippedFile is one SKILL.md an import left, and why.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// ImportResult is what an import did.
type ImportResult struct {
	Repo       string         `json:"repo"`
	SourceRepo string         `json:"source_repo"`
	Commit     string         `json:"commit,omitempty"`
	Created    []ImportedFile `json:"created"`
	Updated    []ImportedFile `json:"updated"`
	Unchanged  []ImportedFile `json:"unchanged"`
	Skipped    []SkippedFile  `json:"skipped"`
	Truncated  bool           `json:"truncated"`
}

// treeEntry is one entry of a GitHub tree listing.
type treeEntry struct {
	Path string `json:"path"`
	Type string `json:"type"`
	Size int64  `json:"size"`
}

// fetched is one SKILL.md read from the source.
type fetched struct {
	path    string
	content string
	doc     Document
}

// Import reads the skills at rawURL into the caller's group for that
// source: a https://github.com/owner/repo URL walks the repository at its
// HEAD commit for every SKILL.md; any other http(s) URL is one raw
// SKILL.md. Returns validation (the URL, a refused address), upstream (a
// fetch failed: 502), conflict (the group changed scope meanwhile).
func (im *Importer) Import(ctx context.Context, p domain.Principal, rawURL string) (ImportResult, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ImportResult{}, errs.Field("url", "must be an http(s) URL: a GitHub repository or a raw SKILL.md")
	}
	policy, err := im.policies.ForCaller(ctx, p)
	if err != nil {
		return ImportResult{}, err
	}
	// The budget bounds the fetching only: what was fetched in it is
	// stored (and what was not, said) even when the budget ran out.
	fetchCtx, cancel := context.WithTimeout(ctx, ImportBudget)
	defer cancel()
	var res ImportResult
	var files []fetched
	if owner, repo, ok := githubRepo(u); ok {
		res.Repo, res.SourceRepo = owner+"/"+repo, "https://github.com/"+owner+"/"+repo
		files, err = im.walkGitHub(fetchCtx, owner, repo, &res)
	} else {
		res.Repo, res.SourceRepo = u.Hostname(), u.String()
		files, err = im.single(fetchCtx, u, policy, &res)
	}
	if err != nil {
		return ImportResult{}, err
	}
	return res, im.upsert(ctx, p, files, &res)
}

// githubRepo reads owner and repository from a github.com URL.
func githubRepo(u *url.URL) (owner, repo string, ok bool) {
	if host := strings.ToLower(u.Hostname()); host != "github.com" && host != "www.github.com" {
		return "", "", false
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], strings.TrimSuffix(parts[1], ".git"), true
}

// get fetches one URL within FetchTimeout.
func (im *Importer) get(ctx context.Context, u string, accept string, max int64, policy domain.OutboundPolicy) (ports.FetchResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	h := map[string]string{}
	if accept != "" {
		h["Accept"] = accept
	}
	return im.fetch.Fetch(ctx, ports.FetchRequest{URL: u, Headers: h, MaxBytes: max, Outbound: policy})
}

// getJSON fetches and decodes a GitHub API answer.
func (im *Importer) getJSON(ctx context.Context, u string, into any) error {
	r, err := im.get(ctx, u, "application/vnd.github+json", treeLimit, domain.OpenOutbound)
	if err != nil {
		return err
	}
	if r.Truncated {
		return errs.E(errs.Upstream, "the answer of %s is larger than %d MB", u, treeLimit>>20)
	}
	if err := json.Unmarshal(r.Body, into); err != nil {
		return errs.E(errs.Upstream, "the answer of %s is not the GitHub API's JSON: %v", u, err)
	}
	return nil
}

// walkGitHub reads every SKILL.md of a repository at its HEAD commit: the
// commit, the full tree, then each file's raw text through the API — all
// pinned to that commit.
func (im *Importer) walkGitHub(ctx context.Context, owner, repo string, res *ImportResult) ([]fetched, error) {
	api, err := im.settings.String(ctx, settings.KeySkillsGitHubAPI)
	if err != nil {
		return nil, err
	}
	base := strings.TrimRight(api, "/") + "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(repo)
	var commit struct {
		SHA string `json:"sha"`
	}
	if err := im.getJSON(ctx, base+"/commits/HEAD", &commit); err != nil {
		return nil, err
	}
	if commit.SHA == "" {
		return nil, errs.E(errs.Upstream, "%s/commits/HEAD named no commit", base)
	}
	res.Commit = commit.SHA
	var tree struct {
		Tree      []treeEntry `json:"tree"`
		Truncated bool        `json:"truncated"`
	}
	if err := im.getJSON(ctx, base+"/git/trees/"+commit.SHA+"?recursive=1", &tree); err != nil {
		return nil, err
	}
	res.Truncated = tree.Truncated
	// In path order, so what a cap or a duplicate leaves out does not
	// depend on how the listing came.
	slices.SortFunc(tree.Tree, func(a, b treeEntry) int { return strings.Compare(a.Path, b.Path) })
	var out []fetched
	for _, e := range tree.Tree {
		if e.Type != "blob" || path.Base(e.Path) != FileName {
			continue
		}
		switch {
		case len(out)+len(res.Skipped) >= MaxPerRepo:
			res.Skipped = append(res.Skipped, SkippedFile{e.Path, fmt.Sprintf("past the %d skills one repository may bring", MaxPerRepo)})
			continue
		case e.Size > MaxDocument:
			res.Skipped = append(res.Skipped, SkippedFile{e.Path, fmt.Sprintf("%d bytes: a skill holds at most 256 KiB", e.Size)})
			continue
		case ctx.Err() != nil:
			res.Skipped = append(res.Skipped, SkippedFile{e.Path, "not fetched: the import ran out of its 5 minutes"})
			continue
		}
		r, err := im.get(ctx, base+"/contents/"+escapePath(e.Path)+"?ref="+commit.SHA, "application/vnd.github.raw", MaxDocument, domain.OpenOutbound)
		if err != nil {
			if ctx.Err() != nil {
				res.Skipped = append(res.Skipped, SkippedFile{e.Path, "not fetched: the import ran out of its 5 minutes"})
				continue
			}
			return nil, err
		}
		if f, ok := read(e.Path, r, res); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// single reads one raw SKILL.md.
func (im *Importer) single(ctx context.Context, u *url.URL, policy domain.OutboundPolicy, res *ImportResult) ([]fetched, error) {
	r, err := im.get(ctx, u.String(), "", MaxDocument, policy)
	if err != nil {
		return nil, err
	}
	p := strings.TrimPrefix(u.Path, "/")
	if f, ok := read(p, r, res); ok {
		return []fetched{f}, nil
	}
	return nil, nil
}

// read parses a fetched file, or records why it is skipped.
func read(p string, r ports.FetchResponse, res *ImportResult) (fetched, bool) {
	if r.Truncated {
		res.Skipped = append(res.Skipped, SkippedFile{p, "larger than 256 KiB: a skill holds at most that"})
		return fetched{}, false
	}
	doc, err := Parse(string(r.Body))
	if err != nil {
		res.Skipped = append(res.Skipped, SkippedFile{p, errs.FieldsOf(err)["content"]})
		return fetched{}, false
	}
	return fetched{path: p, content: string(r.Body), doc: doc}, true
}

// escapePath escapes each segment of a repository path.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// upsert writes an import's files into the caller's group for its source,
// in one transaction: new files join with the group's scope (private for a
// new group), changed ones are refreshed, a skill edited here since its
// import (detached) is left, and a name taken twice in the source, or by
// another skill in that scope, is skipped with the reason.
func (im *Importer) upsert(ctx context.Context, p domain.Principal, files []fetched, res *ImportResult) error {
	s := im.svc
	res.Created, res.Updated, res.Unchanged = []ImportedFile{}, []ImportedFile{}, []ImportedFile{}
	if res.Skipped == nil {
		res.Skipped = []SkippedFile{}
	}
	actx, rec := audit.Stage(ctx, s.clock.Now(), "skill.import", audit.Object{Kind: "skill_source", ID: res.SourceRepo, Name: res.SourceRepo})
	return s.store.InSkillTx(actx, func(tx ports.SkillTx) error {
		all, err := tx.ListSkills(ctx)
		if err != nil {
			return err
		}
		scope := domain.ScopePrivate
		group := map[string]domain.Skill{}
		for _, k := range all {
			if k.SourceRepo == res.SourceRepo && k.OwnerID == p.User.ID {
				group[strings.ToLower(k.Name)] = k
				scope = k.Scope
			}
		}
		chosen := choose(files, group)
		now := s.clock.Now()
		for _, f := range files {
			key := strings.ToLower(f.doc.Name)
			if kept := chosen[key]; kept != f.path {
				res.Skipped = append(res.Skipped, SkippedFile{f.path, fmt.Sprintf("a second skill named %q in this source (%s has it)",
					f.doc.Name, kept)})
				continue
			}
			cur, ok := group[key]
			switch {
			case ok && cur.Detached:
				res.Skipped = append(res.Skipped, SkippedFile{f.path, "edited here since its import (detached): an import leaves it"})
			case ok && cur.Content == f.content:
				if cur.SourceCommit != res.Commit || cur.SourcePath != f.path {
					cur.SourceCommit, cur.SourcePath = res.Commit, f.path
					if err := tx.UpdateSkill(ctx, cur); err != nil {
						return err
					}
				}
				res.Unchanged = append(res.Unchanged, imported(cur))
			case ok:
				cur.Name, cur.Description, cur.Content = f.doc.Name, f.doc.Description, f.content
				cur.SourcePath, cur.SourceCommit, cur.UpdatedAt = f.path, res.Commit, now
				if err := tx.UpdateSkill(ctx, cur); err != nil {
					return err
				}
				res.Updated = append(res.Updated, imported(cur))
			default:
				k := domain.Skill{ID: s.ids.NewID(), Ownership: domain.Ownership{Scope: scope, OwnerID: p.User.ID}, Name: f.doc.Name,
					Description: f.doc.Description, Content: f.content, SourceRepo: res.SourceRepo, RepoLabel: res.Repo,
					SourcePath: f.path, SourceCommit: res.Commit, CreatedAt: now, UpdatedAt: now}
				if taken(all, k) {
					res.Skipped = append(res.Skipped, SkippedFile{f.path, fmt.Sprintf("a skill named %q already exists in that scope",
						k.ModelName())})
					continue
				}
				if err := tx.InsertSkill(ctx, k); err != nil {
					return err
				}
				all = append(all, k)
				res.Created = append(res.Created, imported(k))
			}
		}
		if len(res.Created)+len(res.Updated) == 0 {
			audit.Drop(rec) // nothing new: nothing to record
		}
		return nil
	})
}

// choose picks, for each name the source holds more than once, the file
// that keeps it: the one the group's skill came from, else the first.
func choose(files []fetched, group map[string]domain.Skill) map[string]string {
	chosen := map[string]string{}
	for _, f := range files {
		key := strings.ToLower(f.doc.Name)
		if _, seen := chosen[key]; !seen || group[key].SourcePath == f.path {
			chosen[key] = f.path
		}
	}
	return chosen
}

// taken reports whether another skill already holds k's model name where
// k would live.
func taken(all []domain.Skill, k domain.Skill) bool {
	for _, o := range all {
		if o.ID != k.ID && strings.EqualFold(o.RepoLabel, k.RepoLabel) && strings.EqualFold(o.Name, k.Name) && o.Scope == k.Scope &&
			(k.Scope == domain.ScopeGlobal || o.OwnerID == k.OwnerID) {
			return true
		}
	}
	return false
}

func imported(k domain.Skill) ImportedFile {
	return ImportedFile{ID: k.ID, Name: k.Name, ModelName: k.ModelName(), Path: k.SourcePath}
}
