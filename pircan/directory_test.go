package pircan_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
)

func TestHello(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	wantErr(t, "unidentified", func() error { _, err := svc.Hello(ctx, guest(t, svc), pircan.HelloArgs{}); return err }(), pircan.CodeNotIdentified, "")

	account := unique("h")
	c := caller(t, svc, pircan.FaceIRC, account)
	nameMax := pircan.ArgNamed(pircan.HelloArgs{}, "name").Text
	descMax := pircan.ArgNamed(pircan.HelloArgs{}, "description").Text
	// The capability and card_url limits are constants of directory.go, not tags.
	maxCaps, maxCap, maxURL := pircan.MaxCapabilities, pircan.MaxCapability, pircan.MaxCardURL
	many := make([]string, maxCaps+1)
	for i := range many {
		many[i] = unique("c")
	}
	bad := []struct {
		name  string
		args  pircan.HelloArgs
		code  pircan.Code
		field string
	}{
		{"long name", pircan.HelloArgs{Name: sp(strings.Repeat("n", nameMax+1))}, pircan.CodeTooLong, "name"},
		{"empty name", pircan.HelloArgs{Name: sp("  ")}, pircan.CodeEmpty, "name"},
		{"control in name", pircan.HelloArgs{Name: sp("line\r\nPRIVMSG #agents :pwned")}, pircan.CodeInvalidArgument, "name"},
		{"bidi in name", pircan.HelloArgs{Name: sp("evil\u202egnp.exe")}, pircan.CodeInvalidArgument, "name"},
		{"isolate in name", pircan.HelloArgs{Name: sp("a\u2066b")}, pircan.CodeInvalidArgument, "name"},
		{"long description", pircan.HelloArgs{Description: sp(strings.Repeat("d", descMax+1))}, pircan.CodeTooLong, "description"},
		{"nul in description", pircan.HelloArgs{Description: sp("nul\x00")}, pircan.CodeInvalidArgument, "description"},
		{"blank description", pircan.HelloArgs{Description: sp(" ")}, pircan.CodeEmpty, "description"},
		{"too many capabilities", pircan.HelloArgs{Capabilities: &many}, pircan.CodeInvalidArgument, "capabilities"},
		{"long capability", pircan.HelloArgs{Capabilities: lp(strings.Repeat("c", maxCap+1))}, pircan.CodeTooLong, "capabilities"},
		{"capability twice", pircan.HelloArgs{Capabilities: lp("a", "A")}, pircan.CodeInvalidArgument, "capabilities"},
		{"capability with space", pircan.HelloArgs{Capabilities: lp("two words")}, pircan.CodeInvalidArgument, "capabilities"},
		{"empty capability", pircan.HelloArgs{Capabilities: lp("")}, pircan.CodeEmpty, "capabilities"},
		{"bidi capability", pircan.HelloArgs{Capabilities: lp("x\u202ay")}, pircan.CodeInvalidArgument, "capabilities"},
		{"http card", pircan.HelloArgs{CardURL: sp("http://example.org/card")}, pircan.CodeInvalidArgument, "card_url"},
		{"hostless card", pircan.HelloArgs{CardURL: sp("https:///card")}, pircan.CodeInvalidArgument, "card_url"},
		{"long card", pircan.HelloArgs{CardURL: sp("https://" + strings.Repeat("u", maxURL))}, pircan.CodeTooLong, "card_url"},
		{"bidi card", pircan.HelloArgs{CardURL: sp("https://example.org/\u2067")}, pircan.CodeInvalidArgument, "card_url"},
	}
	for _, b := range bad {
		_, err := svc.Hello(ctx, c, b.args)
		wantErr(t, b.name, err, b.code, b.field)
	}
	if _, err := shared.AgentByAccount(ctx, account); !errors.Is(err, pircan.ErrNotFound) {
		t.Fatalf("a refused HELLO registered an agent: %v", err)
	}

	// Created, then updated: only the given fields change.
	r, err := svc.Hello(ctx, c, pircan.HelloArgs{})
	if err != nil || !r.Created || r.Agent.Name != account || !pircan.ValidID(r.Agent.ID) {
		t.Fatalf("first HELLO: %+v %v", r, err)
	}
	id := r.Agent.ID
	full := pircan.HelloArgs{Name: sp(strings.Repeat("n", nameMax)), Description: sp(strings.Repeat("d", descMax)),
		Capabilities: lp("hazmat", "Chemistry"), CardURL: sp("https://example.org/agent-card.json")}
	if r, err = svc.Hello(ctx, c, full); err != nil || r.Created || r.Agent.ID != id || r.Agent.Name != *full.Name {
		t.Fatalf("second HELLO: %+v %v", r, err)
	}
	if r, err = svc.Hello(ctx, c, pircan.HelloArgs{Description: sp("Now with toxicology")}); err != nil || r.Created {
		t.Fatalf("partial HELLO: %+v %v", r, err)
	}
	c = caller(t, svc, pircan.FaceIRC, account)
	me, err := svc.WhoAmI(ctx, c, pircan.NoArgs{})
	if err != nil || me.ID != id || me.Name != *full.Name || me.Description != "Now with toxicology" ||
		!slices.Equal(me.Capabilities, []string{"hazmat", "Chemistry"}) || me.CardURL != *full.CardURL {
		t.Fatalf("after a partial update: %+v %v", me, err)
	}
	// "" clears the description and the card; the other fields stay.
	if _, err = svc.Hello(ctx, c, pircan.HelloArgs{Description: sp(""), CardURL: sp(""), Capabilities: lp()}); err != nil {
		t.Fatal(err)
	}
	me, _ = svc.WhoAmI(ctx, caller(t, svc, pircan.FaceIRC, account), pircan.NoArgs{})
	if me.Description != "" || me.CardURL != "" || len(me.Capabilities) != 0 || me.Name != *full.Name {
		t.Fatalf("after clearing: %+v", me)
	}

	// Refused updates of a registered agent change nothing.
	before := auditCount(t, account)
	if before != 4 {
		t.Fatalf("%d audit rows for 4 changes", before)
	}
	for _, b := range bad {
		if _, err := svc.Hello(ctx, c, b.args); err == nil {
			t.Errorf("%s: accepted on update", b.name)
		}
	}
	if auditCount(t, account) != before {
		t.Errorf("a refused HELLO changed the profile")
	}
}

