-- +goose Up
-- Every lifted column comes before the body. SQLite stores a row's columns
-- in order and a large body spills into overflow pages: reading a column
-- after it (created_at was) walks that chain, so a scan of the lifted
-- facts of a 234 MB session read all 234 MB. With the body last, the
-- branch walk, the compaction plan and the run listing cost the row count.
CREATE TABLE entries_rebuilt (
    row_id             TEXT PRIMARY KEY, -- UUIDv7: the page cursor
    session_id         TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    entry_id           TEXT NOT NULL,
    parent_id          TEXT NOT NULL DEFAULT '',
    branch_parent      TEXT NOT NULL DEFAULT '',
    seq                INTEGER NOT NULL,
    kind               TEXT NOT NULL,
    source             TEXT NOT NULL DEFAULT '',
    run_id             TEXT NOT NULL DEFAULT '',
    call_id            TEXT NOT NULL DEFAULT '',
    item_type          TEXT NOT NULL DEFAULT '',
    target             TEXT NOT NULL DEFAULT '',
    compacted          INTEGER NOT NULL DEFAULT 0,
    chars              INTEGER NOT NULL DEFAULT 0,
    input_tokens       INTEGER,
    output_tokens      INTEGER,
    cached_tokens      INTEGER,
    cache_write_tokens INTEGER,
    total_tokens       INTEGER,
    created_at         INTEGER NOT NULL,
    body               TEXT NOT NULL
);
INSERT INTO entries_rebuilt (row_id, session_id, entry_id, parent_id, branch_parent, seq, kind, source, run_id, call_id, item_type, target, compacted, chars, input_tokens, output_tokens, cached_tokens, cache_write_tokens, total_tokens, created_at, body)
    SELECT row_id, session_id, entry_id, parent_id, branch_parent, seq, kind, source, run_id, call_id, item_type, target, compacted, chars, input_tokens, output_tokens, cached_tokens, cache_write_tokens, total_tokens, created_at, body FROM entries;
DROP TABLE entries;
ALTER TABLE entries_rebuilt RENAME TO entries;
CREATE UNIQUE INDEX entries_session_seq ON entries (session_id, seq);
CREATE UNIQUE INDEX entries_session_entry ON entries (session_id, entry_id);
CREATE INDEX entries_branch_parent ON entries (session_id, branch_parent);
CREATE INDEX entries_parent ON entries (session_id, parent_id);
CREATE INDEX entries_update_target ON entries (session_id, target) WHERE kind = 'update';

-- +goose Down
CREATE TABLE entries_rebuilt (
    row_id             TEXT PRIMARY KEY, -- UUIDv7: the page cursor
    session_id         TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    entry_id           TEXT NOT NULL,
    parent_id          TEXT NOT NULL DEFAULT '',
    branch_parent      TEXT NOT NULL DEFAULT '',
    seq                INTEGER NOT NULL,
    kind               TEXT NOT NULL,
    source             TEXT NOT NULL DEFAULT '',
    run_id             TEXT NOT NULL DEFAULT '',
    call_id            TEXT NOT NULL DEFAULT '',
    item_type          TEXT NOT NULL DEFAULT '',
    target             TEXT NOT NULL DEFAULT '',
    compacted          INTEGER NOT NULL DEFAULT 0,
    chars              INTEGER NOT NULL DEFAULT 0,
    input_tokens       INTEGER,
    output_tokens      INTEGER,
    cached_tokens      INTEGER,
    cache_write_tokens INTEGER,
    total_tokens       INTEGER,
    body               TEXT NOT NULL,
    created_at         INTEGER NOT NULL
);
INSERT INTO entries_rebuilt (row_id, session_id, entry_id, parent_id, branch_parent, seq, kind, source, run_id, call_id, item_type, target, compacted, chars, input_tokens, output_tokens, cached_tokens, cache_write_tokens, total_tokens, created_at, body)
    SELECT row_id, session_id, entry_id, parent_id, branch_parent, seq, kind, source, run_id, call_id, item_type, target, compacted, chars, input_tokens, output_tokens, cached_tokens, cache_write_tokens, total_tokens, created_at, body FROM entries;
DROP TABLE entries;
ALTER TABLE entries_rebuilt RENAME TO entries;
CREATE UNIQUE INDEX entries_session_seq ON entries (session_id, seq);
CREATE UNIQUE INDEX entries_session_entry ON entries (session_id, entry_id);
CREATE INDEX entries_branch_parent ON entries (session_id, branch_parent);
CREATE INDEX entries_parent ON entries (session_id, parent_id);
CREATE INDEX entries_update_target ON entries (session_id, target) WHERE kind = 'update';
