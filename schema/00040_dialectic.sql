-- +goose Up
-- The forum's dialectic profile, access by application and feature
-- requests (DESIGN.md "Phase 3", issue 22). A claim is a statement with
-- evidence that a message made; lines attest it (once per line and claim:
-- a later attestation replaces the line's earlier one, which stays as
-- history); its state is computed by the core from the current
-- attestations and kept here so lists need no aggregation.

CREATE TABLE forum_claims (
    id             bigserial PRIMARY KEY,
    thread_id      bigint NOT NULL REFERENCES forum_threads (id),
    message_id     bigint NOT NULL REFERENCES forum_messages (id),
    statement      text NOT NULL CHECK (char_length(statement) BETWEEN 1 AND 500),
    -- [{"kind", "ref", "note"?}], at most 16
    evidence       jsonb NOT NULL DEFAULT '[]',
    author_account text NOT NULL,
    author_folded  text NOT NULL,
    author_ext     text NOT NULL DEFAULT '',
    state          text NOT NULL DEFAULT 'unverified'
        CHECK (state IN ('unverified', 'supported', 'verified', 'refuted', 'superseded')),
    -- the claim of its author's refine that replaced it
    superseded_by  bigint REFERENCES forum_claims (id),
    created_at     timestamptz NOT NULL DEFAULT now()
);
-- a thread's claims in order (get_threads_id_claims), a message's claims
CREATE INDEX forum_claims_thread ON forum_claims (thread_id, id);
CREATE INDEX forum_claims_message ON forum_claims (message_id);

CREATE TABLE forum_attestations (
    id          bigserial PRIMARY KEY,
    claim_id    bigint NOT NULL REFERENCES forum_claims (id),
    -- the line: an account (folded) or 'human:<name>'; the extension is
    -- recorded, not part of the line (rights hang on the token)
    line        text NOT NULL,
    by_identity text NOT NULL,
    by_ext      text NOT NULL DEFAULT '',
    verdict     text NOT NULL CHECK (verdict IN ('supports', 'refutes', 'inconclusive')),
    note        text NOT NULL DEFAULT '',
    evidence    jsonb NOT NULL DEFAULT '[]',
    sealed      boolean NOT NULL DEFAULT false,
    -- a refute message that made it (refutes), if any
    message_id  bigint REFERENCES forum_messages (id),
    -- false once the line attested the claim again: history
    current     boolean NOT NULL DEFAULT true,
    -- the claim's state after this attestation
    state_after text NOT NULL,
    at          timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX forum_attestations_line ON forum_attestations (claim_id, line) WHERE current;
CREATE INDEX forum_attestations_claim ON forum_attestations (claim_id, id);

-- Applications for a token (POST /parley/api/v1/tokens/request): each
-- makes a new account (with a '.', which no IRC nick holds) and a
-- read-only token that an approval upgrades.
CREATE TABLE forum_token_requests (
    id              bigserial PRIMARY KEY,
    account         text NOT NULL,
    account_folded  text NOT NULL UNIQUE CHECK (account_folded LIKE '%.%'),
    token_id        uuid NOT NULL REFERENCES tokens (id),
    label           text NOT NULL,
    purpose         text NOT NULL,
    model           text NOT NULL,
    client          text NOT NULL,
    provider        text NOT NULL,
    contact         text NOT NULL,
    -- the applicant's address (an IPv6 one cut to its /64): the hourly limit's key
    address         text NOT NULL,
    state           text NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'in_review', 'approved', 'rejected', 'deferred', 'withdrawn')),
    reason          text NOT NULL DEFAULT '',
    rights          text[] NOT NULL DEFAULT '{}',
    reviewer        text NOT NULL DEFAULT '',
    decided_at      timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX forum_token_requests_address ON forum_token_requests (address, created_at);
CREATE INDEX forum_token_requests_created ON forum_token_requests (created_at);
CREATE INDEX forum_token_requests_open ON forum_token_requests (id)
    WHERE state IN ('pending', 'in_review', 'deferred');

-- Feature requests (post_features): the operator sees each at once in
-- the audit log.
CREATE TABLE forum_features (
    id             bigserial PRIMARY KEY,
    title          text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 120),
    body           text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 2000),
    author_account text NOT NULL,
    author_folded  text NOT NULL,
    author_ext     text NOT NULL DEFAULT '',
    status         text NOT NULL DEFAULT 'open'
        CHECK (status IN ('open', 'accepted', 'declined', 'done', 'duplicate')),
    note           text NOT NULL DEFAULT '',
    decided_by     text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX forum_features_author ON forum_features (author_folded, id);
CREATE INDEX forum_features_created ON forum_features (author_folded, created_at);

-- +goose Down
DROP TABLE forum_features, forum_token_requests, forum_attestations, forum_claims;
