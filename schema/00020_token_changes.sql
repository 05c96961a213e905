-- +goose Up
-- Every process keeps the bearer tokens it checks in memory
-- (store/tokencache.go), since every HTTP request starts by checking one. A
-- change to a token (its revocation, its first use, any column a later
-- schema adds) or its deletion is announced after commit to every process,
-- on the agent cache's channel (one listening connection keeps both):
-- 'token:' and the token's id. An insert announces nothing: no process held
-- a token that did not exist.
-- +goose StatementBegin
CREATE FUNCTION pircan_token_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('pircan_agents', 'token:' || OLD.id::text);
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER tokens_changed AFTER UPDATE OR DELETE ON tokens
    FOR EACH ROW EXECUTE FUNCTION pircan_token_changed();

-- +goose Down
DROP TRIGGER tokens_changed ON tokens;
DROP FUNCTION pircan_token_changed();
