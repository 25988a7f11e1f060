-- Issue #33. One daemon writes a database's floor. The session that commits used to hold a
-- PostgreSQL advisory lock, which any role that may connect can take too: a read-only reporting
-- role holding it kept jackpotd down. Ownership is now a row only jackpotd's own role may lock or
-- change (floor_owner; nobody else is granted anything on it):
--
-- * jackpot_claim_floor(), called by the daemon's commit session, takes the row when its holder's
--   session is gone (pid and start, as pg_stat_activity shows them), bumps its token and keeps
--   the token in the session's setting jackpot.floor_token; it answers NULL while another live
--   session holds it;
-- * every commit mark (every batch and the floor's opening write one) is refused unless its
--   session holds the current token: a daemon whose floor was taken over commits nothing more.
CREATE TABLE floor_owner (
  only_one         boolean PRIMARY KEY DEFAULT true CHECK (only_one),
  token            bigint NOT NULL CHECK (token >= 0),
  backend_pid      integer NOT NULL,
  backend_start    timestamptz NOT NULL,
  application_name text NOT NULL,
  client_addr      text NOT NULL,
  claimed_at       timestamptz NOT NULL
);
-- Token 0: nobody has claimed the floor yet; the row always exists, so claims queue on its lock.
INSERT INTO floor_owner VALUES (true, 0, 0, '-infinity', '', '', '-infinity');
REVOKE ALL ON floor_owner FROM PUBLIC;
-- Nor a role that default privileges (ALTER DEFAULT PRIVILEGES) granted the new table to: one
-- that may UPDATE could lock the row and hold every claim (as 0022 does for the points).
DO $$
DECLARE
  grantee text;
BEGIN
  FOR grantee IN
    SELECT DISTINCT g.grantee::regrole::text
    FROM pg_class c, aclexplode(c.relacl) g
    WHERE c.oid = 'floor_owner'::regclass AND g.grantee <> c.relowner AND g.grantee <> 0
  LOOP
    EXECUTE format('REVOKE ALL ON floor_owner FROM %s', grantee);
  END LOOP;
END
$$;
-- Its one row changes with each claim; it is never removed (the refusal says append-only: no
-- change of that kind).
CREATE TRIGGER floor_owner_kept BEFORE DELETE ON floor_owner
  FOR EACH ROW EXECUTE FUNCTION jackpot_forbid_change();
CREATE TRIGGER floor_owner_no_truncate BEFORE TRUNCATE ON floor_owner
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_forbid_change();

CREATE FUNCTION jackpot_claim_floor() RETURNS bigint
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  held floor_owner;
  mine record;
BEGIN
  SELECT * INTO held FROM floor_owner FOR UPDATE;
  SELECT pid, backend_start, coalesce(application_name, '') AS application_name,
         coalesce(client_addr::text, 'local') AS client_addr
    INTO mine FROM pg_stat_activity WHERE pid = pg_backend_pid();
  -- A session of another role shows no start (pg_stat_activity hides it): taken for alive.
  IF held.backend_pid <> mine.pid AND EXISTS (
       SELECT FROM pg_stat_activity a
       WHERE a.pid = held.backend_pid
         AND (a.backend_start IS NULL OR a.backend_start = held.backend_start)) THEN
    RETURN NULL;  -- Another live session holds the floor.
  END IF;
  UPDATE floor_owner
     SET token = held.token + 1, backend_pid = mine.pid, backend_start = mine.backend_start,
         application_name = mine.application_name, client_addr = mine.client_addr,
         claimed_at = clock_timestamp();
  PERFORM set_config('jackpot.floor_token', (held.token + 1)::text, false);
  RETURN held.token + 1;
END
$$;
REVOKE ALL ON FUNCTION jackpot_claim_floor() FROM PUBLIC;
DO $$
DECLARE
  grantee text;
BEGIN
  FOR grantee IN
    SELECT DISTINCT g.grantee::regrole::text
    FROM pg_proc p, aclexplode(p.proacl) g
    WHERE p.oid = 'jackpot_claim_floor()'::regprocedure AND g.grantee <> p.proowner
      AND g.grantee <> 0
  LOOP
    EXECUTE format('REVOKE ALL ON FUNCTION jackpot_claim_floor() FROM %s', grantee);
  END LOOP;
END
$$;

CREATE FUNCTION jackpot_floor_owned() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
  -- FOR SHARE: a claim waits for a batch in flight, and a batch after a claim sees its token.
  IF current_setting('jackpot.floor_token', true) IS DISTINCT FROM
     (SELECT token::text FROM floor_owner FOR SHARE) THEN
    RAISE EXCEPTION 'floor_not_owned: this session does not hold the floor (floor_owner): '
                    'another jackpotd claimed it, or this one never did'
      USING ERRCODE = 'object_not_in_prerequisite_state';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER commit_marks_floor_owned AFTER INSERT ON commit_marks
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_floor_owned();
