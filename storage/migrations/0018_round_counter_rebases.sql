-- Re-basing a table's round counter (SupervisorService.RebaseRoundCounter): after a controller
-- card swap a table's game counter may restart at 1, below round ids the table already used. A
-- supervisor re-bases the counter; the table's rounds after it belong to a new counter epoch, so
-- old round ids can be used again without clashing with the rounds already journaled.
--
-- * rounds and payouts carry the table's counter epoch (0 before the table's first re-base); a
--   round is unique by table, epoch and round id, and a payout refers to its round by the same;
-- * round_counter_rebases journals each re-base: who asked, why, the table's latest round id
--   before it and the next round id after it, keyed by the caller's request id (a repeat answers
--   the same, a different request with the same id is refused). Append-only;
-- * each re-base also goes to the audit trail (audit_log), by a trigger in the same transaction.

ALTER TABLE rounds ADD COLUMN epoch bigint NOT NULL DEFAULT 0 CHECK (epoch >= 0);
ALTER TABLE rounds DROP CONSTRAINT rounds_table_id_round_id_key;
-- Also the index recovery reads each table's latest two rounds through (storage/state_loader.cc).
ALTER TABLE rounds ADD CONSTRAINT rounds_table_epoch_round_key UNIQUE (table_id, epoch, round_id);

ALTER TABLE payouts ADD COLUMN epoch bigint NOT NULL DEFAULT 0 CHECK (epoch >= 0);

CREATE OR REPLACE FUNCTION jackpot_payouts_refer() RETURNS trigger LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
  SET search_path = public, pg_temp AS $$
DECLARE
  orphan record;
BEGIN
  SELECT parent INTO orphan FROM (
    (SELECT 'link ' || k.link_id AS parent FROM (SELECT DISTINCT link_id FROM new_payouts) k
     WHERE NOT EXISTS (SELECT FROM links l WHERE l.link_id = k.link_id) LIMIT 1)
    UNION ALL
    (SELECT format('round %s (counter epoch %s) at table %s', k.round_id, k.epoch, k.table_id)
     FROM (SELECT DISTINCT table_id, epoch, round_id FROM new_payouts) k
     WHERE NOT EXISTS (SELECT FROM rounds r WHERE r.table_id = k.table_id AND r.epoch = k.epoch
                                              AND r.round_id = k.round_id) LIMIT 1)
    UNION ALL
    (SELECT format('transfer %s of link %s', n.award_transfer_id, n.link_id) FROM new_payouts n
     WHERE NOT EXISTS (SELECT FROM transfers t
                       WHERE t.link_id = n.link_id AND t.transfer_id = n.award_transfer_id)
     LIMIT 1)
  ) orphans LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'payouts_references_exist: a payout refers to %, which does not exist',
                    orphan.parent
      USING ERRCODE = 'foreign_key_violation', TABLE = 'payouts',
            CONSTRAINT = 'payouts_references_exist';
  END IF;
  RETURN NULL;
END
$$;

CREATE TABLE round_counter_rebases (
  request_id     text PRIMARY KEY CHECK (request_id <> ''),
  table_id       text NOT NULL CHECK (table_id <> ''),
  -- The table's counter epoch from this re-base on: 1 for its first re-base, then 2, ...
  epoch          bigint NOT NULL CHECK (epoch >= 1),
  -- The table's latest round id before the re-base (0 when it had none), and the first round id
  -- it may open after it.
  last_round_id  bigint NOT NULL CHECK (last_round_id >= 0),
  next_round_id  bigint NOT NULL CHECK (next_round_id >= 1),
  reason         text NOT NULL CHECK (reason <> ''),
  requested_by   text NOT NULL CHECK (requested_by ~ '^supervisor/.+$'),
  at             timestamptz NOT NULL,
  UNIQUE (table_id, epoch)
);

CREATE TRIGGER round_counter_rebases_append_only BEFORE UPDATE OR DELETE ON round_counter_rebases
  FOR EACH ROW EXECUTE FUNCTION jackpot_forbid_change();
CREATE TRIGGER round_counter_rebases_no_truncate BEFORE TRUNCATE ON round_counter_rebases
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_forbid_change();

CREATE FUNCTION jackpot_round_counter_rebases_audit() RETURNS trigger LANGUAGE plpgsql
  SET search_path = public, pg_temp AS $$
