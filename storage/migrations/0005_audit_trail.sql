-- The journal says who did what, and none of it can be rewritten.
--
-- A link's status change keeps its reason and who asked for it. A payout's approval and rejection
-- name their supervisor (a rejection used to carry its supervisor inside the reason); the checks
-- bind new rows only, so that rows written before this migration stay as they were.
ALTER TABLE link_status_events
  ADD COLUMN changed_by text NOT NULL DEFAULT '',
  ADD COLUMN reason text NOT NULL DEFAULT '';

ALTER TABLE payout_events
  ADD CONSTRAINT payout_events_supervisor_named
    CHECK (state NOT IN ('approved', 'rejected') OR supervisor <> '') NOT VALID,
  ADD CONSTRAINT payout_events_rejection_reason
    CHECK (state <> 'rejected' OR reason <> '') NOT VALID;

-- Every table of the journal is append-only, like the ledger and the audit log: no row is
-- changed or removed once written, and no table is emptied.
DO $$
DECLARE
  journal text;
BEGIN
  FOREACH journal IN ARRAY ARRAY['floor_versions', 'links', 'rounds', 'wagers', 'hands', 'payouts',
                                 'dynamic_pays', 'must_hit_by_hits', 'link_status_events'] LOOP
    EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE OR DELETE ON %I '
                   'FOR EACH ROW EXECUTE FUNCTION jackpot_forbid_change()',
                   journal || '_append_only', journal);
  END LOOP;
  FOREACH journal IN ARRAY ARRAY['floor_versions', 'links', 'rounds', 'round_events', 'wagers',
                                 'hands', 'draws', 'payouts', 'payout_events', 'command_answers',
                                 'dynamic_pays', 'must_hit_by_hits', 'link_status_events'] LOOP
    EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I '
                   'FOR EACH STATEMENT EXECUTE FUNCTION jackpot_forbid_change()',
                   journal || '_no_truncate', journal);
  END LOOP;
END
$$;
