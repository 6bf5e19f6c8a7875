package sqlstore

import (
	"context"
	"database/sql"
	"sync"
)

// Prepared statements, kept. Parsing a statement is a large part of a
// short query's cost in SQLite; database/sql keeps a *sql.Stmt prepared on
// every connection it ran on, so a cached one is parsed once per
// connection instead of once per call.
//
// A statement is prepared only when no connection of its pool is held by
// the caller: a transaction that met a new statement runs it unprepared
// and the statement is prepared once the transaction is over (preparing on
// the pool from inside one could wait forever for the connection the
// transaction holds).

// maxCachedStatements bounds the cache; past it statements run unprepared
// (the store's statements are a fixed set well under it).
const maxCachedStatements = 512

// stmtCache is one pool's prepared statements by query text.
type stmtCache struct {
	db *sql.DB
	mu sync.RWMutex
	m  map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache { return &stmtCache{db: db, m: map[string]*sql.Stmt{}} }

// cached returns the prepared statement of query, or nil. A nil cache (a
// pool before migrations end) has none.
func (c *stmtCache) cached(query string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[query]
}

// prepare prepares query on the pool unless it is cached or the cache is
// full; a failure leaves it unprepared (running it reports the error).
func (c *stmtCache) prepare(ctx context.Context, query string) *sql.Stmt {
	if c == nil {
		return nil
	}
	if st := c.cached(query); st != nil {
		return st
	}
	c.mu.RLock()
	full := len(c.m) >= maxCachedStatements
	c.mu.RUnlock()
	if full {
		return nil
	}
	st, err := c.db.PrepareContext(context.WithoutCancel(ctx), query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if had := c.m[query]; had != nil {
		_ = st.Close()
		return had
	}
	c.m[query] = st
	return st
}

// close closes every prepared statement.
func (c *stmtCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.m {
		_ = st.Close()
		delete(c.m, q)
	}
}

// pool is a connection pool whose statements are prepared once (when
// stmts is set: pgx keeps its own per-connection cache), in its dialect.
type pool struct {
	*sql.DB
	stmts *stmtCache
	d     *dialect
}

// ExecContext runs a statement, prepared once.
func (p pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	query, args = p.d.sql(query), p.d.args(args)
	if st := p.stmts.prepare(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return p.DB.ExecContext(ctx, query, args...)
}

// QueryContext runs a query, prepared once. The rows hold their connection
// until closed, so no other call can reuse the statement under them.
func (p pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	query, args = p.d.sql(query), p.d.args(args)
	if st := p.stmts.prepare(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return p.DB.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a one-row query, prepared once.
func (p pool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	query, args = p.d.sql(query), p.d.args(args)
	if st := p.stmts.prepare(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return p.DB.QueryRowContext(ctx, query, args...)
}

// txQ is a transaction whose statements reuse the pool's prepared ones
// (bound to the transaction's connection). A query returning rows runs
// unprepared (QueryContext): a cursor still open on a shared statement
// would be reset if the transaction ran the same statement again before
// closing it. One read to its end and closed before anything else runs
// (queryToEnd's, collect's) shares the prepared statement.
type txQ struct {
	*sql.Tx
	stmts  *stmtCache
	d      *dialect
	missed *[]string // statements to prepare once the transaction is over
}

func (t txQ) stmt(ctx context.Context, query string) *sql.Stmt {
	st := t.stmts.cached(query)
	if st == nil {
		if t.stmts != nil {
			*t.missed = append(*t.missed, query)
		}
		return nil
	}
	return t.Tx.StmtContext(ctx, st)
}

// ExecContext runs a statement in the transaction.
func (t txQ) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	query, args = t.d.sql(query), t.d.args(args)
	if st := t.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

// QueryRowContext runs a one-row query in the transaction.
func (t txQ) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	query, args = t.d.sql(query), t.d.args(args)
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}

// QueryContext runs a query in the transaction, unprepared (see txQ).
func (t txQ) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.Tx.QueryContext(ctx, t.d.sql(query), t.d.args(args)...)
}

// queryToEnd runs a query whose rows the caller reads to the end and
// closes before the transaction runs any other statement, prepared once
// (see txQ).
func (t txQ) queryToEnd(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	query, args = t.d.sql(query), t.d.args(args)
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

// queryToEnd is q.QueryContext for a query whose rows are read to the end
// and closed before anything else runs on q: prepared once in a
// transaction too (see txQ); outside one, a pool's open rows hold their
// own connection, so sharing is always safe there.
func queryToEnd(ctx context.Context, q querier, query string, args ...any) (*sql.Rows, error) {
	if t, ok := q.(txQ); ok {
		return t.queryToEnd(ctx, query, args...)
	}
	return q.QueryContext(ctx, query, args...)
}
