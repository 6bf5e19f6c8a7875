// Package patch reads and applies the apply_patch format: the
// "*** Begin Patch" envelope of file additions, deletions and context
// hunks that OpenAI's coding models are trained to write. It is pure text
// in, text out; the runner does the file system.
package patch

import (
	"fmt"
	"strings"
)

// Kind is what a file operation does.
type Kind int

// The file operations.
const (
	Add Kind = iota + 1
	Delete
	Update
)

// FileOp is one file's part of a patch.
type FileOp struct {
	Kind Kind
	Path string
	// MoveTo renames an updated file ("*** Move to:").
	MoveTo string
	// Content is an added file's whole text.
	Content string
	// Chunks are an update's hunks, in file order.
	Chunks []Chunk
}

// Chunk is one hunk: Old (context and removed lines, in order) is found in
// the file and replaced by New (context and added lines).
type Chunk struct {
	// Anchor is the "@@ …" line: a line of the file to find first, so a
	// hunk lands in the right function. Empty: none.
	Anchor string
	Old    []string
	New    []string
	// EOF marks a hunk that ends the file ("*** End of File").
	EOF bool
	// line is where the hunk starts in the patch, for errors.
	line int
}

const (
	beginPatch = "*** Begin Patch"
	endPatch   = "*** End Patch"
	addFile    = "*** Add File: "
	deleteFile = "*** Delete File: "
	updateFile = "*** Update File: "
	moveTo     = "*** Move to: "
	endOfFile  = "*** End of File"
)

// Parse reads a patch. Errors name the patch line at fault.
func Parse(text string) ([]FileOp, error) {
	lines := strings.Split(strings.ReplaceAll(strings.TrimSpace(text), "\r\n", "\n"), "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != beginPatch {
		return nil, fmt.Errorf("a patch starts with the line %q", beginPatch)
	}
	if strings.TrimSpace(lines[len(lines)-1]) != endPatch {
		return nil, fmt.Errorf("a patch ends with the line %q", endPatch)
	}
	p := parser{lines: lines[:len(lines)-1], i: 1}
	var ops []FileOp
	for p.i < len(p.lines) {
		op, err := p.fileOp()
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("the patch changes no file")
	}
	return ops, nil
}

type parser struct {
	lines []string
	i     int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("patch line %d: "+format, append([]any{p.i + 1}, args...)...)
}

// header reports whether the current line starts a file operation.
func (p *parser) header() bool {
	l := p.lines[p.i]
	return strings.HasPrefix(l, addFile) || strings.HasPrefix(l, deleteFile) || strings.HasPrefix(l, updateFile)
}

func (p *parser) fileOp() (FileOp, error) {
	l := p.lines[p.i]
	switch {
	case strings.HasPrefix(l, addFile):
		op := FileOp{Kind: Add, Path: strings.TrimSpace(strings.TrimPrefix(l, addFile))}
		p.i++
		var b strings.Builder
		for p.i < len(p.lines) && !p.header() {
			line := p.lines[p.i]
			if !strings.HasPrefix(line, "+") {
				return op, p.errorf("every line of an added file starts with +, got %q", line)
			}
			b.WriteString(line[1:])
			b.WriteByte('\n')
			p.i++
		}
		op.Content = b.String()
		return op, p.checkPath(op.Path)
	case strings.HasPrefix(l, deleteFile):
		op := FileOp{Kind: Delete, Path: strings.TrimSpace(strings.TrimPrefix(l, deleteFile))}
		p.i++
		return op, p.checkPath(op.Path)
	case strings.HasPrefix(l, updateFile):
		op := FileOp{Kind: Update, Path: strings.TrimSpace(strings.TrimPrefix(l, updateFile))}
		if err := p.checkPath(op.Path); err != nil {
			return op, err
		}
		p.i++
		if p.i < len(p.lines) && strings.HasPrefix(p.lines[p.i], moveTo) {
			op.MoveTo = strings.TrimSpace(strings.TrimPrefix(p.lines[p.i], moveTo))
			if err := p.checkPath(op.MoveTo); err != nil {
				return op, err
			}
			p.i++
		}
		if err := p.chunks(&op); err != nil {
			return op, err
		}
		if len(op.Chunks) == 0 && op.MoveTo == "" {
			return op, fmt.Errorf("the update of %s has no hunk", op.Path)
		}
		return op, nil
	}
	return FileOp{}, p.errorf("expected %q, %q or %q, got %q", addFile+"…", deleteFile+"…", updateFile+"…", l)
}

