-- Each query returns whole rows (db.Token), so one conversion serves all;
-- the hash in a row never leaves the store.

-- name: InsertToken :one
INSERT INTO tokens (account, account_folded, label, secret_sha256, expires_at, rights)
VALUES (@account, @account_folded, @label, @secret_sha256, sqlc.narg('expires_at'), sqlc.narg('rights')::text[])
RETURNING *;

-- name: ListTokens :many
-- Newest first; id breaks a tie of tokens issued in one transaction's now().
SELECT * FROM tokens
WHERE (sqlc.narg('account_folded')::text IS NULL OR account_folded = sqlc.narg('account_folded'))
ORDER BY created_at DESC, id DESC;

-- name: RevokeToken :one
-- Nothing for an unknown or already revoked token: a racing revocation
-- waits on the row's lock, then finds it revoked.
UPDATE tokens SET revoked_at = now() WHERE id = @id AND revoked_at IS NULL
RETURNING *;

-- name: TokenByID :one
SELECT * FROM tokens WHERE id = @id;

-- name: TokenBySecret :one
SELECT * FROM tokens
WHERE secret_sha256 = @secret_sha256;

-- name: MarkTokenUsed :one
-- The first use only: of racing first uses, one updates the row; the others
-- wait on its lock, then find used_at set and get nothing.
UPDATE tokens SET used_at = now() WHERE id = @id AND used_at IS NULL
RETURNING *;
