-- Voids (docs/architecture.md §5, §7a).
--
-- A void after another round's award on a level refunds what that award already paid out from
-- the house, not from the new meter: a transfer of its own kind, seed_funding -> wagers, that
-- names the contribution or overflow it refunds.
ALTER TYPE transfer_kind ADD VALUE 'house_funded_refund';

-- Every correction names what it corrects, and only corrections do. The new kind is compared as
-- text: a new enum value cannot be used in the transaction that adds it. The rows already there
-- passed the constraint this one replaces, which it extends by one kind, so they are not read
-- again (NOT VALID): a migration must not scan the whole journal.
DO $$
DECLARE
  old_check text;
BEGIN
  SELECT conname INTO STRICT old_check FROM pg_constraint
   WHERE conrelid = 'transfers'::regclass AND contype = 'c'
     AND pg_get_constraintdef(oid) LIKE '%corrects IS NOT NULL%';
  EXECUTE format('ALTER TABLE transfers DROP CONSTRAINT %I', old_check);
END $$;
ALTER TABLE transfers ADD CONSTRAINT transfers_corrects_only_corrections
  CHECK ((corrects IS NOT NULL) = (kind::text IN ('contribution_reversal', 'overflow_reversal',
                                                  'award_reversal', 'tray_pay_reversal',
                                                  'house_funded_refund')))
  NOT VALID;

-- The round a table opens after a void keeps the voided round's Dynamic Pay selection: no draw,
-- but a record in draws (kind dynamic_carried_over) naming the voided round, so that every
-- round's selection is accounted for by its draws or by the round it came from.
DO $$
DECLARE
  old_check text;
BEGIN
  SELECT conname INTO STRICT old_check FROM pg_constraint
   WHERE conrelid = 'draws'::regclass AND contype = 'c'
     AND pg_get_constraintdef(oid) LIKE '%dynamic_option%';
  EXECUTE format('ALTER TABLE draws DROP CONSTRAINT %I', old_check);
END $$;
ALTER TABLE draws ADD CONSTRAINT draws_kind_known
  CHECK (kind IN ('must_hit_by_winner', 'hidden_trigger', 'dynamic_count', 'dynamic_hand',
                  'dynamic_option', 'dynamic_carried_over'))
  NOT VALID;
