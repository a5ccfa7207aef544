-- The account-linking policy (job 3): current values, one store-wide version, and every change.
--
-- A key with no row holds its default. A timed value keeps the value it replaces in
-- previous_value_json and reads as that value once reverts_at has passed (computed on read);
-- the next write materialises the revert as its own history row before applying its change.

-- The store-wide policy version: incremented by every change and every materialised revert.
-- The runtime reads it on each request to know whether its cached policy is stale.
CREATE TABLE gatehouse_policy_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL CHECK (version >= 0)
);
INSERT INTO gatehouse_policy_version (id, version) VALUES (1, 0);

CREATE TABLE gatehouse_policy (
    key TEXT PRIMARY KEY,
    value_json TEXT NOT NULL,
    -- the store-wide version this key last changed at
    version INTEGER NOT NULL,
    set_by TEXT NOT NULL,
    set_at TEXT NOT NULL,
    reason TEXT NOT NULL,
    -- a timed value: when it reverts, and to what
    reverts_at TEXT,
    previous_value_json TEXT,
    CHECK ((reverts_at IS NULL) = (previous_value_json IS NULL))
);

CREATE TABLE gatehouse_policy_history (
    id INTEGER PRIMARY KEY,
    version INTEGER NOT NULL UNIQUE,
    key TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('set', 'revert')),
    old_value_json TEXT NOT NULL,
    new_value_json TEXT NOT NULL,
    actor TEXT NOT NULL,
    reason TEXT NOT NULL,
    -- when the value took effect (for a revert: the time it expired)
    effective_at TEXT NOT NULL,
    -- when this row was written
    recorded_at TEXT NOT NULL,
    reverts_at TEXT
);
CREATE INDEX gatehouse_policy_history_key_idx ON gatehouse_policy_history (key, version);

CREATE TRIGGER gatehouse_policy_history_no_update BEFORE UPDATE ON gatehouse_policy_history
BEGIN SELECT RAISE(ABORT, 'gatehouse_policy_history is append-only'); END;
CREATE TRIGGER gatehouse_policy_history_no_delete BEFORE DELETE ON gatehouse_policy_history
BEGIN SELECT RAISE(ABORT, 'gatehouse_policy_history is append-only'); END;
