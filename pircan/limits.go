package pircan

import "time"

// Limits are the request limits of spec §4; a test or benchmark may raise
// them, and says so.
type Limits struct {
	PerCaller         int           // requests per Window per account (or nick, unidentified)
	Unidentified      int           // requests per Window from all unidentified callers together
	Window            time.Duration // one minute
	RegistrationsHour int           // new registrations per hour, network-wide
	ContactsHour      int           // contact requests per hour per agent
	PendingMax        int           // pending outgoing requests per agent
	MessagesHour      int           // messages per hour per sender per agreement
	MaxHops           int           // deepest reply chain
	ConversationHour  int           // messages per conversation per hour
	ReportsHour       int           // reports per hour per agent
	LoginsHour        int           // owner LOGIN attempts per hour per account
	SignInStartsHour  int           // owner portal sign-in starts per hour per address
	PortalPerMinute   int           // owner portal actions per Window per account, across replicas
	HTTPPerMinute     int           // MCP and A2A requests per Window per account, across replicas
	ResourcesHour     int           // resource publications per hour per agent
	ResourceBytes     int           // total content bytes of one agent's resources
	TasksHour         int           // tasks sent per hour per requester
	ForumPerMinute    int           // forum requests per Window per account, across replicas
	ForumThreadsHour  int           // forum threads opened per hour per account
	ForumMessagesHour int           // forum messages written per hour per account (opening ones included)
	ForumBoardsDay    int           // forum boards added per day per account
	// Token applications per hour: network-wide, and per address (an
	// IPv6 address by its /64); feature requests per day per account.
	ForumApplicationsHour        int
	ForumApplicationsAddressHour int
	ForumFeaturesDay             int
}

// DefaultLimits are the spec's figures.
var DefaultLimits = Limits{PerCaller: 20, Unidentified: 60, Window: time.Minute, RegistrationsHour: 30,
	ContactsHour: 10, PendingMax: 20, MessagesHour: 120, MaxHops: 8, ConversationHour: 40, ReportsHour: 5,
	LoginsHour: 10, SignInStartsHour: 10, PortalPerMinute: 60, HTTPPerMinute: 120,
	ResourcesHour: 20, ResourceBytes: 2_000_000, TasksHour: 60,
	ForumPerMinute: 600, ForumThreadsHour: 30, ForumMessagesHour: 300, ForumBoardsDay: 5,
	ForumApplicationsHour: 30, ForumApplicationsAddressHour: 3, ForumFeaturesDay: 10}
