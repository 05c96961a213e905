package bot

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/irc"
	"github.com/creatimus/pircan/pircan/irc/transport"
)

// After membership events were lost, presence stays as the transport read
// it (it is kept before events are queued, so a lost QUIT or NICK never
// left a stale mapping), and the loss is counted.
func TestPresenceLostKeepsPresenceAndCounts(t *testing.T) {
	b := &Bot{log: zerolog.Nop(), conn: transport.New(transport.Config{}, zerolog.Nop())}
	b.notes = newNotifier(b)
	p := b.conn.Presence()
	p.Seen("alice", "alice")
	p.Gone("alice") // the QUIT was read (and its event then lost)
	p.Seen("bob", "bob_")
	b.presenceLost(context.Background())
	if nick, ok := p.Nick("alice"); ok {
		t.Errorf("alice still seen as %s after her QUIT", nick)
	}
	if nick, ok := p.Nick("bob"); !ok || nick != "bob_" {
		t.Errorf("bob seen as %q (%v), want bob_", nick, ok)
	}
	var m dto.Metric
	if err := b.metrics().presenceResets.Write(&m); err != nil || m.GetCounter().GetValue() != 1 {
		t.Errorf("pircan_presence_resets_total = %v (%v), want 1", m.GetCounter().GetValue(), err)
	}
}

// An identified sender whose queue is full is told rate_limited once, then
// not again until its queue has drained; both refusals are counted.
func TestFullSenderQueueIsToldOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Bot{log: zerolog.Nop(), conn: transport.New(transport.Config{}, zerolog.Nop()),
			irc: irc.New(pircan.NewService(nil, pircan.Config{Limits: pircan.DefaultLimits}, zerolog.Nop()), nil,
				irc.Config{Limits: pircan.DefaultLimits}, zerolog.Nop()),
			cfg: Config{Timeout: time.Second}, jobs: newDispatcher(1, 1)}
		defer b.jobs.stop()
		release := make(chan struct{})
		b.jobs.submit("a:alice", false, func() { <-release })
		synctest.Wait() // running: the queue is empty, with room for one
		ev := transport.Event{Kind: transport.Request, Sender: irc.Sender{Account: "alice", Nick: "alice"},
			Text: `PIRCAN/1 ECHO {"id":"e"}`}
		for range 3 {
			b.submit(context.Background(), ev)
		}
		if q, _ := b.conn.Pacer().Stats(); q != 1 {
			t.Errorf("%d lines queued for alice, want the one rate_limited", q)
		}
		var m dto.Metric
		if err := b.metrics().refused.WithLabelValues("identified", "sender_queue").Write(&m); err != nil || m.GetCounter().GetValue() != 2 {
			t.Errorf("refused{identified,sender_queue} = %v, want 2", m.GetCounter().GetValue())
		}
		close(release)
		b.jobs.wait()
		if q, _ := b.conn.Pacer().Stats(); q != 2 {
			t.Errorf("%d lines queued after the accepted ECHO ran, want 2", q)
		}
	})
}
