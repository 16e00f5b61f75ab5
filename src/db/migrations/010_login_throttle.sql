-- Login throttling: failed logins counted per account and per client address, in the database so
-- that every process sees the same count and it survives a restart. `key` is a SHA-256 of
-- "account:<lower-case email>" or "address:<ip>" (no email or address is stored in clear).
-- A key whose failures reached the allowance is blocked until `blocked_until`; rows whose last
-- failure is older than the forgetting time count from zero again and are pruned.
CREATE TABLE login_failures (
  key text PRIMARY KEY,
  failures integer NOT NULL,
  last_failure_at timestamptz NOT NULL,
  blocked_until timestamptz
);
CREATE INDEX login_failures_last_failure_idx ON login_failures (last_failure_at);
