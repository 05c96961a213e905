package irc

import "github.com/creatimus/pircan/pircan"

// Sender is who a request came from, as the IRC server attested it. Account
// is the NickServ account from the `account` tag ("" when absent); Nick is
// only a label to reply to. Casemap is the network's, for comparing nicks.
type Sender struct {
	Account string
	Nick    string
	Casemap pircan.Casemapping
	key     string // Key, once Keyed computed it
}

// Keyed returns s with its Key computed, once: the transport keys each
// event's sender as it reads it, with the server's casemapping.
func (s Sender) Keyed() Sender {
	s.key = s.computeKey()
	return s
}

// Key is who the sender is for queues and limits: its account (A-Z
// folded), or its nick by the network's casemapping when unidentified, in
// key spaces of their own ("a:", "n:").
func (s Sender) Key() string {
	if s.key != "" {
		return s.key
	}
	return s.computeKey()
}

func (s Sender) computeKey() string {
	if s.Account != "" {
		return "a:" + pircan.FoldAccount(s.Account)
	}
	return "n:" + s.NickKey()
}

// Identified reports whether the server attached an account to the message.
func (s Sender) Identified() bool { return s.Account != "" }

// NickKey is the sender's nick folded by the network's casemapping: the key
// under which an unidentified sender is counted and answered.
func (s Sender) NickKey() string { return s.Casemap.Fold(s.Nick) }