BEGIN
  INSERT INTO audit_log (at, principal, action, detail)
  VALUES (NEW.at, NEW.requested_by, 'round_counter.rebase',
          jsonb_build_object('request_id', NEW.request_id, 'table_id', NEW.table_id,
                             'epoch', NEW.epoch::text, 'last_round_id', NEW.last_round_id::text,
                             'next_round_id', NEW.next_round_id::text, 'reason', NEW.reason));
  RETURN NULL;
END
$$;
CREATE TRIGGER round_counter_rebases_audit AFTER INSERT ON round_counter_rebases
  FOR EACH ROW EXECUTE FUNCTION jackpot_round_counter_rebases_audit();

CREATE OR REPLACE VIEW journal_orphans AS
SELECT 'round_events -> rounds' AS reference, format('round_key %s', c.round_key) AS row
FROM round_events c WHERE NOT EXISTS (SELECT FROM rounds p WHERE p.round_key = c.round_key)
UNION ALL
SELECT 'wagers -> rounds', format('round_key %s seat %s link %s', c.round_key, c.seat, c.link_id)
FROM wagers c WHERE NOT EXISTS (SELECT FROM rounds p WHERE p.round_key = c.round_key)
UNION ALL
SELECT 'wagers -> links', format('round_key %s seat %s link %s', c.round_key, c.seat, c.link_id)
FROM wagers c WHERE NOT EXISTS (SELECT FROM links p WHERE p.link_id = c.link_id)
UNION ALL
SELECT 'hands -> wagers', format('round_key %s seat %s link %s', c.round_key, c.seat, c.link_id)
FROM hands c
WHERE NOT EXISTS (SELECT FROM wagers p WHERE p.round_key = c.round_key AND p.seat = c.seat
                                         AND p.link_id = c.link_id)
UNION ALL
SELECT 'transfers -> links', format('transfer %s of link %s', c.transfer_id, c.link_id)
FROM transfers c WHERE NOT EXISTS (SELECT FROM links p WHERE p.link_id = c.link_id)
UNION ALL
SELECT 'transfers -> corrected transfer',
       format('transfer %s of link %s corrects %s', c.transfer_id, c.link_id, c.corrects)
FROM transfers c
WHERE c.corrects IS NOT NULL
  AND NOT EXISTS (SELECT FROM transfers p WHERE p.link_id = c.link_id
                                            AND p.transfer_id = c.corrects)
UNION ALL
SELECT 'payouts -> links', format('payout %s', c.payout_id)
FROM payouts c WHERE NOT EXISTS (SELECT FROM links p WHERE p.link_id = c.link_id)
UNION ALL
SELECT 'payouts -> rounds', format('payout %s', c.payout_id)
FROM payouts c
WHERE NOT EXISTS (SELECT FROM rounds p WHERE p.table_id = c.table_id AND p.epoch = c.epoch
                                          AND p.round_id = c.round_id)
UNION ALL
SELECT 'payouts -> award transfer', format('payout %s', c.payout_id)
FROM payouts c
WHERE NOT EXISTS (SELECT FROM transfers p WHERE p.link_id = c.link_id
                                            AND p.transfer_id = c.award_transfer_id)
UNION ALL
SELECT 'payout_events -> payouts', format('payout %s event %s', c.payout_id, c.seq)
FROM payout_events c WHERE NOT EXISTS (SELECT FROM payouts p WHERE p.payout_id = c.payout_id)
UNION ALL
SELECT 'draws -> links', format('draw %s', c.draw_id)
FROM draws c WHERE NOT EXISTS (SELECT FROM links p WHERE p.link_id = c.link_id)
UNION ALL
SELECT 'draws -> rounds', format('draw %s', c.draw_id)
FROM draws c
WHERE c.round_key IS NOT NULL
  AND NOT EXISTS (SELECT FROM rounds p WHERE p.round_key = c.round_key)
UNION ALL
SELECT 'dynamic_pays -> rounds', format('round_key %s link %s row %s', c.round_key, c.link_id,
                                        c.row_index)
FROM dynamic_pays c WHERE NOT EXISTS (SELECT FROM rounds p WHERE p.round_key = c.round_key)
UNION ALL
SELECT 'dynamic_pays -> links', format('round_key %s link %s row %s', c.round_key, c.link_id,
                                       c.row_index)
FROM dynamic_pays c WHERE NOT EXISTS (SELECT FROM links p WHERE p.link_id = c.link_id);
