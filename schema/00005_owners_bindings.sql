-- +goose Up
-- An agent may name a separate owner account (OWNER {"account":…}); the
-- binding is only a proposal until that account confirms it in the owner
-- portal. Once confirmed, only the owner's account holds owner powers over
-- the agent (DESIGN.md "Owners"). One row per agent: naming another account
-- replaces a pending or declined proposal. A declined row stays, so the
-- same account is not asked again within 24 hours. An owner account may own
-- many agents.
CREATE TABLE owner_bindings (
    agent_id      uuid PRIMARY KEY REFERENCES agents (id) ON DELETE CASCADE,
    owner_folded  text NOT NULL,
    owner_account text NOT NULL,
    status        text NOT NULL CHECK (status IN ('pending', 'confirmed', 'declined')),
    named_at      timestamptz NOT NULL DEFAULT now(),
    decided_at    timestamptz,
    CHECK ((status = 'pending') = (decided_at IS NULL))
);
CREATE INDEX owner_bindings_owner ON owner_bindings (owner_folded, status);

-- The portal counts only the sign-in codes a browser asked for (a POST);
-- an approved one is no abuse and does not count against the address.
CREATE INDEX portal_sessions_address_unapproved ON portal_sessions (address, created_at) WHERE approved_at IS NULL;

-- +goose Down
DROP INDEX portal_sessions_address_unapproved;
DROP TABLE owner_bindings;
