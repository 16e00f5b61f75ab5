-- Webhook deliveries outlast a receiver's outage and are leased one attempt at a time
-- (docs/api-guide.md, "Reporting webhook"; src/webhooks/dispatcher.ts).
--
-- next_attempt_at: when the delivery's next attempt is due (the back-to-back attempts are due at
-- once, later ones back off). A claim takes due rows, counts the attempt and leases it for one
-- attempt's timeout and a margin, so a dead worker's delivery is taken over within that lease.
-- notification_id: the X-Dialer-Delivery-Id a receiver deduplicates on, kept by a copy sent again by
-- hand (NULL: the delivery's own id). receiver: the URL's host and port, which bounds how many
-- deliveries to one receiver a worker runs at once.
ALTER TABLE webhook_deliveries ADD COLUMN next_attempt_at timestamptz NOT NULL DEFAULT now();
ALTER TABLE webhook_deliveries ADD COLUMN notification_id text;
ALTER TABLE webhook_deliveries ADD COLUMN receiver text
  GENERATED ALWAYS AS (lower(substring(url FROM '^[^:/?#]+://(?:[^@/?#]*@)?([^/?#]*)'))) STORED;
UPDATE webhook_deliveries SET notification_id = redelivery_of WHERE redelivery_of IS NOT NULL;
UPDATE webhook_deliveries SET next_attempt_at = created_at WHERE status = 'pending';

CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
DROP INDEX webhook_deliveries_pending_idx;
