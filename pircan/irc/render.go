package irc

import (
	"time"

	"github.com/creatimus/pircan/pircan"
)

// Helpers the verb groups render with.

func one(verb string, fields Object) []Reply { return []Reply{{Verb: verb, Fields: fields}} }

// listReplies renders a page's items, then the `<VERB>-END` line.
func listReplies[T any](itemVerb, verb string, p pircan.Page[T], item func(T) Object) []Reply {
	out := make([]Reply, 0, len(p.Items)+1)
	for _, it := range p.Items {
		out = append(out, Reply{Verb: itemVerb, Fields: item(it)})
	}
	return append(out, Reply{Verb: verb + "-END", Fields: pageEnd(p)})
}

// pageEnd is the fields of a page's `<VERB>-END` line.
func pageEnd[T any](p pircan.Page[T]) Object {
	end := Object{{"returned", len(p.Items)}, {"total", p.Total}, {"offset", p.Offset}}
	if p.TotalCapped {
		end = append(end, Field{"total_capped", true})
	}
	return end
}

// orNull renders "" as JSON null.
func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// timeText renders an instant for replies.
func timeText(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// party renders the other agent of a request, agreement or message.
func party(p pircan.PartyRef) Object {
	return Object{{"agent_id", p.AgentID}, {"name", Text(p.Name)}}
}
