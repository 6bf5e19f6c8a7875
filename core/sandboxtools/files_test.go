package sandboxtools

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agents-server/agents-server/core/tools"
)

// Arguments the model got wrong are the call's output, and touch nothing:
// no instance is started for them.
func TestArgumentErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	for _, tc := range []struct {
		tool string
		args string
		want string
	}{
		{tools.ReadFile, `{`, "Error: the arguments are not a JSON object: "},
		{tools.ReadFile, `["path"]`, "Error: the arguments are not a JSON object: "},
		{"rm_rf", `{}`, "Error: rm_rf is not a sandbox tool"},
		{tools.ExecCommand, `{}`, "Error: cmd is required"},
		{tools.ExecCommand, `{"cmd":""}`, "Error: cmd is required"},
		{tools.ExecCommand, `{"cmd":null}`, "Error: cmd is required"},
		{tools.ExecCommand, `{"cmd":["ls"]}`, "Error: cmd must be a string"},
		{tools.ExecCommand, `{"cmd":"ls","workdir":5}`, "Error: workdir must be a string"},
		{tools.ExecCommand, `{"cmd":"ls","session_id":true}`, "Error: session_id must be a string"},
		{tools.ExecCommand, `{"cmd":"ls","timeout_seconds":"10"}`, "Error: timeout_seconds must be an integer"},
		{tools.ExecCommand, `{"cmd":"ls","timeout_seconds":1.5}`, "Error: timeout_seconds must be an integer"},
		{tools.ReadFile, `{}`, "Error: path is required"},
		{tools.ReadFile, `{"path":false}`, "Error: path is required"},
		{tools.ReadFile, `{"path":{"p":1}}`, "Error: path must be a string"},
		{tools.ReadFile, `{"path":"a","offset":"2"}`, "Error: offset must be an integer"},
		{tools.ReadFile, `{"path":"a","limit":2.5}`, "Error: limit must be an integer"},
		{tools.ListFiles, `{"path":3}`, "Error: path must be a string"},
		{tools.ListFiles, `{"depth":"deep"}`, "Error: depth must be an integer"},
		{tools.WriteFile, `{"content":"x"}`, "Error: path is required"},
		{tools.WriteFile, `{"path":"a"}`, "Error: content is required"},
		{tools.WriteFile, `{"path":"a","content":1}`, "Error: content must be a string"},
		{tools.EditFile, `{"path":"a","new_string":"x"}`, "Error: old_string is required"},
		{tools.EditFile, `{"path":"a","old_string":"x"}`, "Error: new_string is required"},
		{tools.EditFile, `{"path":"a","old_string":7,"new_string":"x"}`, "Error: old_string must be a string"},
		{tools.EditFile, `{"path":"a","old_string":"x","new_string":3}`, "Error: new_string must be a string"},
		{tools.EditFile, `{"path":"a","old_string":"","new_string":"x"}`,
			"Error: old_string must not be empty: use write_file to create a file"},
		{tools.EditFile, `{"old_string":"a","new_string":"x"}`, "Error: path is required"},
		{tools.ApplyPatch, `{}`, "Error: input is required"},
		{tools.ApplyPatch, `{"input":{}}`, "Error: input must be a string"},
	} {
		t.Run(tc.tool+tc.args, func(t *testing.T) {
			r := f.run(tc.tool, tc.args)
			want{isError: true}.check(t, r)
			// A want ending in ": " is followed by the decoder's own words.
			if got := r.Output; got != tc.want && !(strings.HasSuffix(tc.want, ": ") && strings.HasPrefix(got, tc.want)) {
				t.Errorf("output %q, want %q", got, tc.want)
			}
		})
	}
	if n := f.calls("Ensure"); n != 0 {
		t.Errorf("bad arguments started the instance %d time(s)", n)
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	wide := make([]string, 2000) // 100-byte lines: 655 fit the show cap
	for i := range wide {
		wide[i] = fmt.Sprintf("%-98d|\n", i+1)
	}
	long := strings.Repeat("€", 30000) + "\n" // one line over the cap; 3-byte runes
	f.seed(map[string]string{
		"a.txt":         "one\ntwo\nthree\n",
		"nonl.txt":      "a\nb",
		"empty.txt":     "",
		"bin.dat":       "PK\x00\x01",
		"dir/inner.txt": "x\n",
		"wide.txt":      strings.Join(wide, ""),
		"long.txt":      long,
	})
	fit := fileShowCap / 100
	for _, tc := range []struct {
		name    string
		args    map[string]any
		output  string
		summary string // the display's; "" for an error
	}{
		{"whole", map[string]any{"path": "a.txt"}, "one\ntwo\nthree\n", "3 lines"},
		{"absolute", map[string]any{"path": "/workspace/a.txt"}, "one\ntwo\nthree\n", "3 lines"},
		{"dotted", map[string]any{"path": "./dir/../a.txt"}, "one\ntwo\nthree\n", "3 lines"},
		{"offset", map[string]any{"path": "a.txt", "offset": 2}, "two\nthree\n", "3 lines"},
		{"offset and limit", map[string]any{"path": "a.txt", "offset": 2, "limit": 1},
			"two\n\n… [showing lines 2-2 of 3; read on with offset 3] …", "3 lines"},
		{"limit", map[string]any{"path": "a.txt", "limit": 2},
			"one\ntwo\n\n… [showing lines 1-2 of 3; read on with offset 3] …", "3 lines"},
		{"limit past the end", map[string]any{"path": "a.txt", "offset": 3, "limit": 10}, "three\n", "3 lines"},
		{"offset 0 is the default", map[string]any{"path": "a.txt", "offset": 0}, "one\ntwo\nthree\n", "3 lines"},
		{"negative offset", map[string]any{"path": "a.txt", "offset": -4}, "one\ntwo\nthree\n", "3 lines"},
		{"null offset", map[string]any{"path": "a.txt", "offset": nil, "limit": nil}, "one\ntwo\nthree\n", "3 lines"},
		{"offset past the end", map[string]any{"path": "a.txt", "offset": 4},
			"Error: /workspace/a.txt has 3 lines; offset 4 is past the end", ""},
		{"no final newline", map[string]any{"path": "nonl.txt"}, "a\nb", "2 lines"},
		{"empty", map[string]any{"path": "empty.txt"}, "", "0 lines"},
		{"empty with an offset", map[string]any{"path": "empty.txt", "offset": 5}, "", "0 lines"},
		{"binary", map[string]any{"path": "bin.dat"},
			"Error: /workspace/bin.dat is a binary file (4 bytes): inspect it with exec_command", ""},
		{"missing", map[string]any{"path": "nope.txt"}, "Error: no such file: /workspace/nope.txt", ""},
		{"directory", map[string]any{"path": "dir"}, "Error: /workspace/dir is a directory: use list_files", ""},
		{"show cap", map[string]any{"path": "wide.txt"},
			strings.Join(wide[:fit], "") + fmt.Sprintf("\n… [showing lines 1-%d of 2000; read on with offset %d] …", fit, fit+1),
			"2000 lines"},
		{"show cap, read on", map[string]any{"path": "wide.txt", "offset": fit + 1, "limit": 3},
			strings.Join(wide[fit:fit+3], "") + fmt.Sprintf("\n… [showing lines %d-%d of 2000; read on with offset %d] …", fit+1, fit+3, fit+4),
			"2000 lines"},
		{"the end", map[string]any{"path": "wide.txt", "offset": 1991}, strings.Join(wide[1990:], ""), "2000 lines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.run(tools.ReadFile, tc.args)
			want{output: tc.output, isError: tc.summary == ""}.check(t, r)
			if tc.output == "" && r.Output != "" {
				t.Errorf("output %q, want none", r.Output)
			}
			if tc.summary != "" && (r.Display == nil || r.Display.Kind != "file" || r.Display.Summary != tc.summary ||
				!strings.HasPrefix(r.Display.Title, "/workspace/")) {
				t.Errorf("display %+v, want a file with %q", r.Display, tc.summary)
			}
		})
	}

	// A single line over the cap is shown cut, on a rune boundary.
	r := f.run(tools.ReadFile, map[string]any{"path": "long.txt"})
	body, notice, _ := strings.Cut(r.Output, "\n… [")
	if r.IsError || !utf8.ValidString(body) || len(body) > fileShowCap || len(body) < fileShowCap-3 ||
		strings.Trim(body, "€") != "" || !strings.Contains(notice, "of 1;") {
		t.Errorf("a line over the cap: error %v, %d bytes, valid %v, notice %q", r.IsError, len(body), utf8.ValidString(body), notice)
	}
}

