-- Each command's first request and answer (round_events.request and .answer) is kept from now on
-- in version 3 of its format: a version byte, the message's length, then Protobuf
-- (controller/engine/engine_codec.h). Versions 1 and 2, which rows already kept hold, stay
-- readable. A jackpotd from before cannot read version 3: as with any migration it does not
-- know, it refuses the database when it starts ("migrated by a newer jackpotd") instead of
-- failing its recovery on a row it cannot decode. The check refuses a new or changed row in any
-- other version (NOT VALID: rows already kept are not read again).
ALTER TABLE round_events
  ADD CONSTRAINT round_events_kept_format
  CHECK (substring(request FROM 1 FOR 1) IN ('\x01'::bytea, '\x02'::bytea, '\x03'::bytea)
         AND substring(answer FROM 1 FOR 1) IN ('\x01'::bytea, '\x02'::bytea, '\x03'::bytea))
  NOT VALID;
