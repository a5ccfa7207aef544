-- Google's Cross-Account Protection (issue 43): the security event tokens Google pushes about the app's Google users
-- (sessions or tokens revoked, account disabled or enabled, credential change required, verification), recorded once
-- by jti and event type, each with what Gatehouse did. An action that changed rows keeps what an undo gives back in
-- undo_data (sealed under the master key when it holds token values); ended sessions cannot be given back.
CREATE TABLE gatehouse_google_events (
    id INTEGER PRIMARY KEY,
    received_at TEXT NOT NULL,
    -- 'listener' (google risc serve) or 'ingest' (google risc ingest)
    transport TEXT NOT NULL CHECK (transport IN ('listener', 'ingest')),
    jti TEXT NOT NULL,
    event_type TEXT NOT NULL,
    issued_at TEXT,
    sub TEXT,
    reason TEXT,
    state TEXT,
    -- the Better Auth user and Google account the subject belonged to when it arrived
    user_id TEXT,
    account_id TEXT,
    -- acted: rows changed or flags set; unknown_subject: no Google account matched, nothing changed; recorded: nothing to do
    outcome TEXT NOT NULL CHECK (outcome IN ('acted', 'unknown_subject', 'recorded')),
    action TEXT NOT NULL,
    sessions_ended INTEGER NOT NULL DEFAULT 0,
    undo_data BLOB,
    undone_at TEXT,
    undone_by TEXT,
    undo_reason TEXT,
    token_sha256 TEXT NOT NULL
);
CREATE UNIQUE INDEX gatehouse_google_events_once ON gatehouse_google_events (jti, event_type);
CREATE INDEX gatehouse_google_events_user_idx ON gatehouse_google_events (user_id, id);
CREATE INDEX gatehouse_google_events_received_idx ON gatehouse_google_events (received_at);

-- What the events left on a Google account: disabled (the reason, or 'unspecified') until account-enabled, and
-- flagged for review (bulk-account, credential-change-required).
CREATE TABLE gatehouse_google_account_state (
    sub TEXT PRIMARY KEY,
    disabled TEXT,
    disabled_at TEXT,
    review TEXT,
    review_at TEXT,
    updated_at TEXT NOT NULL
);

-- Refused tokens, counted per reason and source rather than one row each (anyone can POST a forged token).
CREATE TABLE gatehouse_google_refusals (
    id INTEGER PRIMARY KEY,
    reason TEXT NOT NULL,
    source TEXT NOT NULL,
    transport TEXT NOT NULL CHECK (transport IN ('listener', 'ingest')),
    count INTEGER NOT NULL CHECK (count > 0),
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    last_detail TEXT NOT NULL,
    UNIQUE (reason, source)
);

-- The event stream as Gatehouse last set or read it at Google, and the last verification event's state.
CREATE TABLE gatehouse_google_risc_stream (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    url TEXT,
    events TEXT,
    status TEXT,
    updated_at TEXT NOT NULL,
    verify_state TEXT,
    verify_requested_at TEXT
);
