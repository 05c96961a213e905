package store

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// FIND counts its total up to pircan.MaxFindTotal+1 matches. For a text (q)
// the cheap way to count depends on how common the text is, which only a
// look tells: walking agents until 1,001 matches costs ~0.25 µs an agent
// (a common word: 5,700 agents, 1.5 ms), the GIN index costs what the
// posting lists of the text's trigrams do (that common word: 34 ms; a
// rarer one, 3 characters in 3 % of agents: 4–5 ms where the walk took
// 9–24 ms). So a count first looks at findSample agents: one in
// findSample/findWalk or more matching, it walks up to findWalk agents;
// fewer, or the walk falls short, it asks the index (BENCHMARKS.md, issue
// 13 target 4). A capability held by at most findWhole agents, or given
// with a text of one or two characters, is walked whole. Each way gives
// the same total: a walk's is only taken when it reached the cap or saw
// every agent there was. (Variables only so that a test can take each way
// over a small directory.)
var (
	findSample int64 = 1000
	findWalk   int64 = 20000
	findWhole  int64 = 5000
)

// findCounts counts how FIND's totals for a text were counted, for the
// metrics (FindCountStats).
type findCounts struct{ sample, walk, index atomic.Uint64 }

// FindCounts is how many of FIND's totals for a text (q) were counted from
// the first look alone (it saw every candidate), by a walk, and through the
// index, since the store opened.
type FindCounts struct{ Sample, Walk, Index uint64 }

// FindCountStats returns the FindCounts so far.
func (s *Store) FindCountStats() FindCounts {
	return FindCounts{Sample: s.findCounts.sample.Load(), Walk: s.findCounts.walk.Load(), Index: s.findCounts.index.Load()}
}

// FindAgents implements pircan.Store.
func (s *Store) FindAgents(ctx context.Context, fq pircan.FindQuery) ([]pircan.Agent, int, error) {
	var agents []pircan.Agent
	total := 0
	// A capability alone is one fixed query shape: prepared, its plan
	// kept. The rest have optional filters: planned per call.
	read, find := s.readPlanned, s.findFiltered
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
func (s *Store) findFiltered(ctx context.Context, q *db.Queries, fq pircan.FindQuery) ([]db.FindAgentsRow, int, error) {
	lim, off := int32(fq.Limit), int32(fq.Offset)
	if fq.Q == "" {
		n, err := q.CountAgents(ctx, pircan.MaxFindTotal+1)
		if err != nil {
			return nil, 0, err
		}
		rows, err := q.FindAgents(ctx, db.FindAgentsParams{Lim: lim, Off: off})
		return rows, int(n), err
	}
	pattern := containsPattern(fq.Q)
	var capability *string
	if fq.Capability != "" {
		c := strings.ToLower(fq.Capability)
		capability = &c
	}
	n, err := s.countText(ctx, q, pattern, capability, utf8.RuneCountInString(fq.Q) < 3)
	if err != nil {
		return nil, 0, err
	}
	// Many matches: walking the registration order meets a page at once.
	// Few: a walk could cross the whole directory before it meets them (a
	// word only the newest agents use, say), so they are fetched through
	// the indexes and sorted.
	switch {
	case n <= pircan.MaxFindTotal && int64(off) >= n: // counted exactly: nothing to fetch
		return nil, int(n), nil
	case n > pircan.MaxFindTotal && capability != nil:
		page, err := q.FindByCapabilityText(ctx, db.FindByCapabilityTextParams{Capability: *capability,
			Pattern: pattern, Lim: lim, Off: off})
		rows := make([]db.FindAgentsRow, len(page))
		for i, r := range page {
			rows[i] = db.FindAgentsRow(r)
		}
		return rows, int(n), err
	case n > pircan.MaxFindTotal:
		rows, err := q.FindAgents(ctx, db.FindAgentsParams{Pattern: &pattern, Lim: lim, Off: off})
		return rows, int(n), err
	}
	few, err := q.FindFewAgents(ctx, db.FindFewAgentsParams{Pattern: pattern, Capability: capability, Lim: lim, Off: off})
	rows := make([]db.FindAgentsRow, len(few))
	for i, r := range few {
		rows[i] = db.FindAgentsRow(r)
	}
	return rows, int(n), err
}

// countText is FIND's total for a text, and a capability if given, counted
// up to pircan.MaxFindTotal+1 by a walk or by the index, whichever the
// first look says is cheaper (findSample). short: the text has fewer than
// 3 characters, so no trigram the GIN index could narrow it by.
func (s *Store) countText(ctx context.Context, q *db.Queries, pattern string, capability *string, short bool) (int64, error) {
	const limit = pircan.MaxFindTotal + 1
	var seen, matches int64
	var err error
	walk := func(most int64) (int64, error) {
		if capability == nil {
			return q.WalkCountText(ctx, db.WalkCountTextParams{Pattern: pattern, Walk: int32(most), Cap: limit})
		}
		return q.WalkCountCapabilityText(ctx, db.WalkCountCapabilityTextParams{Pattern: pattern,
			Capability: *capability, Walk: int32(most), Cap: limit})
	}
	if capability == nil {
		var r db.SampleTextMatchesRow
		r, err = q.SampleTextMatches(ctx, db.SampleTextMatchesParams{Pattern: pattern, Sample: int32(findSample)})
		seen, matches = r.Seen, r.Matches
	} else {
		var r db.SampleCapabilityTextMatchesRow
		r, err = q.SampleCapabilityTextMatches(ctx, db.SampleCapabilityTextMatchesParams{Pattern: pattern,
			Capability: *capability, Sample: int32(findSample)})
		seen, matches = r.Seen, r.Matches
	}
	if err != nil {
		return 0, err
	}
	if seen < findSample { // there were no more to see
		s.findCounts.sample.Add(1)
		return min(matches, limit), nil
	}
	walked := int64(-1)
	if matches*findWalk >= limit*findSample {
		if walked, err = walk(findWalk); err != nil || walked == limit {
			s.findCounts.walk.Add(1)
			return walked, err
		}
		// Common at first, rarer after.
	}
	if capability != nil {
		// A capability held by few, or with a short text, is walked whole:
		// its range is read from the index alone, where the GIN index,
		// given a text without trigrams, reads the heap of every holder.
		if short {
			s.findCounts.walk.Add(1)
			return walk(math.MaxInt32)
		}
		holders, err := q.CountByCapability(ctx, db.CountByCapabilityParams{Capability: *capability, Cap: int32(findWhole + 1)})
		if err != nil {
			return 0, err
		}
		if holders <= findWhole {
			if walked < 0 {
				walked, err = walk(findWalk)
			}
			s.findCounts.walk.Add(1)
			return walked, err
		}
	}
	s.findCounts.index.Add(1)
	return q.CountTextIndexed(ctx, db.CountTextIndexedParams{Pattern: pattern, Capability: capability, Cap: limit})
}

// likePattern lower-cases a search text and escapes LIKE's wildcards, so
// `%` and `_` match themselves.
func likePattern(s string) *string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(s))
	return &r
}

// containsPattern is the LIKE pattern of the agents whose search text
// contains s.
func containsPattern(s string) string {
	return "%" + *likePattern(s) + "%"
}
