package store

import (
	"context"
	"errors"
	"strings"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// AgentByAccount implements pircan.Store.
func (s *Store) AgentByAccount(ctx context.Context, account string) (pircan.Agent, error) {
	folded := foldAccount(account)
	a, ok, gen := s.agents.get(folded)
	if ok {
		return a, nil
	}
	a, err := readOne(ctx, s, (*db.Queries).AgentWithOwnerByAccount, folded, func(row db.AgentWithOwnerByAccountRow) pircan.Agent {
		a := pircan.Agent{ID: row.ID, Account: row.Account, Name: row.Name, Description: row.Description,
			Capabilities: row.Capabilities, CardURL: row.CardUrl, Nick: row.Nick, CreatedAt: row.CreatedAt}
		if row.OwnerAccount != nil && row.OwnerName != nil && row.OwnerVerification != nil {
			a.Owner = &pircan.Owner{Account: *row.OwnerAccount, Name: *row.OwnerName, Verification: *row.OwnerVerification}
		}
		return a
	})
	if err == nil {
		s.agents.put(folded, a, gen)
	}
	return a, err
}

// AgentProfile implements pircan.Store.
func (s *Store) AgentProfile(ctx context.Context, agentID string) (pircan.Agent, error) {
	return readOne(ctx, s, (*db.Queries).AgentProfileByID, agentID, func(row db.AgentProfileByIDRow) pircan.Agent {
		return pircan.Agent{ID: row.ID, Name: row.Name, Description: row.Description,
			Capabilities: row.Capabilities, CreatedAt: row.CreatedAt}
	})
}

// Hello implements pircan.Store: register or update, audited in the same
// transaction.
func (s *Store) Hello(ctx context.Context, account, nick string, p pircan.Profile, maxNewPerHour int) (pircan.Agent, bool, error) {
	var agent pircan.Agent
	var created bool
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		existing, err := q.AgentByAccount(ctx, foldAccount(account))
		if errors.Is(err, errNoRows) {
			// Serialise registrations, then look again: a racing HELLO of
			// the same account may have registered it meanwhile.
			if err := q.LockRegistrations(ctx); err != nil {
				return err
			}
			existing, err = q.AgentByAccount(ctx, foldAccount(account))
		}
		switch {
		case err == nil:
			agent, err = updateProfile(ctx, q, existing, account, nick, p)
			return err
		case !errors.Is(err, errNoRows):
			return err
		}
		recent, err := q.CountRecentRegistrations(ctx, pircan.HourWindow)
		if err != nil {
			return err
		}
		if recent >= int64(maxNewPerHour) {
			return pircan.ErrRegistrationPaused
		}
		agent, err = createAgent(ctx, q, account, nick, p)
		created = err == nil
		return err
	})
	s.agents.forget(agent.ID)
	return agent, created, err
}

func createAgent(ctx context.Context, q *db.Queries, account, nick string, p pircan.Profile) (pircan.Agent, error) {
	a := pircan.Agent{Account: account, Name: p.NewName, Nick: nick, Capabilities: []string{}}
	if a.Name == "" {
		a.Name = nick
	}
	applyProfile(&a, p)
	row, err := q.CreateAgent(ctx, db.CreateAgentParams{Name: a.Name, Description: a.Description,
		Capabilities: a.Capabilities, CardUrl: a.CardURL, Nick: nick})
	if err != nil {
		return a, err
	}
	a.ID, a.CreatedAt = row.ID, row.CreatedAt
	if err := q.BindAccount(ctx, db.BindAccountParams{AccountFolded: foldAccount(account), Account: account, AgentID: a.ID}); err != nil {
		return a, err
	}
	return a, audit(ctx, q, pircan.Actor{Account: account, AgentID: a.ID}, "agent.register", a.ID, map[string]any{
		"name_bytes": len(a.Name), "description_bytes": len(a.Description), "capabilities": len(a.Capabilities),
		"card_url": a.CardURL != ""})
}

func updateProfile(ctx context.Context, q *db.Queries, row db.AgentByAccountRow, account, nick string, p pircan.Profile) (pircan.Agent, error) {
	before := pircan.Agent{ID: row.ID, Account: row.Account, Name: row.Name, Description: row.Description,
		Capabilities: row.Capabilities, CardURL: row.CardUrl, Nick: row.Nick, CreatedAt: row.CreatedAt}
	after := before
	applyProfile(&after, p)
	changed := changedFields(before, after)
	if len(changed) == 0 && before.Nick == nick {
		return before, nil
	}
	params := db.UpdateProfileParams{ID: row.ID, Nick: nick, Name: p.Name, Description: p.Description, CardUrl: p.CardURL}
	if p.Capabilities != nil {
		params.Capabilities = append([]string{}, *p.Capabilities...)
	}
	if _, err := q.UpdateProfile(ctx, params); err != nil {
		return before, err
	}
	after.Nick = nick
	if len(changed) == 0 {
		return after, nil
	}
	return after, audit(ctx, q, pircan.Actor{Account: account, AgentID: row.ID}, "agent.update", row.ID, map[string]any{"fields": changed})
}

func applyProfile(a *pircan.Agent, p pircan.Profile) {
	if p.Name != nil {
		a.Name = *p.Name
	}
	if p.Description != nil {
		a.Description = *p.Description
	}
	if p.Capabilities != nil {
		a.Capabilities = append([]string{}, *p.Capabilities...)
	}
	if p.CardURL != nil {
		a.CardURL = *p.CardURL
	}
}

func changedFields(a, b pircan.Agent) []string {
	var out []string
	if a.Name != b.Name {
		out = append(out, "name")
	}
	if a.Description != b.Description {
		out = append(out, "description")
	}
	if strings.Join(a.Capabilities, "\x00") != strings.Join(b.Capabilities, "\x00") {
		out = append(out, "capabilities")
	}
	if a.CardURL != b.CardURL {
		out = append(out, "card_url")
	}
	return out
}

// SeenNick implements pircan.Store.
func (s *Store) SeenNick(ctx context.Context, agentID, nick string) error {
	defer s.agents.forget(agentID)
	return s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		return q.SetNick(ctx, db.SetNickParams{ID: agentID, Nick: nick})
	})
}
