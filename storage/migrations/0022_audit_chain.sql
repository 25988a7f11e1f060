-- The audit trail becomes a hash chain, every act of a principal that the journal records goes on
-- it in the act's own transaction, and a hidden Must-Hit-By point and its salt move where only
-- the daemon's database role can read them until the hit reveals them.
--
-- 1. The chain. Each audit_log row carries
--      seq        1, 2, 3, ... with no gap, in the order the rows were chained;
--      prev_hash  the hash of row seq - 1 (32 zero bytes for row 1);
--      hash       SHA-256(prev_hash || i64(seq) || i64(at_us) || str(principal) || str(action)
--                         || str(detail))
--    where i64(x) is x as 8 bytes, big-endian two's complement; at_us is `at` in microseconds
--    since 1970-01-01 00:00:00 UTC; str(s) is i64(the byte length of s) followed by s in UTF-8;
--    and detail is the jsonb object as PostgreSQL prints it (detail::text). A trigger chains every
--    row as it is inserted, whoever inserts it, holding the chain head (audit_chain_head) from
--    the transaction's first row until it ends: rows are chained one transaction at a time, and
--    a transaction that rolls back leaves no link. Changing, removing or reordering a row breaks the chain from that
--    row on (storage/audit_chain.h verifies it; `jackpotctl audit verify` walks it); the head
--    names the last row, so removing rows at the end shows too.
-- 2. Acts on the chain, written by triggers on the journal in the same transaction: a
--    supervisor's approval or rejection of a payout, a table's void (with its reason), the round
--    commands of each table in each committed batch (counted: each command is in round_events),
--    a link status change with who asked and why, a Must-Hit-By hit with its hidden point and
--    salt revealed, and each hidden point's commitment as it is made. Adjustments and re-bases
--    were already audited (0017, 0018).
-- 3. A hidden trigger's point and salt leave `draws` for jackpot_private.trigger_secrets. The
--    schema is closed to PUBLIC: a reporting role granted SELECT on the tables of schema public
--    reads the commitment (draws.trigger_commitment) and, after the hit, the audit trail's
--    revealed point and salt, never the point before it.

-- 1. The chain.
CREATE FUNCTION jackpot_audit_text(value text) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT int8send(octet_length(convert_to(value, 'UTF8'))::bigint) || convert_to(value, 'UTF8')
$$;

CREATE FUNCTION jackpot_audit_hash(prev_hash bytea, seq bigint, at timestamptz, principal text,
                                   action text, detail jsonb) RETURNS bytea
LANGUAGE sql STABLE STRICT AS $$
  SELECT sha256(prev_hash || int8send(seq)
                || int8send((extract(epoch FROM at) * 1000000)::bigint)
                || jackpot_audit_text(principal) || jackpot_audit_text(action)
                || jackpot_audit_text(detail::text))
$$;

CREATE TABLE audit_chain_head (
  one   boolean PRIMARY KEY DEFAULT true CHECK (one),
  seq   bigint NOT NULL CHECK (seq >= 0),
  hash  bytea NOT NULL CHECK (length(hash) = 32)
);

-- The head is updated as rows are chained; it is never removed or emptied.
CREATE TRIGGER audit_chain_head_kept BEFORE DELETE ON audit_chain_head
  FOR EACH ROW EXECUTE FUNCTION jackpot_forbid_change();
CREATE TRIGGER audit_chain_head_no_truncate BEFORE TRUNCATE ON audit_chain_head
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_forbid_change();

ALTER TABLE audit_log ADD COLUMN seq bigint, ADD COLUMN prev_hash bytea, ADD COLUMN hash bytea;

-- The rows already written, chained in the order they were written.
ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only;
DO $$
DECLARE
  event record;
  previous bytea := decode(repeat('00', 32), 'hex');
  chained bigint := 0;
  digest bytea;
BEGIN
  FOR event IN SELECT id, at, principal, action, detail FROM audit_log ORDER BY id LOOP
    chained := chained + 1;
    digest := jackpot_audit_hash(previous, chained, event.at, event.principal, event.action,
                                 event.detail);
    UPDATE audit_log SET seq = chained, prev_hash = previous, hash = digest WHERE id = event.id;
    previous := digest;
  END LOOP;
  INSERT INTO audit_chain_head (seq, hash) VALUES (chained, previous);
END
$$;
ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only;

