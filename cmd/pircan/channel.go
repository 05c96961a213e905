package main

import (
	"context"
	"fmt"

	"github.com/creatimus/pircan/pircan"
)

// channelGroup is `pircan channel add|list|invite|remove`: the channels
// PIRCAN joins and lists, but never the lobby (--lobby), which it keeps.
var channelGroup = group{"channel", []subcmd{
	{"add", []string{"<#name>"}, channelAdd, nil},
	{"list", nil, channelList, nil},
	{"invite", []string{"<#name>", "<agent_id>"}, channelInvite, nil},
	{"remove", []string{"<#name>"}, channelRemove, nil},
}}

// channelAdd is `channel add <#name> [--private] [--topic text]`.
func channelAdd(c *common) action {
	private := c.fs.Bool("private", false, "members only, by invitation")
	topic := c.fs.String("topic", "", "the channel's topic")
	return func(ctx context.Context, pos []string) error {
		a := pircan.AddChannelArgs{Channel: &pos[0], Private: private, Topic: topic}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			_, err := core.AddChannel(ctx, op, a)
			return done(c.out, err, "ok: channel add %s\n", pos[0])
		})
	}
}

// channelList is `channel list`.
func channelList(c *common) action {
	return func(ctx context.Context, _ []string) error {
		return c.operate(ctx, &pircan.AllChannelsArgs{}, func(core *pircan.Service, op pircan.Caller) error {
			list, err := core.AllChannels(ctx, op, pircan.AllChannelsArgs{})
			if err != nil {
				return err
			}
			tw := table(c.out)
			fmt.Fprintln(tw, "NAME\tPRIVATE\tMEMBERS\tINVITED\tTOPIC")
			for _, ch := range list {
				fmt.Fprintf(tw, "%s\t%v\t%d\t%d\t%s\n", ch.Name, ch.Private, ch.Members, ch.Invited, clean(ch.Topic))
			}
			return tw.Flush()
		})
	}
}

// channelInvite is `channel invite <#name> <agent_id>`.
func channelInvite(c *common) action {
	return func(ctx context.Context, pos []string) error {
		a := pircan.InviteArgs{Channel: &pos[0], AgentID: &pos[1]}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			_, err := core.InviteToChannel(ctx, op, a)
			return done(c.out, err, "ok: channel invite %s %s\n", pos[0], pos[1])
		})
	}
}

// channelRemove is `channel remove <#name>`, refused for the lobby before
// the database opens.
func channelRemove(c *common) action {
	return func(ctx context.Context, pos []string) error {
		if pircan.RFC1459.Fold(pos[0]) == pircan.RFC1459.Fold(c.cfg.str("lobby")) {
			return fmt.Errorf("%s is the lobby (--lobby): PIRCAN always keeps it", pos[0])
		}
		a := pircan.ChannelArgs{Channel: &pos[0]}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			_, err := core.RemoveChannel(ctx, op, a)
			return done(c.out, err, "ok: channel remove %s\n", pos[0])
		})
	}
}
