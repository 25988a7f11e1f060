-- What lets a daemon tell that the database it reads is behind what it acknowledged (a standby
-- promoted without the last transactions, a restore from an older backup): every batch the
-- daemon commits carries the next number of one sequence, in the batch's own transaction, so
-- the highest number here is the last batch the database holds. The daemon remembers the
-- highest number it saw committed (in memory, and in its --state-file) and refuses to serve a
-- database whose highest number is lower.

-- The journal's identity, made once when this migration runs: a copy of the database (a
-- standby, a restored backup) keeps it, an unrelated database has another.
CREATE TABLE journal_identity (
  journal_id  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  only_one    boolean NOT NULL DEFAULT true UNIQUE CHECK (only_one)
);
INSERT INTO journal_identity DEFAULT VALUES;

CREATE TRIGGER journal_identity_append_only BEFORE UPDATE OR DELETE ON journal_identity
  FOR EACH ROW EXECUTE FUNCTION jackpot_forbid_change();
CREATE TRIGGER journal_identity_no_truncate BEFORE TRUNCATE ON journal_identity
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_forbid_change();

-- One row per committed batch (and per write of opening records at start).
CREATE TABLE commit_marks (
  batch         bigint PRIMARY KEY CHECK (batch >= 1),
  committed_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Each batch's number follows the last one exactly. Two writers that both got past the advisory
-- lock (it is held by the committing session, so only a bug or an operator could do that) would
-- number their batches from the same last one: one of them is refused here, or by the primary
-- key when both insert the same number at once.
CREATE FUNCTION jackpot_commit_mark_follows() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  last bigint;
BEGIN
  SELECT coalesce(max(batch), 0) INTO last FROM commit_marks;
  IF NEW.batch <> last + 1 THEN
    RAISE EXCEPTION 'commit mark % does not follow the database''s last batch %', NEW.batch, last
      USING ERRCODE = 'serialization_failure';
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER commit_marks_follow BEFORE INSERT ON commit_marks
  FOR EACH ROW EXECUTE FUNCTION jackpot_commit_mark_follows();
CREATE TRIGGER commit_marks_append_only BEFORE UPDATE OR DELETE ON commit_marks
  FOR EACH ROW EXECUTE FUNCTION jackpot_forbid_change();
CREATE TRIGGER commit_marks_no_truncate BEFORE TRUNCATE ON commit_marks
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_forbid_change();

-- A database that already holds a journal from before this migration starts its count at 1 with
-- the next batch; a daemon's state file from before has no mark, so nothing is compared then.