ALTER TABLE audit_log
  ALTER COLUMN seq SET NOT NULL,
  ALTER COLUMN prev_hash SET NOT NULL,
  ALTER COLUMN hash SET NOT NULL,
  ADD CONSTRAINT audit_log_seq_unique UNIQUE (seq),
  ADD CONSTRAINT audit_log_seq_positive CHECK (seq >= 1),
  ADD CONSTRAINT audit_log_hash_lengths CHECK (length(prev_hash) = 32 AND length(hash) = 32);

-- Chaining a row: the first row a transaction inserts locks the head (until the transaction
-- ends) and reads it; the transaction's rows after it follow the last one it chained, kept in a
-- transaction-local setting (jackpot.audit_link, "xid:seq:hash") that a rolled back
-- subtransaction takes back with its rows; the head is written once per statement. So a batch
-- that writes many events locks and updates the head once, not once per event. Without JIT: a
-- caller's planner settings (the audit triggers below turn sequential scans off) would otherwise
-- make these small statements look costly enough to compile.
CREATE FUNCTION jackpot_audit_chain() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp SET jit = off AS $$
DECLARE
  link text[] := string_to_array(current_setting('jackpot.audit_link', true), ':');
  xid text := txid_current()::text;
  last_seq bigint;
  last_hash bytea;
BEGIN
  IF link IS NULL OR cardinality(link) <> 3 OR link[1] <> xid THEN
    SELECT h.seq, h.hash INTO STRICT last_seq, last_hash FROM audit_chain_head h
      WHERE one FOR UPDATE;
  ELSE
    last_seq := link[2]::bigint;
    last_hash := decode(link[3], 'hex');
  END IF;
  NEW.seq := last_seq + 1;
  NEW.prev_hash := last_hash;
  NEW.hash := jackpot_audit_hash(NEW.prev_hash, NEW.seq, NEW.at, NEW.principal, NEW.action,
                                 NEW.detail);
  PERFORM set_config('jackpot.audit_link',
                     xid || ':' || NEW.seq::text || ':' || encode(NEW.hash, 'hex'), true);
  RETURN NEW;
END
$$;

CREATE TRIGGER audit_log_chained BEFORE INSERT ON audit_log
  FOR EACH ROW EXECUTE FUNCTION jackpot_audit_chain();

-- The head, once per statement that inserted rows: its last row, which must follow the head (a
-- link forged in the setting cannot move the head back or to a row that does not exist).
CREATE FUNCTION jackpot_audit_head() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp SET jit = off AS $$
DECLARE
  last_seq bigint;
  last_hash bytea;
BEGIN
  SELECT e.seq, e.hash INTO last_seq, last_hash FROM new_events e ORDER BY e.seq DESC LIMIT 1;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  UPDATE audit_chain_head SET seq = last_seq, hash = last_hash WHERE one AND seq < last_seq;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'audit_chain_head: event % does not follow the chain''s head', last_seq
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER audit_log_head AFTER INSERT ON audit_log
  REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_audit_head();

