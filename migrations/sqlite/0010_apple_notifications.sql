-- The Apple account lifecycle: server-to-server notifications as received, the state they leave on each Apple
-- account, and the deletion requests Apple forwards for support to carry out.
--
-- Notifications are keyed by Apple's user id (`sub`, Better Auth's account.accountId for providerId 'apple'), not by
-- a Better Auth id: a merge or a re-link moves the account row and the state follows it. The raw token is never
-- stored; only its SHA-256, so a duplicate can be told apart from a second, different token.

-- Every notification, accepted or refused. An accepted one is recorded once per (jti, sub, type): Apple retries
-- until it gets a 200 and may send the same event twice.
CREATE TABLE gatehouse_apple_notifications (
    id INTEGER PRIMARY KEY,
    received_at TEXT NOT NULL,
    -- 'listener' (apple notifications serve) or 'ingest' (apple notifications ingest)
    transport TEXT NOT NULL CHECK (transport IN ('listener', 'ingest')),
    -- accepted: verified and acted on; unknown_sub: verified, no account has the sub, nothing changed;
    -- refused: not verified (reason says why), nothing changed
    outcome TEXT NOT NULL CHECK (outcome IN ('accepted', 'unknown_sub', 'refused')),
    reason TEXT,
    jti TEXT,
    sub TEXT,
    type TEXT,
    event_time TEXT,
    email TEXT,
    is_private_email INTEGER CHECK (is_private_email IN (0, 1)),
    aud TEXT,
    -- the Better Auth user and account the sub belonged to when it arrived
    user_id TEXT,
    account_id TEXT,
    -- what was done, for people: "email forwarding off", "2 session(s) ended", ...
    action TEXT,
    token_sha256 TEXT NOT NULL,
    CHECK ((outcome = 'refused') = (reason IS NOT NULL)),
    CHECK (outcome = 'refused' OR (jti IS NOT NULL AND sub IS NOT NULL AND type IS NOT NULL))
);
CREATE UNIQUE INDEX gatehouse_apple_notifications_once ON gatehouse_apple_notifications (jti, sub, type)
    WHERE outcome <> 'refused';
CREATE INDEX gatehouse_apple_notifications_sub_idx ON gatehouse_apple_notifications (sub, id);

-- What the notifications say about each Apple account now.
CREATE TABLE gatehouse_apple_account_state (
    sub TEXT PRIMARY KEY,
    -- 'on' / 'off': the private relay's forwarding to the person's address (email-enabled / email-disabled)
    email_forwarding TEXT CHECK (email_forwarding IN ('on', 'off')),
    forwarding_email TEXT,
    forwarding_changed_at TEXT,
    -- consent-revoked: when the person stopped using Sign in with Apple with the app
    consent_revoked_at TEXT,
    updated_at TEXT NOT NULL,
    last_notification_id INTEGER NOT NULL
);

-- account-delete: the person deleted their Apple account; support deletes theirs (never automatically).
CREATE TABLE gatehouse_apple_deletion_requests (
    id INTEGER PRIMARY KEY,
    opened_at TEXT NOT NULL,
    sub TEXT NOT NULL,
    user_id TEXT NOT NULL,
    notification_id INTEGER NOT NULL,
    state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'done', 'dismissed')),
    closed_at TEXT,
    closed_by TEXT,
    UNIQUE (sub, user_id)
);
CREATE INDEX gatehouse_apple_deletion_requests_user_idx ON gatehouse_apple_deletion_requests (user_id, state);

-- Apple's signing keys (the JWKS at {base}/auth/keys) as last fetched, kept until the max-age of the answer's
-- Cache-Control runs out, so a one-shot `apple notifications ingest` does not fetch them for every notification.
CREATE TABLE gatehouse_apple_jwks (
    url TEXT PRIMARY KEY,
    body TEXT NOT NULL,
    fetched_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
