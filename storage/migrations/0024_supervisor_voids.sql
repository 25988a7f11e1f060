-- Issue #32. A supervisor voids a round (SupervisorService.VoidRound), typically one whose lock
-- hit a Must-Hit-By level, which the table's own void refuses:
--
-- * supervisor_voids journals each void by the caller's request id (a repeat answers the same, a
--   different request with the same id is refused), with who asked, why, and its outcome:
--   'requested' while a hit payout of the round waits for a second supervisor, 'voided' when it
--   voided the round (once a round). Append-only, and on the audit trail
--   (round.supervisor_void_request, round.supervisor_void) in the same transaction;
-- * the payout events a void writes (a request to reject, or the rejection, of each of the
--   round's pending hit payouts) name its supervisor and carry the void's request id in
--   void_request_id, not in request_id (which stays the decisions' own, one event each); they are
--   on the audit trail as a decision's are (payout.reject_request, payout.reject), with the
--   void's request id.
CREATE TABLE supervisor_voids (
  request_id      text PRIMARY KEY CHECK (octet_length(request_id) BETWEEN 1 AND 64),
  table_id        text NOT NULL,
  epoch           bigint NOT NULL CHECK (epoch >= 0),
  round_id        bigint NOT NULL CHECK (round_id >= 1),
  reason          text NOT NULL CHECK (btrim(reason, E' \t\r\n') <> ''),
  supervisor      text NOT NULL CHECK (supervisor ~ '^supervisor/.+$'),
  outcome         text NOT NULL CHECK (outcome IN ('requested', 'voided')),
  reversed_micros bigint NOT NULL CHECK (reversed_micros >= 0),
  at              timestamptz NOT NULL,
  CHECK (outcome = 'voided' OR reversed_micros = 0),
  FOREIGN KEY (table_id, epoch, round_id) REFERENCES rounds (table_id, epoch, round_id)
    DEFERRABLE INITIALLY DEFERRED
);

CREATE UNIQUE INDEX supervisor_voids_one_void_a_round ON supervisor_voids (table_id, epoch, round_id)
  WHERE outcome = 'voided';

CREATE TRIGGER supervisor_voids_append_only BEFORE UPDATE OR DELETE ON supervisor_voids
  FOR EACH ROW EXECUTE FUNCTION jackpot_forbid_change();
CREATE TRIGGER supervisor_voids_no_truncate BEFORE TRUNCATE ON supervisor_voids
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_forbid_change();

CREATE FUNCTION jackpot_supervisor_voids_audited() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
  INSERT INTO audit_log (at, principal, action, detail)
  SELECT v.at, v.supervisor,
         CASE v.outcome WHEN 'voided' THEN 'round.supervisor_void'
                        ELSE 'round.supervisor_void_request' END,
         jsonb_build_object('request_id', v.request_id, 'table_id', v.table_id,
                            'epoch', v.epoch::text, 'round_id', v.round_id::text,
                            'reason', v.reason, 'outcome', v.outcome,
                            'reversed_micros', v.reversed_micros::text)
  FROM new_supervisor_voids v
  ORDER BY v.request_id COLLATE "C";
  RETURN NULL;
END
$$;

CREATE TRIGGER supervisor_voids_audited AFTER INSERT ON supervisor_voids
  REFERENCING NEW TABLE AS new_supervisor_voids
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_supervisor_voids_audited();

ALTER TABLE payout_events ADD COLUMN void_request_id text;
-- NOT VALID: the rows already written have none; no scan of the table at upgrade.
ALTER TABLE payout_events
  ADD CONSTRAINT payout_events_void_request_id_fkey FOREIGN KEY (void_request_id)
    REFERENCES supervisor_voids (request_id) DEFERRABLE INITIALLY DEFERRED NOT VALID,
  ADD CONSTRAINT payout_events_void_decides
    CHECK (void_request_id IS NULL OR state IN ('rejection_requested', 'rejected')) NOT VALID;
CREATE INDEX payout_events_void_request_id ON payout_events (void_request_id)
  WHERE void_request_id IS NOT NULL;

-- An event names a supervisor exactly when a decision or a void wrote it, and carries that
-- one's request id; never both.
ALTER TABLE payout_events DROP CONSTRAINT payout_events_decision_request_id;
ALTER TABLE payout_events
  ADD CONSTRAINT payout_events_decision_request_id
    CHECK ((supervisor = '') = (request_id IS NULL AND void_request_id IS NULL)) NOT VALID,
  ADD CONSTRAINT payout_events_one_request_id
    CHECK (request_id IS NULL OR void_request_id IS NULL) NOT VALID;

CREATE OR REPLACE FUNCTION jackpot_payout_decisions_audited() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp
  -- Probes its parents' keys, never scanning a whole table (as the reference checks, 0008).
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off AS $$
BEGIN
  INSERT INTO audit_log (at, principal, action, detail)
  SELECT e.at, jackpot_audit_principal(e.supervisor, 'supervisor'),
         CASE e.state WHEN 'rejected' THEN 'payout.reject'
                      WHEN 'rejection_requested' THEN 'payout.reject_request'
                      ELSE 'payout.approve' END,
         jsonb_build_object('payout_id', e.payout_id::text, 'request_id', e.request_id,
                            'state', e.state, 'reason', e.reason, 'link_id', p.link_id,
                            'table_id', p.table_id, 'round_id', p.round_id::text,
                            'seat', p.seat::text, 'amount_micros', p.amount_micros::text)
           || CASE WHEN e.void_request_id IS NULL THEN '{}'::jsonb
                   ELSE jsonb_build_object('void_request_id', e.void_request_id) END
  FROM new_payout_events e JOIN payouts p USING (payout_id)
  WHERE e.request_id IS NOT NULL OR e.void_request_id IS NOT NULL
  ORDER BY e.payout_id, e.seq;
  RETURN NULL;
END
$$;
