-- The audit trail: one row per write through the API (create, update, delete, abort, token issue
-- and revoke) and per login, success or failure. Who (user or s2s token: id and name), the role
-- and scope, what (method, route, resource, resource id, status), when, and from where. Never
-- request bodies, secrets or passwords. Rows older than DIALER_AUDIT_RETENTION_DAYS are deleted.
CREATE TABLE audit_log (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  principal_kind text,
  principal_id text,
  principal_name text,
  role text,
  reseller_id text,
  merchant_id text,
  action text NOT NULL,
  method text NOT NULL,
  route text NOT NULL,
  resource text,
  resource_id text,
  status integer NOT NULL,
  client_ip text,
  request_id text,
  details jsonb
);
CREATE INDEX audit_log_at_idx ON audit_log (at);
CREATE INDEX audit_log_reseller_at_idx ON audit_log (reseller_id, at);
CREATE INDEX audit_log_principal_idx ON audit_log (principal_id, at);
CREATE INDEX audit_log_resource_idx ON audit_log (resource_id, at);
