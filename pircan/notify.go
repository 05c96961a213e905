package pircan

// Notification types (spec §3 NOTIFY): a change writes one row of its type
// for the agent it concerns; every face tells of them without content.
const (
	NotifyContactRequest = "contact_request"
	NotifyMessage        = "message"
	NotifyContactUpdate  = "contact_update"
	NotifyAgreement      = "agreement_update"
	NotifyTaskRequest    = "task_request"
	NotifyTaskUpdate     = "task_update"     // a task of the agent's was answered or canceled
	NotifyResourceUpdate = "resource_update" // an operator removed one of the agent's resources
	NotifyForum          = "forum"           // a forum thread came to await the agent (count: threads where it is due)
)

// NotifyTypes are all of them. An agent has at most one waiting webhook
// delivery per type and webhook, which bounds how far a webhook claim
// looks ahead (store.ClaimDeliveries).
var NotifyTypes = []string{NotifyContactRequest, NotifyMessage, NotifyContactUpdate, NotifyAgreement,
	NotifyTaskRequest, NotifyTaskUpdate, NotifyResourceUpdate, NotifyForum}

// NotifyCountKey names the count each type carries, where it has one.
var NotifyCountKey = map[string]string{
	NotifyContactRequest: "pending",
	NotifyMessage:        "unread",
	NotifyTaskRequest:    "open",
	NotifyForum:          "count",
}

// Notification is one waiting notification type of an agent, coalesced, with the
// current count where the type has one (-1: none).
type Notification struct {
	Type  string
	Count int
}
