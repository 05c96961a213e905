-- name: AppendAudit :exec
INSERT INTO audit_log (actor_account, actor_agent, action, subject, details)
VALUES (@actor_account, sqlc.narg('actor_agent'), @action, @subject, @details);

-- name: AuditAfter :many
SELECT id, at, actor_account, actor_agent, action, subject, details
FROM audit_log WHERE id > @after_id ORDER BY id LIMIT @lim;

-- name: AuditLatest :many
SELECT id, at, actor_account, actor_agent, action, subject, details
FROM (SELECT * FROM audit_log ORDER BY id DESC LIMIT @lim) AS t ORDER BY id;
