-- Every row of the journal whose parent is missing, for an auditor or an operator to check at
-- any time: SELECT * FROM journal_orphans; is empty in a sound database.
--
-- The references that migrations 0008 and 0010 check once per statement are enforced when rows
-- are inserted, like foreign keys; but unlike adding a foreign key, nothing re-checks rows that
-- arrived while those triggers were bypassed (a superuser's session_replication_role = replica,
-- a trigger disabled by the owner, a data-only restore). This view is that re-check: it reads
-- each child table in full, so it is for audits, not for the commit path.
CREATE VIEW journal_orphans AS
SELECT 'round_events -> rounds' AS reference, format('round_key %s', c.round_key) AS row
FROM round_events c WHERE NOT EXISTS (SELECT FROM rounds p WHERE p.round_key = c.round_key)
UNION ALL
SELECT 'wagers -> rounds', format('round_key %s seat %s link %s', c.round_key, c.seat, c.link_id)
FROM wagers c WHERE NOT EXISTS (SELECT FROM rounds p WHERE p.round_key = c.round_key)
UNION ALL
SELECT 'wagers -> links', format('round_key %s seat %s link %s', c.round_key, c.seat, c.link_id)
FROM wagers c WHERE NOT EXISTS (SELECT FROM links p WHERE p.link_id = c.link_id)
UNION ALL
SELECT 'hands -> wagers', format('round_key %s seat %s link %s', c.round_key, c.seat, c.link_id)
FROM hands c
WHERE NOT EXISTS (SELECT FROM wagers p WHERE p.round_key = c.round_key AND p.seat = c.seat
                                         AND p.link_id = c.link_id)
UNION ALL
SELECT 'transfers -> links', format('transfer %s of link %s', c.transfer_id, c.link_id)
FROM transfers c WHERE NOT EXISTS (SELECT FROM links p WHERE p.link_id = c.link_id)
UNION ALL
SELECT 'transfers -> corrected transfer',
       format('transfer %s of link %s corrects %s', c.transfer_id, c.link_id, c.corrects)
FROM transfers c
WHERE c.corrects IS NOT NULL
  AND NOT EXISTS (SELECT FROM transfers p WHERE p.link_id = c.link_id
                                            AND p.transfer_id = c.corrects)
UNION ALL
SELECT 'payouts -> links', format('payout %s', c.payout_id)
FROM payouts c WHERE NOT EXISTS (SELECT FROM links p WHERE p.link_id = c.link_id)
UNION ALL
SELECT 'payouts -> rounds', format('payout %s', c.payout_id)
FROM payouts c
WHERE NOT EXISTS (SELECT FROM rounds p WHERE p.table_id = c.table_id AND p.round_id = c.round_id)
UNION ALL
SELECT 'payouts -> award transfer', format('payout %s', c.payout_id)
FROM payouts c
WHERE NOT EXISTS (SELECT FROM transfers p WHERE p.link_id = c.link_id
                                            AND p.transfer_id = c.award_transfer_id)
UNION ALL
SELECT 'payout_events -> payouts', format('payout %s event %s', c.payout_id, c.seq)
FROM payout_events c WHERE NOT EXISTS (SELECT FROM payouts p WHERE p.payout_id = c.payout_id)
UNION ALL
SELECT 'draws -> links', format('draw %s', c.draw_id)
FROM draws c WHERE NOT EXISTS (SELECT FROM links p WHERE p.link_id = c.link_id)
UNION ALL
SELECT 'draws -> rounds', format('draw %s', c.draw_id)
FROM draws c
WHERE c.round_key IS NOT NULL
  AND NOT EXISTS (SELECT FROM rounds p WHERE p.round_key = c.round_key)
UNION ALL
SELECT 'dynamic_pays -> rounds', format('round_key %s link %s row %s', c.round_key, c.link_id,
                                        c.row_index)
FROM dynamic_pays c WHERE NOT EXISTS (SELECT FROM rounds p WHERE p.round_key = c.round_key)
UNION ALL
SELECT 'dynamic_pays -> links', format('round_key %s link %s row %s', c.round_key, c.link_id,
                                       c.row_index)
FROM dynamic_pays c WHERE NOT EXISTS (SELECT FROM links p WHERE p.link_id = c.link_id);
