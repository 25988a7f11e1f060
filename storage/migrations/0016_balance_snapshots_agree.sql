-- A balance snapshot taken again at the same transfer id is the same observation, and the writer
-- keeps the stored one (ON CONFLICT DO NOTHING). One that disagrees with it is not the same
-- observation: the sequencer's balances and the journal have parted, which is what snapshots are
-- there to show. The batch that carries it fails, so the daemon fails stop and says why, instead
-- of dropping the disagreeing rows without a word.
CREATE FUNCTION jackpot_balance_snapshots_agree() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  stored bigint;
BEGIN
  SELECT balance_micros INTO stored FROM balance_snapshots
   WHERE link_id = NEW.link_id AND through_transfer_id = NEW.through_transfer_id
     AND account_kind = NEW.account_kind AND level = NEW.level;
  IF FOUND AND stored <> NEW.balance_micros THEN
    RAISE EXCEPTION 'link %: a balance snapshot through transfer % holds % micros on % level %, '
                    'the stored one % micros: the balances and the journal have parted',
                    NEW.link_id, NEW.through_transfer_id, NEW.balance_micros, NEW.account_kind,
                    NEW.level, stored;
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER balance_snapshots_agree BEFORE INSERT ON balance_snapshots
  FOR EACH ROW EXECUTE FUNCTION jackpot_balance_snapshots_agree();
