package sqlstore

import (
	"database/sql"
	"io/fs"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/pressly/goose/v3"
)

// dialect is what one engine does its own way; the queries are shared.
type dialect struct {
	name         string
	goose        goose.Dialect
	migrations   fs.FS
	goMigrations func(*dialect, *slog.Logger) []*goose.Migration
	// migrateLock, when set, makes concurrent openers (replicas starting
	// together) migrate one at a time.
	migrateLock func() (goose.ProviderOption, error)
	// numbered: placeholders are $1, $2… (the queries' ? are rewritten),
	// and SQLite's planner hints (INDEXED BY name) are dropped.
	numbered bool
	// lockWrites, when set, runs first in every write transaction: it
	// serializes writers as SQLite's single writer connection does.
	lockWrites string
	// snapshot is the isolation of a read transaction that must see one
	// snapshot.
	snapshot sql.IsolationLevel
	// wordMatch renders a message search's terms (letters and digits
	// only) as the rows to search (message_texts as m, joined to what
	// indexes it), the condition on them and its one argument.
	wordMatch func(terms []string) (from, cond, arg string)
	// onClose runs on the writer before it closes.
	onClose func(*sql.DB) error

	rebound sync.Map // query text → rewritten text
}

// sql returns query as the engine takes it. The rewrite of a query is
// made once and kept: the store's queries are a fixed set.
func (d *dialect) sql(query string) string {
	if d == nil || !d.numbered {
		return query
	}
	if q, ok := d.rebound.Load(query); ok {
		return q.(string)
	}
	q := numberPlaceholders(indexedBy.ReplaceAllString(query, ""))
	d.rebound.Store(query, q)
	return q
}

// indexedBy matches SQLite's index hint, which only SQLite takes.
var indexedBy = regexp.MustCompile(`\s+INDEXED BY \w+`)

// numberPlaceholders rewrites each ? outside quotes as $1, $2…, and a
// numbered ?N as $N.
func numberPlaceholders(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			b.WriteByte('$')
			if j > i+1 {
				b.WriteString(query[i+1 : j])
				i = j - 1
			} else {
				n++
				b.WriteString(strconv.Itoa(n))
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// args returns the arguments as the engine takes them: the schema keeps
// flags as 0/1 integers on both engines, and Postgres refuses a bool for
// an integer column. A string holding a NUL character has each replaced
// by U+FFFD on both engines: Postgres refuses one in text (SQLSTATE 22021)
// where SQLite keeps it, and the API refuses one in what a client sends,
// so what reaches here is text the server took from elsewhere (a model's
// answer, a title it wrote, a tool's output) — kept, and kept alike.
func (d *dialect) args(args []any) []any {
	numbered := d != nil && d.numbered
	var out []any
	for i, a := range args {
		var v any
		switch x := a.(type) {
		case bool:
			if !numbered {
				continue
			}
			v = int64(0)
			if x {
				v = int64(1)
			}
		case string:
			if strings.IndexByte(x, 0) < 0 {
				continue
			}
			v = strings.ReplaceAll(x, "\x00", "\uFFFD")
		default:
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i] = v
	}
	if out == nil {
		return args
	}
	return out
}