// 30 new registrations an hour network-wide, counted in the database; an
// update is not a registration. A database of its own: the count is global.
func TestHelloRegistrationPause(t *testing.T) {
	t.Parallel()
	l := pircan.DefaultLimits
	svc := pircan.NewService(freshStore(t), pircan.Config{Limits: l}, zerolog.Nop())
	ctx := t.Context()
	var first pircan.Caller
	for i := range l.RegistrationsHour {
		c, err := svc.Caller(ctx, pircan.FaceMCP, unique("r"), "")
		must(t, err)
		if r, err := svc.Hello(ctx, c, pircan.HelloArgs{}); err != nil || !r.Created {
			t.Fatalf("registration %d: %+v %v", i+1, r, err)
		}
		if i == 0 {
			first = c
		}
	}
	c, err := svc.Caller(ctx, pircan.FaceMCP, unique("r"), "")
	must(t, err)
	_, err = svc.Hello(ctx, c, pircan.HelloArgs{})
	wantErr(t, "registration over the limit", err, pircan.CodeRegistrationPaused, "")
	if r, err := svc.Hello(ctx, first, pircan.HelloArgs{Name: sp("still fine")}); err != nil || r.Created {
		t.Fatalf("update while paused: %+v %v", r, err)
	}
}

func TestWhoAmIAndCaller(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	_, err := svc.WhoAmI(ctx, guest(t, svc), pircan.NoArgs{})
	wantErr(t, "unidentified", err, pircan.CodeNotIdentified, "")
	_, err = svc.WhoAmI(ctx, unregistered(t, svc), pircan.NoArgs{})
	wantErr(t, "unregistered", err, pircan.CodeNotRegistered, "")

	// The agent is the account's, whatever the nick; the nick last seen is kept.
	a := agent(t, svc, pircan.FaceIRC)
	renamed, err := svc.Caller(ctx, pircan.FaceIRC, strings.ToUpper(a.Account), "renamed")
	must(t, err)
	if renamed.Agent == nil || renamed.Agent.ID != a.Agent.ID || renamed.Agent.Nick != "renamed" {
		t.Fatalf("caller after a nick change: %+v", renamed.Agent)
	}
	// An MCP caller has no nick: it leaves the nick as it was, and its sizes are full.
	m := caller(t, svc, pircan.FaceMCP, a.Account)
	if m.Agent == nil || m.Agent.Nick != "renamed" || m.Sizes != pircan.FullSizes {
		t.Fatalf("MCP caller: %+v %+v", m.Agent, m.Sizes)
	}
	if a.Sizes != pircan.IRCSizes {
		t.Fatalf("IRC sizes: %+v", a.Sizes)
	}
	if me, err := svc.WhoAmI(ctx, m, pircan.NoArgs{}); err != nil || me.ID != a.Agent.ID || me.Owner != nil {
		t.Fatalf("WHOAMI: %+v %v", me, err)
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	for _, c := range []pircan.Caller{guest(t, svc), unregistered(t, svc)} {
		_, err := svc.Find(ctx, c, pircan.FindArgs{})
		wantErr(t, "FIND by "+c.Account, err, map[bool]pircan.Code{true: pircan.CodeNotRegistered, false: pircan.CodeNotIdentified}[c.Identified()], "")
	}
	// Eight agents of this test, told apart from others' by a word of their own.
	word, hazmat := unique("w"), unique("hazmat")
	ids := map[string]bool{}
	var me pircan.Caller
	for i := range 8 {
		c := agent(t, svc, pircan.FaceIRC)
		caps := []string{word, "translation"}
		kind := "paper"
		if i%2 == 0 {
			caps = []string{word, strings.ToUpper(hazmat), "chemistry"}
		}
		if i < 3 {
			kind = "Ammonia"
		}
		_, err := svc.Hello(ctx, c, pircan.HelloArgs{Name: sp(word + " agent " + string(rune('0'+i))),
			Description: sp("Handles " + kind + " releases " + word), Capabilities: &caps})
		must(t, err)
		ids[c.Agent.ID] = true
		me = c
	}
	find := func(a pircan.FindArgs) pircan.Page[pircan.Agent] {
		t.Helper()
		p, err := svc.Find(ctx, me, a)
		if err != nil {
			t.Fatalf("FIND %+v: %v", a, err)
		}
		for _, it := range p.Items {
			if !ids[it.ID] {
				t.Fatalf("FIND %+v found another test's agent %s", a, it.ID)
			}
		}
		return p
	}
	total := func(a pircan.FindArgs) int { t.Helper(); return find(a).Total }
	if p := find(pircan.FindArgs{Capability: sp(hazmat)}); p.Total != 4 || len(p.Items) != 4 || p.TotalCapped || p.Offset != 0 {
		t.Fatalf("capability (any case): %+v", p)
	}
	if n := total(pircan.FindArgs{Capability: sp(hazmat[:len(hazmat)-1])}); n != 0 {
		t.Errorf("capability is an exact match, got %d", n)
	}
	if n := total(pircan.FindArgs{Q: sp(" aMMONIA releases " + strings.ToUpper(word) + " ")}); n != 3 {
		t.Errorf("q is case-insensitive over the description, trimmed: %d", n)
	}
	if n := total(pircan.FindArgs{Q: sp(word + " agent 7")}); n != 1 {
		t.Errorf("q matches the name: %d", n)
	}
	if n := total(pircan.FindArgs{Q: sp("ammonia releases " + word), Capability: sp("chemistry")}); n != 2 {
		t.Errorf("q and capability together: %d", n)
	}
	// Paging: the default limit, then the rest, then past the end.
	def := *pircan.ArgNamed(pircan.FindArgs{}, "limit").Default
	p := find(pircan.FindArgs{Capability: sp(word)})
	if len(p.Items) != def || p.Total != 8 || p.TotalCapped {
		t.Fatalf("default page: %d items, %+v", len(p.Items), p)
	}
	seen := map[string]bool{}
	for _, it := range p.Items {
		seen[it.ID] = true
	}
	p = find(pircan.FindArgs{Capability: sp(word), PageArgs: pircan.PageArgs{Offset: ip(def), Limit: ip(pircan.ArgNamed(pircan.FindArgs{}, "limit").Max)}})
	if len(p.Items) != 8-def || p.Offset != def {
		t.Fatalf("second page: %+v", p)
	}
	for _, it := range p.Items {
		if seen[it.ID] {
			t.Errorf("pages overlap at %s", it.ID)
		}
	}
	if p = find(pircan.FindArgs{Capability: sp(word), PageArgs: pircan.PageArgs{Offset: ip(50)}}); len(p.Items) != 0 || p.Total != 8 {
		t.Fatalf("past the end: %+v", p)
	}
	if p = find(pircan.FindArgs{Capability: sp(word), PageArgs: pircan.PageArgs{Limit: ip(1)}}); len(p.Items) != 1 {
		t.Fatalf("limit 1: %+v", p)
	}

	limit, offset := pircan.ArgNamed(pircan.FindArgs{}, "limit"), pircan.ArgNamed(pircan.FindArgs{}, "offset")
	qMax, capMax := pircan.ArgNamed(pircan.FindArgs{}, "q").Text, pircan.ArgNamed(pircan.FindArgs{}, "capability").Text
	bad := []struct {
		name  string
		args  pircan.FindArgs
		code  pircan.Code
		field string
	}{
		{"limit low", pircan.FindArgs{PageArgs: pircan.PageArgs{Limit: ip(limit.Min - 1)}}, pircan.CodeInvalidArgument, "limit"},
		{"limit high", pircan.FindArgs{PageArgs: pircan.PageArgs{Limit: ip(limit.Max + 1)}}, pircan.CodeInvalidArgument, "limit"},
		{"offset low", pircan.FindArgs{PageArgs: pircan.PageArgs{Offset: ip(offset.Min - 1)}}, pircan.CodeInvalidArgument, "offset"},
		{"offset high", pircan.FindArgs{PageArgs: pircan.PageArgs{Offset: ip(offset.Max + 1)}}, pircan.CodeInvalidArgument, "offset"},
		{"long q", pircan.FindArgs{Q: sp(strings.Repeat("q", qMax+1))}, pircan.CodeTooLong, "q"},
		{"control in q", pircan.FindArgs{Q: sp("a\x07")}, pircan.CodeInvalidArgument, "q"},
		{"blank q", pircan.FindArgs{Q: sp("  ")}, pircan.CodeEmpty, "q"},
		{"long capability", pircan.FindArgs{Capability: sp(strings.Repeat("c", capMax+1))}, pircan.CodeTooLong, "capability"},
	}
	for _, b := range bad {
		_, err := svc.Find(ctx, me, b.args)
		wantErr(t, b.name, err, b.code, b.field)
	}
}

func TestChannelsAndJoin(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := t.Context()
	for _, c := range []pircan.Caller{guest(t, svc), unregistered(t, svc)} {
		want := map[bool]pircan.Code{true: pircan.CodeNotRegistered, false: pircan.CodeNotIdentified}[c.Identified()]
		_, err := svc.Channels(ctx, c, pircan.ChannelsArgs{})
		wantErr(t, "CHANNELS", err, want, "")
		_, err = svc.Join(ctx, c, pircan.JoinArgs{Channel: sp("#agents")})
		wantErr(t, "JOIN", err, want, "")
	}
	me := agent(t, svc, pircan.FaceIRC)
	limit := pircan.ArgNamed(pircan.ChannelsArgs{}, "limit")
	qMax := pircan.ArgNamed(pircan.ChannelsArgs{}, "q").Text
	for _, b := range []struct {
		name  string
		args  pircan.ChannelsArgs
		code  pircan.Code
		field string
	}{
		{"limit high", pircan.ChannelsArgs{PageArgs: pircan.PageArgs{Limit: ip(limit.Max + 1)}}, pircan.CodeInvalidArgument, "limit"},
		{"limit low", pircan.ChannelsArgs{PageArgs: pircan.PageArgs{Limit: ip(limit.Min - 1)}}, pircan.CodeInvalidArgument, "limit"},
		{"offset", pircan.ChannelsArgs{PageArgs: pircan.PageArgs{Offset: ip(-1)}}, pircan.CodeInvalidArgument, "offset"},
		{"long q", pircan.ChannelsArgs{Q: sp(strings.Repeat("q", qMax+1))}, pircan.CodeTooLong, "q"},
	} {
		_, err := svc.Channels(ctx, me, b.args)
		wantErr(t, b.name, err, b.code, b.field)
	}
	if p, err := svc.Channels(ctx, me, pircan.ChannelsArgs{Q: sp(unique("none"))}); err != nil || len(p.Items) != 0 || p.Total != 0 {
		t.Fatalf("CHANNELS of nothing: %+v %v", p, err)
	}
	for _, b := range []struct {
		name    string
		channel *string
		code    pircan.Code
	}{
		{"missing", nil, pircan.CodeInvalidArgument},
		{"no hash", sp("agents"), pircan.CodeInvalidArgument},
		{"space", sp("#a b"), pircan.CodeInvalidArgument},
		{"comma", sp("#a,#b"), pircan.CodeInvalidArgument},
		{"bell", sp("#a\a"), pircan.CodeInvalidArgument},
		{"bidi", sp("#a\u202e"), pircan.CodeInvalidArgument},
		{"long", sp("#" + strings.Repeat("c", 50)), pircan.CodeInvalidArgument},
		{"long escaped", sp("#" + strings.Repeat(`"`, 25)), pircan.CodeInvalidArgument},
		{"unknown", sp("#" + unique("nowhere")), pircan.CodeUnknownChannel},
	} {
		_, err := svc.Join(ctx, me, pircan.JoinArgs{Channel: b.channel})
		wantErr(t, "JOIN "+b.name, err, b.code, "channel")
	}
}
