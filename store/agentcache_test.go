package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store"
)

// The agent cache (store/agentcache.go): what every request reads first.

// readAgent reads account's agent and says whether the cache answered.
func readAgent(t *testing.T, s *store.Store, account string) (pircan.Agent, bool) {
	t.Helper()
	hits, _ := s.AgentCacheStats()
	a, err := s.AgentByAccount(context.Background(), account)
	if err != nil {
		t.Fatalf("AgentByAccount(%s): %v", account, err)
	}
	after, _ := s.AgentCacheStats()
	return a, after > hits
}

// Each of this process's writes that changes what AgentByAccount returns
// shows in the next read at once, even with no notification delivered
// (the cache is trusted here without listening).
func TestAgentCacheReadsOwnWrites(t *testing.T) {
	h := newHS(t)
	h.s.TrustAgentCache()
	agent := h.agent("agent")
	if _, hit := readAgent(t, h.s, "agent"); hit {
		t.Fatal("the first read was a hit")
	}
	if _, hit := readAgent(t, h.s, "AGENT"); !hit {
		t.Fatal("the second read (account folded) went to the database")
	}
	confirmOlivia := func() {
		if _, err := h.s.NameOwner(h.ctx, act(agent), "Olivia"); err != nil {
			t.Fatal(err)
		}
		if err := h.s.DecideBinding(h.ctx, "olivia", "s", agent.ID, true); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name           string
		prepare, write func()
		check          func(a pircan.Agent) bool
	}{
		{"HELLO", nil, func() {
			if _, _, err := h.s.Hello(h.ctx, "agent", "agent", pircan.Profile{Name: strp("Renamed"), Capabilities: &[]string{"x"}}, 10); err != nil {
				t.Fatal(err)
			}
		}, func(a pircan.Agent) bool { return a.Name == "Renamed" && len(a.Capabilities) == 1 }},
		{"a new nick", nil, func() {
			if err := h.s.SeenNick(h.ctx, agent.ID, "agent|away"); err != nil {
				t.Fatal(err)
			}
		}, func(a pircan.Agent) bool { return a.Nick == "agent|away" }},
		{"sign-in (the account owns its agent)", nil, func() {
			p := h.startSignIn("192.0.2.9", "cache-browser")
			if _, err := h.s.Login(h.ctx, "agent", p.Code, pircan.DefaultLimits); err != nil {
				t.Fatal(err)
			}
		}, func(a pircan.Agent) bool { return a.Owner != nil && a.Owner.Account == "agent" }},
		{"an owner confirmed", func() {
			p := h.startSignIn("192.0.2.10", "olivia-browser") // the owner signs in to confirm
			if _, err := h.s.Login(h.ctx, "Olivia", p.Code, pircan.DefaultLimits); err != nil {
				t.Fatal(err)
			}
			if _, err := h.s.NameOwner(h.ctx, act(agent), "Olivia"); err != nil {
				t.Fatal(err)
			}
		}, func() {
			if err := h.s.DecideBinding(h.ctx, "olivia", "s", agent.ID, true); err != nil {
				t.Fatal(err)
			}
		}, func(a pircan.Agent) bool { return a.Owner != nil && a.Owner.Account == "Olivia" }},
		{"the owner verified", nil, func() {
			if _, err := h.s.VerifyOwner(h.ctx, pircan.Actor{Account: "operator:test"}, "olivia", "Olivia O."); err != nil {
				t.Fatal(err)
			}
		}, func(a pircan.Agent) bool { return a.Owner != nil && a.Owner.Name == "Olivia O." }},
		{"the owner released it", nil, func() {
			if err := h.s.ReleaseAgent(h.ctx, "olivia", "s", agent.ID); err != nil {
				t.Fatal(err)
			}
		}, func(a pircan.Agent) bool { return a.Owner != nil && a.Owner.Account == "agent" }},
		{"an operator cleared a confirmed owner", confirmOlivia, func() {
			if _, err := h.s.ClearOwnerByOperator(h.ctx, pircan.Actor{Account: "operator:test"}, agent.ID); err != nil {
				t.Fatal(err)
			}
		}, func(a pircan.Agent) bool { return a.Owner != nil && a.Owner.Account == "agent" }},
	}
	for _, st := range steps {
		if st.prepare != nil {
			st.prepare()
		}
		readAgent(t, h.s, "agent")
		if _, hit := readAgent(t, h.s, "agent"); !hit { // cached before the write
			t.Fatalf("before %s: not cached", st.name)
		}
		st.write()
		if a, _ := readAgent(t, h.s, "agent"); !st.check(a) {
			t.Errorf("after %s: read %+v (owner %+v)", st.name, a, a.Owner)
		}
		if _, hit := readAgent(t, h.s, "agent"); !hit {
			t.Errorf("after %s: the read after next was not cached", st.name)
		}
	}
}

