-- Each round event is a command (open, lock, settle, void). Its first request and answer, kept
-- for replays, now live on the event's row instead of in a table of their own: one row and one
-- foreign key check per command instead of two. Answers already written move over unchanged.
ALTER TABLE round_events ADD COLUMN request bytea, ADD COLUMN answer bytea;

ALTER TABLE round_events DISABLE TRIGGER round_events_append_only;
UPDATE round_events e SET request = a.request, answer = a.answer
FROM command_answers a
WHERE a.round_key = e.round_key
  AND a.command = CASE e.phase WHEN 'open' THEN 'open' WHEN 'locked' THEN 'lock'
                               WHEN 'settled' THEN 'settle' ELSE 'void' END;
ALTER TABLE round_events ENABLE TRIGGER round_events_append_only;

-- Every answer found its event (both were written by the same commit); refuse to go on if not.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM command_answers a
             WHERE NOT EXISTS (SELECT 1 FROM round_events e
                               WHERE e.round_key = a.round_key AND e.request = a.request
                                 AND e.answer = a.answer)) THEN
    RAISE EXCEPTION 'a command answer has no round event to move to';
  END IF;
END
$$;

-- Every event written from now on keeps its command's request and answer.
ALTER TABLE round_events ADD CONSTRAINT round_events_answer_kept
  CHECK (request IS NOT NULL AND answer IS NOT NULL) NOT VALID;

DROP TABLE command_answers;
