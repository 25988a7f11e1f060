-- When each transfer became durable (its batch's commit), for reports over a period.
ALTER TABLE transfers ADD COLUMN posted_at timestamptz NOT NULL DEFAULT clock_timestamp();
CREATE INDEX transfers_posted ON transfers (link_id, posted_at);
