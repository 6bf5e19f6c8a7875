-- +goose Up
-- Usage (issue 43): one record per model call, its daily rollups, the
-- price table and the budgets. No foreign keys: usage is history and
-- outlives the sessions, people, agents and providers it names. Times are
-- unix milliseconds, as everywhere; days are UTC dates, YYYY-MM-DD (they
-- sort as text). Costs are in millionths of a US dollar.
CREATE TABLE usage_records (
    id                  TEXT PRIMARY KEY,
    at                  INTEGER NOT NULL,
    user_id             TEXT NOT NULL DEFAULT '',
    agent_id            TEXT NOT NULL DEFAULT '',
    provider_id         TEXT NOT NULL DEFAULT '',
    provider_type       TEXT NOT NULL DEFAULT '',
    model               TEXT NOT NULL DEFAULT '',
    session_id          TEXT NOT NULL DEFAULT '',
    run_id              TEXT NOT NULL DEFAULT '',
    task_id             TEXT NOT NULL DEFAULT '',
    kind                TEXT NOT NULL,
    outcome             TEXT NOT NULL,
    input_tokens        INTEGER NOT NULL DEFAULT 0,
    cached_input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens       INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens    INTEGER NOT NULL DEFAULT 0,
    cost_micros         INTEGER NOT NULL DEFAULT 0,
    priced              INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX usage_records_run ON usage_records (run_id);
CREATE INDEX usage_records_session ON usage_records (session_id);
CREATE INDEX usage_records_at ON usage_records (at, id);

-- The reports read these, never the records: a year of a team's calls is
-- tens of thousands of rows. Clustered by day (WITHOUT ROWID), so a report
-- over a few days reads those days. The indexes hold the sums too: the
-- budgets' sums (one person, agent or provider over a period) are index
-- range scans, and a report over most of the days reads the rows already
-- in its group's order instead of sorting them into groups, which costs
-- more than reading them. The price is a few more index entries to update
-- per recorded call, one call per model answer.
CREATE TABLE usage_daily (
    day                 TEXT NOT NULL,
    user_id             TEXT NOT NULL,
    agent_id            TEXT NOT NULL,
    provider_id         TEXT NOT NULL,
    provider_type       TEXT NOT NULL,
    model               TEXT NOT NULL,
    calls               INTEGER NOT NULL DEFAULT 0,
    input_tokens        INTEGER NOT NULL DEFAULT 0,
    cached_input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens       INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens    INTEGER NOT NULL DEFAULT 0,
    cost_micros         INTEGER NOT NULL DEFAULT 0,
    unpriced_calls      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, user_id, agent_id, provider_id, model)
) WITHOUT ROWID;
CREATE INDEX usage_daily_user ON usage_daily (user_id, day, calls, input_tokens, cached_input_tokens, output_tokens,
    reasoning_tokens, cost_micros, unpriced_calls);
CREATE INDEX usage_daily_agent ON usage_daily (agent_id, day, calls, input_tokens, cached_input_tokens, output_tokens,
    reasoning_tokens, cost_micros, unpriced_calls);
CREATE INDEX usage_daily_provider ON usage_daily (provider_id, day, calls, input_tokens, cached_input_tokens, output_tokens,
    reasoning_tokens, cost_micros, unpriced_calls);
CREATE INDEX usage_daily_model ON usage_daily (provider_type, model, day, calls, input_tokens, cached_input_tokens,
    output_tokens, reasoning_tokens, cost_micros, unpriced_calls);

-- A conversation's calls by day: the top conversations and one
-- conversation's totals (its index holds the sums, as above). user_id is the person its first call of the day
-- was charged to.
CREATE TABLE usage_session_daily (
    day                 TEXT NOT NULL,
    session_id          TEXT NOT NULL,
    user_id             TEXT NOT NULL,
    calls               INTEGER NOT NULL DEFAULT 0,
    input_tokens        INTEGER NOT NULL DEFAULT 0,
    cached_input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens       INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens    INTEGER NOT NULL DEFAULT 0,
    cost_micros         INTEGER NOT NULL DEFAULT 0,
    unpriced_calls      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, session_id)
) WITHOUT ROWID;
CREATE INDEX usage_session_daily_session ON usage_session_daily (session_id, day, calls, input_tokens, cached_input_tokens,
    output_tokens, reasoning_tokens, cost_micros, unpriced_calls);

-- What a model costs per million tokens, one row per provider type and
-- model; a record's cost is computed from it when the call is recorded.
CREATE TABLE usage_prices (
    id                  TEXT PRIMARY KEY,
    provider_type       TEXT NOT NULL,
    model               TEXT NOT NULL,
    input_micros        INTEGER NOT NULL DEFAULT 0,
    cached_input_micros INTEGER NOT NULL DEFAULT 0,
    output_micros       INTEGER NOT NULL DEFAULT 0,
    source              TEXT NOT NULL DEFAULT '',
    as_of               TEXT NOT NULL DEFAULT '',
    updated_at          INTEGER NOT NULL,
    UNIQUE (provider_type, model)
);

-- Limits on usage over a period; subject_id is '' for a default budget.
CREATE TABLE budgets (
    id          TEXT PRIMARY KEY,
    scope       TEXT NOT NULL,
    subject_id  TEXT NOT NULL DEFAULT '',
    period      TEXT NOT NULL,
    unit        TEXT NOT NULL,
    limit_value INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (scope, subject_id, period, unit)
);

-- +goose Down
DROP TABLE budgets;
DROP TABLE usage_prices;
DROP TABLE usage_session_daily;
DROP TABLE usage_daily;
DROP TABLE usage_records;
