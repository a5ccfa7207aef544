-- Single sign-on for the console through the company's OpenID Connect provider (issue 45).
--
-- gatehouse_sso_config holds the one provider: its issuer, the client id, the client secret sealed with AES-256-GCM
-- under the master key (associated data "gatehouse_sso_config:<issuer>:<client_id>", so a sealed secret cannot be
-- moved to another provider or client), the groups that give each role, and whether password login stays on.
CREATE TABLE gatehouse_sso_config (
    id bigint PRIMARY KEY CHECK (id = 1),
    issuer text NOT NULL,
    client_id text NOT NULL,
    sealed_client_secret bytea NOT NULL,
    redirect_uri text,
    admin_group text,
    support_group text,
    viewer_group text,
    groups_claim text NOT NULL,
    allowed_domain text,
    password_login bigint NOT NULL DEFAULT 1 CHECK (password_login IN (0, 1)),
    updated_at text NOT NULL,
    updated_by text NOT NULL
);

-- A sign-in's single-use values: the state of an authorization request (bound to the browser that started it by the
-- SHA-256 of its cookie, with the nonce and the PKCE verifier), and the ticket the console's page exchanges for its
-- tokens. Only the SHA-256 of the state or ticket is kept.
CREATE TABLE gatehouse_sso_logins (
    token_hash text PRIMARY KEY CHECK (length(token_hash) = 64),
    kind text NOT NULL CHECK (kind IN ('state', 'ticket')),
    browser_hash text,
    nonce text,
    code_verifier text,
    redirect_uri text,
    admin_id bigint REFERENCES gatehouse_admins (id) ON DELETE CASCADE,
    created_at text NOT NULL,
    expires_at text NOT NULL,
    used_at text
);
CREATE INDEX gatehouse_sso_logins_expires_idx ON gatehouse_sso_logins (expires_at);
CREATE INDEX gatehouse_sso_logins_admin_idx ON gatehouse_sso_logins (admin_id);

-- Where an admin comes from: 'local' (a password made on the host) or 'sso' (the provider; the username is the
-- person's email, sso_subject the provider's sub for it), and when they last signed in. No CHECK on the added column:
-- SQLite checks one by running quick_check, which D1 does not allow.
ALTER TABLE gatehouse_admins ADD COLUMN source text NOT NULL DEFAULT 'local';
ALTER TABLE gatehouse_admins ADD COLUMN sso_subject text;
ALTER TABLE gatehouse_admins ADD COLUMN last_login_at text;
