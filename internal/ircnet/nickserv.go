package ircnet

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ergochat/irc-go/ircmsg"
)

// ErrAlreadyRegistered is returned (wrapped) by DialAgent when NickServ
// refuses REGISTER because the nick is registered already.
var ErrAlreadyRegistered = errors.New("nick already registered")

// DialAgent dials as nick and registers the NickServ account nick with
// password; the network's REGISTER logs the client in at once.
func (n *Network) DialAgent(ctx context.Context, nick, password string) (*Client, error) {
	c, err := n.Dial(ctx, nick)
	if err != nil {
		return nil, err
	}
	if err := c.nickServ(ctx, "REGISTER "+password, nick); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Identify logs the client in to account (PRIVMSG NickServ IDENTIFY
// account password) and waits until NickServ confirms it.
func (c *Client) Identify(ctx context.Context, account, password string) error {
	return c.nickServ(ctx, "IDENTIFY "+account+" "+password, account)
}

// RegisterAccount creates the NickServ account with a throw-away connection
// named after it (the account name is the nick used at REGISTER). If the
// account exists already (a reused state dir) it succeeds when password is
// the account's password.
func RegisterAccount(ctx context.Context, n *Network, account, password string) error {
	c, err := n.Dial(ctx, account)
	if err != nil {
		return err
	}
	defer c.Close()
	err = c.nickServ(ctx, "REGISTER "+password, account)
	if errors.Is(err, ErrAlreadyRegistered) {
		err = c.Identify(ctx, account, password)
	}
	return err
}

// ergoLoggedIn starts Ergo's NickServ NOTICE after a REGISTER or IDENTIFY
// that logged the client in; the account name follows.
const ergoLoggedIn = "You're now logged in as "

// nickServ sends a NickServ command and waits until the client is logged in
// to account, or NickServ says why not. Anope confirms with numeric 900;
// Ergo's NickServ sends no 900 (only SASL does), just the NOTICE
// "You're now logged in as <account>", which then counts as the login.
func (c *Client) nickServ(ctx context.Context, command, account string) error {
	if err := c.Privmsg("NickServ", command); err != nil {
		return err
	}
	verb, _, _ := strings.Cut(command, " ")
	var said []string
	for {
		m, err := c.Expect(ctx, func(m ircmsg.Message) bool {
			return m.Command == "900" || (m.Command == "NOTICE" && strings.EqualFold(m.Nick(), "NickServ"))
		})
		if err != nil {
			if len(said) > 0 {
				return fmt.Errorf("NickServ %s: %w (NickServ said: %s)", verb, err, strings.Join(said, " | "))
			}
			return fmt.Errorf("NickServ %s: %w", verb, err)
		}
		if m.Command == "900" { // <nick> <nick!user@host> <account> :You are now logged in as …
			if len(m.Params) < 3 || !strings.EqualFold(m.Params[2], account) {
				return fmt.Errorf("NickServ %s: logged in as something else: %s", verb, describe(m))
			}
			return nil
		}
		text := strings.ReplaceAll(m.Params[len(m.Params)-1], "\x02", "") // bold
		said = append(said, text)
		if acct, ok := strings.CutPrefix(text, ergoLoggedIn); ok {
			if !strings.EqualFold(acct, account) {
				return fmt.Errorf("NickServ %s: logged in as something else: %s", verb, text)
			}
			c.mu.Lock()
			c.acct = acct
			c.mu.Unlock()
			return nil
		}
		// Fail fast on Anope 2.0's and Ergo's refusals rather than at ctx's
		// deadline; anything else (success or info lines) just means: keep
		// waiting.
		switch {
		case strings.Contains(text, "You are already identified"),
			strings.Contains(text, "You're already logged into an account"):
			if strings.EqualFold(c.Account(), account) {
				return nil
			}
			return fmt.Errorf("ircnet [%s]: NickServ %s: %s (as %q)", c.Nick(), verb, text, c.Account())
		case strings.Contains(text, "is already registered"),
			strings.Contains(text, "Name reserved due to a prior registration"),
			strings.Contains(text, "Account already exists"):
			return fmt.Errorf("ircnet [%s]: NickServ %s: %s: %w", c.Nick(), verb, text, ErrAlreadyRegistered)
		case strings.Contains(text, "Password incorrect"),
			strings.Contains(text, "isn't registered"),
			strings.Contains(text, "may not be registered"),
			strings.Contains(text, "obscure password"),
			strings.Contains(text, "Syntax:"),
			strings.Contains(text, "Unknown command"),
			strings.Contains(text, "Access denied"),
			strings.Contains(text, "is currently suspended"),
			strings.Contains(text, "Authentication failed"),
			strings.Contains(text, "A client is already using that account"),
			strings.Contains(text, "Invalid parameters"):
			return fmt.Errorf("ircnet [%s]: NickServ %s: %s", c.Nick(), verb, text)
		}
	}
}
