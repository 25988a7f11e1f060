-- The journal's busiest references are checked once per INSERT statement, over all of its rows,
-- instead of once per row.
--
-- A foreign key runs one query per inserted row. A commit writes a few hundred rows in a handful
-- of statements, and those per-row queries were almost half of the server's work per command
-- (ops/bench at 64 tables: 10.4k requests/s with them, 13.8k with no checks at all). The
-- triggers below check the same references over each statement's new rows at once.
--
-- They are as strict as the foreign keys they replace, for these tables only: every parent is
-- append-only (no UPDATE, DELETE or TRUNCATE; migrations 0002 and 0005), so a parent that exists
-- when its child is written exists for good; and the children can only be inserted, which these
-- triggers check (COPY included). A violation fails the statement with SQLSTATE 23503
-- (foreign_key_violation), as a foreign key would, naming the check.
--
-- Each check is an anti-join that probes the parent's primary key once per distinct key of the
-- statement's rows (a round's six wagers name one round and one link). PL/pgSQL
-- plans it once per session and keeps the plan, so the functions rule out the plans that scan a
-- whole parent table (chosen while the tables are small, they would be kept as the tables grow).
--
-- Rarely written tables (payouts, payout_events, draws, ...) keep their foreign keys.

ALTER TABLE round_events DROP CONSTRAINT round_events_round_key_fkey;
ALTER TABLE wagers DROP CONSTRAINT wagers_round_key_fkey, DROP CONSTRAINT wagers_link_id_fkey;
ALTER TABLE hands DROP CONSTRAINT hands_wager_fkey;
ALTER TABLE transfers
  DROP CONSTRAINT transfers_link_id_fkey,
  DROP CONSTRAINT transfers_link_id_corrects_fkey;

-- A round event belongs to a round.
CREATE FUNCTION jackpot_round_events_refer() RETURNS trigger LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off AS $$
DECLARE
  orphan record;
BEGIN
  SELECT k.round_key INTO orphan FROM (SELECT DISTINCT round_key FROM new_round_events) k
  WHERE NOT EXISTS (SELECT FROM rounds r WHERE r.round_key = k.round_key)
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'round_events_round_exists: an event of round_key % has no round',
                    orphan.round_key
      USING ERRCODE = 'foreign_key_violation', TABLE = 'round_events',
            CONSTRAINT = 'round_events_round_exists';
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER round_events_round_exists AFTER INSERT ON round_events
  REFERENCING NEW TABLE AS new_round_events
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_round_events_refer();

-- A wager belongs to a round and to a link.
CREATE FUNCTION jackpot_wagers_refer() RETURNS trigger LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off AS $$
DECLARE
  orphan record;
BEGIN
  SELECT 'round_key ' || k.round_key AS parent INTO orphan
  FROM (SELECT DISTINCT round_key FROM new_wagers) k
  WHERE NOT EXISTS (SELECT FROM rounds r WHERE r.round_key = k.round_key)
  LIMIT 1;
  IF NOT FOUND THEN
    SELECT 'link ' || k.link_id AS parent INTO orphan
    FROM (SELECT DISTINCT link_id FROM new_wagers) k
    WHERE NOT EXISTS (SELECT FROM links l WHERE l.link_id = k.link_id)
    LIMIT 1;
  END IF;
  IF FOUND THEN
    RAISE EXCEPTION 'wagers_round_and_link_exist: a wager refers to %, which does not exist',
                    orphan.parent
      USING ERRCODE = 'foreign_key_violation', TABLE = 'wagers',
            CONSTRAINT = 'wagers_round_and_link_exist';
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER wagers_round_and_link_exist AFTER INSERT ON wagers
  REFERENCING NEW TABLE AS new_wagers
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_wagers_refer();

-- A hand belongs to the wager of its seat on its link in its round (which has its round and link).
CREATE FUNCTION jackpot_hands_refer() RETURNS trigger LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off AS $$
DECLARE
  orphan record;
BEGIN
  SELECT n.round_key, n.seat, n.link_id INTO orphan FROM new_hands n
  WHERE NOT EXISTS (SELECT FROM wagers w
                    WHERE w.round_key = n.round_key AND w.seat = n.seat
                      AND w.link_id = n.link_id)
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'hands_wager_exists: the hand of seat % on link % in round_key % has no wager',
                    orphan.seat, orphan.link_id, orphan.round_key
      USING ERRCODE = 'foreign_key_violation', TABLE = 'hands',
            CONSTRAINT = 'hands_wager_exists';
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER hands_wager_exists AFTER INSERT ON hands
  REFERENCING NEW TABLE AS new_hands
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_hands_refer();

-- A transfer belongs to a link; a correction refers to the transfer it corrects, on that link
-- (which may be in the same statement).
CREATE FUNCTION jackpot_transfers_refer() RETURNS trigger LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off AS $$
DECLARE
  orphan record;
BEGIN
  SELECT 'link ' || k.link_id AS parent INTO orphan
  FROM (SELECT DISTINCT link_id FROM new_transfers) k
  WHERE NOT EXISTS (SELECT FROM links l WHERE l.link_id = k.link_id)
  LIMIT 1;
  IF NOT FOUND THEN
    SELECT format('transfer %s of link %s', n.corrects, n.link_id) AS parent INTO orphan
    FROM new_transfers n
    WHERE n.corrects IS NOT NULL
      AND NOT EXISTS (SELECT FROM transfers t
                      WHERE t.link_id = n.link_id AND t.transfer_id = n.corrects)
    LIMIT 1;
  END IF;
  IF FOUND THEN
    RAISE EXCEPTION 'transfers_link_and_corrected_exist: a transfer refers to %, which does '
                    'not exist', orphan.parent
      USING ERRCODE = 'foreign_key_violation', TABLE = 'transfers',
            CONSTRAINT = 'transfers_link_and_corrected_exist';
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER transfers_link_and_corrected_exist AFTER INSERT ON transfers
  REFERENCING NEW TABLE AS new_transfers
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_transfers_refer();