// A file over the sandbox's read limit is refused with what to do instead,
// by read_file and edit_file alike; one at the limit is read.
func TestReadLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, `{"image":"img:1","max_read_file_bytes":16}`)
	f.seed(map[string]string{"big.txt": strings.Repeat("x", 17), "fits.txt": strings.Repeat("y", 15) + "\n"})
	tooBig := "Error: /workspace/big.txt is 17 bytes, over this sandbox's read limit of 16 bytes (max_read_file_bytes): " +
		"read parts of it with exec_command (head, sed -n, grep)"
	want{output: tooBig, isError: true}.check(t, f.run(tools.ReadFile, map[string]any{"path": "big.txt"}))
	want{output: tooBig, isError: true}.check(t, f.run(tools.EditFile, map[string]any{"path": "big.txt", "old_string": "x", "new_string": "y"}))
	want{output: strings.Repeat("y", 15) + "\n"}.check(t, f.run(tools.ReadFile, map[string]any{"path": "fits.txt"}))
}

func TestListFiles(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	f.seed(map[string]string{
		"a.txt": "", ".gitignore": "", ".git/HEAD": "", ".git/objects/ab/cd": "",
		"src/main.go": "", "src/pkg/x.go": "", "src/pkg/deep/y.go": "",
	})
	for _, tc := range []struct {
		name    string
		args    map[string]any
		output  string
		summary string // "" for an error
	}{
		{"default depth 2, .git's inside left out", map[string]any{},
			"/workspace:\n.git/\n.gitignore\na.txt\nsrc/\nsrc/main.go\nsrc/pkg/", "6 entries"},
		{"path 0 is the root", map[string]any{"path": 0},
			"/workspace:\n.git/\n.gitignore\na.txt\nsrc/\nsrc/main.go\nsrc/pkg/", "6 entries"},
		{"a subdirectory", map[string]any{"path": "src", "depth": 1}, "/workspace/src:\nmain.go\npkg/", "2 entries"},
		{"depth 0 is the default", map[string]any{"path": "/workspace/src", "depth": 0},
			"/workspace/src:\nmain.go\npkg/\npkg/deep/\npkg/x.go", "4 entries"},
		{"a file", map[string]any{"path": "a.txt"},
			"Error: listing /workspace/a.txt failed: not a directory: /workspace/a.txt", ""},
		{"missing", map[string]any{"path": "nope"}, "Error: listing /workspace/nope failed: not a directory: /workspace/nope", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.run(tools.ListFiles, tc.args)
			want{output: tc.output, isError: tc.summary == ""}.check(t, r)
			if tc.summary != "" && (r.Display == nil || r.Display.Kind != "files" || r.Display.Summary != tc.summary) {
				t.Errorf("display %+v, want files with %q", r.Display, tc.summary)
			}
		})
	}
}

