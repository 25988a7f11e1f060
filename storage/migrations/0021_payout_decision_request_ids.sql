-- A supervisor's decision on a payout (SupervisorService.ApprovePayout, RejectPayout) carries the
-- caller's request id in its payout event, so that a repeat of the request answers the first
-- answer, also after a restart, and one request id never decides twice. The events a decision
-- writes name their supervisor (approved, rejected, and paid by the last approval); the others
-- (pending, paid at once) name none and carry no request id. The checks leave rows written
-- before this migration as they are (NOT VALID), when decisions had no request ids.
ALTER TABLE payout_events ADD COLUMN request_id text;

CREATE UNIQUE INDEX payout_events_request_id ON payout_events (request_id)
  WHERE request_id IS NOT NULL;

ALTER TABLE payout_events
  ADD CONSTRAINT payout_events_decision_request_id
    CHECK ((supervisor = '') = (request_id IS NULL)) NOT VALID,
  ADD CONSTRAINT payout_events_request_id_length
    CHECK (request_id IS NULL OR octet_length(request_id) BETWEEN 1 AND 64) NOT VALID;
