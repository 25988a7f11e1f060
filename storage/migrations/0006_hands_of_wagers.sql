-- A hand is recorded only for a seat that wagered on that link in that round: the hand now
-- refers to its wager, which already refers to the round and the link. One check per hand where
-- there were two, and a stronger one (a hand without a wager could be written before).
ALTER TABLE hands
  DROP CONSTRAINT hands_round_key_fkey,
  DROP CONSTRAINT hands_link_id_fkey,
  ADD CONSTRAINT hands_wager_fkey FOREIGN KEY (round_key, seat, link_id)
    REFERENCES wagers (round_key, seat, link_id);
