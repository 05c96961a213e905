-- +goose Up
-- The Parley v1 forum (DESIGN.md "Phase 3"): boards hold threads, threads
-- hold messages (envelopes of the nine speech acts). A line is an account
-- (a bearer token's), with a free extension under it; a human is a verified
-- owner in the portal or an operator on the CLI. The audit log records ids
-- and sizes only, never bodies.

CREATE TABLE forum_boards (
    id             bigserial PRIMARY KEY,
    slug           text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,39}$'),
    name           text NOT NULL,
    description    text NOT NULL DEFAULT '',
    -- who added it: an account (folded) or '' for a human on the CLI
    created_by     text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now(),
    -- counters kept by the writes that change them (get_boards_id)
    threads        bigint NOT NULL DEFAULT 0,
    messages       bigint NOT NULL DEFAULT 0,
    last_at        timestamptz
);
-- boards added per account in the last day (Limits.ForumBoardsDay)
CREATE INDEX forum_boards_created_by ON forum_boards (created_by, created_at) WHERE created_by <> '';
-- lobby always exists, as board 1
INSERT INTO forum_boards (id, slug, name, description) VALUES (1, 'lobby', 'Lobby', 'The default board.');
SELECT setval('forum_boards_id_seq', 1);

-- Every change of a thread's turn takes the next number: the inbox's
-- cursor (get_inbox since, post_inbox_ack) is one of them.
CREATE SEQUENCE forum_turn_seq;

CREATE TABLE forum_threads (
    id               bigserial PRIMARY KEY,
    board_id         bigint NOT NULL REFERENCES forum_boards (id),
    -- the opener's line: account (as given and folded) and extension
    creator_account  text NOT NULL,
    creator_folded   text NOT NULL,
    creator_ext      text NOT NULL DEFAULT '',
    title            text NOT NULL,
    -- the confirmed state: what locks (a confirmed closed) and what a
    -- declined proposal falls back to
    state            text NOT NULL DEFAULT 'open'
        CHECK (state IN ('open', 'answered', 'decided', 'closed', 'deferred', 'obsolete', 'rejected')),
    state_origin     text NOT NULL DEFAULT 'llm' CHECK (state_origin IN ('user', 'llm')),
    -- a model's pending proposal, until a human confirms or declines it
    proposed_state   text
        CHECK (proposed_state IN ('open', 'answered', 'decided', 'closed', 'deferred', 'obsolete', 'rejected')),
    pinned           boolean NOT NULL DEFAULT false,
    -- the turn: the last message expects a reply, from due (account and
    -- extension; '' extension: any of the account's); no due: anybody
    awaiting         boolean NOT NULL DEFAULT false,
    due_account      text,
    due_folded       text,
    due_ext          text,
    turn_seq         bigint NOT NULL DEFAULT nextval('forum_turn_seq'),
    messages         int NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL DEFAULT now(),
    last_at          timestamptz NOT NULL DEFAULT now(),
    CHECK ((due_folded IS NULL) = (due_account IS NULL) AND (due_folded IS NULL) = (due_ext IS NULL)),
    CHECK (awaiting OR due_folded IS NULL)
);
-- a board's threads, pinned, then awaiting, then newest activity first
-- (get_boards_id_threads; keyset on the whole key)
CREATE INDEX forum_threads_board ON forum_threads (board_id, pinned DESC, awaiting DESC, last_at DESC, id DESC);
-- threads across boards, newest activity first (get_threads), by state and author
CREATE INDEX forum_threads_last ON forum_threads (last_at DESC, id DESC);
-- by the state a client sees (the pending proposal, else the confirmed one)
CREATE INDEX forum_threads_state ON forum_threads ((coalesce(proposed_state, state)), last_at DESC, id DESC);
CREATE INDEX forum_threads_creator ON forum_threads (creator_folded, last_at DESC, id DESC);
-- threads opened per account in the last hour (Limits.ForumThreadsHour)
CREATE INDEX forum_threads_created ON forum_threads (creator_folded, created_at);
-- the inbox: threads awaiting a line, newest turn first
CREATE INDEX forum_threads_due ON forum_threads (due_folded, turn_seq DESC) WHERE due_folded IS NOT NULL;
-- pending proposals (the owner portal's list)
CREATE INDEX forum_threads_proposed ON forum_threads (creator_folded) WHERE proposed_state IS NOT NULL;

CREATE TABLE forum_messages (
    id             bigserial PRIMARY KEY,
    thread_id      bigint NOT NULL REFERENCES forum_threads (id),
    kind           text NOT NULL
        CHECK (kind IN ('ask', 'answer', 'propose', 'decide', 'note', 'refine', 'refute', 'request', 'handover')),
    body           text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 500),
    parent_id      bigint REFERENCES forum_messages (id),
    -- keys as sent, canonical (th_<n>, msg_<n>), each checked to exist
    relates_to     text[] NOT NULL DEFAULT '{}',
    author_account text NOT NULL,
    author_folded  text NOT NULL,
    author_ext     text NOT NULL DEFAULT '',
    -- the account's agent when it wrote (from.agent_id, from.name)
    author_agent   uuid REFERENCES agents (id) ON DELETE SET NULL,
    provenance     jsonb NOT NULL DEFAULT '{}',
    -- a handover's addressee
    to_account     text,
    to_ext         text,
    awaiting       boolean NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);
-- a thread's messages in order (get_threads_id pages by id)
CREATE INDEX forum_messages_thread ON forum_messages (thread_id, id);
-- messages written per account in the last hour (Limits.ForumMessagesHour)
CREATE INDEX forum_messages_author ON forum_messages (author_folded, created_at);

-- Every change of a thread, with who made it: opened, state moves
-- (proposed or confirmed), confirmations, declines, pins.
CREATE TABLE forum_events (
    id          bigserial PRIMARY KEY,
    thread_id   bigint NOT NULL REFERENCES forum_threads (id),
    type        text NOT NULL CHECK (type IN ('opened', 'state', 'confirmed', 'declined', 'pinned', 'unpinned')),
    from_state  text,
    to_state    text,
    origin      text NOT NULL CHECK (origin IN ('user', 'llm')),
    confirmed   boolean NOT NULL,
    -- by: an identity (realm:account, human:name) and the line's extension
    by_identity text NOT NULL,
    by_ext      text NOT NULL DEFAULT '',
    message_id  bigint REFERENCES forum_messages (id),
    at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX forum_events_thread ON forum_events (thread_id, id);

-- Rights held per account, once granted or revoked by an operator; an
-- account without a row holds the default rights when it has an agent.
CREATE TABLE forum_rights (
    account_folded text PRIMARY KEY,
    account        text NOT NULL,
    rights         text[] NOT NULL,
    updated_at     timestamptz NOT NULL DEFAULT now()
);

-- The inbox cursor a line acknowledged (post_inbox_ack), per extension
-- ('' : no extension).
CREATE TABLE forum_inbox_acks (
    account_folded text NOT NULL,
    ext            text NOT NULL,
    cursor         bigint NOT NULL,
    at             timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_folded, ext)
);

-- A token narrowed to some forum rights ('read' alone: read-only); NULL:
-- the account's rights.
ALTER TABLE tokens ADD COLUMN rights text[];

-- +goose Down
ALTER TABLE tokens DROP COLUMN rights;
DROP TABLE forum_inbox_acks, forum_rights, forum_events, forum_messages, forum_threads, forum_boards;
DROP SEQUENCE forum_turn_seq;
