package irc

import "github.com/creatimus/pircan/pircan"

// Sender is who a request came from, as the IRC server attested it. Account
// is the NickServ account from the `account` tag ("" when absent); Nick is
// only a label to reply to. Casemap is the network's, for comparing nicks.
type Sender struct {
	Account string
	Nick    string
	Casemap pircan.Casemapping
}

// Identified reports whether the server attached an account to the message.
func (s Sender) Identified() bool { return s.Account != "" }

// NickKey is the sender's nick folded by the network's casemapping: the key
// under which an unidentified sender is counted and answered.
func (s Sender) NickKey() string { return s.Casemap.Fold(s.Nick) }
