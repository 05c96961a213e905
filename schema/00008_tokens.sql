-- +goose Up
-- Bearer tokens of the HTTP faces (DESIGN.md "Identity and tokens"): a token
-- acts as its NickServ account. Only the SHA-256 of the secret is kept; the
-- secret is shown once, to the operator who issues it. A revoked or expired
-- row stays, so `pircan token list` and the audit log can name it.
CREATE TABLE tokens (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account        text NOT NULL,
    -- pircan.FoldAccount(account), the key accounts are compared by
    account_folded text NOT NULL,
    label          text NOT NULL DEFAULT '',
    secret_sha256  bytea NOT NULL UNIQUE,
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz,
    revoked_at     timestamptz,
    -- the first use only: set once, audited once
    used_at        timestamptz
);
CREATE INDEX tokens_account ON tokens (account_folded, created_at);

-- +goose Down
DROP TABLE tokens;
