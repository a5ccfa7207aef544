-- Refused Apple notifications as counters, one row per reason and source, instead of one row per request: anyone
-- can POST a forged notification, and a row each let a flood grow the store without bound. `reason` is one of a
-- fixed set of codes (AppleNotificationRefusal.Reason: signature, unknown_key, exp, ...); `source` is the transport
-- and, for the listener, the sender's address (an IPv6 sender's /64); past a cap on distinct rows, new sources are
-- counted under one shared source. `last_detail` is the last refusal's words (bounded; never the token).
CREATE TABLE gatehouse_apple_refusals (
    id INTEGER PRIMARY KEY,
    reason TEXT NOT NULL,
    source TEXT NOT NULL,
    -- 'listener' (apple notifications serve) or 'ingest' (apple notifications ingest)
    transport TEXT NOT NULL CHECK (transport IN ('listener', 'ingest')),
    count INTEGER NOT NULL CHECK (count > 0),
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    last_detail TEXT NOT NULL,
    UNIQUE (reason, source)
);
CREATE INDEX gatehouse_apple_refusals_last_seen_idx ON gatehouse_apple_refusals (last_seen);
