# SPDX-License-Identifier: BSD-2-Clause
# DOC: shared helpers of the netlink integration tests (sourced, not run).
#
# Every test makes its own network namespace(s) with a unique name and
# removes them on exit through a trap, also when it fails. Tests exit 77
# (skipped) when not root or when `ip netns` does not work. fibd runs
# inside the namespace; its test-only outputs (--dump, --lookup) are
# compared with `ip route show` and with `ip route get` answers from one
# `ip -batch -` process.
#
# Sanitizer builds (quickstart's ASAN stage runs `make check-integration`
# in a build configured with -fsanitize=address,undefined): every report
# of a process the test starts (fibd, fibctl, fibl; leaks at exit
# included) goes to $TMP/sanitizer.PID instead of the process's stderr,
# and any such file fails the test at exit, after every fibd is stopped.
# NL_SLOW (1) multiplies the waits for fibd (3 under ASAN).

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${FIBD:=./daemon/fibd}"
: "${FIBGEN:=./tests/fibgen}"
DATA=${DATA:-$srcdir/../shared/data}
TMP=$(mktemp -d /tmp/nltest.XXXXXX)
NSS=""
PIDS=""
NL_SLOW=${NL_SLOW:-1}
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$TMP/sanitizer"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$TMP/sanitizer"

nl_cleanup() {
	local rc=$? p n
	for p in $PIDS; do kill "$p" 2>/dev/null; kill -CONT "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	for n in $NSS; do ip netns del "$n" 2>/dev/null; done
	if compgen -G "$TMP/sanitizer.*" >/dev/null; then
		echo "FAIL: sanitizer reports:"
		cat "$TMP"/sanitizer.*
		rc=1
	fi
	if [ -n "${KEEP_TMP:-}" ]; then echo "kept $TMP"; else rm -rf "$TMP"; fi
	exit $rc
}
trap nl_cleanup EXIT
trap 'exit 1' INT TERM

nl_skip() { echo "SKIP: $*"; exit 77; }
nl_fail() { echo "FAIL: $*"; exit 1; }

nl_require() {
	[ "$(id -u)" = 0 ] || nl_skip "not root"
	command -v ip >/dev/null || nl_skip "no ip(8)"
	[ -x "$FIBD" ] || nl_fail "fibd not built at $FIBD"
	local probe="nlprobe$$"
	ip netns add "$probe" 2>/dev/null || nl_skip "ip netns unavailable"
	ip netns del "$probe"
}

# nl_ns NAME: create a namespace with lo up and a veth pair v0/v1 up.
nl_ns() {
	local ns="$1-$$"
	ip netns add "$ns" || nl_fail "ip netns add $ns"
	NSS="$NSS $ns"
	ip -n "$ns" link set lo up
	# no link-local addresses appearing later, asynchronously, with routes
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.addr_gen_mode=1
	ip -n "$ns" link add v0 type veth peer name v1
	ip -n "$ns" link set v0 up
	ip -n "$ns" link set v1 up
	NS=$ns
}

# nl_fibd_start LOG ARGS...: run fibd in $NS in the background, sets FIBD_PID.
# Without a -c in ARGS it gets $TMP/fibd.yaml (written here if absent):
# the defaults, with the control socket at $FIBD_SOCK inside $TMP.
FIBD_SOCK=$TMP/fibd.sock
nl_fibd_start() {
	local log=$1 conf=""
	shift
	case " $* " in
	*" -c "*) ;;
	*)
		[ -e "$TMP/fibd.yaml" ] || printf 'control:\n  socket: %s\nlookup:\n  socket: %s\n' "$FIBD_SOCK" "$TMP/lookup.sock" >"$TMP/fibd.yaml"
		conf="-c $TMP/fibd.yaml" ;;
	esac
	# shellcheck disable=SC2086
	ip netns exec "$NS" "$FIBD" $conf "$@" >"$log" 2>&1 &
	FIBD_PID=$!
	PIDS="$PIDS $FIBD_PID"
}

# nl_wait_file FILE [SECONDS]: wait until fibd renamed FILE into place.
nl_wait_file() {
	local i=0 max=$((${2:-60} * 10 * NL_SLOW))
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ $i -le $max ] || nl_fail "timeout waiting for $1"
		kill -0 "$FIBD_PID" 2>/dev/null || nl_fail "fibd died (see log)"
		sleep 0.1
	done
}

# nl_fibd_sync FILE...: SIGUSR1 (apply every queued event, then write the
# outputs again) and wait for the files.
nl_fibd_sync() {
	rm -f "$@"
	kill -USR1 "$FIBD_PID"
	for f in "$@"; do nl_wait_file "$f" 120; done
}

nl_fibd_stop() {
	kill "$FIBD_PID" 2>/dev/null
	wait "$FIBD_PID" 2>/dev/null
	PIDS=$(echo "$PIDS" | sed "s/ $FIBD_PID\b//")
}

