package mcp

import "github.com/creatimus/pircan/pircan"

// Results of the handshake tools: policy, contact, list_contacts,
// accept_contact, decline_contact, cancel_contact, list_agreements,
// revoke_agreement (IRC POLICY … REVOKE).

// Policy is policy's result.
type Policy struct {
	Policy string `json:"policy"`
	Locked bool   `json:"locked"`
}

func renderPolicy(r pircan.PolicyResult) Policy { return Policy{Policy: r.Policy, Locked: r.Locked} }

// Contact is contact's result: agreement_id when the target's policy
// accepted at once.
type Contact struct {
	RequestID   string `json:"request_id"`
	Status      string `json:"status"`
	AgreementID string `json:"agreement_id,omitempty"`
}

func renderContact(r pircan.ContactResult) Contact {
	return Contact{RequestID: r.RequestID, Status: r.Status, AgreementID: r.AgreementID}
}

// ContactItem is one list_contacts item: from (incoming) or to (outgoing).
type ContactItem struct {
	RequestID string   `json:"request_id"`
	From      *Party   `json:"from,omitempty"`
	To        *Party   `json:"to,omitempty"`
	Purpose   string   `json:"purpose"`
	Scopes    []string `json:"scopes"`
	TTLDays   int      `json:"ttl_days"`
	Status    string   `json:"status"`
	ExpiresAt string   `json:"expires_at"`
}

func renderContacts(r pircan.ContactsResult) List[ContactItem] {
	return listOf(r.Page, func(it pircan.ContactItem) ContactItem {
		out := ContactItem{RequestID: it.RequestID, Purpose: it.Purpose, Scopes: strs(it.Scopes),
			TTLDays: it.TTLDays, Status: it.Status, ExpiresAt: timeText(it.ExpiresAt)}
		other := party(it.Other)
		if r.Incoming {
			out.From = &other
		} else {
			out.To = &other
		}
		return out
	})
}

// Decision is the result of accept_contact, decline_contact and
// cancel_contact; an accept adds the agreement.
type Decision struct {
	Contact
	Scopes    []string `json:"scopes,omitempty"`
	ExpiresAt string   `json:"expires_at,omitempty"`
}

func renderDecision(r pircan.DecisionResult) Decision {
	d := Decision{Contact: Contact{RequestID: r.RequestID, Status: r.Status}}
	if r.AgreementID != "" {
		d.AgreementID, d.Scopes, d.ExpiresAt = r.AgreementID, strs(r.Scopes), timeText(r.ExpiresAt)
	}
	return d
}

// AgreementParty is the other party of an agreement, with the IRC
// accounts it is bound to.
type AgreementParty struct {
	Party
	IRCAccounts []string `json:"irc_accounts"`
}

// Agreement is one list_agreements item.
type Agreement struct {
	AgreementID string         `json:"agreement_id"`
	With        AgreementParty `json:"with"`
	Role        string         `json:"role"`
	Scopes      []string       `json:"scopes"`
	Status      string         `json:"status"`
	ExpiresAt   string         `json:"expires_at"`
}

func renderAgreements(p pircan.Page[pircan.AgreementItem]) List[Agreement] {
	return listOf(p, func(g pircan.AgreementItem) Agreement {
		return Agreement{AgreementID: g.AgreementID,
			With: AgreementParty{Party: party(g.With), IRCAccounts: strs(g.With.IRCAccounts)},
			Role: g.Role, Scopes: strs(g.Scopes), Status: g.Status, ExpiresAt: timeText(g.ExpiresAt)}
	})
}

// Revoked is revoke_agreement's result.
type Revoked struct {
	AgreementID string `json:"agreement_id"`
	Status      string `json:"status"`
}

func renderRevoke(agreementID string) Revoked {
	return Revoked{AgreementID: agreementID, Status: "revoked"}
}
