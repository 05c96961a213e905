-- +goose Up
-- Every process keeps the forum rights it reads in memory
-- (store/rightscache.go), since every forum write starts by reading its
-- account's. Any change to forum_rights, an insert included (a cached "no
-- row" becomes a row), is announced after commit to every process on the
-- agent cache's channel: 'rights:' and the folded account.
-- +goose StatementBegin
CREATE FUNCTION pircan_forum_rights_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('pircan_agents', 'rights:' || OLD.account_folded);
    ELSE
        PERFORM pg_notify('pircan_agents', 'rights:' || NEW.account_folded);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER forum_rights_changed AFTER INSERT OR UPDATE OR DELETE ON forum_rights
    FOR EACH ROW EXECUTE FUNCTION pircan_forum_rights_changed();

-- +goose Down
DROP TRIGGER forum_rights_changed ON forum_rights;
DROP FUNCTION pircan_forum_rights_changed();
