package mcp

import (
	"time"

	"github.com/creatimus/pircan/pircan"
)

// Shared pieces of the results: the IRC replies' shapes, never shortened.

// List is a page of a list result, as IRC's <VERB>-END line counts it.
type List[T any] struct {
	Items       []T  `json:"items"`
	Returned    int  `json:"returned"`
	Total       int  `json:"total"`
	Offset      int  `json:"offset"`
	TotalCapped bool `json:"total_capped,omitempty"` // total counted no further (find_agents)
}

func listOf[T, O any](p pircan.Page[T], item func(T) O) List[O] {
	out := List[O]{Items: make([]O, 0, len(p.Items)), Total: p.Total, Offset: p.Offset, TotalCapped: p.TotalCapped}
	for _, it := range p.Items {
		out.Items = append(out.Items, item(it))
	}
	out.Returned = len(out.Items)
	return out
}

// Party is the other agent of a request, agreement or message.
type Party struct {
	AgentID string `json:"agent_id"`
	Name    string `json:"name"`
}

func party(p pircan.PartyRef) Party { return Party{AgentID: p.AgentID, Name: p.Name} }

// strings renders a list that may be nil as a JSON list.
func strs(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// orNull is s, or JSON null for none.
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// timeText renders an instant as replies do.
func timeText(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// optTime renders an instant that may be unset ("": omitted).
func optTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return timeText(t)
}
