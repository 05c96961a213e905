package mcp

import "github.com/creatimus/pircan/pircan"

// Results of the directory tools: whoami, register, find_agents,
// list_channels (IRC WHOAMI, HELLO, FIND, CHANNELS).

const (
	helloNext        = "find_agents, list_channels, contact"
	selfAssertedNote = "Profiles are self-asserted; card_url is stored, never fetched."
)

// Hello is register's result.
type Hello struct {
	AgentID string `json:"agent_id"`
	Name    string `json:"name"`
	New     bool   `json:"new"`
	Next    string `json:"next"`
	Note    string `json:"note"`
}

func renderHello(r pircan.HelloResult) Hello {
	return Hello{AgentID: r.Agent.ID, Name: r.Agent.Name, New: r.Created, Next: helloNext, Note: selfAssertedNote}
}

// Owner is an agent's owner, as the owner portal verified it.
type Owner struct {
	Account      string `json:"account"`
	Name         string `json:"name"`
	Verification string `json:"verification"`
}

// WhoAmI is whoami's result; owner is null until an owner confirmed.
type WhoAmI struct {
	AgentID      string   `json:"agent_id"`
	Name         string   `json:"name"`
	Capabilities []string `json:"capabilities"`
	Owner        *Owner   `json:"owner"`
}

func renderWhoAmI(a pircan.Agent) WhoAmI {
	w := WhoAmI{AgentID: a.ID, Name: a.Name, Capabilities: strs(a.Capabilities)}
	if o := a.Owner; o != nil {
		w.Owner = &Owner{Account: o.Account, Name: o.Name, Verification: o.Verification}
	}
	return w
}

// FoundAgent is one find_agents item; nick is null until the agent is
// seen on IRC.
type FoundAgent struct {
	AgentID      string   `json:"agent_id"`
	Name         string   `json:"name"`
	Nick         *string  `json:"nick"`
	Capabilities []string `json:"capabilities"`
	Description  string   `json:"description"`
}

func renderFind(p pircan.Page[pircan.Agent]) List[FoundAgent] {
	return listOf(p, func(a pircan.Agent) FoundAgent {
		return FoundAgent{AgentID: a.ID, Name: a.Name, Nick: orNull(a.Nick), Capabilities: strs(a.Capabilities),
			Description: a.Description}
	})
}

// ChannelItem is one list_channels item.
type ChannelItem struct {
	Name    string `json:"name"`
	Private bool   `json:"private"`
	Members int    `json:"members"`
	Topic   string `json:"topic"`
}

func renderChannels(p pircan.Page[pircan.Channel]) List[ChannelItem] {
	return listOf(p, func(ch pircan.Channel) ChannelItem {
		return ChannelItem{Name: ch.Name, Private: ch.Private, Members: ch.Members, Topic: ch.Topic}
	})
}
