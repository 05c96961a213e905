package pircan

import (
	"context"
	"errors"
)

// AgentCard is the public profile of a registered agent, as its A2A Agent
// Card shows it to anyone (DESIGN.md "Tasks and A2A"): ID, Name,
// Description, Capabilities and CreatedAt only, never its account or
// owner. Anyone may read it (the caller is not consulted). An id that is
// not a registered agent's is ErrNotFound, as a card that is not there.
func (s *Service) AgentCard(ctx context.Context, _ Caller, args AgentArgs) (Agent, error) {
	agentID := ""
	if args.AgentID != nil {
		agentID = *args.AgentID
	}
	if !ValidID(agentID) {
		return Agent{}, ErrNotFound
	}
	agentID = CanonicalID(agentID)
	a, err := s.store.AgentProfile(ctx, agentID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Agent{}, err
	}
	return a, err
}
