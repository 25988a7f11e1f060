-- Indexes that let recovery read what the engine keeps without reading the history behind it
-- (storage/state_loader.cc): a start then costs a few index look-ups per link, level, table and
-- waiting payout, however many rounds the floor has played. Each index covers rows the commit
-- path writes rarely, so it costs the round path nothing measurable:
--
-- * a payout waits for a supervisor only when its first event is 'pending' (a payout paid at
--   once starts 'paid'); recovery reads these and skips those that ended since;
-- * hidden triggers are drawn once per Must-Hit-By reset; recovery reads each level's newest;
-- * link status changes are operator actions; recovery reads each link's newest.
--
-- Each table's last two rounds come from the (table_id, round_id) unique index of rounds, and
-- each link's next transfer id from the transfers' primary key.

CREATE INDEX payout_events_pending ON payout_events (payout_id) WHERE state = 'pending';

CREATE INDEX draws_hidden_triggers ON draws (link_id, level, draw_id)
  WHERE kind = 'hidden_trigger';

CREATE INDEX link_status_events_link ON link_status_events (link_id, seq);
