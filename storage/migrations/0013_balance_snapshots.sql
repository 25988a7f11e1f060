-- Balance snapshots: every account of a link as the daemon's sequencer held it in memory
-- between two commands, written in the same statement as the batch that ends there, so that a
-- snapshot includes exactly the transfers up to its through_transfer_id. The daemon records one
-- at every start, after every recovery, at a clean stop, on an interval and on an operator's
-- request (docs/architecture.md §7a).
--
-- They are the reconciliation report's independent observations: a period's start and end
-- holdings come from two snapshots, its terms from the transfers between their ids, so a
-- transfer lost or doubled in between shows as a level that does not balance. Recovery starts
-- from each link's latest snapshot and adds only the transfers after it; the primary key of
-- transfers (link_id, transfer_id) serves that range, so no other index is needed.
CREATE TABLE balance_snapshots (
  link_id              text NOT NULL REFERENCES links,
  -- The last transfer of the link the balances include; 0 before the first.
  through_transfer_id  bigint NOT NULL CHECK (through_transfer_id >= 0),
  account_kind         account_kind NOT NULL,
  level                integer NOT NULL CHECK (level >= 0),
  balance_micros       bigint NOT NULL,
  -- When the snapshot became durable (its batch's commit), like transfers.posted_at.
  taken_at             timestamptz NOT NULL DEFAULT clock_timestamp(),
  reason               text NOT NULL CHECK (reason IN ('start', 'recovery', 'stop', 'interval',
                                                       'request')),
  PRIMARY KEY (link_id, through_transfer_id, account_kind, level),
  CHECK ((account_kind IN ('meter', 'reserve')) = (level > 0))
);

-- The report picks the snapshots that bound a period by time.
CREATE INDEX balance_snapshots_taken ON balance_snapshots (link_id, taken_at);

CREATE TRIGGER balance_snapshots_append_only BEFORE UPDATE OR DELETE ON balance_snapshots
  FOR EACH ROW EXECUTE FUNCTION jackpot_forbid_change();
CREATE TRIGGER balance_snapshots_no_truncate BEFORE TRUNCATE ON balance_snapshots
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_forbid_change();
