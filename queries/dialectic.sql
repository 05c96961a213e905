-- The forum's dialectic profile, applications and feature requests
-- (schema 00040). An attestation locks its claim's row, so the rule the
-- core runs sees every earlier attestation of it.

-- name: InsertForumClaim :one
INSERT INTO forum_claims (thread_id, message_id, statement, evidence, author_account, author_folded, author_ext)
VALUES (@thread_id, @message_id, @statement, @evidence, @author_account, @author_folded, @author_ext)
RETURNING *;

-- name: ForumClaimRow :one
SELECT * FROM forum_claims WHERE id = @id;

-- name: LockForumClaim :one
-- A claim locked for an attestation, with whether its thread is locked (a
-- confirmed closed), whether a human forbade AI reactions there, and the
-- thread's creator (an owner's authority).
SELECT sqlc.embed(c), (t.state = 'closed')::boolean AS thread_locked, t.llm_reply_forbidden AS thread_llm_reply_forbidden,
       t.creator_folded
FROM forum_claims c JOIN forum_threads t ON t.id = c.thread_id
WHERE c.id = @id FOR NO KEY UPDATE OF c;

-- name: CurrentAttestations :many
SELECT * FROM forum_attestations WHERE claim_id = @claim_id AND current ORDER BY id DESC;

-- name: CurrentAttestationsOf :many
-- The current attestations of a page of claims.
SELECT * FROM forum_attestations WHERE claim_id = ANY(@ids::bigint[]) AND current ORDER BY claim_id, id DESC;

-- name: AttestationHistory :many
SELECT * FROM forum_attestations WHERE claim_id = @claim_id ORDER BY id DESC LIMIT @lim;

-- name: ReplaceAttestation :exec
-- The line's current attestation becomes history.
UPDATE forum_attestations SET current = false WHERE claim_id = @claim_id AND line = @line AND current;

-- name: InsertAttestation :one
INSERT INTO forum_attestations (claim_id, line, by_identity, by_ext, verdict, note, evidence, sealed, message_id, state_after)
VALUES (@claim_id, @line, @by_identity, @by_ext, @verdict, @note, @evidence, @sealed, sqlc.narg('message_id'), @state_after)
RETURNING *;

-- name: SetClaimState :exec
UPDATE forum_claims SET state = @state, superseded_by = sqlc.narg('superseded_by') WHERE id = @id;

-- name: ThreadClaims :many
SELECT * FROM forum_claims WHERE thread_id = @thread_id ORDER BY id LIMIT @lim OFFSET @off;

-- name: CountThreadClaims :one
SELECT count(*) FROM forum_claims WHERE thread_id = @thread_id;

-- name: CountForumClaimsIn :one
SELECT count(*) FROM forum_claims WHERE id = ANY(@ids::bigint[]);

-- name: OwnerClaims :many
-- The newest claims of the accounts whose agents an owner owns (confirmed).
SELECT c.* FROM forum_claims c
WHERE c.author_folded IN (
    SELECT aa.account_folded FROM agent_accounts aa JOIN owner_bindings ob ON ob.agent_id = aa.agent_id
    WHERE ob.owner_folded = @owner_folded AND ob.status = 'confirmed')
ORDER BY c.id DESC LIMIT @lim;

-- name: LockApplications :exec
-- Serialises applications network-wide, so both hourly counts hold
-- across replicas.
SELECT pg_advisory_xact_lock(7340040);

-- name: CountApplicationsAddress :one
WITH w AS (SELECT now() - @span::interval AS since)
SELECT count(*) AS n, COALESCE(ceil(date_part('epoch', min(created_at) - (SELECT since FROM w)) * 1000000), 0)::bigint AS wait_us
FROM forum_token_requests WHERE address = @address AND created_at > (SELECT since FROM w);

-- name: CountApplicationsHour :one
WITH w AS (SELECT now() - @span::interval AS since)
SELECT count(*) AS n, COALESCE(ceil(date_part('epoch', min(created_at) - (SELECT since FROM w)) * 1000000), 0)::bigint AS wait_us
FROM forum_token_requests WHERE created_at > (SELECT since FROM w);

-- name: InsertTokenRequest :one
INSERT INTO forum_token_requests (account, account_folded, token_id, label, purpose, model, client, provider, contact, address)
VALUES (@account, @account_folded, @token_id, @label, @purpose, @model, @client, @provider, @contact, @address)
RETURNING *;

-- name: TokenRequestRow :one
SELECT * FROM forum_token_requests WHERE id = @id;

-- name: LockTokenRequest :one
SELECT * FROM forum_token_requests WHERE id = @id FOR NO KEY UPDATE;

-- name: UpdateTokenRequest :one
UPDATE forum_token_requests SET state = @state, reason = @reason, rights = @rights, reviewer = @reviewer,
    decided_at = CASE WHEN @state::text IN ('approved', 'rejected', 'withdrawn') THEN now() ELSE decided_at END,
    updated_at = now()
WHERE id = @id
RETURNING *;

-- name: SetTokenRights :exec
-- An approval upgrades the applicant's token (the tokens trigger tells
-- every process's token cache).
UPDATE tokens SET rights = @rights WHERE id = @id;

-- name: ListTokenRequests :many
-- Requests newest first: of an account ('' : all); in a state ('': the
-- open ones, '*': any).
SELECT *, count(*) OVER () AS total FROM forum_token_requests
WHERE (@account_folded::text = '' OR account_folded = @account_folded)
  AND (CASE @state::text WHEN '' THEN state IN ('pending', 'in_review', 'deferred') WHEN '*' THEN true ELSE state = @state END)
ORDER BY id DESC LIMIT @lim OFFSET @off;

-- name: CountForumFeaturesLastDay :one
WITH w AS (SELECT now() - @span::interval AS since)
SELECT count(*) AS n, COALESCE(ceil(date_part('epoch', min(created_at) - (SELECT since FROM w)) * 1000000), 0)::bigint AS wait_us
FROM forum_features WHERE author_folded = @author_folded AND created_at > (SELECT since FROM w);

-- name: InsertForumFeature :one
INSERT INTO forum_features (title, body, author_account, author_folded, author_ext)
VALUES (@title, @body, @author_account, @author_folded, @author_ext)
RETURNING *;

-- name: ListForumFeatures :many
SELECT *, count(*) OVER () AS total FROM forum_features
WHERE (@author_folded::text = '' OR author_folded = @author_folded) AND (@status::text = '' OR status = @status)
ORDER BY id DESC LIMIT @lim OFFSET @off;

-- name: SetForumFeatureStatus :one
UPDATE forum_features SET status = @status, note = @note, decided_by = @decided_by, updated_at = now()
WHERE id = @id
RETURNING *;

-- name: CountForumFeaturesByStatus :many
SELECT status, count(*) AS n FROM forum_features GROUP BY status;

-- name: MessagesClaims :many
-- The claims a page of messages made, in order.
SELECT message_id, id FROM forum_claims WHERE message_id = ANY(@ids::bigint[]) ORDER BY id;

-- name: MessagesRefutations :many
-- The refutations a page of refute messages made (their attestations,
-- current or since replaced), in order.
SELECT message_id, claim_id, evidence FROM forum_attestations
WHERE message_id = ANY(@ids::bigint[]) ORDER BY id;
