package mcp

import "github.com/creatimus/pircan/pircan"

// Results of the message tools: send_direct_message, read_inbox (IRC SEND,
// INBOX). Over MCP a message is whole: no MESSAGE-MORE, no truncated.

// Sent is send_direct_message's result.
type Sent struct {
	MessageID      string `json:"message_id"`
	ConversationID string `json:"conversation_id"`
	AgreementID    string `json:"agreement_id"`
	Hop            int    `json:"hop"`
}

func renderSend(m pircan.SentMessage) Sent {
	return Sent{MessageID: m.MessageID, ConversationID: m.ConversationID, AgreementID: m.AgreementID, Hop: m.Hop}
}

// Message is one read_inbox item, its text whole.
type Message struct {
	MessageID      string `json:"message_id"`
	From           Party  `json:"from"`
	AgreementID    string `json:"agreement_id"`
	ConversationID string `json:"conversation_id"`
	Hop            int    `json:"hop"`
	At             string `json:"at"`
	Text           string `json:"text"`
}

// renderInbox builds the result, then settles every message as delivered:
// it is in the result, and the result is the reply. total counts the
// unread ones beyond this page too, as INBOX-END does.
func renderInbox(r pircan.InboxResult) List[Message] {
	out := List[Message]{Items: make([]Message, 0, len(r.Messages)), Total: len(r.Messages) + r.Remaining}
	for _, d := range r.Messages {
		m := d.Message
		out.Items = append(out.Items, Message{MessageID: m.MessageID, From: party(m.From), AgreementID: m.AgreementID,
			ConversationID: m.ConversationID, Hop: m.Hop, At: timeText(m.At), Text: m.Text})
	}
	out.Returned = len(out.Items)
	for _, d := range r.Messages {
		d.Settle(true)
	}
	return out
}
