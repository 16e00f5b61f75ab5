-- Taking and giving back an outbound number changes its status twice per call. With an index whose
-- predicate reads status (the partial index of free numbers) neither change could be a heap-only
-- (HOT) update: every one wrote a new entry into each index of the table, and between vacuums a
-- pool of 200 numbers carried tens of thousands of dead index entries that every claim's search for
-- a free number walked through (bench:dispatch: 38,000 updates, none HOT, for 20,000 leads).
-- An index on provider alone is untouched by the status, lead and time changes, so they are HOT,
-- and half-full pages leave them room on the same page.
DROP INDEX outbound_numbers_free_idx;
CREATE INDEX outbound_numbers_provider_idx ON outbound_numbers (provider);
ALTER TABLE outbound_numbers SET (fillfactor = 50);
