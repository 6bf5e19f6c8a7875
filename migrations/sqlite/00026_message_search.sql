-- +goose Up
-- The message search index: one row per message people read (a user's
-- message, an assistant's answer), holding its words as
-- domain.SearchWords splits them, written by the store with the entry and
-- gone with it (the foreign key cascades from the entry, and so from its
-- session). Entries never change their text after they are written (an
-- update entry changes a card's display; a fold only flags the entry), so
-- an insert and a delete are all the index must follow. Rows from before
-- this migration are filled in by the next one (Go: the words are Go's).
--
-- id is the FTS rowid: an INTEGER PRIMARY KEY, because VACUUM may renumber
-- the implicit rowid of entries (its key is text).
CREATE TABLE message_texts (
    id         INTEGER PRIMARY KEY,
    row_id     TEXT NOT NULL UNIQUE REFERENCES entries (row_id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    entry_id   TEXT NOT NULL,
    role       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    words      TEXT NOT NULL
);
CREATE INDEX message_texts_session ON message_texts (session_id);

-- Contentless: the words live in message_texts, the index here; the
-- unicode61 tokenizer only splits at the spaces SearchWords put there (it
-- keeps diacritics, as Go's lower-casing does).
CREATE VIRTUAL TABLE message_words USING fts5 (
    words, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 0'
);

-- +goose StatementBegin
CREATE TRIGGER message_texts_indexed AFTER INSERT ON message_texts BEGIN
    INSERT INTO message_words (rowid, words) VALUES (new.id, new.words);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER message_texts_unindexed AFTER DELETE ON message_texts BEGIN
    DELETE FROM message_words WHERE rowid = old.id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER message_texts_unindexed;
DROP TRIGGER message_texts_indexed;
DROP TABLE message_words;
DROP TABLE message_texts;
