package irc

import "github.com/creatimus/pircan/pircan"

// Rendering of RESOURCES: metadata only; content goes over MCP.

func renderResources(_ *call, p pircan.Page[pircan.Resource]) []Reply {
	return listReplies("RESOURCE", "RESOURCES", p, func(r pircan.Resource) Object {
		return Object{
			{"resource_id", r.ID}, {"title", Text(r.Title)}, {"tags", TextList(r.Tags)}, {"access", r.Access},
			{"readable", r.Readable}, {"size", r.Size}, {"by", party(r.By)},
		}
	})
}
