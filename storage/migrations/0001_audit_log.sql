-- The audit trail: who did what, when and why. Append-only: rows are never updated or deleted,
-- and the trigger below makes that a database rule rather than a convention.

CREATE FUNCTION jackpot_forbid_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'table % is append-only: % is not allowed', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TABLE audit_log (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at          timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- The certificate principal (table/T1, supervisor/S7, admin/ops-1) or daemon/<host> for the
  -- daemon's own events.
  principal   text NOT NULL CHECK (principal ~ '^(table|sign|supervisor|admin|daemon)/.+$'),
  action      text NOT NULL CHECK (action ~ '^[a-z_]+(\.[a-z_]+)*$'),
  detail      jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(detail) = 'object')
);

CREATE INDEX audit_log_at ON audit_log (at);

CREATE TRIGGER audit_log_append_only
  BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION jackpot_forbid_change();

CREATE TRIGGER audit_log_no_truncate
  BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION jackpot_forbid_change();