-- A principal as the audit trail names it: kept when it names its role, else under `role`.
CREATE FUNCTION jackpot_audit_principal(requester text, role text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN requester ~ '^(table|sign|supervisor|admin|daemon)/.+$' THEN requester
              WHEN coalesce(requester, '') = '' THEN 'daemon/jackpotd'
              ELSE role || '/' || requester END
$$;

-- 2. Acts on the chain.

-- A supervisor's decision on a payout: its events that carry the decision's request id (an
-- approval, the approval that paid, a rejection).
CREATE FUNCTION jackpot_payout_decisions_audited() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp
  -- Probes its parents' keys, never scanning a whole table (as the reference checks, 0008).
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off AS $$
BEGIN
  INSERT INTO audit_log (at, principal, action, detail)
  SELECT e.at, jackpot_audit_principal(e.supervisor, 'supervisor'),
         CASE e.state WHEN 'rejected' THEN 'payout.reject' ELSE 'payout.approve' END,
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

CREATE TRIGGER payout_events_audited AFTER INSERT ON payout_events
  REFERENCING NEW TABLE AS new_payout_events
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_payout_decisions_audited();

-- A table's round commands: one event per table per statement (a committed batch writes its
-- round events in one statement) counting them, and one per void with its reason.
CREATE FUNCTION jackpot_round_events_audited() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp
  -- Probes its parents' keys, never scanning a whole table (as the reference checks, 0008).
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off AS $$
BEGIN
  INSERT INTO audit_log (at, principal, action, detail)
  SELECT max(e.at), 'table/' || r.table_id, 'round.commands',
         jsonb_build_object('opened', count(*) FILTER (WHERE e.phase = 'open')::text,
                            'locked', count(*) FILTER (WHERE e.phase = 'locked')::text,
                            'settled', count(*) FILTER (WHERE e.phase = 'settled')::text,
                            'voided', count(*) FILTER (WHERE e.phase = 'voided')::text,
                            'first_round_id', min(r.round_id)::text,
                            'last_round_id', max(r.round_id)::text)
  FROM new_round_events e JOIN rounds r USING (round_key)
  GROUP BY r.table_id
  ORDER BY r.table_id;
  IF NOT EXISTS (SELECT FROM new_round_events WHERE phase = 'voided') THEN
    RETURN NULL;
  END IF;
  INSERT INTO audit_log (at, principal, action, detail)
  SELECT e.at, 'table/' || r.table_id, 'round.void',
         jsonb_build_object('round_id', r.round_id::text, 'epoch', r.epoch::text,
                            'reason', e.reason)
  FROM new_round_events e JOIN rounds r USING (round_key)
  WHERE e.phase = 'voided'
  ORDER BY r.table_id, r.round_id;
  RETURN NULL;
END
$$;

CREATE TRIGGER round_events_audited AFTER INSERT ON round_events
  REFERENCING NEW TABLE AS new_round_events
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_round_events_audited();

CREATE FUNCTION jackpot_link_status_audited() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp
  -- Probes its parents' keys, never scanning a whole table (as the reference checks, 0008).
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off AS $$
BEGIN
  INSERT INTO audit_log (at, principal, action, detail)
  SELECT s.at, jackpot_audit_principal(s.changed_by, 'admin'), 'link.status',
         jsonb_build_object('link_id', s.link_id, 'status', s.status, 'reason', s.reason)
  FROM new_link_status_events s
  ORDER BY s.seq;
  RETURN NULL;
END
$$;

CREATE TRIGGER link_status_events_audited AFTER INSERT ON link_status_events
  REFERENCING NEW TABLE AS new_link_status_events
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_link_status_audited();

