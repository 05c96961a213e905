-- name: ListChannels :many
-- Public channels, and private ones the agent was invited to or joined.
SELECT c.name, c.private, c.topic,
       (SELECT count(*) FROM channel_members m WHERE m.channel_id = c.id AND m.joined_at IS NOT NULL) AS members,
       count(*) OVER () AS total
FROM channels c
WHERE (NOT c.private OR EXISTS (SELECT 1 FROM channel_members m WHERE m.channel_id = c.id AND m.agent_id = @agent_id))
  -- q is plain text, lower-cased and LIKE-escaped by the caller: never the IRC
  -- casemapping, under which [ ] \ ~ would match { } | ^.
  AND (sqlc.narg('q')::text IS NULL OR lower(c.name) LIKE '%' || sqlc.narg('q')::text || '%'
       OR lower(c.topic) LIKE '%' || sqlc.narg('q')::text || '%')
ORDER BY c.name_folded
LIMIT @lim OFFSET @off;

-- name: ChannelForAgent :one
-- The channel as the agent may see it: a private one only with a membership row.
SELECT c.id, c.name, c.private, c.topic, (m.joined_at IS NOT NULL)::boolean AS joined
FROM channels c LEFT JOIN channel_members m ON m.channel_id = c.id AND m.agent_id = @agent_id
WHERE c.name_folded = @name_folded AND (NOT c.private OR m.agent_id IS NOT NULL);

-- name: MarkJoined :exec
INSERT INTO channel_members (channel_id, agent_id, joined_at) VALUES (@channel_id, @agent_id, now())
ON CONFLICT (channel_id, agent_id) DO UPDATE SET joined_at = coalesce(channel_members.joined_at, now());

-- name: CountMembers :one
SELECT count(*) FROM channel_members WHERE channel_id = @channel_id AND joined_at IS NOT NULL;

-- name: AddChannel :one
INSERT INTO channels (name, name_folded, private, topic) VALUES (@name, @name_folded, @private, @topic)
RETURNING id;

-- name: AllChannels :many
SELECT c.id, c.name, c.private, c.topic,
       (SELECT count(*) FROM channel_members m WHERE m.channel_id = c.id AND m.joined_at IS NOT NULL) AS members,
       (SELECT count(*) FROM channel_members m WHERE m.channel_id = c.id AND m.invited_at IS NOT NULL) AS invited
FROM channels c ORDER BY c.name_folded;

-- name: InviteMember :exec
INSERT INTO channel_members (channel_id, agent_id, invited_at) VALUES (@channel_id, @agent_id, now())
ON CONFLICT (channel_id, agent_id) DO UPDATE SET invited_at = coalesce(channel_members.invited_at, now());

-- name: ChannelByName :one
SELECT id, name, private, topic FROM channels WHERE name_folded = @name_folded;

-- name: RemoveChannel :execrows
DELETE FROM channels WHERE name_folded = @name_folded;

-- name: AgentExists :one
SELECT EXISTS (SELECT 1 FROM agents WHERE id = @id);
