-- The dashboard's reads: recent failures on the overview, cost of the day, deliveries sent again.

-- A delivery made again by hand (POST /leads/{id}/webhooks/{delivery_id}/redeliver) names the one it repeats.
ALTER TABLE webhook_deliveries ADD COLUMN redelivery_of text REFERENCES webhook_deliveries (id) ON DELETE SET NULL;

-- Recent failures: a few rows each, newest first, whatever the size of the tables.
CREATE INDEX webhook_deliveries_failed_idx ON webhook_deliveries (updated_at DESC) WHERE status = 'failed';
CREATE INDEX leads_failures_idx ON leads (updated_at DESC) WHERE outcome IN ('error', 'PRECHECK_FAILED');

-- Cost of the day: the leads whose calls cost something, by the time they ended.
CREATE INDEX leads_cost_idx ON leads (call_end_time) WHERE cost IS NOT NULL;
