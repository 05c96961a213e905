#!/usr/bin/env bash
# start.sh <statedir> -- start a loopback IRC test network made of one Ergo
# server (NickServ, SASL and account-tag are built in), with the interface of
# ../ircnet/start.sh (InspIRCd + Anope):
#
# Everything it writes goes into <statedir> (config, TLS cert, logs, PID
# files, Ergo's datastore). On success it prints KEY=VALUE lines on stdout
# (the same lines are saved in <statedir>/ircnet.env) and exits 0 once
# NickServ answers a real client. Progress/errors go to stderr.
#
# Environment (all optional):
#   IRC_PLAIN_PORT  plaintext client port      (default 6667; 0 = pick a free one)
#   IRC_TLS_PORT    TLS client port            (default 6697; 0 = pick a free one)
#   IRC_LINK_PORT   accepted for compatibility; Ergo links no services, nothing
#                   listens on it (printed back as given, 0 stays 0)
#   IRC_SERVER_NAME (irc.test), IRC_NETWORK (TestNet)
#   IRC_SERVICES_NAME (services.irc.test): printed back only; Ergo's services
#                   (NickServ...) are built in and are not clients on any server
#   IRC_OPER_NAME/IRC_OPER_PASS (admin/operpass),
#   IRC_BOT_OPER_NAME/IRC_BOT_OPER_PASS (servicebot/botpass)
#   IRC_START_TIMEOUT  seconds to wait for readiness (default 30)
#   IRC_WATCH_PID      if set, the network is stopped when that PID exits
#   ERGO_BIN           the ergo binary (default: $PIRCAN_TEST_ERGO, else
#                   ../shared/ergonet/ergo beside the repository root)
#   ERGO_TEMPLATE      the config template (default testdata/ergonet/ircd.yaml.in);
#                   the tests render dev/ergo/ircd.yaml into one
#   ERGO_LOG_TYPES ("* -userinput -useroutput"), ERGO_LOG_LEVEL (info): Ergo's
#                   log (logs/ergo.out); "*" + debug logs every client line
#   ERGO__SECTION__KEY=value  any Ergo config key (Ergo's environment overrides),
#                   e.g. ERGO__FAKELAG__ENABLED=true
#   IRC_LINK_PASS, IRC_COPY_BINARIES: accepted and ignored
set -euo pipefail
umask 077

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ERGO_TEMPLATE=${ERGO_TEMPLATE:-$ROOT/testdata/ergonet/ircd.yaml.in}

die() { echo "start.sh: $*" >&2; exit 1; }
log() { echo "start.sh: $*" >&2; }

[ $# -eq 1 ] || die "usage: $0 <statedir>"
bad_path() { case "$1" in *[\|\&\\\"]*) return 0 ;; esac; return 1; }
bad_path "$1" && die "state dir path must not contain | & \" or a backslash"
mkdir -p "$1"
STATE=$(cd "$1" && pwd -P)
bad_path "$STATE" && die "state dir path must not contain | & \" or a backslash"

T0=$(date +%s%N)
elapsed_ms() { echo $(( ($(date +%s%N) - T0) / 1000000 )); }

ERGO_BIN=${ERGO_BIN:-${PIRCAN_TEST_ERGO:-$ROOT/../shared/ergonet/ergo}}
[ -x "$ERGO_BIN" ] || die "$ERGO_BIN not found (run install.sh, or set ERGO_BIN / PIRCAN_TEST_ERGO)"
[ -r "$ERGO_TEMPLATE" ] || die "$ERGO_TEMPLATE not found"
ERGO_BIN=$(cd "$(dirname "$ERGO_BIN")" && pwd -P)/$(basename "$ERGO_BIN")
command -v openssl >/dev/null || die "openssl not found"

IRC_PLAIN_PORT=${IRC_PLAIN_PORT:-6667}
IRC_TLS_PORT=${IRC_TLS_PORT:-6697}
IRC_LINK_PORT=${IRC_LINK_PORT:-0}
IRC_SERVER_NAME=${IRC_SERVER_NAME:-irc.test}
IRC_SERVICES_NAME=${IRC_SERVICES_NAME:-services.irc.test}
IRC_NETWORK=${IRC_NETWORK:-TestNet}
IRC_OPER_NAME=${IRC_OPER_NAME:-admin}
IRC_OPER_PASS=${IRC_OPER_PASS:-operpass}
IRC_BOT_OPER_NAME=${IRC_BOT_OPER_NAME:-servicebot}
IRC_BOT_OPER_PASS=${IRC_BOT_OPER_PASS:-botpass}
IRC_START_TIMEOUT=${IRC_START_TIMEOUT:-30}
ERGO_LOG_TYPES=${ERGO_LOG_TYPES:-* -userinput -useroutput}
ERGO_LOG_LEVEL=${ERGO_LOG_LEVEL:-info}

for v in IRC_PLAIN_PORT IRC_TLS_PORT IRC_LINK_PORT IRC_START_TIMEOUT; do
	case "${!v}" in ''|*[!0-9]*) die "$v must be a number (got '${!v}')" ;; esac
done
for v in IRC_SERVER_NAME IRC_SERVICES_NAME IRC_NETWORK IRC_OPER_NAME IRC_OPER_PASS IRC_BOT_OPER_NAME IRC_BOT_OPER_PASS; do
	case "${!v}" in ''|*[!A-Za-z0-9._-]*) die "$v must match [A-Za-z0-9._-]+ (got '${!v}')" ;; esac
done
case "$ERGO_LOG_TYPES" in *[!A-Za-z0-9*\ -]*) die "ERGO_LOG_TYPES: letters, *, - and spaces only" ;; esac
case "$ERGO_LOG_LEVEL" in debug|info|warn|error) ;; *) die "ERGO_LOG_LEVEL: debug, info, warn or error" ;; esac
case "${IRC_WATCH_PID:-0}" in ''|*[!0-9]*) die "IRC_WATCH_PID must be a PID" ;; esac

