-- Reporting webhook deliveries: one row per finished lead with a reporting_webhook_url,
-- queued in the transaction that finishes the lead; delivered by any worker's dispatcher.
CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,
  lead_id text NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
  url text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('success', 'failure')),
  payload jsonb NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  locked_by text,
  locked_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz
);
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (created_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_lead_idx ON webhook_deliveries (lead_id);

-- Every HTTP attempt of a delivery.
CREATE TABLE webhook_attempts (
  delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  started_at timestamptz NOT NULL,
  status_code integer,
  latency_ms integer NOT NULL,
  error text,
  PRIMARY KEY (delivery_id, attempt)
);