// Another process's writes reach this one's cache by notification; while
// the listening connection is gone nothing is served from memory; listening
// again trusts the cache again.
func TestAgentCacheFollowsOtherProcesses(t *testing.T) {
	ctx, here, there := twoProcesses(t)
	forgotten, await := forgetting(t)
	here.OnAgentForget(func(id string) { forgotten <- id })
	listen(t, ctx, here)
	await("listening", "*")

	agent, _, err := there.Hello(ctx, "remote", "remote", pircan.Profile{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	readAgent(t, here, "remote") // a registration announces nothing: no process held it
	if _, hit := readAgent(t, here, "remote"); !hit {
		t.Fatal("not cached while listening")
	}
	if _, _, err := there.Hello(ctx, "remote", "remote", pircan.Profile{Name: strp("Changed elsewhere")}, 10); err != nil {
		t.Fatal(err)
	}
	await("another process's HELLO", agent.ID)
	if a, _ := readAgent(t, here, "remote"); a.Name != "Changed elsewhere" {
		t.Fatalf("after the notification: %q", a.Name)
	}
	// Changes to nothing the cache holds announce nothing: a policy, or a
	// HELLO that repeats the profile (as every agent reconnecting does).
	if err := there.SetPolicy(ctx, pircan.Actor{Account: "remote", AgentID: agent.ID}, pircan.PolicyAutoAccept); err != nil {
		t.Fatal(err)
	}
	if _, _, err := there.Hello(ctx, "remote", "remote", pircan.Profile{Name: strp("Changed elsewhere")}, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := there.VerifyOwner(ctx, pircan.Actor{Account: "operator:test"}, "remote", "Remote Owner"); err != nil {
		t.Fatal(err)
	}
	select { // notifications arrive in commit order: the verify's comes after any of the two above
	case id := <-forgotten:
		if id != "*" {
			t.Fatalf("a change to nothing cached announced %q", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the verify announced nothing")
	}
	if a, _ := readAgent(t, here, "remote"); a.Owner == nil || a.Owner.Name != "Remote Owner" {
		t.Fatalf("owner after the notification: %+v", a.Owner)
	}

	// The listening connection dies: nothing is trusted until it is back.
	readAgent(t, here, "remote")
	if _, err := there.Pool().Exec(ctx,
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN "pircan_agents"' AND datname = current_database()`); err != nil {
		t.Fatal(err)
	}
	await("the listener lost", "*")
	for range 2 {
		if _, hit := readAgent(t, here, "remote"); hit {
			t.Fatal("served from memory while not listening")
		}
	}
	await("listening again", "*")
	readAgent(t, here, "remote")
	if _, hit := readAgent(t, here, "remote"); !hit {
		t.Fatal("not cached after listening again")
	}
}

// An entry lives a bounded time; the cache holds a bounded number.
func TestAgentCacheExpiresAndIsBounded(t *testing.T) {
	h := newHS(t)
	h.s.TrustAgentCache()
	now := time.Now()
	var mu sync.Mutex
	h.s.SetAgentCacheClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	h.agent("ttl")
	readAgent(t, h.s, "ttl")
	if _, hit := readAgent(t, h.s, "ttl"); !hit {
		t.Fatal("not cached")
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	if _, hit := readAgent(t, h.s, "ttl"); hit {
		t.Fatal("served a minute-old entry")
	}
	h.s.AgentCacheLimit(3)
	for _, a := range h.agents("bound", 5) {
		readAgent(t, h.s, a.Account)
	}
	if n := h.s.AgentCacheLen(); n != 3 {
		t.Fatalf("cache holds %d agents, limit 3", n)
	}
}
