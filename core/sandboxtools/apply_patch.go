package sandboxtools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/patch"
)

// applyPatch applies an apply_patch patch. Every file's new text is worked
// out before anything is written, so a hunk that does not match leaves
// the whole tree as it was.
func (w *Workspace) applyPatch(ctx context.Context, a toolArgs) (Result, error) {
	r := Result{}
	text, err := a.text("input")
	if err != nil {
		return r, err
	}
	ops, err := patch.Parse(text)
	if err != nil {
		return r, err
	}
	// The tree as the patch leaves it: path → new text, or nil when deleted.
	after := map[string]*string{}
	onDisk := map[string]bool{} // read from the tree: a deletion has something to remove
	var order []string
	current := func(p string) (string, error) {
		if v, ok := after[p]; ok {
			if v == nil {
				return "", fmt.Errorf("%s is deleted earlier in this patch", p)
			}
			return *v, nil
		}
		data, err := w.loadFile(ctx, p)
		onDisk[p] = err == nil
		return string(data), err
	}
	set := func(p string, v *string) {
		if _, seen := after[p]; !seen {
			order = append(order, p)
		}
		after[p] = v
	}
	var summary []string
	for _, op := range ops {
		p := inTree(op.Path)
		switch op.Kind {
		case patch.Add:
			content := op.Content
			set(p, &content)
			summary = append(summary, "A "+p)
		case patch.Delete:
			if _, err := current(p); err != nil {
				return r, err
			}
			set(p, nil)
			summary = append(summary, "D "+p)
		case patch.Update:
			old, err := current(p)
			if err != nil {
				return r, err
			}
			updated, err := op.Apply(old)
			if err != nil {
				return r, err
			}
			if op.MoveTo != "" {
				to := inTree(op.MoveTo)
				set(p, nil)
				set(to, &updated)
				summary = append(summary, "R "+p+" → "+to)
			} else {
				set(p, &updated)
				summary = append(summary, "M "+p)
			}
		}
	}
	for _, p := range order {
		switch v := after[p]; {
		case v != nil:
			err = w.storeFile(ctx, p, []byte(*v))
		case onDisk[p]:
			err = w.removeFile(ctx, p)
		}
		if err != nil {
			// Not wrapped: Run shows a coded error by its message alone,
			// which would hide that the tree is now half patched.
			return r, errors.New("the patch was applied only in part: " + toolErrorText(err))
		}
	}
	r.Output = "Done. The patch changed:\n" + strings.Join(summary, "\n")
	r.Display = &domain.Display{Kind: "file_patch", Title: "apply_patch", Summary: plural(len(order), "file")}
	return r, nil
}

// removeFile deletes one file of the tree.
func (w *Workspace) removeFile(ctx context.Context, p string) error {
	l, err := w.hold(ctx)
	if err != nil {
		return err
	}
	return l.RemoveFile(ctx, p)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
