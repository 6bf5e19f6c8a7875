package domain

import "time"

// Skill is one SKILL.md: know-how an agent reads on demand. Name and
// Description come from the document's frontmatter at save time; Content
// is the document as written. A skill imported from elsewhere carries its
// source, and its repository's label leads its model-facing name.
type Skill struct {
	ID string
	Ownership
	Name        string
	Description string
	Content     string
	// SourceRepo groups an import's skills ("" for one authored here): the
	// repository URL, or the raw URL of a single imported file.
	SourceRepo string
	// RepoLabel leads the model-facing name: owner/repo for a GitHub
	// import, the host for another URL, "" for an authored skill.
	RepoLabel    string
	SourcePath   string // the file's path in its repository
	SourceCommit string // the commit an import was pinned to
	// Detached: edited here after its import, so an import never
	// overwrites it again.
	Detached  bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ModelName is the name the model knows the skill by: label:name for an
// import, the bare name for a skill authored here.
func (s Skill) ModelName() string {
	if s.RepoLabel == "" {
		return s.Name
	}
	return s.RepoLabel + ":" + s.Name
}

// Imported reports whether the skill came from elsewhere.
func (s Skill) Imported() bool { return s.SourceRepo != "" }
