-- The rest of the round path's references are checked once per statement too (see migration
-- 0008 for why and for what makes it as strict as a foreign key): payouts and their events,
-- which every winning seat writes, and draws and Dynamic Pay selections, which every round of a
-- Dynamic Pay link writes (up to eleven draws and five selections a round, each with two keys).
-- must_hit_by_hits and link_status_events, rare, keep their foreign keys; so payouts, draws,
-- rounds, links and transfers each stay the target of at least one foreign key.
--
-- Each table's checks are one query (the first orphan of any reference), so one plan and one
-- execution per statement; the checks of migration 0008 that took two queries are rewritten
-- the same way.

ALTER TABLE payouts
  DROP CONSTRAINT payouts_link_id_fkey,
  DROP CONSTRAINT payouts_table_id_round_id_fkey,
  DROP CONSTRAINT payouts_link_id_award_transfer_id_fkey;
ALTER TABLE payout_events DROP CONSTRAINT payout_events_payout_id_fkey;
ALTER TABLE draws DROP CONSTRAINT draws_round_key_fkey, DROP CONSTRAINT draws_link_id_fkey;
ALTER TABLE dynamic_pays
  DROP CONSTRAINT dynamic_pays_round_key_fkey,
  DROP CONSTRAINT dynamic_pays_link_id_fkey;

-- A payout belongs to its link, to its round (by table and round id) and to the transfer that
-- posted its award.
CREATE FUNCTION jackpot_payouts_refer() RETURNS trigger LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
  SET search_path = public, pg_temp AS $$
DECLARE
  orphan record;
