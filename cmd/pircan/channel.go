package main

import (
	"context"
	"fmt"
	"io"

	"github.com/creatimus/pircan/pircan"
)

// runChannel is `pircan channel add|list|invite|remove`: the channels
// PIRCAN joins and lists, but never the lobby (--lobby), which it keeps.
func runChannel(ctx context.Context, args []string, out io.Writer) error {
	sub, c, args, err := groupCommand("channel", args, out, "add", "list", "invite", "remove")
	if err != nil {
		return err
	}
	name := c.name
	var private *bool
	var topic *string
	if sub == "add" {
		private = c.fs.Bool("private", false, "members only, by invitation")
		topic = c.fs.String("topic", "", "the channel's topic")
	}
	pos, err := c.parsePositional(args)
	if err != nil {
		return err
	}
	names := map[string][]string{"add": {"<#name>"}, "list": nil, "invite": {"<#name>", "<agent_id>"}, "remove": {"<#name>"}}
	if err := wantArgs(name, pos, names[sub]...); err != nil {
		return err
	}
	if sub == "remove" && pircan.RFC1459.Fold(pos[0]) == pircan.RFC1459.Fold(c.cfg.str("lobby")) {
		return fmt.Errorf("%s is the lobby (--lobby): PIRCAN always keeps it", pos[0])
	}
	switch sub {
	case "add":
		a := pircan.AddChannelArgs{Channel: &pos[0], Private: private, Topic: topic}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			_, err := core.AddChannel(ctx, op, a)
			return done(out, err, "ok: channel add %s\n", pos[0])
		})
	case "invite":
		a := pircan.InviteArgs{Channel: &pos[0], AgentID: &pos[1]}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			_, err := core.InviteToChannel(ctx, op, a)
			return done(out, err, "ok: channel invite %s %s\n", pos[0], pos[1])
		})
	case "remove":
		a := pircan.ChannelArgs{Channel: &pos[0]}
		return c.operate(ctx, &a, func(core *pircan.Service, op pircan.Caller) error {
			_, err := core.RemoveChannel(ctx, op, a)
			return done(out, err, "ok: channel remove %s\n", pos[0])
		})
	}
	return c.operate(ctx, &pircan.AllChannelsArgs{}, func(core *pircan.Service, op pircan.Caller) error {
		list, err := core.AllChannels(ctx, op, pircan.AllChannelsArgs{})
		if err != nil {
			return err
		}
		tw := table(out)
		fmt.Fprintln(tw, "NAME\tPRIVATE\tMEMBERS\tINVITED\tTOPIC")
		for _, ch := range list {
			fmt.Fprintf(tw, "%s\t%v\t%d\t%d\t%s\n", ch.Name, ch.Private, ch.Members, ch.Invited, clean(ch.Topic))
		}
		return tw.Flush()
	})
}
