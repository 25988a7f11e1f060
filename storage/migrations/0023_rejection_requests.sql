-- Issue #32. A payout that needs two supervisors to pay needs two to reject: the first
-- rejection is an event of its own, 'rejection_requested', naming its supervisor, reason and
-- request id; the payout still waits, for a second supervisor's approval or rejection. The
-- checks of 0002, 0005 and 0021 take the new state in; the audit trail records it as
-- 'payout.reject_request'.
ALTER TABLE payout_events DROP CONSTRAINT payout_events_state_check;
-- NOT VALID: the rows already written met the narrower check; no scan of the table at upgrade.
ALTER TABLE payout_events
  ADD CONSTRAINT payout_events_state_check
    CHECK (state IN ('pending', 'approved', 'rejection_requested', 'paid', 'rejected')) NOT VALID,
  ADD CONSTRAINT payout_events_rejection_request_named
    CHECK (state <> 'rejection_requested' OR (supervisor <> '' AND reason <> '')) NOT VALID;

-- Hidden points and salts reach the database through COPY, never in a statement's text or
-- parameters (docs/audit.md): COPY comes first in a batch's transaction, ahead of the statement
-- that writes their draws, so that the statement's triggers see them (a hit's reveal on the audit
-- trail names the point its lock hit, also when the reset that drew it is in the same batch).
-- Each point's draw is checked at the commit.
ALTER TABLE jackpot_private.trigger_secrets
  ALTER CONSTRAINT trigger_secrets_draw_id_fkey DEFERRABLE INITIALLY DEFERRED;

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
  FROM new_payout_events e JOIN payouts p USING (payout_id)
  WHERE e.request_id IS NOT NULL
  ORDER BY e.payout_id, e.seq;
  RETURN NULL;
END
$$;
