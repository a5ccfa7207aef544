-- The audit log filtered by who acted or what was acted on (`audit --actor`, `--subject`, the console's audit page):
-- newest first from an index, not a scan of every entry. (column, id) serves both the filter and the order by id.
CREATE INDEX gatehouse_audit_actor_idx ON gatehouse_audit (actor, id);
CREATE INDEX gatehouse_audit_subject_idx ON gatehouse_audit (subject, id);
