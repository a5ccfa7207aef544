-- Each recorded run's deadlines (`HealthGauge`: days left for the Apple client secret, the membership, the transfer
-- window; the key's age) with the lines the check judged them by, for the console's charts over a time range.
CREATE TABLE gatehouse_health_gauges (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    check_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'warning', 'critical', 'unknown')),
    value REAL NOT NULL,
    warning REAL,
    critical REAL,
    lower_is_worse INTEGER NOT NULL CHECK (lower_is_worse IN (0, 1))
);
CREATE INDEX gatehouse_health_gauges_at_idx ON gatehouse_health_gauges (at);