-- 3. Hidden points and salts, closed to every role but the owner (the daemon's).
CREATE SCHEMA jackpot_private;
REVOKE ALL ON SCHEMA jackpot_private FROM PUBLIC;

CREATE TABLE jackpot_private.trigger_secrets (
  draw_id       bigint PRIMARY KEY REFERENCES public.draws,
  point_micros  bigint NOT NULL CHECK (point_micros > 0),
  salt          bytea NOT NULL CHECK (length(salt) = 32)
);
-- Nobody but the owner: also not a role that default privileges (ALTER DEFAULT PRIVILEGES)
-- granted the new table or schema to.
REVOKE ALL ON jackpot_private.trigger_secrets FROM PUBLIC;
DO $$
DECLARE
  grantee text;
BEGIN
  FOR grantee IN
    SELECT DISTINCT g.grantee::regrole::text
    FROM pg_class c, aclexplode(c.relacl) g
    WHERE c.oid = 'jackpot_private.trigger_secrets'::regclass AND g.grantee <> c.relowner
      AND g.grantee <> 0
    UNION
    SELECT DISTINCT g.grantee::regrole::text
    FROM pg_namespace n, aclexplode(n.nspacl) g
    WHERE n.nspname = 'jackpot_private' AND g.grantee <> n.nspowner AND g.grantee <> 0
  LOOP
    EXECUTE format('REVOKE ALL ON jackpot_private.trigger_secrets FROM %s', grantee);
    EXECUTE format('REVOKE ALL ON SCHEMA jackpot_private FROM %s', grantee);
  END LOOP;
END
$$;

CREATE TRIGGER trigger_secrets_append_only BEFORE UPDATE OR DELETE
  ON jackpot_private.trigger_secrets
  FOR EACH ROW EXECUTE FUNCTION public.jackpot_forbid_change();
CREATE TRIGGER trigger_secrets_no_truncate BEFORE TRUNCATE ON jackpot_private.trigger_secrets
  FOR EACH STATEMENT EXECUTE FUNCTION public.jackpot_forbid_change();

INSERT INTO jackpot_private.trigger_secrets (draw_id, point_micros, salt)
SELECT draw_id, trigger_point_micros, trigger_salt FROM draws WHERE kind = 'hidden_trigger';

ALTER TABLE draws DROP COLUMN trigger_point_micros, DROP COLUMN trigger_salt;

-- The commitments in force when this migration runs go on the chain as they are (at the time
-- each was drawn), so that their hits open a commitment the chain holds. Their points were
-- readable in `draws` until now (docs/audit.md says so).
INSERT INTO audit_log (at, principal, action, detail)
SELECT d.drawn_at, 'daemon/jackpotd', 'must_hit_by.commit',
       jsonb_build_object('draw_id', d.draw_id::text, 'link_id', d.link_id,
                          'level', d.level::text,
                          'commitment', encode(d.trigger_commitment, 'hex'),
                          'above_micros', d.trigger_above_micros::text,
                          'up_to_micros', d.trigger_up_to_micros::text,
                          'recorded', 'at migration 0022')
FROM (SELECT DISTINCT ON (link_id, level) * FROM draws WHERE kind = 'hidden_trigger'
      ORDER BY link_id, level, draw_id DESC) d
ORDER BY d.draw_id;

-- Every hidden point's commitment on the chain when it is made: the time it was fixed, before
-- any play that could hit it.
CREATE FUNCTION jackpot_trigger_commitments_audited() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp
  -- Probes its parents' keys, never scanning a whole table (as the reference checks, 0008).
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off AS $$
BEGIN
  INSERT INTO audit_log (at, principal, action, detail)
  SELECT d.drawn_at, coalesce('table/' || r.table_id, 'daemon/jackpotd'),
         'must_hit_by.commit',
         jsonb_build_object('draw_id', d.draw_id::text, 'link_id', d.link_id,
                            'level', d.level::text,
                            'commitment', encode(d.trigger_commitment, 'hex'),
                            'above_micros', d.trigger_above_micros::text,
                            'up_to_micros', d.trigger_up_to_micros::text)
  FROM new_draws d LEFT JOIN rounds r USING (round_key)
  WHERE d.kind = 'hidden_trigger'
  ORDER BY d.draw_id;
  RETURN NULL;
END
$$;

CREATE TRIGGER draws_commitments_audited AFTER INSERT ON draws
  REFERENCING NEW TABLE AS new_draws
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_trigger_commitments_audited();

-- A Must-Hit-By hit on the chain, by the table whose lock hit it, with the hidden point that was
-- hit and its salt revealed (the last hidden point committed for the level before the hit's
-- winner draw), so that anyone can check SHA-256(i64(point_micros) || salt) against the
-- commitment made earlier in the chain.
CREATE FUNCTION jackpot_must_hit_by_hits_audited() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp
  -- Probes its parents' keys, never scanning a whole table (as the reference checks, 0008).
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off AS $$
BEGIN
  INSERT INTO audit_log (principal, action, detail)
  SELECT 'table/' || r.table_id, 'must_hit_by.hit',
         jsonb_build_object('link_id', h.link_id, 'level', h.level::text,
                            'round_id', r.round_id::text, 'seat', h.seat::text,
                            'amount_micros', h.amount_micros::text,
                            'payout_id', h.payout_id::text, 'winner_draw_id', h.draw_id::text)
         || coalesce((
           SELECT jsonb_build_object('trigger_draw_id', t.draw_id::text,
                                     'commitment', encode(t.trigger_commitment, 'hex'),
                                     'point_micros', s.point_micros::text,
                                     'salt', encode(s.salt, 'hex'))
           FROM draws t JOIN jackpot_private.trigger_secrets s USING (draw_id)
           WHERE t.link_id = h.link_id AND t.level = h.level AND t.kind = 'hidden_trigger'
             AND t.draw_id < h.draw_id
           ORDER BY t.draw_id DESC LIMIT 1), '{}'::jsonb)
  FROM new_hits h JOIN rounds r USING (round_key)
  ORDER BY h.link_id, h.level;
  RETURN NULL;
END
$$;

CREATE TRIGGER must_hit_by_hits_audited AFTER INSERT ON must_hit_by_hits
  REFERENCING NEW TABLE AS new_hits
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_must_hit_by_hits_audited();
