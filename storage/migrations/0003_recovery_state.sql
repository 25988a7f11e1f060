-- What recovery needs beyond the ledger: the first request and answer of every command (so a
-- replay after a restart answers byte for byte), each round's Dynamic Pay selection and
-- Must-Hit-By hits in structured form, link status changes, and the range each hidden trigger
-- was drawn from.

CREATE TABLE command_answers (
  round_key  bigint NOT NULL REFERENCES rounds,
  command    text NOT NULL CHECK (command IN ('open', 'lock', 'settle', 'void')),
  request    bytea NOT NULL,
  answer     bytea NOT NULL,
  PRIMARY KEY (round_key, command)
);

CREATE TABLE dynamic_pays (
  round_key  bigint NOT NULL REFERENCES rounds,
  link_id    text NOT NULL REFERENCES links,
  row_index  integer NOT NULL CHECK (row_index >= 0),
  option     integer NOT NULL CHECK (option BETWEEN 1 AND 10),
  PRIMARY KEY (round_key, link_id, row_index)
);

CREATE TABLE must_hit_by_hits (
  round_key          bigint NOT NULL REFERENCES rounds,
  link_id            text NOT NULL REFERENCES links,
  level              integer NOT NULL CHECK (level >= 1),
  seat               integer NOT NULL CHECK (seat BETWEEN 1 AND 20),
  amount_micros      bigint NOT NULL CHECK (amount_micros > 0),
  award_transfer_id  bigint NOT NULL,
  draw_id            bigint NOT NULL REFERENCES draws,
  payout_id          bigint NOT NULL REFERENCES payouts,
  PRIMARY KEY (round_key, link_id, level),
  FOREIGN KEY (link_id, award_transfer_id) REFERENCES transfers (link_id, transfer_id)
);

CREATE TABLE link_status_events (
  seq      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  link_id  text NOT NULL REFERENCES links,
  status   text NOT NULL CHECK (status IN ('open', 'closed', 'unavailable')),
  at       timestamptz NOT NULL
);

ALTER TABLE draws
  ADD COLUMN trigger_above_micros bigint,
  ADD COLUMN trigger_up_to_micros bigint,
  ADD CHECK ((kind = 'hidden_trigger') = (trigger_up_to_micros IS NOT NULL));

CREATE TRIGGER command_answers_append_only BEFORE UPDATE OR DELETE ON command_answers
  FOR EACH ROW EXECUTE FUNCTION jackpot_forbid_change();
