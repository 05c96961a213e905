package a2a

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// AgentCard is A2A 1.0's AgentCard as PIRCAN writes it. It has no
// top-level url or protocolVersion (0.3 fields: the JS SDK would take the
// card for a 0.3 one); the version is the interface's.
type AgentCard struct {
	Name                 string                    `json:"name"`
	Description          string                    `json:"description"`
	SupportedInterfaces  []AgentInterface          `json:"supportedInterfaces"`
	Provider             *AgentProvider            `json:"provider,omitempty"`
	Version              string                    `json:"version"`
	Capabilities         AgentCapabilities         `json:"capabilities"`
	SecuritySchemes      map[string]SecurityScheme `json:"securitySchemes"`
	SecurityRequirements []SecurityRequirement     `json:"securityRequirements"`
	DefaultInputModes    []string                  `json:"defaultInputModes"`
	DefaultOutputModes   []string                  `json:"defaultOutputModes"`
	Skills               []AgentSkill              `json:"skills"`
}

// AgentInterface is one URL and binding of an agent.
type AgentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

// AgentProvider names who serves the agent: the PIRCAN network.
type AgentProvider struct {
	Organization string `json:"organization"`
	URL          string `json:"url"`
}

// AgentCapabilities are the optional A2A features, all off: PIRCAN answers
// polls (GetTask, ListTasks) only.
type AgentCapabilities struct {
	Streaming         bool `json:"streaming"`
	PushNotifications bool `json:"pushNotifications"`
	ExtendedAgentCard bool `json:"extendedAgentCard"`
}

// SecurityScheme is the ProtoJSON oneof: PIRCAN uses HTTP bearer only.
type SecurityScheme struct {
	HTTPAuth *HTTPAuthSecurityScheme `json:"httpAuthSecurityScheme,omitempty"`
}

// HTTPAuthSecurityScheme is an HTTP authentication scheme.
type HTTPAuthSecurityScheme struct {
	Description string `json:"description,omitempty"`
	Scheme      string `json:"scheme"`
}

// SecurityRequirement maps scheme names to the scopes needed (none).
type SecurityRequirement struct {
	Schemes map[string]StringList `json:"schemes"`
}

// StringList is ProtoJSON's wrapped list.
type StringList struct {
	List []string `json:"list"`
}

// AgentSkill is one of the agent's capabilities, as a skill.
type AgentSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
}

// Card wording and fields, in one place.
const (
	// ProtocolVersion is the A2A version of the interface.
	ProtocolVersion = "1.0"
	// Binding is the interface's protocol binding.
	Binding = "JSONRPC"
	// bearerScheme names the security scheme in the card.
	bearerScheme = "bearer"
	// cardVersion is the card's "version": PIRCAN keeps no agent versions,
	// so it is the PIRCAN protocol's.
	cardVersion = pircan.ProtocolVersion
	cardMaxAge  = 5 * time.Minute
)

// serveCard is GET /a2a/<agent_id>/.well-known/agent-card.json: public,
// 404 for an id that is not a registered agent's.
func (f *Face) serveCard(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.PathValue("agent")
	a, err := f.core.AgentCard(r.Context(), pircan.Caller{Face: pircan.FaceA2A}, pircan.AgentArgs{AgentID: &id})
	switch {
	case errors.Is(err, pircan.ErrNotFound):
		f.observe("agent_card", string(pircan.CodeUnknownAgent), start)
		http.Error(w, "no such agent", http.StatusNotFound)
		return
	case err != nil:
		e := pircan.AsError(err)
		f.log.Error().Err(err).Str("ref", e.Ref).Msg("a2a: agent card not read")
		f.observe("agent_card", string(e.Code), start)
		http.Error(w, "internal error, ref "+e.Ref, http.StatusInternalServerError)
		return
	}
	f.observe("agent_card", "ok", start)
	w.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(cardMaxAge/time.Second)))
	writeCard(w, f.card(a, f.core.PublicURL()))
}

// AgentURL is an agent's A2A URL on origin base: its card's interface URL,
// where the JSON-RPC requests go. It ends in a slash so that a client
// given it finds the card beside it: URL resolution (RFC 3986 §5.2) of
// CardPath against /a2a/<id>/ is the card's path, while against /a2a/<id>
// it would drop the id (the A2A SDK's createFromUrl does exactly that).
func AgentURL(base, agentID string) string { return base + Path + agentID + "/" }

// serveNoCard is every other GET under /a2a/: 404 with where cards are,
// and, for the path a client builds from an agent URL without its
// trailing slash, that slash.
func (f *Face) serveNoCard(w http.ResponseWriter, r *http.Request) {
	hint := "No agent card here. An agent's card is at " + Path + "<agent_id>/" + CardPath +
		"; its A2A URL is " + Path + "<agent_id>/ (FIND or WHOAMI give agent ids)."
	if r.URL.Path == Path+CardPath {
		hint = "No agent card here: this is where an A2A client looks when given an agent's URL without its trailing slash. " +
			"Give it " + Path + "<agent_id>/ (with the slash), or the card's own URL " + Path + "<agent_id>/" + CardPath + "."
	}
	http.Error(w, hint, http.StatusNotFound)
}

func writeCard(w http.ResponseWriter, c AgentCard) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = jsonEncode(w, c)
}

// card is the agent's card; base is the public origin.
func (f *Face) card(a pircan.Agent, base string) AgentCard {
	desc := a.Description
	if desc == "" {
		desc = fmt.Sprintf("%s, an agent in the PIRCAN directory.", a.Name)
	}
	skills := make([]AgentSkill, 0, len(a.Capabilities))
	for _, c := range a.Capabilities {
		skills = append(skills, AgentSkill{ID: c, Name: c, Tags: []string{c},
			Description: fmt.Sprintf("%s offers %s. Send a task with metadata.skill %q under a PIRCAN agreement that grants task:%s.", a.Name, c, c, c)})
	}
	return AgentCard{
		Name:        a.Name,
		Description: desc,
		SupportedInterfaces: []AgentInterface{{URL: AgentURL(base, a.ID),
			ProtocolBinding: Binding, ProtocolVersion: ProtocolVersion}},
		Provider:     &AgentProvider{Organization: "PIRCAN", URL: base + "/"},
		Version:      cardVersion,
		Capabilities: AgentCapabilities{},
		SecuritySchemes: map[string]SecurityScheme{bearerScheme: {HTTPAuth: &HTTPAuthSecurityScheme{Scheme: "Bearer",
			Description: "A PIRCAN token, issued by the operator for your agent's account."}}},
		SecurityRequirements: []SecurityRequirement{{Schemes: map[string]StringList{bearerScheme: {List: []string{}}}}},
		DefaultInputModes:    []string{textPlain},
		DefaultOutputModes:   []string{textPlain},
		Skills:               skills,
	}
}
