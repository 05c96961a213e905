# net.sh -- what dev/ircnet and dev/ergonet's start.sh and stop.sh share:
# sourced, never run. The two networks differ only in their daemons (InspIRCd
# + Anope, or one Ergo); the state dir, the ports, the certificate, the
# readiness probe, the watchdog and the stopping of recorded PIDs are one
# piece of code here, so a fix to one network's start-up reaches the other.
# Callers set HERE (their own dir) before sourcing; the functions read STATE,
# the IRC_* settings and, for the probe, deadline.

die() { echo "${0##*/}: $*" >&2; exit 1; }
log() { echo "${0##*/}: $*" >&2; }

alive() { # pid -> 0 if it is a live (non-zombie) process
	local st
	[ -r "/proc/$1/stat" ] || return 1
	st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# --- start.sh ------------------------------------------------------------------

bad_path() { case "$1" in *[\|\&\\\"]*) return 0 ;; esac; return 1; }

net_state() { # statedir -> sets STATE (absolute, created) and the clock T0
	bad_path "$1" && die "state dir path must not contain | & \" or a backslash"
	mkdir -p "$1"
	STATE=$(cd "$1" && pwd -P)
	bad_path "$STATE" && die "state dir path must not contain | & \" or a backslash"
	T0=$(date +%s%N)
}
elapsed_ms() { echo $(( ($(date +%s%N) - T0) / 1000000 )); }

# net_settings link-port-default [name-var...] -- the shared settings
# defaults, then dies on a bad number or name among them and the caller's.
net_settings() {
	IRC_PLAIN_PORT=${IRC_PLAIN_PORT:-6667}
	IRC_TLS_PORT=${IRC_TLS_PORT:-6697}
	IRC_LINK_PORT=${IRC_LINK_PORT:-$1}
	shift
	IRC_SERVER_NAME=${IRC_SERVER_NAME:-irc.test}
	IRC_SERVICES_NAME=${IRC_SERVICES_NAME:-services.irc.test}
	IRC_NETWORK=${IRC_NETWORK:-TestNet}
	IRC_OPER_NAME=${IRC_OPER_NAME:-admin}
	IRC_OPER_PASS=${IRC_OPER_PASS:-operpass}
	IRC_BOT_OPER_NAME=${IRC_BOT_OPER_NAME:-servicebot}
	IRC_BOT_OPER_PASS=${IRC_BOT_OPER_PASS:-botpass}
	IRC_START_TIMEOUT=${IRC_START_TIMEOUT:-30}
	local v
	for v in IRC_PLAIN_PORT IRC_TLS_PORT IRC_LINK_PORT IRC_START_TIMEOUT; do
		case "${!v}" in ''|*[!0-9]*) die "$v must be a number (got '${!v}')" ;; esac
	done
	for v in IRC_SERVER_NAME IRC_SERVICES_NAME IRC_NETWORK IRC_OPER_NAME IRC_OPER_PASS IRC_BOT_OPER_NAME IRC_BOT_OPER_PASS "$@"; do
		case "${!v}" in ''|*[!A-Za-z0-9._-]*) die "$v must match [A-Za-z0-9._-]+ (got '${!v}')" ;; esac
	done
	case "${IRC_WATCH_PID:-0}" in ''|*[!0-9]*) die "IRC_WATCH_PID must be a PID" ;; esac
}

# net_refuse_running daemon... -- refuse to start twice on the same state dir,
# then stop whatever was started on any later failure (or INT/TERM/HUP).
net_refuse_running() {
	local p
	for p in "$@" watchdog; do
		if [ -s "$STATE/$p.pid" ] && alive "$(cat "$STATE/$p.pid")"; then
			die "$STATE already has a running $p (pid $(cat "$STATE/$p.pid")); run stop.sh first"
		fi
	done
	probe_pid=""
	started_ok=""
	trap net_on_exit EXIT
	trap 'exit 130' INT TERM HUP
}
net_on_exit() {
	local rc=$?
	if [ -z "$started_ok" ]; then
		[ -n "$probe_pid" ] && kill "$probe_pid" 2>/dev/null
		"$HERE/stop.sh" "$STATE" >/dev/null 2>&1 || true
		[ $rc -ne 0 ] || rc=1
	fi
	exit $rc
}

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

