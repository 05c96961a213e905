-- name: CountSignInStarts :one
-- Sign-in starts of the last hour from one address (spec §4).
SELECT count(*) FROM portal_sessions WHERE address = @address AND created_at > now() - interval '1 hour';

-- name: LockSignInStarts :exec
-- Serialises the sign-in starts of one address, so the hourly count holds.
SELECT pg_advisory_xact_lock(7340004, hashtext(@address::text));

-- name: InsertPortalSession :one
INSERT INTO portal_sessions (secret_sha256, code, csrf_token, address, user_agent)
VALUES (@secret_sha256, @code, @csrf_token, @address, @user_agent)
ON CONFLICT DO NOTHING
RETURNING id, created_at;

-- name: PortalSessionBySecret :one
-- A session as of now: waiting (code valid for 10 minutes), active
-- (approved, not ended, not expired), or neither.
SELECT s.id, s.code, s.csrf_token, s.address, s.user_agent, s.created_at,
       s.account, s.account_folded, s.approved_at, s.expires_at, s.ended_at,
       (s.approved_at IS NULL AND s.ended_at IS NULL AND s.created_at > now() - interval '10 minutes')::boolean AS waiting,
       (s.approved_at IS NOT NULL AND s.ended_at IS NULL AND s.expires_at > now())::boolean AS active
FROM portal_sessions s WHERE s.secret_sha256 = @secret_sha256;

-- name: LockLoginAttempts :exec
-- Serialises one account's LOGINs, so the hourly count holds.
SELECT pg_advisory_xact_lock(7340005, hashtext(@account_folded::text));

-- name: CountLoginAttempts :one
SELECT count(*) FROM login_attempts WHERE account_folded = @account_folded AND at > now() - interval '1 hour';

-- name: InsertLoginAttempt :exec
INSERT INTO login_attempts (account_folded, ok) VALUES (@account_folded, @ok);

-- name: LockWaitingByCode :one
-- The waiting sign-in a code names, if it is still valid (10 minutes, once).
SELECT id, user_agent, address, created_at FROM portal_sessions
WHERE code = @code AND approved_at IS NULL AND ended_at IS NULL AND created_at > now() - interval '10 minutes'
FOR UPDATE;

-- name: ApprovePortalSession :one
UPDATE portal_sessions SET account_folded = @account_folded::text, account = @account::text,
       approved_at = now(), expires_at = now() + interval '12 hours'
WHERE id = @id
RETURNING approved_at::timestamptz AS approved_at, expires_at::timestamptz AS expires_at;

-- name: EnsureOwner :exec
INSERT INTO owners (account_folded, account, name) VALUES (@account_folded, @account, @account)
ON CONFLICT (account_folded) DO NOTHING;

-- name: OwnerByAccount :one
SELECT account, name, verification FROM owners WHERE account_folded = @account_folded;

-- name: VerifyOwner :one
INSERT INTO owners (account_folded, account, name, verification, verified_at)
VALUES (@account_folded, @account, @name, 'verified', now())
ON CONFLICT (account_folded) DO UPDATE SET name = excluded.name, verification = 'verified', verified_at = now()
RETURNING (xmax = 0)::boolean AS created;

-- name: EndAccountSessions :many
-- LOGOUT: ends every live portal session of an account.
UPDATE portal_sessions SET ended_at = now()
WHERE account_folded = @account_folded::text AND ended_at IS NULL AND expires_at > now()
RETURNING id;

-- name: EndPortalSession :execrows
UPDATE portal_sessions SET ended_at = now()
WHERE id = @id AND account_folded = @account_folded::text AND ended_at IS NULL AND expires_at > now();

-- name: ListAccountSessions :many
SELECT id, address, user_agent, created_at, approved_at::timestamptz AS approved_at, expires_at::timestamptz AS expires_at
FROM portal_sessions
WHERE account_folded = @account_folded::text AND ended_at IS NULL AND expires_at > now()
ORDER BY approved_at DESC, id;

-- name: AgentsOfAccount :many
-- Every agent bound to an account, with its policy.
SELECT a.id, a.name, a.description, a.capabilities, a.nick, a.policy, a.policy_locked
FROM agent_accounts b JOIN agents a ON a.id = b.agent_id
WHERE b.account_folded = @account_folded
ORDER BY b.bound_at, a.id;

-- name: AgentWithOwnerByAccount :one
-- AgentByAccount, with the owner of the account when it has one.
SELECT a.id, a.name, a.description, a.capabilities, a.card_url, a.nick, a.created_at, b.account,
       o.name AS owner_name, o.verification AS owner_verification
FROM agent_accounts b JOIN agents a ON a.id = b.agent_id
LEFT JOIN owners o ON o.account_folded = b.account_folded
WHERE b.account_folded = @account_folded;
