-- A second factor for the console's admins: TOTP authenticators and WebAuthn passkeys, recovery codes,
-- single-use challenges for the login's second step and for step-up, when each login last checked a factor,
-- and the store-wide setting that requires a factor of every admin.

-- One row per factor. A TOTP factor is pending until its first code confirms it (confirmed_at); its secret is sealed
-- with AES-256-GCM under the master key, with "gatehouse_admin_factors:<id>:<admin_id>" as associated data, so a
-- sealed secret cannot be moved to another row or admin. last_step is the last time step a code was accepted for:
-- each code is accepted once. A WebAuthn factor keeps its credential id (base64url), COSE public key and signature
-- counter; a credential id is registered once.
CREATE TABLE gatehouse_admin_factors (
    id text PRIMARY KEY CHECK (length(id) BETWEEN 16 AND 64),
    admin_id bigint NOT NULL REFERENCES gatehouse_admins (id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('totp', 'webauthn')),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    sealed_secret bytea,
    last_step bigint,
    credential_id text UNIQUE,
    public_key bytea,
    sign_count bigint,
    created_at text NOT NULL,
    confirmed_at text,
    last_used_at text,
    CHECK ((kind = 'totp') = (sealed_secret IS NOT NULL)),
    CHECK ((kind = 'webauthn') = (credential_id IS NOT NULL AND public_key IS NOT NULL AND sign_count IS NOT NULL))
);
CREATE INDEX gatehouse_admin_factors_admin_idx ON gatehouse_admin_factors (admin_id);

-- Recovery codes: only the SHA-256 of each (80 random bits: no dictionary finds one), each usable once (used_at).
CREATE TABLE gatehouse_recovery_codes (
    code_hash text PRIMARY KEY CHECK (length(code_hash) = 64),
    admin_id bigint NOT NULL REFERENCES gatehouse_admins (id) ON DELETE CASCADE,
    created_at text NOT NULL,
    used_at text
);
CREATE INDEX gatehouse_recovery_codes_admin_idx ON gatehouse_recovery_codes (admin_id);

-- Single-use challenges: the login's second step (the mfaToken the password step hands out) and WebAuthn
-- challenges. Only the SHA-256 of the token is kept; challenge is the random WebAuthn challenge issued with it.
CREATE TABLE gatehouse_mfa_challenges (
    token_hash text PRIMARY KEY CHECK (length(token_hash) = 64),
    purpose text NOT NULL CHECK (purpose IN ('login', 'step_up', 'register')),
    admin_id bigint NOT NULL REFERENCES gatehouse_admins (id) ON DELETE CASCADE,
    challenge text,
    created_at text NOT NULL,
    expires_at text NOT NULL,
    used_at text
);
CREATE INDEX gatehouse_mfa_challenges_admin_idx ON gatehouse_mfa_challenges (admin_id);
CREATE INDEX gatehouse_mfa_challenges_expires_idx ON gatehouse_mfa_challenges (expires_at);

-- When the login a token belongs to last checked a second factor (at the login's second step or a step-up): the
-- routes that need a fresh check compare it with the step-up window.
ALTER TABLE gatehouse_tokens ADD COLUMN factor_checked_at text;

-- Store-wide console settings, one a row. mfa_required: 'on' or 'off'.
CREATE TABLE gatehouse_console_settings (
    name text PRIMARY KEY CHECK (name IN ('mfa_required')),
    value text NOT NULL,
    updated_at text NOT NULL,
    updated_by text NOT NULL
);