net_cert() { # a self-signed certificate (EC P-256, valid for irc name, localhost, 127.0.0.1)
	if [ ! -s "$STATE/tls/cert.pem" ] || [ ! -s "$STATE/tls/key.pem" ]; then
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-keyout "$STATE/tls/key.pem" -out "$STATE/tls/cert.pem" -days 30 \
			-subj "/CN=$IRC_SERVER_NAME" \
			-addext "subjectAltName=DNS:$IRC_SERVER_NAME,DNS:localhost,IP:127.0.0.1" \
			>"$STATE/logs/openssl.out" 2>&1 || { cat "$STATE/logs/openssl.out" >&2; die "openssl failed"; }
	fi
	chmod 0644 "$STATE/tls/cert.pem"
}

# net_render template output [sed-expression...] -- fills a config template's
# @TOKENS@ with the shared settings and the caller's own; a token left over
# is an error.
net_render() {
	local in=$1 out=$2 extra=() e
	shift 2
	for e in "$@"; do extra+=(-e "$e"); done
	sed -e "s|@STATEDIR@|$STATE|g" \
	    -e "s|@SERVER_NAME@|$IRC_SERVER_NAME|g" \
	    -e "s|@NETWORK@|$IRC_NETWORK|g" \
	    -e "s|@PLAIN_PORT@|$IRC_PLAIN_PORT|g" \
	    -e "s|@TLS_PORT@|$IRC_TLS_PORT|g" \
	    -e "s|@OPER_NAME@|$IRC_OPER_NAME|g" \
	    -e "s|@OPER_PASS@|$IRC_OPER_PASS|g" \
	    -e "s|@BOT_OPER_NAME@|$IRC_BOT_OPER_NAME|g" \
	    -e "s|@BOT_OPER_PASS@|$IRC_BOT_OPER_PASS|g" \
	    "${extra[@]}" "$in" >"$out"
	if grep -q '@[A-Z][A-Z_]*[A-Z]@' "$out"; then die "unsubstituted token in $out"; fi
}

# net_await daemon bind-pattern ready-pattern -> 0 ok, 2 bind failure, 1 other
# failure: watches <statedir>/logs/<daemon>.out of the daemon just started.
net_await() {
	local pid out="$STATE/logs/$1.out"
	pid=$(cat "$STATE/$1.pid")
	for _ in $(seq 1 $(( IRC_START_TIMEOUT * 50 ))); do
		if grep -q "$2" "$out"; then
			kill -KILL "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			return 2
		fi
		grep -q "$3" "$out" && return 0
		if ! alive "$pid"; then
			# The daemon may log the bind error and exit between two looks.
			grep -q "$2" "$out" && return 2
			return 1
		fi
		sleep 0.02
	done
	return 1
}

