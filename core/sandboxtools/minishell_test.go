package sandboxtools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"
)

// miniShell stands in for the bash of a sandbox instance in these tests:
// a line interpreter of the little sh they send — echo, printf, cd, pwd,
// export and plain assignments, exit, true, false, seq, sleep, brace
// groups, `;`, `&&`, `>&2`, `<` (ignored), quotes, and $NAME, ${NAME} and
// $? expansion; and three commands of its own, await, crash and expire. That is also everything the script shell.go writes to a
// named shell uses (a brace group after `cd -- dir &&`, an assignment of
// $?, printf of the marker lines), so the marker protocol runs for real.
// Lines run one by one, as bash would run them here; a group whose `&&`
// chain failed is skipped to its closing brace.
type miniShell struct {
	ctx     context.Context
	isDir   func(dir string) bool // the backend's tree: cd agrees with it
	gate    <-chan struct{}       // what the await command waits for
	cwd     string
	vars    map[string]string
	rc      int
	skip    bool // inside a brace group that does not run
	crashed bool // the connection to the instance broke
	expired bool // the backend saw the call's deadline pass before the call did
	stdout  io.Writer
	stderr  io.Writer
}

// wordPart is literal text, or a variable expanded when its command runs
// (so `X=1; echo $X` on one line sees the new X).
type wordPart struct {
	text     string
	variable bool
}

type token struct {
	op   string // ";", "&&", ">&2", "<"; "" for a word
	word []wordPart
}

// runLine runs one line of script; it reports whether the shell exited.
func (sh *miniShell) runLine(line string) (exited bool) {
	if sh.skip {
		sh.skip = !strings.HasPrefix(strings.TrimSpace(line), "}")
		return false
	}
	toks, err := lex(line)
	if err != nil {
		fmt.Fprintf(sh.stderr, "sh: %v\n", err)
		sh.rc = 2
		return false
	}
	run := true // false after a failed &&: the rest of the chain is skipped
	var words [][]wordPart
	toErr, redirected := false, false
	end := func(op string) bool {
		switch {
		case run && len(words) > 0:
			if sh.command(sh.expand(words), toErr) {
				return true
			}
		case !run && len(words) > 0 && sh.expand(words[:1])[0] == "{":
			sh.skip = true
		}
		run = op != "&&" || run && sh.rc == 0
		words, toErr = nil, false
		return false
	}
	for _, tok := range toks {
		switch tok.op {
		case "":
			if redirected {
				redirected = false // the file of a `<`: nothing here reads stdin
				continue
			}
			words = append(words, tok.word)
		case ">&2":
			toErr = true
		case "<":
			redirected = true
		default:
			if end(tok.op) {
				return true
			}
		}
	}
	return end(";")
}

func (sh *miniShell) expand(words [][]wordPart) []string {
	out := make([]string, len(words))
	for i, w := range words {
		var b strings.Builder
		for _, p := range w {
			switch {
			case !p.variable:
				b.WriteString(p.text)
			case p.text == "?":
				b.WriteString(strconv.Itoa(sh.rc))
			default:
				b.WriteString(sh.vars[p.text])
			}
		}
		out[i] = b.String()
	}
	return out
}

