-- gatehouse:unless-table users
-- The sync server's tables. A users row is keyed by sub = 'better_auth|<Better Auth user id>';
-- everything the user owns references that row, so a merge can find it through foreign keys.
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    sub TEXT NOT NULL UNIQUE,
    display_name TEXT,
    created_at TEXT NOT NULL
);

CREATE TABLE workspaces (
    id TEXT PRIMARY KEY,
    owner_id INTEGER NOT NULL REFERENCES users (id),
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX workspaces_owner_id_idx ON workspaces (owner_id);

CREATE TABLE subscriptions (
    id TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users (id),
    plan TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'trialing', 'past_due', 'canceled')),
    current_period_end TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX subscriptions_user_id_idx ON subscriptions (user_id);

-- Roles are granted to a sub, possibly before that sub is provisioned: no foreign key.
CREATE TABLE allow_list (
    sub TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('admin', 'dev')),
    granted_at TEXT NOT NULL,
    PRIMARY KEY (sub, role)
);
