-- Two-person approval (issue 45). gatehouse_approval_settings holds which actions need a second admin's approval in
-- the console (a space-separated list of action names, empty for none) and how long a request waits for one.
CREATE TABLE gatehouse_approval_settings (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    actions TEXT NOT NULL,
    expires_after INTEGER NOT NULL CHECK (expires_after BETWEEN 60 AND 2592000),
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL
);

-- One request per row: the console request as it was made (method, path, query and JSON body: the listed actions'
-- bodies hold no secret), who made it, what the reviewer is shown (detail, JSON), and how it ended: 'pending' until an
-- admin other than the requester approves ('running' while the action runs, then 'approved' or 'failed' with the
-- action's answer) or someone denies it; a pending request past expires_at is 'expired' when next read.
CREATE TABLE gatehouse_approvals (
    id INTEGER PRIMARY KEY,
    action TEXT NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    query TEXT,
    body TEXT NOT NULL,
    detail TEXT,
    requested_by TEXT NOT NULL,
    requested_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'approved', 'failed', 'denied', 'expired')),
    decided_by TEXT,
    decided_at TEXT,
    reason TEXT,
    outcome_status INTEGER,
    outcome TEXT
);
CREATE INDEX gatehouse_approvals_status_idx ON gatehouse_approvals (status, id);
