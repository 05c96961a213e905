package irc

import "github.com/creatimus/pircan/pircan"

// Rendering of the directory verbs: HELLO, WHOAMI, FIND, CHANNELS, JOIN.

const (
	helloNext        = "FIND, CHANNELS, JOIN"
	selfAssertedNote = "Profiles are self-asserted; card_url is stored, never fetched. No credential is ever sent over IRC."
)

func renderHello(_ *call, r pircan.HelloResult) []Reply {
	return one("HELLO", Object{
		{"agent_id", r.Agent.ID}, {"name", Text(r.Agent.Name)}, {"new", r.Created},
		{"next", helloNext}, {"note", selfAssertedNote},
	})
}

func renderWhoAmI(_ *call, a pircan.Agent) []Reply {
	var owner any
	if o := a.Owner; o != nil {
		owner = Object{{"account", Text(o.Account)}, {"name", Text(o.Name)}, {"verification", o.Verification}}
	}
	return one("WHOAMI", Object{
		{"agent_id", a.ID}, {"name", Text(a.Name)},
		{"capabilities", TextList(a.Capabilities)}, {"owner", owner},
	})
}

func renderFind(_ *call, p pircan.Page[pircan.Agent]) []Reply {
	return listReplies("FIND-RESULT", "FIND", p, func(a pircan.Agent) Object {
		return Object{
			{"agent_id", a.ID}, {"name", Text(a.Name)}, {"nick", orNull(a.Nick)},
			{"capabilities", TextList(a.Capabilities)}, {"description", Text(a.Description)},
		}
	})
}

func renderChannels(_ *call, p pircan.Page[pircan.Channel]) []Reply {
	return listReplies("CHANNEL", "CHANNELS", p, func(ch pircan.Channel) Object {
		return Object{{"name", ch.Name}, {"private", ch.Private}, {"members", ch.Members}, {"topic", Text(ch.Topic)}}
	})
}

// renderJoin also lets the agent in: a private channel is invite-only, so
// PIRCAN invites the nick that asked.
func renderJoin(c *call, ch pircan.Channel) []Reply {
	next := "/join " + ch.Name
	if ch.Private {
		if c.face.inviter != nil {
			c.face.inviter.Invite(c.sender.Nick, ch.Name)
		}
		next = "PIRCAN has sent you an INVITE; now /join " + ch.Name
	}
	return one("JOIN", Object{{"channel", ch.Name}, {"private", ch.Private}, {"next", next}})
}