BEGIN
  SELECT parent INTO orphan FROM (
    (SELECT 'link ' || k.link_id AS parent FROM (SELECT DISTINCT link_id FROM new_payouts) k
     WHERE NOT EXISTS (SELECT FROM links l WHERE l.link_id = k.link_id) LIMIT 1)
    UNION ALL
    (SELECT format('round %s at table %s', k.round_id, k.table_id)
     FROM (SELECT DISTINCT table_id, round_id FROM new_payouts) k
     WHERE NOT EXISTS (SELECT FROM rounds r
                       WHERE r.table_id = k.table_id AND r.round_id = k.round_id) LIMIT 1)
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
CREATE TRIGGER payouts_references_exist AFTER INSERT ON payouts
  REFERENCING NEW TABLE AS new_payouts
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_payouts_refer();

-- A payout's event belongs to the payout.
CREATE FUNCTION jackpot_payout_events_refer() RETURNS trigger LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
  SET search_path = public, pg_temp AS $$
DECLARE
  orphan record;
BEGIN
  SELECT k.payout_id INTO orphan FROM (SELECT DISTINCT payout_id FROM new_payout_events) k
  WHERE NOT EXISTS (SELECT FROM payouts p WHERE p.payout_id = k.payout_id)
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'payout_events_payout_exists: an event of payout % has no payout',
                    orphan.payout_id
      USING ERRCODE = 'foreign_key_violation', TABLE = 'payout_events',
            CONSTRAINT = 'payout_events_payout_exists';
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER payout_events_payout_exists AFTER INSERT ON payout_events
  REFERENCING NEW TABLE AS new_payout_events
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_payout_events_refer();

-- A draw belongs to its link and, when it has one, to its round.
CREATE FUNCTION jackpot_draws_refer() RETURNS trigger LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
  SET search_path = public, pg_temp AS $$
DECLARE
  orphan record;
BEGIN
  SELECT parent INTO orphan FROM (
    (SELECT 'link ' || k.link_id AS parent FROM (SELECT DISTINCT link_id FROM new_draws) k
     WHERE NOT EXISTS (SELECT FROM links l WHERE l.link_id = k.link_id) LIMIT 1)
    UNION ALL
    (SELECT 'round_key ' || k.round_key
     FROM (SELECT DISTINCT round_key FROM new_draws WHERE round_key IS NOT NULL) k
     WHERE NOT EXISTS (SELECT FROM rounds r WHERE r.round_key = k.round_key) LIMIT 1)
  ) orphans LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'draws_references_exist: a draw refers to %, which does not exist',
                    orphan.parent
      USING ERRCODE = 'foreign_key_violation', TABLE = 'draws',
            CONSTRAINT = 'draws_references_exist';
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER draws_references_exist AFTER INSERT ON draws
  REFERENCING NEW TABLE AS new_draws
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_draws_refer();

-- A Dynamic Pay selection belongs to its round and its link.
CREATE FUNCTION jackpot_dynamic_pays_refer() RETURNS trigger LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
  SET search_path = public, pg_temp AS $$
DECLARE
  orphan record;
BEGIN
  SELECT parent INTO orphan FROM (
    (SELECT 'link ' || k.link_id AS parent FROM (SELECT DISTINCT link_id FROM new_dynamic_pays) k
     WHERE NOT EXISTS (SELECT FROM links l WHERE l.link_id = k.link_id) LIMIT 1)
    UNION ALL
    (SELECT 'round_key ' || k.round_key FROM (SELECT DISTINCT round_key FROM new_dynamic_pays) k
     WHERE NOT EXISTS (SELECT FROM rounds r WHERE r.round_key = k.round_key) LIMIT 1)
  ) orphans LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'dynamic_pays_references_exist: a Dynamic Pay selection refers to %, which '
                    'does not exist', orphan.parent
      USING ERRCODE = 'foreign_key_violation', TABLE = 'dynamic_pays',
            CONSTRAINT = 'dynamic_pays_references_exist';
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER dynamic_pays_references_exist AFTER INSERT ON dynamic_pays
  REFERENCING NEW TABLE AS new_dynamic_pays
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_dynamic_pays_refer();

-- Migration 0008's two-query checks, as one query each.
CREATE OR REPLACE FUNCTION jackpot_wagers_refer() RETURNS trigger LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
  SET search_path = public, pg_temp AS $$
DECLARE
  orphan record;
BEGIN
  SELECT parent INTO orphan FROM (
    (SELECT 'round_key ' || k.round_key AS parent
     FROM (SELECT DISTINCT round_key FROM new_wagers) k
     WHERE NOT EXISTS (SELECT FROM rounds r WHERE r.round_key = k.round_key) LIMIT 1)
    UNION ALL
    (SELECT 'link ' || k.link_id FROM (SELECT DISTINCT link_id FROM new_wagers) k
     WHERE NOT EXISTS (SELECT FROM links l WHERE l.link_id = k.link_id) LIMIT 1)
  ) orphans LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'wagers_round_and_link_exist: a wager refers to %, which does not exist',
                    orphan.parent
      USING ERRCODE = 'foreign_key_violation', TABLE = 'wagers',
            CONSTRAINT = 'wagers_round_and_link_exist';
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION jackpot_transfers_refer() RETURNS trigger LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
  SET search_path = public, pg_temp AS $$
DECLARE
  orphan record;
BEGIN
  SELECT parent INTO orphan FROM (
    (SELECT 'link ' || k.link_id AS parent FROM (SELECT DISTINCT link_id FROM new_transfers) k
     WHERE NOT EXISTS (SELECT FROM links l WHERE l.link_id = k.link_id) LIMIT 1)
    UNION ALL
    (SELECT format('transfer %s of link %s', n.corrects, n.link_id) FROM new_transfers n
     WHERE n.corrects IS NOT NULL
       AND NOT EXISTS (SELECT FROM transfers t
                       WHERE t.link_id = n.link_id AND t.transfer_id = n.corrects)
     LIMIT 1)
  ) orphans LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'transfers_link_and_corrected_exist: a transfer refers to %, which does '
                    'not exist', orphan.parent
      USING ERRCODE = 'foreign_key_violation', TABLE = 'transfers',
            CONSTRAINT = 'transfers_link_and_corrected_exist';
  END IF;
  RETURN NULL;
END
$$;
