-- The leads table's search (GET /leads?q=): a phone number matches the payload's
-- customer_mobile_number, anything else a lead id or the start of a request id. Without these
-- a search reads every lead of the reseller.
CREATE INDEX leads_phone_idx ON leads ((payload ->> 'customer_mobile_number'));
CREATE INDEX leads_request_id_prefix_idx ON leads (request_id text_pattern_ops);

-- The table sorted by last call, most recent first (leads never called last): a range of this
-- index instead of sorting all the reseller's leads.
CREATE INDEX leads_reseller_last_call_idx ON leads (reseller_id, call_initiated_time DESC NULLS LAST, id DESC);
