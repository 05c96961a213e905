-- +goose Up
-- Every audited change notified pircan_audit, and a transaction that
-- notifies takes Postgres's cluster-wide NOTIFY lock from its commit until
-- the commit is flushed: such commits go one at a time, never grouped, and
-- every SEND and every INBOX's mark-read is audited (BENCHMARKS.md "Target 5").
-- `pircan audit --follow` reads new entries every auditPoll instead.
DROP TRIGGER audit_log_notify ON audit_log;
DROP FUNCTION audit_log_notify();

-- +goose Down
-- +goose StatementBegin
CREATE FUNCTION audit_log_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('pircan_audit', NEW.id::text);
    RETURN NEW;
END $$;
-- +goose StatementEnd
CREATE TRIGGER audit_log_notify AFTER INSERT ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_notify();
