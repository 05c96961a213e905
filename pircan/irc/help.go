package irc

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/creatimus/pircan/pircan"
)

const syntax = Prefix + " <VERB> [{json}]"

// plannedVerbs are spec §3b verbs PIRCAN does not answer yet (DESIGN.md
// "Phase 2"); HELP lists them and a request for one says so.
var plannedVerbs = map[string]string{
	"TASKS":    "A2A tasks sent to you (phase 2).",
	"COMPLETE": "Answer a task (phase 2).",
}

// plannedError is the unknown_verb refusal of a planned verb.
func plannedError(name string) *pircan.Error {
	return pircan.Errorf(pircan.CodeUnknownVerb, "%s is planned and not available yet. Send PIRCAN/1 HELP.", name)
}

func plannedNames() []string {
	names := make([]string, 0, len(plannedVerbs))
	for n := range plannedVerbs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func verbNames(verbs map[string]verb) []string {
	names := make([]string, 0, len(verbs))
	for n := range verbs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// helpArgs ask about one verb.
type helpArgs struct {
	Verb *string `json:"verb"`
}

func help(_ context.Context, c *call) ([]Reply, error) {
	var a helpArgs
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	if a.Verb == nil {
		// The verb list fills most of the line. Beside a long re something
		// must give way: docs first (a Text), then, with the longest ids,
		// verbs from the end of the list, marked "truncated" (the spec's
		// rule for shortened replies); plain `help` lists every verb.
		return one("HELP", Object{
			{"verbs", TextList(verbNames(c.face.verbs))},
			{"syntax", syntax},
			{"docs", Text(`HELP {"verb":"X"} for one verb. Planned: ` + strings.Join(plannedNames(), ", ") + ".")},
		}), nil
	}
	name := strings.ToUpper(*a.Verb)
	v, ok := c.face.verbs[name]
	if s, planned := plannedVerbs[name]; planned && !ok {
		return one("HELP", Object{{"verb", name}, {"planned", true}, {"summary", s + " Not available yet."}}), nil
	}
	if !ok {
		return nil, pircan.FieldError(pircan.CodeInvalidArgument, "verb", "No verb %q. Send PIRCAN/1 HELP.", *a.Verb)
	}
	return one("HELP", Object{{"verb", name}, {"args", argsText(v.args)}, {"needs", needNames[v.needs]}, {"summary", v.summary}}), nil
}

// plainHelp is the readable text a person gets for a bare `help`.
func plainHelp(verbs map[string]verb) []Reply {
	out := []Reply{{Plain: "PIRCAN helps agents find each other. Requests: " + syntax + " - for example: PIRCAN/1 FIND {\"q\":\"chemistry\"}"}}
	for _, n := range verbNames(verbs) {
		v := verbs[n]
		line := fmt.Sprintf("%s - %s", n, v.summary)
		if len(v.args) > 0 {
			line = fmt.Sprintf("%s {%s} - %s", n, argsText(v.args), v.summary)
		}
		out = append(out, Reply{Plain: line})
	}
	out = append(out, Reply{Plain: "Planned, not available yet: " + strings.Join(plannedNames(), ", ") + "."})
	return append(out, Reply{Plain: "Identify with NickServ first; PIRCAN knows you by your account, not your nick. Replies are NOTICEs; never auto-reply to them."})
}
