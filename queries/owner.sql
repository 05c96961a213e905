-- name: CountSignInStarts :one
-- Sign-in codes asked for from one address in the last hour and not used
-- (spec §4's limit; see protocol-notes), and when the oldest of them
-- leaves the window.
SELECT count(*) AS n,
       (coalesce(min(created_at), now()) + @span::interval)::timestamptz AS frees_at
FROM portal_sessions
WHERE address = @address AND approved_at IS NULL AND created_at > now() - @span::interval;

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
       (s.approved_at IS NULL AND s.ended_at IS NULL AND s.created_at > now() - @code_lifetime::interval)::boolean AS waiting,
       (s.approved_at IS NOT NULL AND s.ended_at IS NULL AND s.expires_at > now())::boolean AS active
FROM portal_sessions s WHERE s.secret_sha256 = @secret_sha256;

-- name: LockLoginAttempts :exec
-- Serialises one account's LOGINs, so the hourly count holds.
SELECT pg_advisory_xact_lock(7340005, hashtext(@account_folded::text));

-- name: CountLoginAttempts :one
SELECT count(*) FROM login_attempts WHERE account_folded = @account_folded AND at > now() - @span::interval;

-- name: InsertLoginAttempt :exec
INSERT INTO login_attempts (account_folded, ok) VALUES (@account_folded, @ok);

-- name: LockWaitingByCode :one
-- The waiting sign-in a code names, if it is still valid (10 minutes, once).
SELECT id, user_agent, address, created_at FROM portal_sessions
WHERE code = @code AND approved_at IS NULL AND ended_at IS NULL AND created_at > now() - @code_lifetime::interval
FOR UPDATE;

-- name: ApprovePortalSession :one
UPDATE portal_sessions SET account_folded = @account_folded::text, account = @account::text,
       approved_at = now(), expires_at = now() + @session_lifetime::interval
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
-- The agents an account holds owner powers over or sees in the portal:
-- those whose confirmed owner it is, and its own agent (read-only when
-- another account is its confirmed owner: confirmed_owner names it).
SELECT a.id, a.name, a.description, a.capabilities, a.nick, a.policy, a.policy_locked,
       b.account AS agent_account, ob.owner_account AS confirmed_owner
FROM agents a
JOIN agent_accounts b ON b.agent_id = a.id
LEFT JOIN owner_bindings ob ON ob.agent_id = a.id AND ob.status = 'confirmed'
WHERE b.account_folded = @account_folded OR ob.owner_folded = @account_folded
ORDER BY b.bound_at, a.id;

-- name: PendingBindingsFor :many
-- Agents that named this account as their owner and wait for it.
SELECT a.id, a.name, a.description, b.account AS agent_account, ob.named_at
FROM owner_bindings ob
JOIN agents a ON a.id = ob.agent_id
JOIN agent_accounts b ON b.agent_id = a.id
WHERE ob.owner_folded = @owner_folded AND ob.status = 'pending'
ORDER BY ob.named_at, a.id;

-- name: BindingOfAgent :one
SELECT ob.owner_account, ob.owner_folded, ob.status, ob.named_at, ob.decided_at, o.name AS owner_name, o.verification AS owner_verification
FROM owner_bindings ob
LEFT JOIN owners o ON o.account_folded = ob.owner_folded
WHERE ob.agent_id = @agent_id;

-- name: LockBindingOfAgent :one
SELECT owner_account, owner_folded, status,
       coalesce(decided_at > now() - @cooldown::interval, false)::boolean AS recent
FROM owner_bindings WHERE agent_id = @agent_id FOR UPDATE;

-- name: UpsertBinding :one
INSERT INTO owner_bindings (agent_id, owner_folded, owner_account, status)
VALUES (@agent_id, @owner_folded, @owner_account, 'pending')
ON CONFLICT (agent_id) DO UPDATE SET owner_folded = excluded.owner_folded, owner_account = excluded.owner_account,
    status = 'pending', named_at = now(), decided_at = NULL
RETURNING named_at;

-- name: DeleteBinding :execrows
DELETE FROM owner_bindings WHERE agent_id = @agent_id AND status = ANY(@statuses::text[]);

-- name: DecideBinding :execrows
-- The named owner confirms or declines a pending binding.
UPDATE owner_bindings SET status = @status, decided_at = now()
WHERE agent_id = @agent_id AND owner_folded = @owner_folded AND status = 'pending';

-- name: ReleaseBinding :execrows
-- The confirmed owner lets the agent go.
DELETE FROM owner_bindings WHERE agent_id = @agent_id AND owner_folded = @owner_folded AND status = 'confirmed';

-- name: AccountKnown :one
-- Whether PIRCAN has ever seen an account: an agent's, a portal owner's, or
-- one an agent named as its owner.
SELECT (EXISTS (SELECT 1 FROM agent_accounts aa WHERE aa.account_folded = @folded::text)
    OR EXISTS (SELECT 1 FROM owners ow WHERE ow.account_folded = @folded::text)
    OR EXISTS (SELECT 1 FROM owner_bindings bb WHERE bb.owner_folded = @folded::text))::boolean AS known;

-- name: AgentWithOwnerByAccount :one
-- AgentByAccount, with its owner: the confirmed owner account when it has
-- one, else the account itself once it signed in to the portal.
SELECT a.id, a.name, a.description, a.capabilities, a.card_url, a.nick, a.created_at, b.account,
       o.account AS owner_account, o.name AS owner_name, o.verification AS owner_verification
FROM agent_accounts b JOIN agents a ON a.id = b.agent_id
LEFT JOIN owner_bindings ob ON ob.agent_id = a.id AND ob.status = 'confirmed'
LEFT JOIN owners o ON o.account_folded = coalesce(ob.owner_folded, b.account_folded)
WHERE b.account_folded = @account_folded;
