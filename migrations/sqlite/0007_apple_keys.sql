-- Apple signing inputs (job 1): the .p8 key ring, the provider configuration Better Auth is given,
-- and the client secrets deployed as static values that health checks watch.

-- One row per Sign in with Apple key. The .p8 is sealed with AES-256-GCM under the master key, with
-- "gatehouse_apple_keys:<key_id>:<fingerprint>" as associated data, so a sealed key cannot be moved to
-- another row. The fingerprint is the hex SHA-256 of the public key's SubjectPublicKeyInfo.
CREATE TABLE gatehouse_apple_keys (
    key_id TEXT PRIMARY KEY CHECK (length(key_id) = 10),
    team_id TEXT NOT NULL CHECK (length(team_id) = 10),
    state TEXT NOT NULL CHECK (state IN ('staged', 'active', 'retired', 'revoked')),
    fingerprint TEXT NOT NULL UNIQUE CHECK (length(fingerprint) = 64),
    sealed_p8 BLOB NOT NULL,
    imported_at TEXT NOT NULL,
    activated_at TEXT,
    retired_at TEXT,
    revoked_at TEXT,
    CHECK ((state = 'revoked') = (revoked_at IS NOT NULL))
);
-- At most one active key: the one client secrets are minted from.
CREATE UNIQUE INDEX gatehouse_apple_keys_one_active ON gatehouse_apple_keys (state) WHERE state = 'active';

-- What the runtime passes to Better Auth's apple() and google() providers, one setting a row.
-- apple: team_id, services_id (clientId), bundle_id (appBundleIdentifier), audience (a JSON array).
-- google: client_id.ios, client_id.desktop, client_id.web (clientId: string[]).
CREATE TABLE gatehouse_provider_config (
    provider TEXT NOT NULL CHECK (provider IN ('apple', 'google')),
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL,
    PRIMARY KEY (provider, name),
    CHECK ((provider = 'apple' AND name IN ('team_id', 'services_id', 'bundle_id', 'audience'))
        OR (provider = 'google' AND name IN ('client_id.ios', 'client_id.desktop', 'client_id.web')))
);

-- Client secrets deployed as static values: their expiry is watched; the token itself is never stored,
-- only its SHA-256.
CREATE TABLE gatehouse_tracked_secrets (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('apple_client_secret')),
    key_id TEXT NOT NULL,
    team_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    issued_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    fingerprint TEXT NOT NULL UNIQUE CHECK (length(fingerprint) = 64),
    tracked_at TEXT NOT NULL,
    tracked_by TEXT NOT NULL
);
CREATE INDEX gatehouse_tracked_secrets_expires_idx ON gatehouse_tracked_secrets (expires_at);