func TestListFilesDepthIsClamped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	var dirs []string
	for i := 1; i <= 12; i++ {
		dirs = append(dirs, fmt.Sprintf("d%d", i))
	}
	f.seed(map[string]string{strings.Join(dirs, "/") + "/f.txt": ""})
	level := func(n int) string { return strings.Join(dirs[:n], "/") + "/" }
	for _, tc := range []struct {
		depth int
		last  string
		n     int
	}{
		{99, level(10), 10},
		{10, level(10), 10},
		{3, level(3), 3},
		{-3, level(1), 1},
	} {
		r := f.run(tools.ListFiles, map[string]any{"depth": tc.depth})
		entries := strings.Split(r.Output, "\n")[1:]
		if r.IsError || len(entries) != tc.n || entries[len(entries)-1] != tc.last {
			t.Errorf("depth %d: %d entries, want %d to %s:\n%s", tc.depth, len(entries), tc.n, tc.last, r.Output)
		}
	}
}

func TestListFilesEmptyAndCapped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	r := f.run(tools.ListFiles, `{"path":null}`)
	want{output: "/workspace is empty."}.check(t, r)
	if r.Display == nil || r.Display.Summary != "0 entries" {
		t.Errorf("display %+v", r.Display)
	}

	files := map[string]string{}
	for i := range listCap + 100 {
		files[fmt.Sprintf("f%04d.txt", i)] = ""
	}
	f.seed(files)
	r = f.run(tools.ListFiles, `{}`)
	lines := strings.Split(r.Output, "\n")
	if r.IsError || len(lines) != listCap+2 || lines[1] != "f0000.txt" || lines[listCap] != fmt.Sprintf("f%04d.txt", listCap-1) {
		t.Fatalf("%d lines, from %q to %q", len(lines), lines[1], lines[len(lines)-2])
	}
	if last := lines[len(lines)-1]; last != "… [100 more entries; list a subdirectory or lower the depth] …" {
		t.Errorf("last line %q", last)
	}
	if r.Display == nil || r.Display.Summary != fmt.Sprintf("%d entries", listCap+100) {
		t.Errorf("display %+v", r.Display)
	}
}

func TestWriteFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	for _, tc := range []struct {
		name    string
		args    map[string]any
		output  string
		file    string // where the content is then
		content string
	}{
		{"creates with its directories", map[string]any{"path": "notes/todo.txt", "content": "héllo\n"},
			"Wrote 7 bytes to /workspace/notes/todo.txt.", "notes/todo.txt", "héllo\n"},
		{"overwrites", map[string]any{"path": "/workspace/notes/todo.txt", "content": "bye"},
			"Wrote 3 bytes to /workspace/notes/todo.txt.", "notes/todo.txt", "bye"},
		{"empty content", map[string]any{"path": "empty", "content": ""}, "Wrote 0 bytes to /workspace/empty.", "empty", ""},
		{"onto a directory", map[string]any{"path": "notes", "content": "x"}, "Error: /workspace/notes is a directory",
			"notes/todo.txt", "bye"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.run(tools.WriteFile, tc.args)
			isError := strings.HasPrefix(tc.output, "Error: ")
			want{output: tc.output, isError: isError}.check(t, r)
			if !isError && (r.Display == nil || r.Display.Kind != "file_write" || !strings.HasSuffix(r.Display.Summary, " bytes")) {
				t.Errorf("display %+v", r.Display)
			}
			if got, ok := f.file(tc.file); !ok || got != tc.content {
				t.Errorf("%s holds %q (%v), want %q", tc.file, got, ok, tc.content)
			}
		})
	}
}

func TestEditFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	f.seed(map[string]string{"e.txt": "alpha beta\nbeta gamma\n"})
	// Steps on one file, in order: each leaves content behind.
	for _, tc := range []struct {
		name    string
		args    map[string]any
		output  string
		content string
	}{
		{"not found", map[string]any{"old_string": "delta", "new_string": "x"},
			"Error: old_string was not found in /workspace/e.txt (it must match exactly, whitespace included)",
			"alpha beta\nbeta gamma\n"},
		{"whitespace counts", map[string]any{"old_string": "alpha  beta", "new_string": "x"},
			"Error: old_string was not found in /workspace/e.txt (it must match exactly, whitespace included)",
			"alpha beta\nbeta gamma\n"},
		{"ambiguous", map[string]any{"old_string": "beta", "new_string": "BETA"},
			"Error: old_string appears 2 times in /workspace/e.txt: include more context to make it unique, or set replace_all",
			"alpha beta\nbeta gamma\n"},
		{"replace_all must be true", map[string]any{"old_string": "beta", "new_string": "BETA", "replace_all": "yes"},
			"Error: old_string appears 2 times in /workspace/e.txt: include more context to make it unique, or set replace_all",
			"alpha beta\nbeta gamma\n"},
		{"unique", map[string]any{"old_string": "alpha", "new_string": "ALPHA"},
			"Edited /workspace/e.txt: 1 replacement(s).", "ALPHA beta\nbeta gamma\n"},
		{"replace_all", map[string]any{"old_string": "beta", "new_string": "BETA", "replace_all": true},
			"Edited /workspace/e.txt: 2 replacement(s).", "ALPHA BETA\nBETA gamma\n"},
		{"replace_all of one", map[string]any{"old_string": "gamma", "new_string": "", "replace_all": true},
			"Edited /workspace/e.txt: 1 replacement(s).", "ALPHA BETA\nBETA \n"},
		{"across lines", map[string]any{"old_string": "BETA\nBETA", "new_string": "-"},
			"Edited /workspace/e.txt: 1 replacement(s).", "ALPHA - \n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args["path"] = "e.txt"
			r := f.run(tools.EditFile, tc.args)
			isError := strings.HasPrefix(tc.output, "Error: ")
			want{output: tc.output, isError: isError}.check(t, r)
			if !isError && (r.Display == nil || r.Display.Kind != "file_edit" || !strings.HasSuffix(r.Output, r.Display.Summary+".")) {
				t.Errorf("display %+v", r.Display)
			}
			if got, _ := f.file("e.txt"); got != tc.content {
				t.Errorf("e.txt holds %q, want %q", got, tc.content)
			}
		})
	}
	want{output: "Error: no such file: /workspace/none.txt", isError: true}.check(t,
		f.run(tools.EditFile, map[string]any{"path": "none.txt", "old_string": "a", "new_string": "b"}))
	if _, ok := f.file("none.txt"); ok {
		t.Error("an edit of a missing file created it")
	}
}
