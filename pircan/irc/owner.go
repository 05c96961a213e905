package irc

import "github.com/creatimus/pircan/pircan"

// Rendering of the owner verbs: LOGIN, LOGOUT, OWNER.

func renderLogin(_ *call, r pircan.LoginResult) []Reply {
	return one("LOGIN", Object{
		{"signed_in", true}, {"account", Text(r.Account)}, {"browser", Text(r.Browser)},
		{"started_at", r.StartedAt.UTC().Format("15:04 UTC")}, {"warning", pircan.LoginWarning},
	})
}

func renderLogout(_ *call, ended int) []Reply {
	return one("LOGOUT", Object{{"sessions_ended", ended}})
}

func renderOwner(_ *call, r pircan.OwnerResult) []Reply {
	if r.Cleared {
		return one("OWNER", Object{{"account", nil}, {"status", "none"}, {"cleared", orNull(r.Was)}})
	}
	b := r.Binding
	if b == nil {
		return one("OWNER", Object{{"account", nil}, {"status", "none"}})
	}
	if r.Named {
		return one("OWNER", Object{{"account", Text(b.Account)}, {"status", b.Status}, {"note", pircan.OwnerNote}})
	}
	since := b.NamedAt
	if b.Status != pircan.BindingPending {
		since = b.DecidedAt
	}
	out := Object{{"account", Text(b.Account)}, {"status", b.Status}, {"since", timeText(since)}}
	if b.Status == pircan.BindingConfirmed && b.Owner != nil {
		out = append(out, Field{"name", Text(b.Owner.Name)}, Field{"verification", b.Owner.Verification})
	}
	return one("OWNER", out)
}
