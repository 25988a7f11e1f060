-- The durable record of everything the round engine decides (controller/engine_types.h
-- Records): the double-entry transfers of every link, rounds and their phases, wagers, evaluated
-- hands, every random draw, payouts and their state changes, and the floor each start ran.
-- Append-only where the domain says so; constraints make corrupt rows impossible where SQL can.

CREATE TYPE account_kind AS ENUM (
  'wagers', 'seed_funding', 'breakage', 'awards_payable', 'paid', 'tray_paid', 'meter', 'reserve');

CREATE TYPE transfer_kind AS ENUM (
  'contribution', 'overflow', 'award', 'seed', 'reserve_release', 'adjustment', 'tray_pay',
  'payout', 'contribution_reversal', 'overflow_reversal', 'award_reversal', 'tray_pay_reversal');

-- The floor (links and tables) as loaded, one row per start that changed it.
CREATE TABLE floor_versions (
  version     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  loaded_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  sha256      text NOT NULL UNIQUE CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  floor_text  text NOT NULL
);

CREATE TABLE links (
  link_id  text PRIMARY KEY CHECK (link_id <> ''),
  levels   integer NOT NULL CHECK (levels BETWEEN 1 AND 255)
);

-- One row per movement of money; per link, ids count 1, 2, 3, ... as the ledger posts them.
CREATE TABLE transfers (
  link_id        text NOT NULL REFERENCES links,
  transfer_id    bigint NOT NULL CHECK (transfer_id >= 1),
  debit_kind     account_kind NOT NULL,
  debit_level    integer NOT NULL CHECK (debit_level >= 0),
  credit_kind    account_kind NOT NULL,
  credit_level   integer NOT NULL CHECK (credit_level >= 0),
  amount_micros  bigint NOT NULL CHECK (amount_micros > 0),
  kind           transfer_kind NOT NULL,
  round_key      bigint CHECK (round_key > 0),
  payout_id      bigint CHECK (payout_id > 0),
  corrects       bigint,
  PRIMARY KEY (link_id, transfer_id),
  FOREIGN KEY (link_id, corrects) REFERENCES transfers (link_id, transfer_id),
  CHECK ((debit_kind IN ('meter', 'reserve')) = (debit_level > 0)),
  CHECK ((credit_kind IN ('meter', 'reserve')) = (credit_level > 0)),
  CHECK (debit_kind <> credit_kind OR debit_level <> credit_level),
  CHECK ((corrects IS NOT NULL) = (kind IN ('contribution_reversal', 'overflow_reversal',
                                            'award_reversal', 'tray_pay_reversal')))
);

CREATE INDEX transfers_round ON transfers (round_key) WHERE round_key IS NOT NULL;

CREATE TRIGGER transfers_append_only BEFORE UPDATE OR DELETE ON transfers
  FOR EACH ROW EXECUTE FUNCTION jackpot_forbid_change();
CREATE TRIGGER transfers_no_truncate BEFORE TRUNCATE ON transfers
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_forbid_change();

-- A round at a table; its phases follow in round_events.
CREATE TABLE rounds (
  round_key  bigint PRIMARY KEY CHECK (round_key > 0),
  table_id   text NOT NULL CHECK (table_id <> ''),
  round_id   bigint NOT NULL CHECK (round_id >= 0),
  UNIQUE (table_id, round_id)
);

CREATE TABLE round_events (
  round_key  bigint NOT NULL REFERENCES rounds,
  phase      text NOT NULL CHECK (phase IN ('open', 'locked', 'settled', 'voided')),
  at         timestamptz NOT NULL,
  reason     text NOT NULL DEFAULT '',
  PRIMARY KEY (round_key, phase)
);

-- A round ends once: settled or voided, never both.
CREATE UNIQUE INDEX round_events_one_end ON round_events (round_key)
  WHERE phase IN ('settled', 'voided');

CREATE TRIGGER round_events_append_only BEFORE UPDATE OR DELETE ON round_events
  FOR EACH ROW EXECUTE FUNCTION jackpot_forbid_change();

CREATE TABLE wagers (
  round_key      bigint NOT NULL REFERENCES rounds,
  seat           integer NOT NULL CHECK (seat BETWEEN 1 AND 20),
  link_id        text NOT NULL REFERENCES links,
  amount_micros  bigint NOT NULL CHECK (amount_micros > 0),
  units          bigint NOT NULL CHECK (units > 0),
  PRIMARY KEY (round_key, seat, link_id)
);