alive() { # pid -> 0 if it is a live (non-zombie) process
	local st
	[ -r "/proc/$1/stat" ] || return 1
	st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
for p in ergo watchdog; do
	if [ -s "$STATE/$p.pid" ] && alive "$(cat "$STATE/$p.pid")"; then
		die "$STATE already has a running $p (pid $(cat "$STATE/$p.pid")); run stop.sh first"
	fi
done

probe_pid=""
started_ok=""
on_exit() {
	local rc=$?
	if [ -z "$started_ok" ]; then
		[ -n "$probe_pid" ] && kill "$probe_pid" 2>/dev/null
		"$HERE/stop.sh" "$STATE" >/dev/null 2>&1 || true
		[ $rc -ne 0 ] || rc=1
	fi
	exit $rc
}
trap on_exit EXIT
trap 'exit 130' INT TERM HUP

port_busy() { # port -> 0 if something accepts connections on 127.0.0.1:port
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}
pick_port() { # -> a port in 20000-59999 that nothing listens on
	local p
	for _ in $(seq 1 50); do
		p=$(( 20000 + ( $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000 ) ))
		port_busy "$p" || { echo "$p"; return 0; }
	done
	return 1
}

mkdir -p "$STATE/tls" "$STATE/logs" "$STATE/data"

# --- self-signed certificate (EC P-256, valid for irc name, localhost, 127.0.0.1)
if [ ! -s "$STATE/tls/cert.pem" ] || [ ! -s "$STATE/tls/key.pem" ]; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$STATE/tls/key.pem" -out "$STATE/tls/cert.pem" -days 30 \
		-subj "/CN=$IRC_SERVER_NAME" \
		-addext "subjectAltName=DNS:$IRC_SERVER_NAME,DNS:localhost,IP:127.0.0.1" \
		>"$STATE/logs/openssl.out" 2>&1 || { cat "$STATE/logs/openssl.out" >&2; die "openssl failed"; }
fi
chmod 0644 "$STATE/tls/cert.pem"

printf 'PIRCAN loopback test network (Ergo). Nothing to see here.\n' >"$STATE/motd.txt"

# Oper passwords: Ergo wants bcrypt hashes (ergo genpasswd reads stdin).
genpasswd() { printf '%s\n' "$1" | "$ERGO_BIN" genpasswd --quiet 2>/dev/null | tail -n 1; }
OPER_HASH=$(genpasswd "$IRC_OPER_PASS")
BOT_OPER_HASH=$(genpasswd "$IRC_BOT_OPER_PASS")
case "$OPER_HASH$BOT_OPER_HASH" in *[!A-Za-z0-9./\$]*|'') die "ergo genpasswd failed" ;; esac

render() { # template output
	sed -e "s|@STATEDIR@|$STATE|g" \
	    -e "s|@SERVER_NAME@|$IRC_SERVER_NAME|g" \
	    -e "s|@NETWORK@|$IRC_NETWORK|g" \
	    -e "s|@PLAIN_PORT@|$IRC_PLAIN_PORT|g" \
	    -e "s|@TLS_PORT@|$IRC_TLS_PORT|g" \
	    -e "s|@OPER_NAME@|$IRC_OPER_NAME|g" \
	    -e "s|@OPER_PASS@|$IRC_OPER_PASS|g" \
	    -e "s|@OPER_HASH@|$OPER_HASH|g" \
	    -e "s|@BOT_OPER_NAME@|$IRC_BOT_OPER_NAME|g" \
	    -e "s|@BOT_OPER_PASS@|$IRC_BOT_OPER_PASS|g" \
	    -e "s|@BOT_OPER_HASH@|$BOT_OPER_HASH|g" \
	    -e "s|@LOG_TYPES@|$ERGO_LOG_TYPES|g" \
	    -e "s|@LOG_LEVEL@|$ERGO_LOG_LEVEL|g" \
	    "$1" >"$2"
	if grep -q '@[A-Z][A-Z_]*[A-Z]@' "$2"; then die "unsubstituted token in $2"; fi
}

