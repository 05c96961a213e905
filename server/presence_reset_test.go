package server

import (
	"context"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan/ircconn"
)

// After membership events were lost, presence is forgotten at once (a lost
// QUIT or NICK must not leave a nick mapped to an account), and counted.
func TestPresenceLostForgetsEveryone(t *testing.T) {
	b := &Bot{log: zerolog.Nop(), conn: ircconn.New(ircconn.Config{}, zerolog.Nop())}
	b.notes = newNotifier(b)
	b.notes.presence.Seen("alice", "alice")
	b.notes.presence.Seen("bob", "bob_")
	b.presenceLost(context.Background())
	for _, account := range []string{"alice", "bob"} {
		if nick, ok := b.notes.presence.Nick(account); ok {
			t.Errorf("%s still seen as %s after the loss", account, nick)
		}
	}
	var m dto.Metric
	if err := b.metrics().presenceResets.Write(&m); err != nil || m.GetCounter().GetValue() != 1 {
		t.Errorf("pircan_presence_resets_total = %v (%v), want 1", m.GetCounter().GetValue(), err)
	}
}