func (p *parser) checkPath(path string) error {
	if path == "" {
		return p.errorf("a file operation names no path")
	}
	return nil
}

// chunks reads an update's hunks up to the next file operation.
func (p *parser) chunks(op *FileOp) error {
	var cur *Chunk
	open := func(anchor string) {
		op.Chunks = append(op.Chunks, Chunk{Anchor: anchor, line: p.i + 1})
		cur = &op.Chunks[len(op.Chunks)-1]
	}
	for p.i < len(p.lines) && !p.header() {
		line := p.lines[p.i]
		switch {
		case line == "@@" || strings.HasPrefix(line, "@@ "):
			open(strings.TrimSpace(strings.TrimPrefix(line, "@@")))
		case strings.TrimSpace(line) == endOfFile:
			if cur == nil {
				return p.errorf("%q before any hunk", endOfFile)
			}
			cur.EOF = true
		default:
			if cur == nil {
				open("")
			}
			switch {
			case line == "":
				// A blank context line whose leading space was lost.
				cur.Old, cur.New = append(cur.Old, ""), append(cur.New, "")
			case line[0] == ' ':
				cur.Old, cur.New = append(cur.Old, line[1:]), append(cur.New, line[1:])
			case line[0] == '-':
				cur.Old = append(cur.Old, line[1:])
			case line[0] == '+':
				cur.New = append(cur.New, line[1:])
			default:
				return p.errorf("a hunk line starts with ' ', '-' or '+', got %q", line)
			}
		}
		p.i++
	}
	return nil
}

// Apply returns an updated file's new text. Each hunk is found after the
// previous one: exactly, then ignoring trailing, then surrounding
// whitespace. The result ends with a newline.
func (op FileOp) Apply(old string) (string, error) {
	lines := strings.Split(old, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	type edit struct {
		at, n int
		with  []string
	}
	var edits []edit
	cursor := 0
	for _, c := range op.Chunks {
		if c.Anchor != "" {
			at := find(lines, []string{c.Anchor}, cursor, false)
			if at < 0 {
				return "", fmt.Errorf("%s: the @@ line %q of the hunk at patch line %d is not in the file", op.Path, c.Anchor, c.line)
			}
			cursor = at + 1
		}
		if len(c.Old) == 0 {
			at := len(lines)
			if c.Anchor != "" && !c.EOF {
				at = cursor
			}
			edits = append(edits, edit{at, 0, c.New})
			cursor = at
			continue
		}
		oldL, newL := c.Old, c.New
		at := find(lines, oldL, cursor, c.EOF)
		if at < 0 && oldL[len(oldL)-1] == "" {
			// A trailing blank context line the file does not have.
			oldL = oldL[:len(oldL)-1]
			if len(newL) > 0 && newL[len(newL)-1] == "" {
				newL = newL[:len(newL)-1]
			}
			at = find(lines, oldL, cursor, c.EOF)
		}
		if at < 0 {
			return "", fmt.Errorf("%s: the hunk at patch line %d does not match the file; its lines to find start with %q "+
				"(read the file again and copy the context exactly)", op.Path, c.line, c.Old[0])
		}
		edits = append(edits, edit{at, len(oldL), newL})
		cursor = at + len(oldL)
	}
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		lines = append(lines[:e.at], append(append([]string{}, e.with...), lines[e.at+e.n:]...)...)
	}
	if len(lines) == 0 {
		return "", nil
	}
	return strings.Join(lines, "\n") + "\n", nil
}

// find is where want appears in lines at or after from (at the very end
// first when atEOF), trying exact, right-trimmed and trimmed comparisons in
// turn; -1 when nowhere.
func find(lines, want []string, from int, atEOF bool) int {
	for _, norm := range []func(string) string{
		func(s string) string { return s },
		func(s string) string { return strings.TrimRight(s, " \t") },
		strings.TrimSpace,
	} {
		match := func(at int) bool {
			for j, w := range want {
				if norm(lines[at+j]) != norm(w) {
					return false
				}
			}
			return true
		}
		if atEOF {
			if at := len(lines) - len(want); at >= from && match(at) {
				return at
			}
		}
		for at := from; at+len(want) <= len(lines); at++ {
			if match(at) {
				return at
			}
		}
	}
	return -1
}