# net_listen daemon label start-fn bind-pattern port-var... -- picks the ports
# that are 0 (afresh on each attempt), refuses equal or busy ports, and runs
# start-fn (0 ok, 2 bind failure, 1 other), retrying a lost port race.
net_listen() {
	local name=$1 label=$2 start=$3 bindre=$4
	shift 4
	local ports=("$@") auto=() attempt=0 v w p busy rc same
	for v in "${ports[@]}"; do [ "${!v}" = 0 ] && auto+=("$v"); done
	while :; do
		attempt=$((attempt + 1))
		for v in "${auto[@]}"; do
			p=$(pick_port) || die "could not find a free port"
			printf -v "$v" '%s' "$p"
		done
		same=""
		for v in "${ports[@]}"; do for w in "${ports[@]}"; do
			[ "$v" != "$w" ] && [ "${!v}" = "${!w}" ] && same=1
		done; done
		if [ -n "$same" ]; then
			[ ${#auto[@]} -gt 0 ] && [ $attempt -lt 10 ] && continue
			die "$(net_and "${ports[@]}") must differ"
		fi
		busy=""
		for v in "${ports[@]}"; do
			port_busy "${!v}" && busy="$busy $v=${!v}"
		done
		if [ -n "$busy" ]; then
			[ ${#auto[@]} -gt 0 ] && [ $attempt -lt 10 ] && continue
			die "port(s) already in use on 127.0.0.1:$busy"
		fi
		rc=0; "$start" || rc=$?
		[ $rc -eq 0 ] && break
		if [ $rc -eq 2 ]; then
			[ ${#auto[@]} -gt 0 ] && [ $attempt -lt 10 ] && { log "port race, retrying"; continue; }
			grep "$bindre" "$STATE/logs/$name.out" >&2 || true
			rm -f "$STATE/$name.pid"
			die "$label could not bind its listeners"
		fi
		tail -n 30 "$STATE/logs/$name.out" >&2
		die "$label failed to start (see $STATE/logs/$name.out)"
	done
	log "$name up (pid $(cat "$STATE/$name.pid")) after $(elapsed_ms) ms"
}
net_and() { # words -> "a, b and c"
	local out=$1
	shift
	while [ $# -gt 1 ]; do out="$out, $1"; shift; done
	[ $# -eq 1 ] && out="$out and $1"
	echo "$out"
}

# net_probe [wake] -- in the background, a real client that must get a NOTICE
# from NickServ, then CAP LS 302 (saved in caps.txt); wake pokes a server that
# completes registration only when its event loop wakes (InspIRCd 3). Sets
# probe_pid; net_probed waits for it.
net_probe() {
	( trap '' PIPE; net_probe_nickserv "${1:-}" ) </dev/null >/dev/null 2>&1 &
	probe_pid=$!
}
net_probe_nickserv() {
	local wake=$1 nick="probe$$x$RANDOM" line="" part="" rc phase=reg caps=""
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
			# Any input wakes InspIRCd's event loop; registration completes
			# on the first wake-up after a second boundary, so poke it.
			[ -n "$wake" ] && [ "$phase" = reg ] && printf 'PING :wake\r\n' >&3
			continue
		fi
		line=${line%$'\r'}
		case "$phase:$line" in
		*":PING "*) printf 'PONG %s\r\n' "${line#PING }" >&3 ;;
		"reg:"*" 001 "*) phase=ns; printf 'PRIVMSG NickServ :STATUS\r\n' >&3 ;;
		"ns:"*" 401 "*) sleep 0.05; printf 'PRIVMSG NickServ :STATUS\r\n' >&3 ;;   # not introduced yet
		"ns::NickServ!"*" NOTICE "*) phase=cap; printf 'CAP LS 302\r\n' >&3 ;;
		"cap:"*" CAP "*" LS * :"*) caps="$caps ${line#* LS \* :}" ;;               # continuation
		"cap:"*" CAP "*" LS :"*)
			caps="$caps ${line#* LS :}"
			printf 'QUIT :ready\r\n' >&3
			exec 3<&- 3>&-
			echo "$caps" | tr ' ' '\n' | sed '/^$/d' >"$STATE/caps.txt"
			return 0 ;;
		*":ERROR "*) break ;;
		esac
	done
	exec 3<&- 3>&- || true
	return 1
}
net_probed() { # -> the TLS listener verified and the probe's answer, or fail
	# TLS listener: full handshake, certificate verified against the generated cert.
	if ! openssl s_client -connect "127.0.0.1:$IRC_TLS_PORT" -CAfile "$STATE/tls/cert.pem" \
		-verify_ip 127.0.0.1 -verify_return_error -brief </dev/null >"$STATE/logs/tls-check.out" 2>&1; then
		cat "$STATE/logs/tls-check.out" >&2
		fail "TLS handshake on 127.0.0.1:$IRC_TLS_PORT failed"
	fi
	wait "$probe_pid" || { probe_pid=""; fail "NickServ did not answer a client on 127.0.0.1:$IRC_PLAIN_PORT"; }
	probe_pid=""
}

# net_watchdog daemon... -- if IRC_WATCH_PID is set, the network is stopped
# when that PID exits.
net_watchdog() {
	[ -n "${IRC_WATCH_PID:-}" ] || return 0
	local pids=() d
	for d in "$@"; do pids+=("$(cat "$STATE/$d.pid")"); done
	# A separate bash (not a subshell) so that its argv carries the absolute
	# state dir, which stop.sh checks before signalling it. After the watched
	# PID is gone it runs stop.sh and, in case the state dir (and so the PID
	# files) was already deleted, also SIGTERMs the recorded daemon PIDs if
	# their command line still names the state dir.
	bash -c 'trap "" HUP INT
		while kill -0 "$1" 2>/dev/null; do sleep 1; done
		rm -f "$2/watchdog.pid"
		"$3" "$2"
		shift 3
		for p in "$@"; do
			tr "\0" "\n" <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$2/" && kill -TERM "$p"
		done
		exit 0' \
		ircnet-watchdog "$IRC_WATCH_PID" "$STATE" "$HERE/stop.sh" "${pids[@]}" \
		</dev/null >>"$STATE/logs/watchdog.out" 2>&1 &
	echo $! >"$STATE/watchdog.pid"
}

# net_done KEY=VALUE... -- saves and prints the network's settings (the shared
# ones, then the caller's) in <statedir>/ircnet.env: the network is up.
net_done() {
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
		printf '%s\n' "$@"
		echo "IRC_STARTUP_MS=$(elapsed_ms)"
	} >"$STATE/ircnet.env"
	chmod 0644 "$STATE/ircnet.env"
	started_ok=1
	trap - EXIT INT TERM HUP
	cat "$STATE/ircnet.env"
}