// command runs one simple command; it reports whether the shell exited.
func (sh *miniShell) command(args []string, toErr bool) (exited bool) {
	out := sh.stdout
	if toErr {
		out = sh.stderr
	}
	if name, val, ok := strings.Cut(args[0], "="); ok && isName(name) && len(args) == 1 {
		sh.vars[name], sh.rc = val, 0
		return false
	}
	if args[0] == "{" || args[0] == "}" {
		return false // a group's status is its last command's
	}
	sh.rc = 0
	switch args[0] {
	case "true":
	case "false":
		sh.rc = 1
	case "echo":
		fmt.Fprintln(out, strings.Join(args[1:], " "))
	case "printf":
		if len(args) > 1 {
			_, _ = io.WriteString(out, printf(args[1], args[2:]))
		}
	case "pwd":
		fmt.Fprintln(out, sh.cwd)
	case "cd":
		dir := "/workspace"
		if rest := args[1:]; len(rest) > 0 {
			dir = rest[len(rest)-1]
		}
		target := dir
		if !path.IsAbs(target) {
			target = path.Join(sh.cwd, target)
		}
		if !sh.isDir(target) {
			fmt.Fprintf(sh.stderr, "sh: cd: %s: No such file or directory\n", dir)
			sh.rc = 1
			return false
		}
		sh.cwd = target
	case "export":
		for _, a := range args[1:] {
			if name, val, ok := strings.Cut(a, "="); ok {
				sh.vars[name] = val
			}
		}
	case "exit":
		if len(args) > 1 {
			sh.rc, _ = strconv.Atoi(args[1])
		}
		return true
	case "seq":
		from, to := 1, 0
		switch len(args) {
		case 2:
			to, _ = strconv.Atoi(args[1])
		case 3:
			from, _ = strconv.Atoi(args[1])
			to, _ = strconv.Atoi(args[2])
		}
		// In 4 KiB writes, as stdio buffers a pipe.
		var b []byte
		for i := from; i <= to; i++ {
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, '\n')
			if len(b) >= 4096 || i == to {
				_, _ = out.Write(b)
				b = b[:0]
			}
		}
	case "sleep":
		n, _ := strconv.Atoi(args[len(args)-1])
		select {
		case <-time.After(time.Duration(n) * time.Second):
		case <-sh.ctx.Done():
			return true // killed
		}
	case "crash": // this fake's own: the exec stream breaks
		sh.crashed = true
		return true
	case "expire": // this fake's own: the backend's far end reached the deadline first
		sh.expired = true
		return true
	case "await": // this fake's own: blocks until the test opens the gate
		select {
		case <-sh.gate:
		case <-sh.ctx.Done():
			return true
		}
	default:
		fmt.Fprintf(sh.stderr, "sh: %s: command not found\n", args[0])
		sh.rc = 127
	}
	return false
}

// printf knows \n, \\, %d, %s and %%.
func printf(format string, args []string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		switch {
		case c == '\\' && i+1 < len(format):
			i++
			if format[i] == 'n' {
				b.WriteByte('\n')
			} else {
				b.WriteByte(format[i])
			}
		case c == '%' && i+1 < len(format):
			i++
			switch format[i] {
			case '%':
				b.WriteByte('%')
			case 'd', 's':
				if len(args) > 0 {
					b.WriteString(args[0])
					args = args[1:]
				} else if format[i] == 'd' {
					b.WriteByte('0')
				}
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isName(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// lex splits a line into words and operators, keeping variables for later.
func lex(line string) ([]token, error) {
	var toks []token
	var cur []wordPart
	inWord := false
	flush := func() {
		if inWord {
			toks = append(toks, token{word: cur})
		}
		cur, inWord = nil, false
	}
	add := func(p wordPart) { cur, inWord = append(cur, p), true }
	for i := 0; i < len(line); {
		c := line[i]
		rest := line[i:]
		switch {
		case c == ' ' || c == '\t':
			flush()
			i++
		case c == '#' && !inWord:
			i = len(line)
		case strings.HasPrefix(rest, "&&"), strings.HasPrefix(rest, ">&2"), c == ';', c == '<':
			flush()
			op := map[byte]string{'&': "&&", '>': ">&2", ';': ";", '<': "<"}[c]
			toks = append(toks, token{op: op})
			i += len(op)
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated quote")
			}
			add(wordPart{text: line[i+1 : i+1+j]})
			i += j + 2
		case c == '"':
			add(wordPart{}) // "" is a word
			for i++; ; {
				if i >= len(line) {
					return nil, errors.New("unterminated quote")
				}
				if line[i] == '"' {
					i++
					break
				}
				if line[i] == '$' {
					p, n := variable(line[i:])
					add(p)
					i += n
					continue
				}
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte(`"\$`, line[i+1]) >= 0 {
					i++
				}
				add(wordPart{text: line[i : i+1]})
				i++
			}
		case c == '$':
			p, n := variable(rest)
			add(p)
			i += n
		case c == '\\' && i+1 < len(line):
			add(wordPart{text: line[i+1 : i+2]})
			i += 2
		default:
			add(wordPart{text: line[i : i+1]})
			i++
		}
	}
	flush()
	return toks, nil
}

// variable reads $?, ${NAME} or $NAME at the start of s; a lone $ is text.
func variable(s string) (wordPart, int) {
	switch {
	case strings.HasPrefix(s, "$?"):
		return wordPart{text: "?", variable: true}, 2
	case strings.HasPrefix(s, "${"):
		if j := strings.IndexByte(s, '}'); j > 0 {
			return wordPart{text: s[2:j], variable: true}, j + 1
		}
	}
	n := 1
	for n < len(s) && isName(s[1:n+1]) {
		n++
	}
	if n == 1 {
		return wordPart{text: "$"}, 1
	}
	return wordPart{text: s[1:n], variable: true}, n
}
