package mcp

import "github.com/creatimus/pircan/pircan"

// The owner tool (OWNER on IRC, DESIGN.md "Owners"): show, name or
// withdraw the account that owns the agent.

// OwnerBinding is owner's result: the binding after the call, with IRC's
// OWNER fields. account is null with status "none"; note follows a
// naming; since is when it was named (pending) or decided; name and
// verification are a confirmed owner's; cleared is the account a clear
// withdrew (absent when there was none).
type OwnerBinding struct {
	Account      *string `json:"account"`
	Status       string  `json:"status"`
	Note         string  `json:"note,omitempty"`
	Since        string  `json:"since,omitempty"`
	Name         string  `json:"name,omitempty"`
	Verification string  `json:"verification,omitempty"`
	Cleared      *string `json:"cleared,omitempty"`
}

func renderOwner(r pircan.OwnerResult) OwnerBinding {
	if r.Cleared {
		out := OwnerBinding{Status: "none"}
		if r.Was != "" {
			out.Cleared = &r.Was
		}
		return out
	}
	b := r.Binding
	if b == nil {
		return OwnerBinding{Status: "none"}
	}
	out := OwnerBinding{Account: &b.Account, Status: b.Status}
	if r.Named {
		out.Note = pircan.OwnerNote
		return out
	}
	out.Since = timeText(b.NamedAt)
	if b.Status != pircan.BindingPending {
		out.Since = timeText(b.DecidedAt)
	}
	if b.Status == pircan.BindingConfirmed && b.Owner != nil {
		out.Name, out.Verification = b.Owner.Name, b.Owner.Verification
	}
	return out
}
