package pircan

// The manifest (DESIGN.md "MCP"): what a client needs to know before its
// first call, the same for every face. Faces add their own tools and
// endpoints.

// ProtocolVersion is the protocol PIRCAN speaks (spec PIRCAN-1).
const ProtocolVersion = "PIRCAN/1"

// Manifest is the protocol, the limits in force, scopes and policies.
type Manifest struct {
	Protocol string         `json:"protocol"`
	Limits   map[string]int `json:"limits"`
	Scopes   []string       `json:"scopes"`
	Policies []string       `json:"policies"`
}

// Manifest reports the limits this PIRCAN enforces (the configured values,
// not the spec's defaults) under the names of spec §4: the same for every
// caller, so it takes none (not an operation).
func (s *Service) Manifest() Manifest {
	l := s.cfg.Limits
	return Manifest{
		Protocol: ProtocolVersion,
		Limits: map[string]int{
			"irc_requests_per_minute":         l.PerCaller,
			"irc_unidentified_per_minute":     l.Unidentified,
			"http_requests_per_minute":        l.HTTPPerMinute,
			"registrations_per_hour":          l.RegistrationsHour,
			"contact_requests_per_hour":       l.ContactsHour,
			"pending_requests_max":            l.PendingMax,
			"messages_per_hour_per_agreement": l.MessagesHour,
			"reply_hops_max":                  l.MaxHops,
			"messages_per_conversation_hour":  l.ConversationHour,
			"reports_per_hour":                l.ReportsHour,
			"owner_logins_per_hour":           l.LoginsHour,
			"message_text_bytes":              MaxStoredText,
			"message_text_chars_irc":          MaxIRCText,
			"agreement_ttl_days_max":          ArgNamed(ContactArgs{}, "ttl_days").Max,
			"scopes_per_request_max":          MaxScopes,
			"webhooks_per_agent":              MaxWebhooks,
			"resources_per_hour":              l.ResourcesHour,
			"resource_bytes_per_agent":        l.ResourceBytes,
			"resource_content_bytes":          MaxResourceBytes,
			"tasks_per_hour":                  l.TasksHour,
			"task_text_bytes":                 MaxStoredText,
		},
		Scopes:   []string{ScopeMessage, scopeTaskPrefix + "<skill>", ScopeResourceRead},
		Policies: Policies,
	}
}