CREATE TABLE hands (
  round_key     bigint NOT NULL REFERENCES rounds,
  seat          integer NOT NULL CHECK (seat BETWEEN 1 AND 20),
  link_id       text NOT NULL REFERENCES links,
  cards         text NOT NULL,
  dealer_keyed  boolean NOT NULL,
  hand          text NOT NULL,
  PRIMARY KEY (round_key, seat, link_id),
  CHECK (dealer_keyed = (cards = ''))
);

-- Every random draw with its inputs and outcome; hidden Must-Hit-By points with their
-- commitment (published at once) and the point and salt (revealed at the hit).
CREATE TABLE draws (
  draw_id             bigint PRIMARY KEY CHECK (draw_id > 0),
  round_key           bigint REFERENCES rounds,
  link_id             text NOT NULL REFERENCES links,
  level               integer NOT NULL CHECK (level >= 0),
  kind                text NOT NULL CHECK (kind IN ('must_hit_by_winner', 'hidden_trigger',
                                                    'dynamic_count', 'dynamic_hand',
                                                    'dynamic_option')),
  inputs              text NOT NULL,
  outcome             text NOT NULL,
  trigger_point_micros bigint,
  trigger_salt        bytea CHECK (length(trigger_salt) = 32),
  trigger_commitment  bytea CHECK (length(trigger_commitment) = 32),
  drawn_at            timestamptz NOT NULL,
  CHECK ((kind = 'hidden_trigger') = (trigger_commitment IS NOT NULL))
);

CREATE TRIGGER draws_append_only BEFORE UPDATE OR DELETE ON draws
  FOR EACH ROW EXECUTE FUNCTION jackpot_forbid_change();

CREATE TABLE payouts (
  payout_id           bigint PRIMARY KEY CHECK (payout_id > 0),
  table_id            text NOT NULL,
  round_id            bigint NOT NULL,
  seat                integer NOT NULL CHECK (seat BETWEEN 1 AND 20),
  link_id             text NOT NULL REFERENCES links,
  kind                text NOT NULL CHECK (kind IN ('percent', 'fixed', 'dynamic', 'must_hit_by',
                                                    'envy')),
  level               integer NOT NULL CHECK (level >= 0),
  hand                text NOT NULL,
  amount_micros       bigint NOT NULL CHECK (amount_micros > 0 AND amount_micros % 10000 = 0),
  approvals_required  integer NOT NULL CHECK (approvals_required BETWEEN 0 AND 2),
  award_transfer_id   bigint NOT NULL,
  created_at          timestamptz NOT NULL,
  FOREIGN KEY (table_id, round_id) REFERENCES rounds (table_id, round_id),
  FOREIGN KEY (link_id, award_transfer_id) REFERENCES transfers (link_id, transfer_id)
);

-- Each payout's states in order: pending (or paid at once), approvals, paid or rejected.
CREATE TABLE payout_events (
  payout_id   bigint NOT NULL REFERENCES payouts,
  seq         integer NOT NULL CHECK (seq >= 1),
  state       text NOT NULL CHECK (state IN ('pending', 'approved', 'paid', 'rejected')),
  supervisor  text NOT NULL DEFAULT '',
  reason      text NOT NULL DEFAULT '',
  at          timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (payout_id, seq)
);

-- A payout ends once: paid or rejected, never both, never twice.
CREATE UNIQUE INDEX payout_events_one_end ON payout_events (payout_id)
  WHERE state IN ('paid', 'rejected');

CREATE TRIGGER payout_events_append_only BEFORE UPDATE OR DELETE ON payout_events
  FOR EACH ROW EXECUTE FUNCTION jackpot_forbid_change();

-- Every account's balance as the sum of its transfers: the ledger an auditor reconciles.
CREATE VIEW account_balances AS
SELECT link_id, account_kind, level, sum(delta)::bigint AS balance_micros
FROM (
  SELECT link_id, credit_kind AS account_kind, credit_level AS level, amount_micros AS delta
  FROM transfers
  UNION ALL
  SELECT link_id, debit_kind, debit_level, -amount_micros
  FROM transfers
) AS movements
GROUP BY link_id, account_kind, level;
