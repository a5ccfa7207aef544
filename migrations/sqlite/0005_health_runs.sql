-- Recorded runs of `gatehouse health --record`, for the console's history and the
-- "has the timer stopped?" check.
CREATE TABLE gatehouse_health_runs (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'warning', 'critical', 'unknown')),
    duration_ms INTEGER NOT NULL,
    report TEXT NOT NULL
);
CREATE INDEX gatehouse_health_runs_at_idx ON gatehouse_health_runs (at);
