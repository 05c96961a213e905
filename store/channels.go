package store

import (
	"context"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// Channels implements pircan.Store.
func (s *Store) Channels(ctx context.Context, agentID, q string, limit, offset int) ([]pircan.Channel, int, error) {
	var out []pircan.Channel
	total := 0
	err := s.readPlanned(ctx, func(ctx context.Context, dq *db.Queries) error {
		p := db.ListChannelsParams{AgentID: agentID, Lim: int32(limit), Off: int32(offset)}
		if q != "" {
			p.Q = likePattern(q) // plain text, case-insensitive (spec §3 CHANNELS)
		}
		rows, err := dq.ListChannels(ctx, p)
		for _, r := range rows {
			out = append(out, pircan.Channel{Name: r.Name, Private: r.Private, Topic: r.Topic, Members: int(r.Members)})
			total = int(r.Total)
		}
		if err == nil && len(rows) == 0 && offset > 0 {
			// Past the end: ask for the first row only to learn the total.
			p.Off, p.Lim = 0, 1
			if rows, err = dq.ListChannels(ctx, p); err == nil && len(rows) > 0 {
				total = int(rows[0].Total)
			}
		}
		return err
	})
	return out, total, err
}

// JoinChannel implements pircan.Store.
func (s *Store) JoinChannel(ctx context.Context, agentID, name string) (pircan.Channel, error) {
	var ch pircan.Channel
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		row, err := q.ChannelForAgent(ctx, db.ChannelForAgentParams{AgentID: agentID, NameFolded: pircan.RFC1459.Fold(name)})
		if err != nil {
			return notFound(err)
		}
		ch = pircan.Channel{Name: row.Name, Private: row.Private, Topic: row.Topic}
		if !row.Joined {
			if err := q.MarkJoined(ctx, db.MarkJoinedParams{ChannelID: row.ID, AgentID: agentID}); err != nil {
				return err
			}
			if err := audit(ctx, q, pircan.Actor{AgentID: agentID}, "channel.join", row.Name, map[string]any{"private": row.Private}); err != nil {
				return err
			}
		}
		n, err := q.CountMembers(ctx, row.ID)
		ch.Members = int(n)
		return err
	})
	return ch, err
}

// AddChannel registers a channel (operator command), audited.
func (s *Store) AddChannel(ctx context.Context, actor pircan.Actor, name string, private bool, topic string) error {
	if err := pircan.CheckChannelName(name); err != nil {
		return err
	}
	return s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		if _, err := q.AddChannel(ctx, db.AddChannelParams{Name: name, NameFolded: pircan.RFC1459.Fold(name), Private: private, Topic: topic}); err != nil {
			if isUniqueViolation(err) {
				return pircan.ErrConflict
			}
			return err
		}
		return audit(ctx, q, actor, "channel.add", name, map[string]any{"private": private, "topic_bytes": len(topic)})
	})
}

// EnsureChannel registers a channel unless it exists (the lobby).
func (s *Store) EnsureChannel(ctx context.Context, name, topic string) error {
	err := s.AddChannel(ctx, pircan.Actor{Account: "pircan"}, name, false, topic)
	if err == pircan.ErrConflict {
		return nil
	}
	return err
}

// ListAllChannels lists every channel (operator view).
func (s *Store) ListAllChannels(ctx context.Context) ([]pircan.ChannelInfo, error) {
	return readRows(ctx, s, noArg((*db.Queries).AllChannels), struct{}{}, func(r db.AllChannelsRow) pircan.ChannelInfo {
		return pircan.ChannelInfo{Name: r.Name, Private: r.Private, Topic: r.Topic, Members: int(r.Members), Invited: int(r.Invited)}
	})
}

// InviteToChannel lets an agent into a private channel (operator command).
func (s *Store) InviteToChannel(ctx context.Context, actor pircan.Actor, name, agentID string) error {
	return s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		ch, err := q.ChannelByName(ctx, pircan.RFC1459.Fold(name))
		if err != nil {
			return notFound(err)
		}
		if !pircan.ValidID(agentID) {
			return pircan.ErrNotFound
		}
		ok, err := q.AgentExists(ctx, agentID)
		if err != nil {
			return err
		}
		if !ok {
			return pircan.ErrNotFound
		}
		if err := q.InviteMember(ctx, db.InviteMemberParams{ChannelID: ch.ID, AgentID: agentID}); err != nil {
			return err
		}
		return audit(ctx, q, actor, "channel.invite", ch.Name, map[string]any{"agent_id": agentID})
	})
}

// RemoveChannel deletes a channel and its memberships (operator command).
func (s *Store) RemoveChannel(ctx context.Context, actor pircan.Actor, name string) error {
	return s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		n, err := q.RemoveChannel(ctx, pircan.RFC1459.Fold(name))
		if err != nil {
			return err
		}
		if n == 0 {
			return pircan.ErrNotFound
		}
		return audit(ctx, q, actor, "channel.remove", name, nil)
	})
}
