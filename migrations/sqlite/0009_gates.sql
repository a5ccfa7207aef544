-- The Apple-membership gate (job 4): what operators have declared about each provider's prerequisites,
-- which provider is enabled on which platform, and every change to either.
--
-- Derived requirements (p8_key, bundle_audience, Google's oauth_client) are computed from the key ring and
-- the provider configuration and are never stored here. A gate's state (blocked, ready, live, lapsed) is
-- computed on read from these rows and the derived requirements.

-- One operator declaration per provider, requirement and platform ('all' = every platform it applies to;
-- a row for one platform overrides the 'all' row there).
CREATE TABLE gatehouse_gate_requirements (
    provider TEXT NOT NULL CHECK (provider IN ('apple', 'google')),
    requirement TEXT NOT NULL CHECK (length(requirement) BETWEEN 1 AND 64),
    platform TEXT NOT NULL CHECK (platform IN ('all', 'ios', 'desktop', 'web')),
    met INTEGER NOT NULL CHECK (met IN (0, 1)),
    evidence TEXT NOT NULL CHECK (length(evidence) BETWEEN 1 AND 2000),
    -- when a met requirement stops being met (the membership's renewal date); ISO-8601 UTC
    expires_at TEXT,
    set_by TEXT NOT NULL,
    set_at TEXT NOT NULL,
    PRIMARY KEY (provider, requirement, platform),
    CHECK (met = 1 OR expires_at IS NULL)
);

-- Whether a provider is offered on a platform. No row means never enabled.
CREATE TABLE gatehouse_gates (
    provider TEXT NOT NULL CHECK (provider IN ('apple', 'google')),
    platform TEXT NOT NULL CHECK (platform IN ('ios', 'desktop', 'web')),
    enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    since TEXT NOT NULL,
    changed_by TEXT NOT NULL,
    reason TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 2000),
    PRIMARY KEY (provider, platform)
);

-- Every set, enable and disable, with its actor and evidence or reason. Append-only.
CREATE TABLE gatehouse_gate_history (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('set', 'enable', 'disable')),
    provider TEXT NOT NULL,
    -- 'all' only for a requirement declared for every platform
    platform TEXT NOT NULL,
    -- set: the requirement, met or not, its expiry, whether --force accepted a past date
    requirement TEXT,
    met INTEGER,
    expires_at TEXT,
    forced INTEGER NOT NULL DEFAULT 0 CHECK (forced IN (0, 1)),
    -- enable/disable: the gate's state before and after
    from_state TEXT,
    to_state TEXT,
    -- set: the evidence; enable/disable: the reason
    text TEXT NOT NULL,
    CHECK ((action = 'set') = (requirement IS NOT NULL AND met IS NOT NULL))
);
CREATE INDEX gatehouse_gate_history_gate_idx ON gatehouse_gate_history (provider, platform, id);

CREATE TRIGGER gatehouse_gate_history_no_update BEFORE UPDATE ON gatehouse_gate_history
BEGIN SELECT RAISE(ABORT, 'gatehouse_gate_history is append-only'); END;
CREATE TRIGGER gatehouse_gate_history_no_delete BEFORE DELETE ON gatehouse_gate_history
BEGIN SELECT RAISE(ABORT, 'gatehouse_gate_history is append-only'); END;
