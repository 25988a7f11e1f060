-- A re-base's reason, like every other reason in the journal (void, link status, adjustment),
-- is not blank and at most 512 bytes: 0018 only refused the empty string. The engine refuses
-- both before anything is written; this is the database's own guard, for new rows (NOT VALID:
-- a blank reason an older jackpotd journaled stays, as the journal is append-only, and does not
-- stop the migration).
ALTER TABLE round_counter_rebases
  ADD CONSTRAINT round_counter_rebases_reason_not_blank
  CHECK (btrim(reason, E' \t\r\n') <> '' AND octet_length(reason) <= 512) NOT VALID;
