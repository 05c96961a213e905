-- +goose Up
-- resource_grants are the agreements that let their requester (reader)
-- read their target's (publisher's) resources: active (not revoked, not
-- expired) and granting resource:read. A resource is readable to the agent
-- that published it, to all when public, and to the readers its publisher
-- granted (queries/resources.sql). A view, so each statement is planned as
-- if it held this text (an index probe on agreements_requester per row).
CREATE VIEW resource_grants AS
SELECT g.requester AS reader, g.target AS publisher
FROM agreements g
WHERE g.revoked_at IS NULL AND g.expires_at > now() AND 'resource:read' = ANY (g.scopes);

-- +goose Down
DROP VIEW resource_grants;
