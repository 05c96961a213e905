package pircan

import (
	"fmt"
	"time"
)

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

// The windows the Limits' counts are over (each count's name says which),
// and the spec's lifetimes. The store's queries take each as a parameter,
// so that every figure is said here only.
const (
	HourWindow = time.Hour
	DayWindow  = 24 * time.Hour
	// RequestLifetime: a contact request still pending after it has
	// expired (spec §4).
	RequestLifetime = 7 * 24 * time.Hour
	// DeclineCooldown: an agent that declined a contact request is not
	// asked by the same requester again within it, nor an account that
	// declined to own an agent by that agent (spec §4).
	DeclineCooldown = 24 * time.Hour
	// NotificationLifetime: a notification not delivered within it is
	// dropped (DESIGN.md, "Time").
	NotificationLifetime = 24 * time.Hour
)

// DefaultLimits are the spec's figures.
var DefaultLimits = Limits{PerCaller: 20, Unidentified: 60, Window: time.Minute, RegistrationsHour: 30,
	ContactsHour: 10, PendingMax: 20, MessagesHour: 120, MaxHops: 8, ConversationHour: 40, ReportsHour: 5,
	LoginsHour: 10, SignInStartsHour: 10, PortalPerMinute: 60, HTTPPerMinute: 120,
	ResourcesHour: 20, ResourceBytes: 2_000_000, TasksHour: 60,
	ForumPerMinute: 600, ForumThreadsHour: 30, ForumMessagesHour: 300, ForumBoardsDay: 5,
	ForumApplicationsHour: 30, ForumApplicationsAddressHour: 3, ForumFeaturesDay: 10}

// Span words a window or lifetime for people ("24 hours", "7 days",
// "10 minutes"), so that refusals and pages say the figure the code
// applies: days only past one, as the spec words its windows.
func Span(d time.Duration) string {
	switch day := 24 * time.Hour; {
	case d > day && d%day == 0:
		return units(int(d/day), "day")
	case d >= time.Hour && d%time.Hour == 0:
		return units(int(d/time.Hour), "hour")
	case d >= time.Minute && d%time.Minute == 0:
		return units(int(d/time.Minute), "minute")
	}
	return units(int(d/time.Second), "second")
}

// units is n of unit, in the plural but for one.
func units(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