# nl_norm_ip TABLE: `ip -o route show` (v4 then v6) on stdin -> the line
# format of fibd --dump, sorted.
nl_norm_ip() {
	awk -v table="$1" '
	function flushnh() {
		if (!inmp) return
		nh = nh " nh" (mpvia != "" ? " via " mpvia : "") (mpdev != "" ? " dev " mpdev : "") " w " mpw
	}
	{
		gsub(/\\/, " ")
		i = 1; type = "unicast"
		if ($1 ~ /^(unicast|local|broadcast|blackhole|unreachable|prohibit|throw|anycast|multicast)$/) { type = $1; i = 2 }
		pfx = $i; i++
		v6 = index(pfx, ":") > 0
		if (pfx == "default") { pfx = "0.0.0.0/0" }
		else if (pfx !~ /\//) pfx = pfx (v6 ? "/128" : "/32")
		metric = 0; tos = ""; nhid = ""; nh = ""; inmp = 0; via = ""; dev = ""; mpw = 1
		for (; i <= NF; i++) {
			t = $i
			if (t == "via") { i++; if ($i == "inet" || $i == "inet6") i++; if (inmp) mpvia = $i; else via = $i }
			else if (t == "dev") { i++; if (inmp) mpdev = $i; else dev = $i }
			else if (t == "metric") { i++; metric = $i }
			else if (t == "nhid") { i++; nhid = $i }
			else if (t == "nexthop") { flushnh(); inmp = 1; mpvia = ""; mpdev = ""; mpw = 1 }
			else if (t == "weight") { i++; mpw = $i }
			else if (t ~ /^(proto|scope|src|pref|expires|mtu|advmss|hoplimit|realms|error|table|tos|initcwnd|initrwnd|rto_min|congctl|features)$/) i++
		}
		flushnh()
		if (!inmp && (via != "" || dev != ""))
			nh = " nh" (via != "" ? " via " via : "") (dev != "" ? " dev " dev : "") " w 1"
		if (type == "unicast" && pfx == "0.0.0.0/0" && v6) pfx = "::/0"
		print type " " pfx (table != 254 && table != "main" ? " table " table : "") " metric " metric (nhid != "" ? " nhid " nhid : "") nh
	}' | sort
}

# nl_compare_dump TABLE DUMPFILE: the kernel's table (both families) vs
# fibd's dump lines of that table.
nl_compare_dump() {
	local table=$1 dump=$2 tag=${3:-dump}
	{ ip -n "$NS" -o -4 route show table "$table"; ip -n "$NS" -o -6 route show table "$table"; } |
		sed 's/^default/0.0.0.0\/0/' | nl_norm_ip "$table" >"$TMP/$tag.kernel"
	if [ "$table" = 254 ] || [ "$table" = main ]; then
		grep -v ' table ' "$dump" | sort >"$TMP/$tag.fibd"
	else
		grep " table $table " "$dump" | sort >"$TMP/$tag.fibd"
	fi
	# ip prints v6 default as "default" too: fix the family from the next hop
	sed -i 's/^\(unicast\|blackhole\|unreachable\|prohibit\|throw\) 0\.0\.0\.0\/0\(.*via [0-9a-f]*:\)/\1 ::\/0\2/' "$TMP/$tag.kernel"
	if ! cmp -s "$TMP/$tag.kernel" "$TMP/$tag.fibd"; then
		echo "$tag: kernel $(wc -l <"$TMP/$tag.kernel") lines, fibd $(wc -l <"$TMP/$tag.fibd") lines; first differences:"
		diff "$TMP/$tag.kernel" "$TMP/$tag.fibd" | head -20
		nl_fail "$tag: FIB differs from the kernel (table $table)"
	fi
	echo "ok: $tag: $(wc -l <"$TMP/$tag.fibd") routes equal to the kernel's table $table"
}

# nl_sample ROUTESFILE N SEED: N random addresses inside random routes of
# a routes file (PREFIX/LEN NEXTHOP lines), v4 or v6.
nl_sample() {
	awk -v n="$2" -v seed="$3" '
	function hexval(h,   v, q) { v = 0; h = tolower(h); for (q = 1; q <= length(h); q++) v = v * 16 + index("0123456789abcdef", substr(h, q, 1)) - 1; return v }
	{ p[NR] = $1 }
	END {
		srand(seed)
		for (k = 0; k < n; k++) {
			split(p[int(rand() * NR) + 1], a, "/")
			len = a[2]
			if (index(a[1], ":") == 0) {
				split(a[1], o, ".")
				v = ((o[1] * 256 + o[2]) * 256 + o[3]) * 256 + o[4]
				span = 2 ^ (32 - len)
				v += int(rand() * span)
				printf "%d.%d.%d.%d\n", int(v / 16777216) % 256, int(v / 65536) % 256, int(v / 256) % 256, v % 256
			} else {
				# expand to 8 groups, randomise the bits beyond len
				s = a[1]; nl = 0; nr = 0
				if (index(s, "::")) {
					l = substr(s, 1, index(s, "::") - 1); r = substr(s, index(s, "::") + 2)
					nl = l == "" ? 0 : split(l, gl, ":"); nr = r == "" ? 0 : split(r, gr, ":")
				} else { nl = split(s, gl, ":") }
				for (j = 1; j <= 8; j++) grp[j] = 0
				for (j = 1; j <= nl; j++) grp[j] = hexval(gl[j])
				for (j = 1; j <= nr; j++) grp[8 - nr + j] = hexval(gr[j])
				for (j = 1; j <= 8; j++) {
					c = len - 16 * (j - 1); if (c < 0) c = 0; if (c > 16) c = 16
					span = 2 ^ (16 - c)
					grp[j] = int(grp[j] / span) * span + int(rand() * span)
				}
				# RFC 5952 text, as inet_ntop and ip(8) print it
				bs = 0; bl = 0
				for (j = 1; j <= 8; j++) if (grp[j] == 0) {
					for (q = j; q <= 8 && grp[q] == 0; q++) ;
					if (q - j > bl) { bs = j; bl = q - j }
					j = q
				}
				if (bl < 2) bs = 0
				out = ""
				for (j = 1; j <= 8; j++) {
					if (j == bs) { out = out "::"; j += bl - 1; continue }
					out = out ((j > 1 && j != bs + bl) || (j > 1 && bs == 0) ? ":" : "") sprintf("%x", grp[j])
				}
				print out
			}
		}
	}' "$1"
}

# nl_compare_get ADDRFILE LOOKUPFILE TAG: `ip route get` for every address
# (one ip -batch process) vs fibd --lookup answers. Multipath: the
# kernel's pick must be one of fibd's paths.
nl_compare_get() {
	local addrs=$1 ours=$2 tag=$3
	sed 's/^/route get /' "$addrs" | ip -n "$NS" -o -force -batch - >"$TMP/$tag.get" 2>/dev/null
	awk -v tag="$tag" '
	FNR == NR {
		gsub(/\\/, " ")
		via = "-"; dev = "-"; a = $1; ty = "unicast"
		if ($1 ~ /^(local|broadcast|blackhole|unreachable|prohibit|throw|anycast|multicast)$/) { a = $2; ty = $1 }
		for (i = 2; i <= NF; i++) { if ($i == "via") { via = $(i + 1); if (via == "inet" || via == "inet6") via = $(i + 2) } if ($i == "dev") dev = $(i + 1) }
		k[a] = via "@" dev; kt[a] = ty; next
	}
	{
		total++
		addr = $1
		if ($2 == "-") { if (addr in k) { bad++; if (bad < 10) print "kernel routes " addr " (" k[addr] "), fibd has no route" } else ok++; next }
		n = 0; set = ""
		if ($4 == "nexthop") {
			for (i = 4; i <= NF; i++) if ($i == "nexthop") {
				v = "-"; d = "-"
				for (j = i + 1; j <= NF && $j != "nexthop"; j++) { if ($j == "via") v = $(j + 1); if ($j == "dev") d = $(j + 1) }
				set = set " " v "@" d
			}
		} else {
			v = "-"; d = "-"
			for (i = 4; i <= NF; i++) { if ($i == "via") v = $(i + 1); if ($i == "dev") d = $(i + 1) }
			set = " " v "@" d
		}
		if ($3 != "unicast") {
			if ((addr in k) && kt[addr] != $3) { bad++; if (bad < 10) print addr ": fibd " $3 ", kernel " k[addr] }
			else ok++
			next
		}
		if (!(addr in k) || kt[addr] != "unicast") { bad++; if (bad < 10) print addr ": kernel has no answer, fibd " $0; next }
		if (index(set " ", " " k[addr] " ")) ok++
		else { bad++; if (bad < 10) print addr ": kernel " k[addr] ", fibd" set }
	}
	END {
		printf "%s: %d lookups, %d equal, %d different\n", tag, total, ok, bad
		exit bad != 0 || total == 0
	}' "$TMP/$tag.get" "$ours" || nl_fail "$tag: lookups differ from ip route get"
	echo "ok: $tag"
}

# nl_routes_file NAME FAMILY N: a real table NAME when one is present beside
# the tree (DATA), else N routes from the project generator.
nl_routes_file() {
	local name=$1 fam=$2 n=$3 out="$TMP/$1.txt"
	if [ -r "$DATA/$name.txt.gz" ]; then
		zcat "$DATA/$name.txt.gz" >"$out"
	elif [ -x "$FIBGEN" ]; then
		if [ "$fam" = 6 ]; then "$FIBGEN" -6 -n "$n" -s 1 -o "$out"; else "$FIBGEN" -n "$n" -s 1 -o "$out"; fi
	else
		nl_skip "no $DATA/$name.txt.gz and no fibgen"
	fi
	echo "$out"
}

# nl_batch_routes FILE DEV GW4 GW6: routes file -> `ip -batch` commands;
# next hop `-` (or a generated one) becomes GW on DEV, all onlink.
nl_batch_routes() {
	awk -v dev="$2" -v gw4="${3:-}" -v gw6="${4:-}" '{
		v6 = index($1, ":") > 0
		gw = $2
		if (gw == "" || gw == "-") gw = v6 ? gw6 : gw4
		if (gw == "") print "route add " $1 " dev " dev
		else print "route add " $1 " via " gw " dev " dev " onlink"
	}' "$1"
}
