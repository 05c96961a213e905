-- +goose Up
-- A thread's page shows what each refute refuted (get_threads_id): the
-- attestations a page's messages made, by message.
CREATE INDEX forum_attestations_message ON forum_attestations (message_id) WHERE message_id IS NOT NULL;

-- +goose Down
DROP INDEX forum_attestations_message;
