-- Deleting a user on request (issue 27): plans, and the deletions applied from them with a sealed copy of every
-- row deleted, kept for an undo window.
--
-- A plan names the rows it would delete (table and key, never values) and fingerprints their full contents, so
-- `users delete apply` refuses when anything it read has changed. A deletion keeps the deleted rows as one
-- AES-256-GCM box under the master key (sealed_rows) until retain_until; `users delete purge` then destroys the box
-- (status 'purged', sealed_rows NULL; an undo drops it too) and only the record of who, when and why stays. Token columns are never in
-- the box: the tokens were revoked, and undo gives them back as NULL.
CREATE TABLE gatehouse_user_deletion_plans (
    id TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    user_id TEXT NOT NULL,
    ticket TEXT NOT NULL,
    created_at TEXT NOT NULL,
    actor TEXT NOT NULL,
    plan TEXT NOT NULL
);

CREATE TABLE gatehouse_user_deletions (
    id INTEGER PRIMARY KEY,
    plan_id TEXT NOT NULL REFERENCES gatehouse_user_deletion_plans (id),
    user_id TEXT NOT NULL,
    ticket TEXT NOT NULL,
    actor TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('applied', 'undone', 'purged')),
    applied_at TEXT NOT NULL,
    retain_until TEXT NOT NULL,
    revocation TEXT NOT NULL,
    no_revoke_reason TEXT,
    summary_json TEXT NOT NULL DEFAULT '{}',
    sealed_rows BLOB,
    undone_at TEXT,
    undone_by TEXT,
    undo_reason TEXT,
    purged_at TEXT,
    CHECK ((status = 'applied') = (sealed_rows IS NOT NULL)),
    CHECK ((status = 'undone') = (undone_at IS NOT NULL))
);
CREATE INDEX gatehouse_user_deletions_user_idx ON gatehouse_user_deletions (user_id);
CREATE INDEX gatehouse_user_deletions_retain_idx ON gatehouse_user_deletions (retain_until);
