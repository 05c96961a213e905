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
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		row, err := q.AgentWithOwnerByAccount(ctx, folded)
		if err != nil {
			return notFound(err)
		}
		a = pircan.Agent{ID: row.ID, Account: row.Account, Name: row.Name, Description: row.Description,
			Capabilities: row.Capabilities, CardURL: row.CardUrl, Nick: row.Nick, CreatedAt: row.CreatedAt}
		if row.OwnerAccount != nil && row.OwnerName != nil && row.OwnerVerification != nil {
			a.Owner = &pircan.Owner{Account: *row.OwnerAccount, Name: *row.OwnerName, Verification: *row.OwnerVerification}
		}
		return nil
	})
	if err == nil {
		s.agents.put(folded, a, gen)
	}
	return a, err
}

// AgentProfile implements pircan.Store.
func (s *Store) AgentProfile(ctx context.Context, agentID string) (pircan.Agent, error) {
	var a pircan.Agent
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		row, err := q.AgentProfileByID(ctx, agentID)
		if err != nil {
			return notFound(err)
		}
		a = pircan.Agent{ID: row.ID, Name: row.Name, Description: row.Description,
			Capabilities: row.Capabilities, CreatedAt: row.CreatedAt}
		return nil
	})
	return a, err
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
		recent, err := q.CountRecentRegistrations(ctx)
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

// FindAgents implements pircan.Store.
func (s *Store) FindAgents(ctx context.Context, fq pircan.FindQuery) ([]pircan.Agent, int, error) {
	var agents []pircan.Agent
	total := 0
	// A capability alone is one fixed query shape: prepared, its plan
	// kept. The rest have optional filters: planned per call.
	read, find := s.readPlanned, findFiltered
	if fq.Q == "" && fq.Capability != "" {
		read, find = s.read, findByCapability
	}
	err := read(ctx, func(ctx context.Context, q *db.Queries) error {
		rows, n, err := find(ctx, q, fq)
		total = n
		for _, r := range rows {
			agents = append(agents, pircan.Agent{ID: r.ID, Name: r.Name, Description: r.Description,
				Capabilities: r.Capabilities, Nick: r.Nick})
		}
		return err
	})
	return agents, total, err
}

// findByCapability is FIND by a capability alone: a range of
// agent_capabilities, paged in registration order, its total on every row.
func findByCapability(ctx context.Context, q *db.Queries, fq pircan.FindQuery) ([]db.FindAgentsRow, int, error) {
	c := strings.ToLower(fq.Capability)
	page, err := q.FindByCapability(ctx, db.FindByCapabilityParams{Capability: c, Cap: pircan.MaxFindTotal + 1,
		Lim: int32(fq.Limit), Off: int32(fq.Offset)})
	if err != nil || len(page) == 0 {
		n, cerr := q.CountByCapability(ctx, db.CountByCapabilityParams{Capability: c, Cap: pircan.MaxFindTotal + 1})
		return nil, int(n), errors.Join(err, cerr)
	}
	rows := make([]db.FindAgentsRow, len(page))
	for i, r := range page {
		rows[i] = db.FindAgentsRow{ID: r.ID, Name: r.Name, Description: r.Description, Capabilities: r.Capabilities, Nick: r.Nick}
	}
	return rows, int(page[0].Total), nil
}

// findFiltered is FIND by q (and a capability), or by nothing.
func findFiltered(ctx context.Context, q *db.Queries, fq pircan.FindQuery) ([]db.FindAgentsRow, int, error) {
	p := db.FindAgentsParams{Lim: int32(fq.Limit), Off: int32(fq.Offset)}
	if fq.Q != "" {
		p.Q = likePattern(fq.Q)
	}
	if fq.Capability != "" {
		c := strings.ToLower(fq.Capability)
		p.Capability = &c
	}
	// Count first (capped): it also says which page query suits the
	// filter. Many matches: walking the registration order finds a page at
	// once. Few: a walk could cross the whole directory before it meets
	// them (a word only the newest agents use, say), so the few are fetched
	// through the indexes and sorted.
	n, err := q.CountAgents(ctx, db.CountAgentsParams{Q: p.Q, Capability: p.Capability, Cap: pircan.MaxFindTotal + 1})
	if err != nil {
		return nil, 0, err
	}
	if n > pircan.MaxFindTotal {
		rows, err := q.FindAgents(ctx, p)
		return rows, int(n), err
	}
	few, err := q.FindFewAgents(ctx, db.FindFewAgentsParams(p))
	rows := make([]db.FindAgentsRow, len(few))
	for i, r := range few {
		rows[i] = db.FindAgentsRow(r)
	}
	return rows, int(n), err
}

// likePattern lower-cases a search text and escapes LIKE's wildcards, so
// `%` and `_` match themselves.
func likePattern(s string) *string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(s))
	return &r
}
