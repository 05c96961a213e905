package irc

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/creatimus/pircan/pircan"
)

const syntax = Prefix + " <VERB> [{json}]"

// helpDocs is HELP's pointer to the per-verb help.
const helpDocs = `HELP {"verb":"X"} for one verb's fields.`

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
			{"docs", Text(helpDocs)},
		}), nil
	}
	name := strings.ToUpper(*a.Verb)
	v, ok := c.face.verbs[name]
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
	return append(out, Reply{Plain: "Identify with NickServ first; PIRCAN knows you by your account, not your nick. Replies are NOTICEs; never auto-reply to them."})
}

// VerbDoc is one verb as the protocol reference (internal/protocoldoc)
// shows it: what HELP says, from the same table.
type VerbDoc struct {
	Name, Needs, Summary string
	Args                 []pircan.Arg
}

// VerbDocs is every verb of the table, by name.
func VerbDocs() []VerbDoc {
	verbs := verbTable()
	out := make([]VerbDoc, 0, len(verbs))
	for _, n := range verbNames(verbs) {
		v := verbs[n]
		out = append(out, VerbDoc{Name: n, Needs: needNames[v.needs], Summary: v.summary, Args: v.args})
	}
	return out
}