ulimit -c 0 || true

# --- Ergo --------------------------------------------------------------------
start_ergo() { # -> 0 ok, 2 bind failure, 1 other failure
	render "$ERGO_TEMPLATE" "$STATE/ircd.yaml"
	: >"$STATE/logs/ergo.out"
	# `ergo run` stays in the foreground, so $! is the daemon's PID.
	( cd "$STATE" && exec "$ERGO_BIN" run --conf "$STATE/ircd.yaml" ) \
		</dev/null >>"$STATE/logs/ergo.out" 2>&1 &
	echo $! >"$STATE/ergo.pid"
	disown $! 2>/dev/null || true
	local pid
	pid=$(cat "$STATE/ergo.pid")
	for _ in $(seq 1 $(( IRC_START_TIMEOUT * 50 ))); do
		if grep -q "couldn't listen on\|address already in use" "$STATE/logs/ergo.out"; then
			kill -KILL "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			return 2
		fi
		grep -q 'Server running' "$STATE/logs/ergo.out" && return 0
		if ! alive "$pid"; then
			# Ergo may log the bind error and exit between two looks.
			grep -q "couldn't listen on\|address already in use" "$STATE/logs/ergo.out" && return 2
			return 1
		fi
		sleep 0.02
	done
	return 1
}

auto_ports=()
[ "$IRC_PLAIN_PORT" = 0 ] && auto_ports+=(IRC_PLAIN_PORT)
[ "$IRC_TLS_PORT" = 0 ] && auto_ports+=(IRC_TLS_PORT)

attempt=0
while :; do
	attempt=$((attempt + 1))
	for v in "${auto_ports[@]}"; do
		p=$(pick_port) || die "could not find a free port"
		printf -v "$v" '%s' "$p"
	done
	if [ "$IRC_PLAIN_PORT" = "$IRC_TLS_PORT" ]; then
		[ ${#auto_ports[@]} -gt 0 ] && [ $attempt -lt 10 ] && continue
		die "IRC_PLAIN_PORT and IRC_TLS_PORT must differ"
	fi
	busy=""
	for v in IRC_PLAIN_PORT IRC_TLS_PORT; do
		port_busy "${!v}" && busy="$busy $v=${!v}"
	done
	if [ -n "$busy" ]; then
		[ ${#auto_ports[@]} -gt 0 ] && [ $attempt -lt 10 ] && continue
		die "port(s) already in use on 127.0.0.1:$busy"
	fi
	rc=0; start_ergo || rc=$?
	[ $rc -eq 0 ] && break
	if [ $rc -eq 2 ]; then
		[ ${#auto_ports[@]} -gt 0 ] && [ $attempt -lt 10 ] && { log "port race, retrying"; continue; }
		grep "couldn't listen on\|address already in use" "$STATE/logs/ergo.out" >&2 || true
		rm -f "$STATE/ergo.pid"
		die "Ergo could not bind its listeners"
	fi
	tail -n 30 "$STATE/logs/ergo.out" >&2
	die "Ergo failed to start (see $STATE/logs/ergo.out)"
done
log "ergo up (pid $(cat "$STATE/ergo.pid")) after $(elapsed_ms) ms"

fail() { # message; the EXIT trap stops the processes
	log "$*"
	echo "---- $STATE/logs/ergo.out (tail)" >&2; tail -n 25 "$STATE/logs/ergo.out" >&2 || true
	exit 1
}
deadline=$(( $(date +%s) + IRC_START_TIMEOUT ))

# --- readiness probe: a real client that must get a NOTICE from NickServ, then
# CAP LS 302 (saved in caps.txt).
probe_nickserv() {
	local nick="probe$$x$RANDOM" line="" part="" rc phase=reg caps=""
	exec 3<>"/dev/tcp/127.0.0.1/$IRC_PLAIN_PORT" || return 1
	printf 'NICK %s\r\nUSER probe 0 * :readiness probe\r\n' "$nick" >&3
	while [ "$(date +%s)" -lt "$deadline" ]; do
		line=""
		if IFS= read -r -t 0.1 line <&3; then
			line="$part$line"; part=""
		else
			rc=$?
			[ $rc -gt 128 ] || break                                     # EOF
			part="$part$line"                                            # timeout
			continue
		fi
		line=${line%$'\r'}
		case "$phase:$line" in
		*"PING "*) printf 'PONG %s\r\n' "${line#*PING }" >&3 ;;
		"reg:"*" 001 "*) phase=ns; printf 'PRIVMSG NickServ :STATUS\r\n' >&3 ;;
		"ns:"*" 401 "*) sleep 0.05; printf 'PRIVMSG NickServ :STATUS\r\n' >&3 ;;
		"ns::NickServ!"*" NOTICE "*) phase=cap; printf 'CAP LS 302\r\n' >&3 ;;
		"cap:"*" CAP "*" LS * :"*) caps="$caps ${line#* LS \* :}" ;;               # continuation
		"cap:"*" CAP "*" LS :"*)
			caps="$caps ${line#* LS :}"
			printf 'QUIT :ready\r\n' >&3
			exec 3<&- 3>&-
			echo "$caps" | tr ' ' '\n' | sed '/^$/d' >"$STATE/caps.txt"
			return 0 ;;
		*"ERROR "*) break ;;
		esac
	done
	exec 3<&- 3>&- || true
	return 1
}
( trap '' PIPE; probe_nickserv ) </dev/null >/dev/null 2>&1 &
probe_pid=$!

