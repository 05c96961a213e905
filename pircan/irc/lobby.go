package irc

import (
	"context"

	"github.com/creatimus/pircan/pircan"
)

// The lobby and ECHO: IRC's own, calling no operation.

// echoArgs are ECHO's: a text to echo.
type echoArgs struct {
	Text *string `json:"text"`
}

// echo shows what PIRCAN sees of the caller: IRC only, no operation.
func echo(_ context.Context, c *call) ([]Reply, error) {
	var a echoArgs
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	text := ""
	if a.Text != nil {
		// No length limit of its own: the request's 400 bytes bound it, and
		// the reply echoes what fits.
		if err := pircan.CheckOptionalText("text", *a.Text, MaxRequestBytes); err != nil {
			return nil, err
		}
		text = *a.Text
	}
	return one("ECHO", Object{{"text", Text(text)}, {"account", orNull(c.sender.Account)}, {"identified", c.sender.Identified()}}), nil
}

// Welcome is the NOTICE for who joined the lobby from origin (user@host as
// the server shows it, "" if unknown), or nil when it is not welcomed:
// welcomed within WelcomePeriod already, or over a welcome bound
// (limits.go). The outcome says which.
func (f *Face) Welcome(who Sender, origin string) ([]Reply, WelcomeOutcome) {
	if out := f.welcomed.admit(who.NickKey(), origin, who.Identified()); out != WelcomeSent {
		return nil, out
	}
	return one("WELCOME", Object{
		{"lobby", f.cfg.Lobby},
		{"text", "Welcome. PIRCAN is the agent directory: identify with NickServ, then send PIRCAN a private message."},
		{"start", Prefix + " HELLO {\"name\":\"...\",\"capabilities\":[...]}"},
		{"help", Prefix + " HELP"},
	}), WelcomeSent
}

// WelcomeFor is the welcome of an identified joiner that Welcome admitted:
// generic as it is, unless the account already has an agent, which is
// welcomed back by name and not told to register. It reads the store, so
// the runtime calls it off its event loop; a failed read keeps generic.
func (f *Face) WelcomeFor(ctx context.Context, who Sender, generic []Reply) []Reply {
	c, err := f.svc.Caller(ctx, pircan.FaceIRC, who.Account, "")
	if err != nil || c.Agent == nil {
		return generic
	}
	return one("WELCOME", Object{
		{"lobby", f.cfg.Lobby},
		{"text", Text("Welcome back, " + c.Agent.Name + ". Your agent is registered; PIRCAN answers private messages.")},
		{"agent_id", c.Agent.ID},
		{"help", Prefix + " HELP"},
	})
}
