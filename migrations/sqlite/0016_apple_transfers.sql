-- Apple app transfers (issue 42): when the app moves to another Apple developer team, every Sign in with Apple user
-- gets a new team-scoped sub (and a Hide My Email user a new relay address), bridged by a transfer identifier for 60
-- days. A transfer records the two teams and the deadline; each Apple account of the store has one row per transfer
-- holding what Apple answered for it (the transfer_sub from the sending team, then the new sub, email and
-- is_private_email from the recipient team) or the error it answered, and what the latest plan does with it. A plan
-- rewrites account.accountId (and a relay user's email) in place; its undo needs only these rows.
CREATE TABLE gatehouse_apple_transfers (
    id INTEGER PRIMARY KEY,
    from_team TEXT NOT NULL,
    to_team TEXT NOT NULL,
    client_id TEXT NOT NULL,
    transferred_at TEXT NOT NULL,
    deadline_at TEXT NOT NULL,
    recipient_elsewhere INTEGER NOT NULL DEFAULT 0,
    imported INTEGER NOT NULL DEFAULT 0,
    started_at TEXT NOT NULL,
    started_by TEXT NOT NULL
);

CREATE TABLE gatehouse_apple_transfer_accounts (
    transfer_id INTEGER NOT NULL REFERENCES gatehouse_apple_transfers (id),
    account_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    old_sub TEXT NOT NULL,
    transfer_sub TEXT,
    collect_error TEXT,
    new_sub TEXT,
    new_email TEXT,
    is_private_email INTEGER,
    exchange_error TEXT,
    plan_id TEXT,
    plan_action TEXT CHECK (plan_action IN ('rewrite', 'straggler', 'unchanged')),
    plan_old_email TEXT,
    plan_new_email TEXT,
    straggler_user_id TEXT,
    applied_plan TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (transfer_id, account_id)
);
CREATE INDEX gatehouse_apple_transfer_accounts_plan_idx ON gatehouse_apple_transfer_accounts (plan_id, account_id);

CREATE TABLE gatehouse_apple_transfer_plans (
    id TEXT PRIMARY KEY,
    transfer_id INTEGER NOT NULL REFERENCES gatehouse_apple_transfers (id),
    status TEXT NOT NULL CHECK (status IN ('planned', 'applying', 'applied', 'undone', 'superseded')),
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    summary_json TEXT NOT NULL,
    ticket TEXT,
    applied_at TEXT,
    applied_by TEXT,
    undone_at TEXT,
    undone_by TEXT,
    undo_reason TEXT
);
