-- +goose Up
-- The extensions an account last wrote messages under (the reference: "the
-- last used ones are remembered"): at most pircan.MaxRecentExtensions (10)
-- rows per account, each with when it was last used. A message's insert
-- (InsertForumMessage) upserts its extension's row and forgets the
-- account's rows beyond the newest ones in the same statement, under the
-- writing line's lock (LockForumLine): no round trip of its own, and one
-- writer of an account's rows at a time.
CREATE TABLE forum_extensions (
    account_folded text NOT NULL,
    ext            text NOT NULL CHECK (ext <> ''),
    used_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_folded, ext)
);
-- What was written before this table: each account's newest 10 extensions.
INSERT INTO forum_extensions (account_folded, ext, used_at)
SELECT author_folded, author_ext, used_at FROM (
    SELECT author_folded, author_ext, max(created_at) AS used_at,
           row_number() OVER (PARTITION BY author_folded ORDER BY max(created_at) DESC, author_ext) AS n
    FROM forum_messages WHERE author_ext <> '' GROUP BY author_folded, author_ext
) recent
WHERE n <= 10;

-- +goose Down
DROP TABLE forum_extensions;
