package irc

import "github.com/creatimus/pircan/pircan"

// Rendering of the handshake verbs: POLICY, CONTACT, CONTACTS, ACCEPT,
// DECLINE, CANCEL, AGREEMENTS, REVOKE.

func renderPolicy(_ *call, r pircan.PolicyResult) []Reply {
	return one("POLICY", Object{{"policy", r.Policy}, {"locked", r.Locked}})
}

func renderContact(_ *call, r pircan.ContactResult) []Reply {
	f := Object{{"request_id", r.RequestID}, {"status", r.Status}}
	if r.AgreementID != "" {
		f = append(f, Field{"agreement_id", r.AgreementID})
	}
	return one("CONTACT", f)
}

func renderContacts(_ *call, r pircan.ContactsResult) []Reply {
	side := "to"
	if r.Incoming {
		side = "from"
	}
	return listReplies("CONTACT-ITEM", "CONTACTS", r.Page, func(it pircan.ContactItem) Object {
		return Object{
			{"request_id", it.RequestID}, {side, party(it.Other)},
			{"purpose", Text(it.Purpose)}, {"scopes", TextList(it.Scopes)}, {"ttl_days", it.TTLDays},
			{"status", it.Status}, {"expires_at", timeText(it.ExpiresAt)},
		}
	})
}

// renderDecision answers ACCEPT, DECLINE and CANCEL, each under its own verb.
func renderDecision(c *call, r pircan.DecisionResult) []Reply {
	if r.AgreementID == "" {
		return one(c.req.Verb, Object{{"request_id", r.RequestID}, {"status", r.Status}})
	}
	return one(c.req.Verb, Object{{"request_id", r.RequestID}, {"status", r.Status}, {"agreement_id", r.AgreementID},
		{"scopes", TextList(r.Scopes)}, {"expires_at", timeText(r.ExpiresAt)}})
}

func renderAgreements(_ *call, p pircan.Page[pircan.AgreementItem]) []Reply {
	return listReplies("AGREEMENT", "AGREEMENTS", p, func(g pircan.AgreementItem) Object {
		return Object{
			{"agreement_id", g.AgreementID},
			{"with", party(g.With).With("irc_accounts", TextList(g.With.IRCAccounts))},
			{"role", g.Role}, {"scopes", TextList(g.Scopes)}, {"status", g.Status}, {"expires_at", timeText(g.ExpiresAt)},
		}
	})
}

func renderRevoke(_ *call, agreementID string) []Reply {
	return one("REVOKE", Object{{"agreement_id", agreementID}, {"status", "revoked"}})
}
