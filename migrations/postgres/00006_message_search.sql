-- +goose Up
-- The message search index (SQLite's 00026): one row per message people
-- read, holding its words as domain.SearchWords splits them, written by
-- the store with the entry and gone with it (the foreign key cascades from
-- the entry, and so from its session). The tsvector takes those words as
-- lexemes verbatim (array_to_tsvector: no parser, no dictionary), so
-- Postgres and SQLite match the same words. Rows from before this
-- migration are filled in by the next one (Go).
CREATE TABLE message_texts (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    row_id     TEXT NOT NULL UNIQUE REFERENCES entries (row_id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    entry_id   TEXT NOT NULL,
    role       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    words      TEXT NOT NULL,
    lexemes    tsvector GENERATED ALWAYS AS (array_to_tsvector(string_to_array(words, ' '))) STORED
);
CREATE INDEX message_texts_session ON message_texts (session_id);
CREATE INDEX message_texts_lexemes ON message_texts USING GIN (lexemes);

-- +goose Down
DROP TABLE message_texts;
