-- +goose Up
-- An owner is the person behind an IRC account: the one who signs in to the
-- owner portal with it. The row is created at the first portal sign-in;
-- `pircan owner verify` sets the name an operator checked.
CREATE TABLE owners (
    account_folded text PRIMARY KEY,
    account        text NOT NULL,
    name           text NOT NULL,
    verification   text NOT NULL DEFAULT 'unverified' CHECK (verification IN ('unverified', 'verified')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    verified_at    timestamptz
);

-- One browser's portal session. It starts unapproved, showing a code; the
-- browser holds a random secret in a cookie, and only its SHA-256 is kept
-- here. LOGIN with the code (within 10 minutes, once) approves it for the
-- sender's account for 12 hours. Nothing secret ever travels over IRC.
CREATE TABLE portal_sessions (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    secret_sha256  bytea NOT NULL UNIQUE,
    code           text NOT NULL CHECK (code ~ '^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$'),
    -- every form of the session carries this token
    csrf_token     text NOT NULL,
    address        text NOT NULL,
    user_agent     text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now(),
    account_folded text,
    account        text,
    approved_at    timestamptz,
    expires_at     timestamptz,
    ended_at       timestamptz,
    CHECK ((approved_at IS NULL) = (account_folded IS NULL) AND (approved_at IS NULL) = (expires_at IS NULL))
);
-- A code names one waiting sign-in; an approved one frees it.
CREATE UNIQUE INDEX portal_sessions_code ON portal_sessions (code) WHERE approved_at IS NULL;
-- sign-in starts of the last hour per address are counted from here (spec §4)
CREATE INDEX portal_sessions_address ON portal_sessions (address, created_at);
CREATE INDEX portal_sessions_account ON portal_sessions (account_folded, expires_at) WHERE account_folded IS NOT NULL;

-- Every LOGIN, right or wrong: the hourly limit per account counts these.
CREATE TABLE login_attempts (
    id             bigserial PRIMARY KEY,
    account_folded text NOT NULL,
    at             timestamptz NOT NULL DEFAULT now(),
    ok             boolean NOT NULL
);
CREATE INDEX login_attempts_account ON login_attempts (account_folded, at);

-- +goose Down
DROP TABLE login_attempts, portal_sessions, owners;
