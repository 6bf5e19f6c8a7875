package sqlstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// BenchmarkMessageSearch times the first page (20 hits) of a message
// search over one 10,000-message conversation (user and assistant taking
// turns, 20 to 60 words each) among 40 other sessions of 250 messages —
// half the owner's, half another member's — on SQLite and on Postgres
// (the test cluster; skipped with the reason without it):
//
//	rare:   a word in one early message of the long conversation
//	common: a word in every message (every hit is sorted by time)
//	prefix: two terms, the last a word's start, as one types
//	none:   a word in no message
//
//	go test -run '^$' -bench MessageSearch ./adapters/sqlstore
func BenchmarkMessageSearch(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		db, err := Open(context.Background(), b.TempDir()+"/"+FileName, quiet)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		benchSearch(b, db)
	})
	b.Run("postgres", func(b *testing.B) {
		url := pgtest.URL(b, "message search benchmark on Postgres")
		db, err := OpenPostgres(context.Background(), url, quiet)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		benchSearch(b, db)
	})
}

func benchSearch(b *testing.B, db *DB) {
	ctx := context.Background()
	me, other := user("searcher", domain.RoleMember), user("other", domain.RoleMember)
	for _, u := range []domain.User{me, other} {
		if err := db.CreateUser(ctx, u); err != nil {
			b.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(41, 41))
	vocab := make([]string, 5000)
	syllables := []string{"ka", "lo", "mi", "ne", "su", "ra", "to", "vi", "de", "po", "gu", "fe", "zi", "ba", "ho"}
	for i := range vocab {
		var w strings.Builder
		for range 2 + rng.IntN(3) {
			w.WriteString(syllables[rng.IntN(len(syllables))])
		}
		vocab[i] = w.String()
	}
	sentence := func() string {
		words := []string{"the"}
		for range 20 + rng.IntN(40) {
			words = append(words, vocab[rng.IntN(len(vocab))])
		}
		return strings.Join(words, " ") + "."
	}
	seed := func(id, owner string, n int, special map[int]string) {
		sess := domain.Session{ID: id, OwnerID: owner, Name: "chat " + id, CreatedAt: when, UpdatedAt: when}
		if err := db.CreateSession(ctx, sess); err != nil {
			b.Fatal(err)
		}
		for start := 0; start < n; start += 500 {
			var entries []domain.Entry
			var metas []domain.EntryMeta
			for i := start; i < min(n, start+500); i++ {
				text := sentence()
				if s, ok := special[i]; ok {
					text += " " + s
				}
				e := domain.Entry{ID: fmt.Sprintf("%s-e%d", id, i), RowID: fmt.Sprintf("%s-%06d", id, i), Seq: int64(i + 1), Kind: domain.KindItem,
					CreatedAt: when.Add(time.Duration(i) * time.Second)}
				if i%2 == 0 {
					e.Source, e.Item = domain.SourceUser, domain.TextMessage("user", "input_text", text)
				} else {
					e.Source, e.Item = domain.SourceModel, domain.AssistantMessage("", text)
				}
				parent := ""
				if i > 0 {
					e.ParentID, parent = fmt.Sprintf("%s-e%d", id, i-1), fmt.Sprintf("%s-e%d", id, i-1)
				}
				entries, metas = append(entries, e), append(metas, domain.MetaOf(e, parent))
			}
			if err := db.WriteSession(ctx, id, func(tx ports.SessionTx) error { return tx.InsertEntries(ctx, entries, metas) }); err != nil {
				b.Fatal(err)
			}
		}
	}
	seed("long", me.ID, 10_000, map[int]string{42: "quetzalcoatl"})
	for i := range 40 {
		owner := me.ID
		if i%2 == 1 {
			owner = other.ID
		}
		seed(fmt.Sprintf("noise%02d", i), owner, 250, nil)
	}
	cases := []struct {
		name  string
		terms []string
		hits  int
	}{
		{"rare", []string{"quetzalcoatl"}, 1},
		{"common", []string{"the"}, 20},
		{"prefix", []string{"the", "kalo"}, 20},
		{"none", []string{"xylophone"}, 0},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				hits, err := db.SearchMessages(ctx, ports.MessageQuery{OwnerID: me.ID, Terms: c.terms, Limit: 20})
				if err != nil {
					b.Fatal(err)
				}
				if len(hits) != c.hits {
					b.Fatalf("%d hits, want %d", len(hits), c.hits)
				}
			}
		})
	}
}
