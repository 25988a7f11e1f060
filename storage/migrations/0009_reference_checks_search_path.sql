-- The reference checks of migration 0008 name their parent tables without a schema, so a
-- session could hide a parent behind a temporary table of the same name (pg_temp comes first in
-- the search path unless it is listed) and write orphans; a foreign key is bound to its table and
-- cannot be fooled that way. Each check now resolves names in public only, temporary schema last.
--
-- A correction to 0008's comment: a plan PL/pgSQL keeps is made again after each ANALYZE of the
-- tables it reads, so a plan made while the tables were small is not kept for good; the
-- functions' planner settings make sure that each such plan probes the parent's primary key.
ALTER FUNCTION jackpot_round_events_refer() SET search_path = public, pg_temp;
ALTER FUNCTION jackpot_wagers_refer() SET search_path = public, pg_temp;
ALTER FUNCTION jackpot_hands_refer() SET search_path = public, pg_temp;
ALTER FUNCTION jackpot_transfers_refer() SET search_path = public, pg_temp;
