-- Operators' meter adjustments (AdminService.AdjustMeter): one row per adjustment applied, in the
-- same transaction as its transfer, keyed by the caller's request id so that a repeat of the
-- request, also after a restart, answers what was applied (recovery reads every row back) and a
-- different request under the same id is refused. Append-only, like the rest of the journal.
CREATE TABLE meter_adjustments (
  request_id            text PRIMARY KEY
                        CHECK (request_id <> '' AND octet_length(request_id) <= 64),
  link_id               text NOT NULL,
  transfer_id           bigint NOT NULL,
  level                 integer NOT NULL CHECK (level >= 1),
  -- Signed: positive raised the meter from seed_funding, negative lowered it back.
  amount_micros         bigint NOT NULL CHECK (amount_micros <> 0),
  reason                text NOT NULL
                        CHECK (btrim(reason, E' \t\r\n') <> '' AND octet_length(reason) <= 512),
  requested_by          text NOT NULL CHECK (requested_by <> ''),
  -- The level's meter and reserve just after: what a replay answers.
  meter_after_micros    bigint NOT NULL CHECK (meter_after_micros >= 0),
  reserve_after_micros  bigint NOT NULL CHECK (reserve_after_micros >= 0),
  at                    timestamptz NOT NULL,
  UNIQUE (link_id, transfer_id),
  FOREIGN KEY (link_id, transfer_id) REFERENCES transfers (link_id, transfer_id)
);

CREATE TRIGGER meter_adjustments_append_only BEFORE UPDATE OR DELETE ON meter_adjustments
  FOR EACH ROW EXECUTE FUNCTION jackpot_forbid_change();
CREATE TRIGGER meter_adjustments_no_truncate BEFORE TRUNCATE ON meter_adjustments
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_forbid_change();

-- Every adjustment is also an event of the audit trail (audit_log), written by the database in
-- the adjustment's own transaction: there is no adjustment without its audit event. The
-- principal is the caller as an admin/<id> (until callers authenticate, admin/ followed by the
-- unauthenticated peer).
CREATE FUNCTION jackpot_meter_adjustment_audited() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
  INSERT INTO audit_log (principal, action, detail) VALUES (
    CASE WHEN NEW.requested_by ~ '^admin/.+$' THEN NEW.requested_by
         ELSE 'admin/' || NEW.requested_by END,
    'meter.adjust',
    jsonb_build_object(
      'request_id', NEW.request_id, 'link_id', NEW.link_id, 'level', NEW.level::text,
      'amount_micros', NEW.amount_micros::text, 'reason', NEW.reason,
      'transfer_id', NEW.transfer_id::text, 'meter_after_micros', NEW.meter_after_micros::text));
  RETURN NULL;
END
$$;

CREATE TRIGGER meter_adjustments_audited AFTER INSERT ON meter_adjustments
  FOR EACH ROW EXECUTE FUNCTION jackpot_meter_adjustment_audited();
