-- Service callback: where a configuration sends the final state of each conversation
-- (unset: the deployment's DIALER_SERVICE_CALLBACK_URL, if any). Deliveries share the reporting
-- webhook's queue, attempts and dispatcher, as their own kind.
ALTER TABLE configurations ADD COLUMN service_callback_url text;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_kind_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_kind_check CHECK (kind IN ('success', 'failure', 'service_callback'));
