-- Tasks (DESIGN.md "Tasks"). A new task locks the requester's row first
-- (LockAgent, handshake.sql), so its hourly count cannot be beaten by racing
-- tasks; an answer or a cancel locks the task's row, so of two racing ones
-- exactly one finds it open.

-- name: CountTasksLastHour :one
-- Read after LockTaskRequester, in its transaction: its snapshot then
-- holds every task of an earlier holder of the lock.
SELECT count(*) FROM tasks WHERE requester = @requester AND created_at > now() - @span::interval;

-- name: TaskAgreements :many
-- The active agreements (not revoked, not expired) that the requester asked
-- for and the target accepted: only these grant the requester task scopes.
-- FOR SHARE: a racing revoke waits for the task to commit, or the task sees
-- the agreement revoked.
SELECT id, scopes FROM agreements
WHERE requester = @requester AND target = @target
  AND revoked_at IS NULL AND expires_at > now()
ORDER BY expires_at DESC, id
FOR SHARE;

-- name: LockTaskRequester :one
-- Serialises one requester's tasks (its hourly count, CountTasksLastHour,
-- is read after it in the same transaction), and says whether the target
-- exists. NO KEY: the tasks' foreign keys need a share lock on it.
SELECT EXISTS (SELECT 1 FROM agents t WHERE t.id = @target) AS target_exists
FROM agents me WHERE me.id = @requester
FOR NO KEY UPDATE OF me;

-- name: SendTask :one
-- A task's insert, its audit entry and the target's notification in one
-- statement, returning the task as TaskOf does. Sent with the commit, once
-- the core has decided from LockTaskRequester, CountTasksLastHour and
-- TaskAgreements (store/tasks.go).
WITH ins AS (
    INSERT INTO tasks (requester, target, agreement_id, skill, text)
    VALUES (@requester::uuid, @target::uuid, @agreement_id::uuid, @skill::text, @text::text)
    RETURNING *
), audited AS (
    INSERT INTO audit_log (actor_account, actor_agent, action, subject, details)
    SELECT @actor_account::text, sqlc.narg('actor_agent')::uuid, @action::text, ins.id::text, @details::jsonb FROM ins
), notified AS (
    INSERT INTO notifications (agent_id, type) SELECT ins.target, @notify_type::text FROM ins
)
SELECT ins.id, ins.requester, r.name AS requester_name, ins.target, g.name AS target_name, ins.agreement_id,
       ins.skill, ins.text, ins.state, ins.answer, ins.created_at, ins.answered_at
FROM ins
JOIN agents r ON r.id = ins.requester
JOIN agents g ON g.id = ins.target;

-- name: TaskOf :one
-- One task of which the agent is a party, with both parties' names.
SELECT t.id, t.requester, r.name AS requester_name, t.target, g.name AS target_name, t.agreement_id,
       t.skill, t.text, t.state, t.answer, t.created_at, t.answered_at
FROM tasks t
JOIN agents r ON r.id = t.requester
JOIN agents g ON g.id = t.target
WHERE t.id = @id AND (t.requester = @agent OR t.target = @agent);

-- name: LockTask :one
SELECT id, requester, target, state FROM tasks WHERE id = @id FOR UPDATE;

-- name: AnswerTask :exec
UPDATE tasks SET state = @state, answer = @answer, answered_at = now() WHERE id = @id;

-- name: CancelTask :exec
UPDATE tasks SET state = 'canceled', answered_at = now() WHERE id = @id;

-- name: ListTasks :many
-- The agent's incoming (as target) or outgoing tasks, open ones first, then
-- newest first, with the total. A page is at most 10 rows; the open
-- incoming ones (list_tasks' default) come from tasks_target_open. The
-- optional filters: the other party, the agreement, a last change (the
-- answer, else the creation) at or after a time.
SELECT t.id, t.requester, r.name AS requester_name, t.target, g.name AS target_name, t.agreement_id,
       t.skill, t.text, t.state, t.answer, t.created_at, t.answered_at,
       count(*) OVER () AS total
FROM tasks t
JOIN agents r ON r.id = t.requester
JOIN agents g ON g.id = t.target
WHERE (CASE WHEN @incoming::boolean THEN t.target ELSE t.requester END) = @agent
  AND (@status::text = 'any' OR t.state = @status::text)
  AND (sqlc.narg('other')::uuid IS NULL
       OR (CASE WHEN @incoming::boolean THEN t.requester ELSE t.target END) = sqlc.narg('other')::uuid)
  AND (sqlc.narg('agreement')::uuid IS NULL OR t.agreement_id = sqlc.narg('agreement')::uuid)
  AND (sqlc.narg('changed_since')::timestamptz IS NULL
       OR coalesce(t.answered_at, t.created_at) >= sqlc.narg('changed_since')::timestamptz)
ORDER BY t.state <> 'open', t.created_at DESC, t.id
LIMIT @lim OFFSET @off;

-- name: CountOpenTasks :one
-- NOTIFY task_request's count: the target's open tasks.
SELECT count(*) FROM tasks WHERE target = @target AND state = 'open';
