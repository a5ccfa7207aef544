-- The console's own admins, their tokens and the login throttle.
--
-- Passwords are stored only as KDF hashes (PBKDF2-SHA256 or scrypt, self-describing strings).
-- Tokens are stored only as the SHA-256 of the random token the client holds: a copy of the store
-- grants no session.

CREATE TABLE gatehouse_admins (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE CHECK (length(username) BETWEEN 1 AND 64),
    password_hash TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('viewer', 'support', 'admin')),
    disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

-- One family per login: the access and refresh tokens it issued and every rotation since.
-- A refresh token is single-use (consumed_at); presenting a consumed one revokes the family.
CREATE TABLE gatehouse_tokens (
    token_hash TEXT PRIMARY KEY CHECK (length(token_hash) = 64),
    kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    family_id TEXT NOT NULL,
    admin_id INTEGER NOT NULL REFERENCES gatehouse_admins (id) ON DELETE CASCADE,
    issued_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    consumed_at TEXT,
    revoked_at TEXT
) WITHOUT ROWID;
CREATE INDEX gatehouse_tokens_family_idx ON gatehouse_tokens (family_id);
CREATE INDEX gatehouse_tokens_admin_idx ON gatehouse_tokens (admin_id);
CREATE INDEX gatehouse_tokens_expires_idx ON gatehouse_tokens (expires_at);

-- Failed logins per scope: 'account:<username>' and '*' (every client is 127.0.0.1, so "overall"
-- stands in for "per client").
CREATE TABLE gatehouse_login_failures (
    scope TEXT PRIMARY KEY,
    failures INTEGER NOT NULL CHECK (failures >= 0),
    first_failure_at TEXT NOT NULL,
    last_failure_at TEXT NOT NULL,
    locked_until TEXT
) WITHOUT ROWID;
