-- Gatehouse's audit log: append-only, each entry chained to the previous one by hash,
-- so that `gatehouse audit verify` detects an edited or deleted entry.
CREATE TABLE gatehouse_audit (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    subject TEXT,
    details TEXT NOT NULL DEFAULT '{}',
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE
);
CREATE INDEX gatehouse_audit_action_idx ON gatehouse_audit (action, id);
CREATE INDEX gatehouse_audit_at_idx ON gatehouse_audit (at);

CREATE TRIGGER gatehouse_audit_no_update BEFORE UPDATE ON gatehouse_audit
BEGIN SELECT RAISE(ABORT, 'gatehouse_audit is append-only'); END;
CREATE TRIGGER gatehouse_audit_no_delete BEFORE DELETE ON gatehouse_audit
BEGIN SELECT RAISE(ABORT, 'gatehouse_audit is append-only'); END;
