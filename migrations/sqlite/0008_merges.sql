-- Support-driven user merges (job 5): plans, and the merges applied from them with what undoes them.
--
-- A plan is kept so that `merge apply PLAN_ID` applies exactly what was reviewed; its id fingerprints
-- every row the plan read. A merge keeps the full before-image of every row it changed or removed and
-- the after-image of every row it changed (undo_data, JSON), so `merge undo` restores the store row for
-- row, or names the rows that changed since. Both hold copies of rows that may contain token values
-- and password hashes: they are never printed.
CREATE TABLE gatehouse_merge_plans (
    id TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    source_user_id TEXT NOT NULL,
    target_user_id TEXT NOT NULL,
    decisions TEXT NOT NULL,
    created_at TEXT NOT NULL,
    actor TEXT NOT NULL,
    plan TEXT NOT NULL
);

CREATE TABLE gatehouse_merges (
    id INTEGER PRIMARY KEY,
    plan_id TEXT NOT NULL REFERENCES gatehouse_merge_plans (id),
    source_user_id TEXT NOT NULL,
    target_user_id TEXT NOT NULL,
    ticket TEXT NOT NULL,
    actor TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('applied', 'undone')),
    planned_at TEXT NOT NULL,
    applied_at TEXT NOT NULL,
    undone_at TEXT,
    undone_by TEXT,
    undo_reason TEXT,
    summary_json TEXT NOT NULL DEFAULT '{}',
    undo_data TEXT NOT NULL,
    CHECK ((status = 'undone') = (undone_at IS NOT NULL))
);
CREATE INDEX gatehouse_merges_source_idx ON gatehouse_merges (source_user_id);
CREATE INDEX gatehouse_merges_target_idx ON gatehouse_merges (target_user_id);
CREATE INDEX gatehouse_merges_plan_idx ON gatehouse_merges (plan_id);
