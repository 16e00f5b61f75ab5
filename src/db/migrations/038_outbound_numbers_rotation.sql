-- Claims take free numbers in rotation: each worker goes through a provider's numbers in id order,
-- from the one after the last it took, wrapping around (docs/leads.md, "Outbound number"). Read in
-- this index's order, a claim of 48 numbers reads about 48 rows; in the order of last use it read
-- and sorted every number of the provider, a cost that grew with the pool. The index holds only
-- columns a number keeps for life, so taking and giving back stay heap-only (HOT) updates, as
-- migration 008 made them. It also serves every lookup by provider, which had an index of its own.
CREATE INDEX outbound_numbers_rotation_idx ON outbound_numbers (provider, id);
DROP INDEX outbound_numbers_provider_idx;