# --- stop.sh -------------------------------------------------------------------

# net_stop statedir name... -- stops the processes that start.sh <statedir>
# launched, in the order named. Only the PIDs recorded in <statedir>/<name>.pid
# are signalled, and only if /proc/<pid>/cmdline still mentions <statedir>
# (guards against PID reuse). SIGTERM first, SIGKILL after IRC_STOP_TIMEOUT
# seconds (default 10). The state dir itself is kept. Exit status: 0 when
# nothing we started is left running.
net_stop() {
	[ -d "$1" ] || { echo "stop.sh: no such state dir: $1" >&2; exit 0; }
	STATE=$(cd "$1" && pwd -P)
	shift
	local timeout=${IRC_STOP_TIMEOUT:-10} pids=() names=() name f pid i status=0 end
	for name in "$@"; do
		f="$STATE/$name.pid"
		[ -s "$f" ] || continue
		pid=$(cat "$f")
		case "$pid" in ''|*[!0-9]*) rm -f "$f"; continue ;; esac
		if net_ours "$pid"; then
			kill -TERM "$pid" 2>/dev/null || true
			pids+=("$pid"); names+=("$name")
		else
			rm -f "$f"
		fi
	done
	end=$(( $(date +%s) + timeout ))
	for i in "${!pids[@]}"; do
		pid=${pids[$i]}; name=${names[$i]}
		while alive "$pid" && [ "$(date +%s)" -lt "$end" ]; do sleep 0.05; done
		if alive "$pid"; then
			echo "stop.sh: $name (pid $pid) ignored SIGTERM, sending SIGKILL" >&2
			kill -KILL "$pid" 2>/dev/null || true
			sleep 0.2
		fi
		if alive "$pid"; then
			echo "stop.sh: $name (pid $pid) still running" >&2
			status=1
		else
			rm -f "$STATE/$name.pid"
			echo "stopped $name (pid $pid)"
		fi
	done
	exit $status
}
net_ours() { # pid -> 0 if the live process was started for this state dir
	alive "$1" || return 1
	# The daemons carry the state dir in argv; the watchdog is a bash process
	# started by start.sh with the state dir as one of its arguments (an
	# argument equal to <statedir>, or containing "<statedir>/").
	tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | grep -qxF -e "$STATE" || \
		tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -e "$STATE/"
}