# TLS listener: full handshake, certificate verified against the generated cert.
if ! openssl s_client -connect "127.0.0.1:$IRC_TLS_PORT" -CAfile "$STATE/tls/cert.pem" \
	-verify_ip 127.0.0.1 -verify_return_error -brief </dev/null >"$STATE/logs/tls-check.out" 2>&1; then
	cat "$STATE/logs/tls-check.out" >&2
	fail "TLS handshake on 127.0.0.1:$IRC_TLS_PORT failed"
fi

wait "$probe_pid" || { probe_pid=""; fail "NickServ did not answer a client on 127.0.0.1:$IRC_PLAIN_PORT"; }
probe_pid=""
grep -qx 'sasl=.*PLAIN.*' "$STATE/caps.txt" || grep -qx 'sasl' "$STATE/caps.txt" || \
	fail "sasl capability not offered: $(tr '\n' ' ' <"$STATE/caps.txt")"
grep -qx 'account-tag' "$STATE/caps.txt" || fail "account-tag capability not offered: $(tr '\n' ' ' <"$STATE/caps.txt")"
log "NickServ answering, SASL offered, TLS verified after $(elapsed_ms) ms"

# --- optional watchdog -------------------------------------------------------
if [ -n "${IRC_WATCH_PID:-}" ]; then
	# A separate bash (not a subshell) so that its argv carries the absolute
	# state dir, which stop.sh checks before signalling it. After the watched
	# PID is gone it runs stop.sh and, in case the state dir (and so the PID
	# file) was already deleted, also SIGTERMs the recorded daemon PID if its
	# command line still names the state dir.
	bash -c 'trap "" HUP INT
		while kill -0 "$1" 2>/dev/null; do sleep 1; done
		rm -f "$2/watchdog.pid"
		"$3" "$2"
		p="$4"
		tr "\0" "\n" <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$2/" && kill -TERM "$p"
		exit 0' \
		ircnet-watchdog "$IRC_WATCH_PID" "$STATE" "$HERE/stop.sh" \
		"$(cat "$STATE/ergo.pid")" \
		</dev/null >>"$STATE/logs/watchdog.out" 2>&1 &
	echo $! >"$STATE/watchdog.pid"
fi

{
	echo "IRC_HOST=127.0.0.1"
	echo "IRC_PLAIN_PORT=$IRC_PLAIN_PORT"
	echo "IRC_TLS_PORT=$IRC_TLS_PORT"
	echo "IRC_LINK_PORT=$IRC_LINK_PORT"
	echo "IRC_SERVER_NAME=$IRC_SERVER_NAME"
	echo "IRC_SERVICES_NAME=$IRC_SERVICES_NAME"
	echo "IRC_NETWORK=$IRC_NETWORK"
	echo "IRC_TLS_CERT=$STATE/tls/cert.pem"
	echo "IRC_OPER_NAME=$IRC_OPER_NAME"
	echo "IRC_OPER_PASS=$IRC_OPER_PASS"
	echo "IRC_BOT_OPER_NAME=$IRC_BOT_OPER_NAME"
	echo "IRC_BOT_OPER_PASS=$IRC_BOT_OPER_PASS"
	echo "IRC_STATE_DIR=$STATE"
	echo "IRC_SERVER_SOFTWARE=ergo"
	echo "ERGO_PID=$(cat "$STATE/ergo.pid")"
	echo "IRC_STARTUP_MS=$(elapsed_ms)"
} >"$STATE/ircnet.env"
chmod 0644 "$STATE/ircnet.env"
started_ok=1
trap - EXIT INT TERM HUP
cat "$STATE/ircnet.env"
