#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# DOC: the Debian packages and the service under a real systemd
#
# Builds the packages from the tree (deb_build.sh: dpkg-buildpackage in a
# copy, lintian), boots a minimal Debian 12 under systemd-nspawn (a real
# systemd as PID 1, its own network namespace) and checks, inside it:
#
#  1. install: dpkg -i creates the user fibd (sysusers), enables the unit
#     and starts it; libfib-dev's files are there;
#  2. start: with 4,000 IPv4 and 1,000 IPv6 routes in the container's
#     main table, `systemctl start fibd` reaches active (running)
#     (Type=notify: ready once the first dump is in) and StatusText holds
#     the kernel's route counts;
#  3. fibctl answers a user in group fibd (show summary, a lookup) and
#     refuses one outside it;
#  4. reload: log.level changed in /etc/fibd/fibd.yaml, `systemctl reload
#     fibd`: same MainPID, `fibctl show config` shows the new level;
#  5. watchdog: the daemon frozen with SIGSTOP is restarted by systemd's
#     watchdog (a new MainPID, NRestarts + 1). A test drop-in lowers
#     WatchdogSec from the unit's 30 s to 3 s (and TimeoutAbortSec to 3 s)
#     to keep the test short;
#  6. sandbox, on the running daemon: user and group fibd, every
#     capability set empty, no_new_privs, seccomp filter on, / read-only
#     in its mount namespace and /run/fibd writable; and a probe (perl)
#     run as a oneshot unit whose [Service] is the installed unit's with
#     only the start/notify/restart lines replaced, i.e. the same
#     sandbox: no writes outside its runtime directory (and PrivateTmp),
#     AF_UNIX and AF_NETLINK sockets allowed, AF_INET, AF_INET6 and
#     AF_PACKET refused with EAFNOSUPPORT (RestrictAddressFamilies);
#  7. metrics, an explicit step: enabled in fibd.yaml under the default
#     unit, a reload keeps the daemon (same MainPID) and logs the fix,
#     a restart fails with it; with the packaged drop-in
#     fibd-metrics.conf installed, fibd starts and answers GET /metrics
#     on 127.0.0.1, and the probe gets AF_INET and AF_INET6 and may send
#     to loopback but not elsewhere (IPAddressDeny=any,
#     IPAddressAllow=localhost) where this systemd enforces IPAddressDeny=
#     at all (a control unit with only that tells; not on cgroup v1: then
#     the property is checked and a note says so);
#  8. stop: inactive, Result=success;
#  9. upgrade over itself (dpkg -i the same packages again): running
#     again, the changed conffile kept; remove: the daemon stopped, only
#     the conffile (and the unit's enablement, kept for a reinstall as
#     for every Debian service) left; purge: nothing left of the packages
#     (a file list of the container taken before the install compared
#     with one after; the fibd user stays, as system users do).
#
# The root file system (mmdebstrap minbase + systemd + fibd's run-time
# dependencies, 1.5-3 minutes here and 210 MB) is built once from the Debian archive
# of the host's apt sources and cached in $FIBD_TEST_CACHE
# (/var/cache/fibd-test), keyed on the package list and the sources; the
# container boots with --volatile=overlay, so the cache stays pristine.
# Exits 77 when not root, without systemd-nspawn/mmdebstrap/nsenter,
# when the archive cannot be reached or the container does not boot.
# Everything started or mounted is removed on exit.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${FIBD_TEST_CACHE:-/var/cache/fibd-test}
suite=bookworm
V4=${FIBD_TEST_V4:-4000}
V6=${FIBD_TEST_V6:-1000}
fail=0

skip() { echo "SKIP: $*"; exit 77; }
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
die() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (systemd-nspawn, mmdebstrap)"
for t in systemd-nspawn mmdebstrap nsenter ip; do
	command -v $t >/dev/null 2>&1 ||
		skip "$t missing (apt-get install systemd-container mmdebstrap iproute2)"
done

tmp=$(mktemp -d /tmp/fibd-nspawn.XXXXXX) || exit 99
nspawn=
cleanup() {
	if [ -n "$nspawn" ] && kill -0 "$nspawn" 2>/dev/null; then
		# SIGTERM: nspawn asks the container's systemd to power off.
		kill -TERM "$nspawn" 2>/dev/null
		for _ in $(seq 1 100); do kill -0 "$nspawn" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$nspawn" 2>/dev/null
		wait "$nspawn" 2>/dev/null
	fi
	[ -n "${KEEP_TMP:-}" ] && { echo "kept $tmp"; return; }
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

# --- the packages ---------------------------------------------------------
bash_t0=$SECONDS
debs=$tmp/debs
if [ -n "${FIBD_TEST_DEBS:-}" ]; then
	# By hand: packages built before (deb_build.sh), to save the build.
	mkdir -p "$debs" && cp "$FIBD_TEST_DEBS"/*.deb "$debs"/ || exit 99
	ok "packages from $FIBD_TEST_DEBS"
else
	sh "$top/tests/integration/deb_build.sh" "$top" "$debs"
	rc=$?
	[ $rc = 0 ] || exit $rc
fi

# --- the root file system, cached -------------------------------------------
# Runtime dependencies of the packages (first alternatives, no versions)
# go into the image: the container has no network to fetch them.
deps=$(for p in fibd libfib0 libfib-dev; do dpkg-deb -f "$debs/${p}"_*.deb Depends; done |
	tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*)//' -e 's/[[:space:]]//g' |
	grep -v -e '^$' -e '^libfib' | sort -u | tr '\n' ' ')
pkgs="systemd systemd-sysv dbus $deps"

# The Debian archive the host uses (mmdebstrap does not read apt's
# sources by itself); FIBD_TEST_MIRROR overrides it with a URL.
sources=()
if [ -n "${FIBD_TEST_MIRROR:-}" ]; then
	sources=("deb $FIBD_TEST_MIRROR $suite main")
else
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && grep -Eq "^[^#]*($suite|debian)" "$f" && sources+=("$f")
	done
fi
[ ${#sources[@]} -gt 0 ] || skip "no apt sources for $suite on the host (set FIBD_TEST_MIRROR)"
key=$( { echo "$suite minbase $pkgs"; for s in "${sources[@]}"; do
	if [ -f "$s" ]; then grep -v '^#' "$s"; else echo "$s"; fi; done; } | sha256sum | cut -c1-12)
root=$cache/$suite-$key
if [ -f "$root.ok" ] && [ -d "$root" ]; then
	ok "cached root file system $root"
else
	mkdir -p "$cache" || exit 99
	rm -rf "$root" "$root.new"
	echo "building the root file system $root: minbase + $pkgs (1.5-3 minutes here, once)"
	t0=$SECONDS
	if ! mmdebstrap --variant=minbase --include="$(echo "$pkgs" | tr ' ' ',' | sed 's/,*$//')" \
		"$suite" "$root.new" "${sources[@]}" >"$tmp/mmdebstrap.log" 2>&1; then
		tail -n 20 "$tmp/mmdebstrap.log"
		rm -rf "$root.new"
		skip "mmdebstrap could not build the root file system (no access to the Debian archive?)"
	fi
	mv "$root.new" "$root" && echo "$pkgs" >"$root.ok" || exit 99
	# Images for other package lists are stale now.
	for d in "$cache/$suite"-*; do
		case $d in "$root" | "$root.ok") ;; *) rm -rf "$d" ;; esac
	done
	ok "root file system built in $((SECONDS - t0)) s ($(du -sh "$root" | cut -f1))"
fi

# --- boot it ------------------------------------------------------------------
# --register=no and --keep-unit: the host has no systemd (no machined, no
# scope to create). --volatile=overlay: writes go to a tmpfs over $root.
systemd-nspawn -q -D "$root" -b --register=no --keep-unit --private-network \
	--volatile=overlay --console=passive --bind-ro="$debs:/debs" \
	</dev/null >"$tmp/nspawn.log" 2>&1 &
nspawn=$!
leader=
for _ in $(seq 1 100); do
	kill -0 "$nspawn" 2>/dev/null || break
	leader=$(cat /proc/"$nspawn"/task/*/children 2>/dev/null | awk '{ print $1; exit }')
	[ -n "$leader" ] && [ "$(readlink /proc/"$leader"/exe 2>/dev/null)" = /usr/lib/systemd/systemd ] && break
	leader=
	sleep 0.1
done
if [ -z "$leader" ]; then
	cat "$tmp/nspawn.log"
	skip "systemd-nspawn did not start a container here"
fi

# A command inside the container, all its namespaces, a clean environment.
c() {
	nsenter -t "$leader" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
		SYSTEMD_PAGER= SYSTEMD_COLORS=0 "$@"
}
# Until its bus is up, systemctl cannot even ask: poll, then wait.
for _ in $(seq 1 900); do
	state=$(c systemctl is-system-running 2>&1)
	case $state in running | degraded | maintenance | stopping | offline) break ;; esac
	kill -0 "$nspawn" 2>/dev/null || break
	sleep 0.1
done
case $state in
running) ok "container booted: systemd PID $leader on the host" ;;
degraded)
	ok "container booted (degraded: $(c systemctl --failed --plain --no-legend | awk '{ printf "%s ", $1 }'))" ;;
*)
	cat "$tmp/nspawn.log"
	skip "the container's systemd did not finish booting ($state)"
	;;
esac
prop() { c systemctl show -P "$1" "${2:-fibd}"; }

# --- routes in the container's own network namespace --------------------------
n() { nsenter -t "$leader" -n "$@"; }
# A veth pair, not a dummy: some kernels here lack the dummy module. No
# IPv6 link-local addresses: they come after DAD, with local routes that
# fibd (every table) would count after the kernel's count below was taken.
n sysctl -qw net.ipv6.conf.default.addr_gen_mode=1 || die "addr_gen_mode in the container"
n ip link add d0 type veth peer name d1 && n ip link set d1 up && n ip link set d0 up &&
	n ip addr add 192.0.2.1/24 dev d0 && n ip addr add 2001:db8::1/64 dev d0 nodad ||
	die "a veth pair in the container"
awk -v v4="$V4" -v v6="$V6" 'BEGIN {
	for (i = 0; i < v4; i++)
		printf "route add 10.%d.%d.0/24 via 192.0.2.2\n", int(i / 256), i % 256
	for (i = 0; i < v6; i++)
		printf "route add 2001:db8:%x::/48 via 2001:db8::2\n", i + 1
}' | n ip -batch - || die "loading the routes"
# every table, as fibd mirrors by default (not multicast and anycast
# routes: fibd skips them)
kcount() { n ip "$1" -o route show table all | grep -cv '^\(multicast\|anycast\) '; }
# the same count twice, a second apart: nothing the kernel adds later
k4=$(kcount -4) k6=$(kcount -6)
for i in 1 2 3 4 5; do
	sleep 1
	[ "$(kcount -4)/$(kcount -6)" = "$k4/$k6" ] && break
	k4=$(kcount -4) k6=$(kcount -6)
done
ok "kernel tables in the container: $k4 IPv4, $k6 IPv6 routes"

# --- 1. install ------------------------------------------------------------------
list_files() {
	# The container's files, but what systemd, dpkg and apt keep changing.
	c find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp \
		-o -path /var/tmp -o -path /var/log -o -path /var/cache -o -path /var/lib/dpkg \
		-o -path /var/lib/apt -o -path /var/lib/systemd/catalog -o -path /var/lib/systemd/random-seed \
		-o -path /var/lib/systemd/timers -o -path /var/lib/systemd/coredump -o -path /debs \
		-o -path /var/lib/private -o -path /etc/ld.so.cache \) -prune -o -print |
		grep -v -E '^/etc/(passwd|group|shadow|gshadow)-?$' | sort
}
c useradd -M -s /usr/sbin/nologin testuser || die "useradd testuser"
list_files >"$tmp/files.before"
debnames=$(cd "$debs" && ls fibd_*.deb libfib0_*.deb libfib-dev_*.deb | sed 's|^|/debs/|')
# shellcheck disable=SC2086
c dpkg -i $debnames >"$tmp/dpkg-install.log" 2>&1 || { cat "$tmp/dpkg-install.log"; die "dpkg -i"; }
ok "dpkg -i $(echo $debnames | sed 's|/debs/||g')"
pw=$(c getent passwd fibd)
uid=$(echo "$pw" | cut -d: -f3)
if [ -n "$uid" ] && [ "$uid" -lt 1000 ] && echo "$pw" | grep -q ':/usr/sbin/nologin$'; then
	ok "the package created the system user fibd ($pw)"
else
	bad "no system user fibd after install: '$pw'"
fi
gid=$(c getent group fibd | cut -d: -f3)
[ -n "$gid" ] && ok "group fibd ($gid)" || bad "no group fibd"
en=$(c systemctl is-enabled fibd 2>&1)
[ "$en" = enabled ] && ok "the package enabled fibd.service" || bad "fibd.service is '$en' after install"
for f in /usr/include/fib/fib.h /usr/include/fib/lookup_proto.h /usr/lib/*/pkgconfig/libfib.pc; do
	c sh -c "test -f $f" && ok "libfib-dev: $f" || bad "libfib-dev: no $f"
done
c sh -c 'test -e "$(ls /usr/lib/*/libfib.so)"' && ok "libfib.so resolves" || bad "libfib.so is dangling"
c usermod -a -G fibd testuser || die "usermod -G fibd testuser"

# --- 2. start --------------------------------------------------------------------
c systemctl stop fibd
c timeout 60 systemctl start fibd || bad "systemctl start fibd"
as="$(prop ActiveState)/$(prop SubState)"
[ "$as" = active/running ] && ok "systemctl start fibd: active (running)" || bad "fibd is $as after start"
status=$(prop StatusText)
want="$k4 IPv4 / $k6 IPv6 routes"
[ "$status" = "$want" ] && ok "StatusText: $status" || bad "StatusText '$status', want '$want'"
pid=$(prop MainPID)

# --- 3. fibctl as a member of group fibd ------------------------------------------
if out=$(c runuser -u testuser -- fibctl show summary 2>&1) &&
	echo "$out" | grep -Eq "^routes_v4 +$k4\$" && echo "$out" | grep -Eq "^routes_v6 +$k6\$"; then
	ok "fibctl show summary as testuser (group fibd): routes_v4 $k4, routes_v6 $k6"
else
	bad "fibctl show summary as testuser: $out"
fi
out=$(c runuser -u testuser -- fibctl lookup 10.3.7.9 2001:db8:5::1 2>&1)
if echo "$out" | grep -q '^10.3.7.9 10.3.7.0/24 .*via 192.0.2.2 dev d0' &&
	echo "$out" | grep -q '^2001:db8:5::1 2001:db8:5::/48 .*via 2001:db8::2 dev d0'; then
	ok "fibctl lookup: $(echo "$out" | head -n1)"
else
	bad "fibctl lookup: $out"
fi
if c runuser -u nobody -- fibctl show summary >/dev/null 2>&1; then
	bad "fibctl answers a user outside group fibd"
else
	ok "fibctl refused to a user outside group fibd"
fi

# --- 4. reload -----------------------------------------------------------------------
c sed -i 's/^\(  level:\) info$/\1 debug/' /etc/fibd/fibd.yaml
c grep -q '^  level: debug$' /etc/fibd/fibd.yaml || die "could not set log.level in fibd.yaml"
c systemctl reload fibd || bad "systemctl reload fibd: $(c journalctl -q -u fibd --no-pager | tail -n 5)"
for _ in $(seq 1 50); do
	c runuser -u testuser -- fibctl show config 2>/dev/null | grep -Eq 'level:? *debug' && break
	sleep 0.1
done
if c runuser -u testuser -- fibctl show config | grep -Eq 'level:? *debug'; then
	ok "systemctl reload fibd: show config says level debug"
else
	bad "the reload did not apply log.level debug: $(c fibctl show config | grep level)"
fi
[ "$(prop MainPID)" = "$pid" ] && ok "same MainPID $pid after the reload" || bad "MainPID changed on reload"

# --- 5. watchdog -----------------------------------------------------------------------
# Test only: the unit's WatchdogSec=30s would make this step last 30 s.
c mkdir -p /etc/systemd/system/fibd.service.d
echo '[Service]
WatchdogSec=3s
TimeoutAbortSec=3s' | c sh -c 'cat >/etc/systemd/system/fibd.service.d/zz-test-watchdog.conf'
c systemctl daemon-reload
c timeout 60 systemctl restart fibd || bad "restart with the test watchdog"
pid=$(prop MainPID)
nr=$(prop NRestarts)
c sh -c "kill -STOP $pid"
t0=$SECONDS
for _ in $(seq 1 300); do
	np=$(prop MainPID)
	[ "$np" != "$pid" ] && [ "$np" != 0 ] && [ "$(prop ActiveState)" = active ] && break
	sleep 0.1
done
nr2=$(prop NRestarts)
if [ "$np" != "$pid" ] && [ "$np" != 0 ] && [ "$nr2" -gt "$nr" ]; then
	ok "SIGSTOPped fibd (PID $pid) restarted by the watchdog after $((SECONDS - t0)) s: MainPID $np, NRestarts $nr -> $nr2"
else
	bad "no watchdog restart in 30 s: MainPID $pid -> $np, NRestarts $nr -> $nr2"
fi
c journalctl -q -u fibd --no-pager | grep -q -i 'watchdog timeout' &&
	ok "journal: watchdog timeout" || bad "no 'watchdog timeout' in the journal"
c rm -rf /etc/systemd/system/fibd.service.d
c systemctl daemon-reload
c timeout 60 systemctl restart fibd || bad "restart without the test drop-in"

# --- 6. sandbox ----------------------------------------------------------------------------
pid=$(prop MainPID)
st=$(c cat /proc/"$pid"/status)
field() { echo "$st" | awk -v f="$1:" '$1 == f { $1 = ""; sub(/^ /, ""); print }'; }
[ "$(field Uid)" = "$uid $uid $uid $uid" ] && ok "runs as fibd (uid $uid)" || bad "Uid: $(field Uid)"
[ "$(field Gid)" = "$gid $gid $gid $gid" ] && ok "group fibd (gid $gid)" || bad "Gid: $(field Gid)"
for cap in CapInh CapPrm CapEff CapBnd CapAmb; do
	[ "$(field $cap)" = 0000000000000000 ] && ok "$cap 0" || bad "$cap $(field $cap)"
done
[ "$(field NoNewPrivs)" = 1 ] && ok "no_new_privs" || bad "NoNewPrivs $(field NoNewPrivs)"
[ "$(field Seccomp)" = 2 ] && ok "seccomp filter" || bad "Seccomp $(field Seccomp)"
# Mount options of / and of /run/fibd as the daemon sees them.
mopt() { c cat /proc/"$pid"/mountinfo | awk -v m="$1" '$5 == m { o = $6 } END { print o }'; }
case ,$(mopt /), in *,ro,*) ok "/ is read-only for fibd" ;; *) bad "/ is '$(mopt /)' for fibd" ;; esac
case ,$(mopt /run/fibd), in *,rw,*) ok "/run/fibd is writable for fibd" ;; *) bad "/run/fibd is '$(mopt /run/fibd)'" ;; esac

cat >"$tmp/probe.pl" <<'PL'
# Run inside fibd's sandbox: what may it touch?
use strict;
use Socket;
use Errno;
sub sock {
	my ($name, $dom, $type) = @_;
	if (socket(my $s, $dom, $type, 0)) { print "socket $name ok\n"; close $s; }
	else { printf "socket %s refused %s\n", $name, $!{EAFNOSUPPORT} ? "EAFNOSUPPORT" : "$!"; }
}
sock("AF_UNIX", AF_UNIX, SOCK_STREAM);
sock("AF_NETLINK", 16, SOCK_RAW);
sock("AF_INET", AF_INET, SOCK_DGRAM);
sock("AF_INET6", AF_INET6, SOCK_DGRAM);
sock("AF_PACKET", 17, SOCK_DGRAM);
sub udp {
	my ($name, $addr) = @_;
	my $s;
	unless (socket($s, AF_INET, SOCK_DGRAM, 0)) {
		printf "send %s refused %s\n", $name, $!{EAFNOSUPPORT} ? "EAFNOSUPPORT" : "$!";
		return;
	}
	if (send($s, "x", 0, sockaddr_in(9, inet_aton($addr)))) { print "send $name ok\n"; }
	else { printf "send %s refused %s\n", $name, $!{EPERM} ? "EPERM" : "$!"; }
}
if (@ARGV && $ARGV[0] eq "udp-only") { udp("remote", "192.0.2.2"); exit 0; }
udp("loopback", "127.0.0.1");
udp("remote", "192.0.2.2");
for my $d ("/", "/etc", "/etc/fibd", "/usr", "/var", "/var/lib", "/root", "/home", "/run", "/run/fibd-probe", "/tmp") {
	if (open(my $f, ">", "$d/fibd-probe-write")) { print "write $d ok\n"; close $f; unlink "$d/fibd-probe-write"; }
	else { print "write $d refused $!\n"; }
}
print "uid $< gid ", (split(/ /, $())[0], "\n";
PL
c sh -c 'cat >/usr/local/lib/fibd-probe.pl' <"$tmp/probe.pl"
# The installed unit's [Service] with the start, notify, watchdog and
# restart lines replaced: every sandboxing line is the unit's own.
c sed -e '/^\[Install\]/,$d' \
	-e '/^\(Description\|Documentation\|Type\|NotifyAccess\|ExecStartPre\|ExecStart\|ExecReload\|WatchdogSec\|Restart\|RestartSec\|RuntimeDirectory\|RuntimeDirectoryMode\)=/d' \
	/lib/systemd/system/fibd.service >"$tmp/probe.service"
printf '%s\n' "Type=oneshot" "ExecStart=/usr/bin/perl /usr/local/lib/fibd-probe.pl" \
	"RuntimeDirectory=fibd-probe" "StandardOutput=truncate:/run/fibd-probe.out" \
	"StandardError=journal" >>"$tmp/probe.service"
nh=$(grep -c -E '^(ProtectSystem|CapabilityBoundingSet|RestrictAddressFamilies|IPAddressDeny|SystemCallFilter|User)=' "$tmp/probe.service")
[ "$nh" = 6 ] || bad "the probe unit lost the unit's sandbox lines ($nh of 6)"
c sh -c 'cat >/etc/systemd/system/fibd-probe.service' <"$tmp/probe.service"
c systemctl daemon-reload
c timeout 60 systemctl start fibd-probe || bad "the probe failed: $(c journalctl -q -u fibd-probe --no-pager | tail -n 5)"
probe=$(c cat /run/fibd-probe.out)
expect() {
	if echo "$probe" | grep -qxF "$1"; then ok "probe in fibd's sandbox: $1${2:+ ($2)}"; else
		bad "probe in fibd's sandbox: want '$1', got '$(echo "$probe" | grep -F "$(echo "$1" | cut -d' ' -f1-2)")'"; fi
}
expect "uid $uid gid $gid"
expect "socket AF_UNIX ok"
expect "socket AF_NETLINK ok"
expect "socket AF_PACKET refused EAFNOSUPPORT" RestrictAddressFamilies
expect "socket AF_INET refused EAFNOSUPPORT" "no AF_INET without the metrics drop-in"
expect "socket AF_INET6 refused EAFNOSUPPORT" "same"
expect "send loopback refused EAFNOSUPPORT"
for d in / /etc /etc/fibd /usr /var /var/lib /run; do
	echo "$probe" | grep -q "^write $d refused" && ok "probe: write in $d refused" ||
		bad "probe: $(echo "$probe" | grep "^write $d ")"
done
for d in /root /home; do
	echo "$probe" | grep -q "^write $d refused" && ok "probe: write in $d refused (ProtectHome)" ||
		bad "probe: $(echo "$probe" | grep "^write $d ")"
done
expect "write /run/fibd-probe ok" "its RuntimeDirectory"
expect "write /tmp ok" "PrivateTmp"

# --- 7. metrics -------------------------------------------------------------------------
dropin=/usr/share/doc/fibd/examples/fibd-metrics.conf
c test -f $dropin && ok "the package ships $dropin" || bad "no $dropin"
c sed -i '/^metrics:/,/^[a-z]/s/^\(  enabled:\) false$/\1 true/' /etc/fibd/fibd.yaml
c sh -c "sed -n '/^metrics:/,/^[a-z]/p' /etc/fibd/fibd.yaml | grep -q '^  enabled: true\$'" ||
	die "could not set metrics.enabled in fibd.yaml"
fix='add the drop-in fibd-metrics.conf'
pid=$(prop MainPID)
c systemctl reload fibd || bad "systemctl reload fibd with metrics enabled"
for _ in $(seq 1 50); do
	c journalctl -q -u fibd --no-pager | grep -qF "$fix" && break
	sleep 0.1
done
line=$(c journalctl -q -u fibd --no-pager -o cat | grep -F "$fix" | tail -n 1)
[ -n "$line" ] && ok "reload, metrics without the drop-in, logged: $line" ||
	bad "no '$fix' in the journal after the reload"
if [ "$(prop MainPID)" = "$pid" ] && [ "$(prop ActiveState)" = active ] &&
	c runuser -u testuser -- fibctl show summary >/dev/null 2>&1; then
	ok "the reload kept fibd running (MainPID $pid, fibctl answers)"
else
	bad "after the reload: MainPID $(prop MainPID), $(prop ActiveState)"
fi
nfix() { c journalctl -q -u fibd --no-pager -o cat | grep -cF "$fix"; }
n0=$(nfix)
if c timeout 60 systemctl restart fibd 2>/dev/null; then
	bad "fibd started with metrics enabled and AF_INET refused"
else
	ok "restart with metrics enabled and AF_INET refused: the start fails"
fi
# Cancel Restart=on-failure's next try before the start limit.
c systemctl stop fibd
c systemctl reset-failed fibd
[ "$(nfix)" -gt "$n0" ] &&
	ok "the failed start logged '$fix'" || bad "the failed start did not log '$fix'"
c mkdir -p /etc/systemd/system/fibd.service.d /etc/systemd/system/fibd-probe.service.d
c cp $dropin /etc/systemd/system/fibd.service.d/metrics.conf
c cp $dropin /etc/systemd/system/fibd-probe.service.d/metrics.conf
c systemctl daemon-reload
c timeout 60 systemctl restart fibd || bad "restart with the drop-in: $(c journalctl -q -u fibd --no-pager | tail -n 3)"
[ "$(prop ActiveState)/$(prop SubState)" = active/running ] && ok "with the drop-in: active (running)" ||
	bad "with the drop-in: $(prop ActiveState)/$(prop SubState)"
# bash's /dev/tcp: minbase has no curl.
m=$(c timeout 10 bash -c 'exec 3<>/dev/tcp/127.0.0.1/9342 &&
	printf "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" >&3 && cat <&3' 2>&1)
if echo "$m" | head -n1 | grep -q '^HTTP/1.[01] 200' && echo "$m" | grep -q "^fibd_routes{family=\"ipv4\"} $k4"; then
	ok "GET http://127.0.0.1:9342/metrics in the container: 200, $(echo "$m" | grep '^fibd_routes{family="ipv4"}' | tr -d '\r')"
else
	bad "GET /metrics: $(echo "$m" | head -n 5)"
fi
c systemctl start fibd-probe || bad "the probe with the drop-in failed: $(c journalctl -q -u fibd-probe --no-pager | tail -n 5)"
probe=$(c cat /run/fibd-probe.out)
expect "socket AF_INET ok" "the drop-in"
expect "socket AF_INET6 ok" "the drop-in"
expect "socket AF_PACKET refused EAFNOSUPPORT" "still"
expect "send loopback ok" "IPAddressAllow=localhost"
# IPAddressDeny= needs systemd's cgroup BPF firewall, which it does not
# set up (and logs only at debug level) when it runs on cgroup v1, as in
# a container on a host without systemd. A control unit with nothing but
# IPAddressDeny=any tells whether this systemd enforces it at all.
c systemd-run -q --wait -p IPAddressDeny=any -p StandardOutput=truncate:/run/fibd-ipcheck.out \
	/usr/bin/perl /usr/local/lib/fibd-probe.pl udp-only
if c grep -qx 'send remote ok' /run/fibd-ipcheck.out; then
	echo "note: this systemd does not enforce IPAddressDeny= (cgroup $(c stat -fc %T /sys/fs/cgroup)): a unit with only IPAddressDeny=any sent to 192.0.2.2 too"
	case $(prop IPAddressDeny) in
	*0.0.0.0/0*::/0* | *::/0*0.0.0.0/0*) ok "IPAddressDeny=any is set on the unit ($(prop IPAddressDeny))" ;;
	*) bad "IPAddressDeny is '$(prop IPAddressDeny)'" ;;
	esac
else
	expect "send remote refused EPERM" "IPAddressDeny=any"
fi
c sed -i '/^metrics:/,/^[a-z]/s/^\(  enabled:\) true$/\1 false/' /etc/fibd/fibd.yaml
c rm -rf /etc/systemd/system/fibd.service.d /etc/systemd/system/fibd-probe.service.d
c rm -f /etc/systemd/system/fibd-probe.service /usr/local/lib/fibd-probe.pl /run/fibd-probe.out \
	/run/fibd-ipcheck.out
c systemctl daemon-reload
c timeout 60 systemctl restart fibd || bad "restart without the metrics drop-in"

# --- 8. stop -----------------------------------------------------------------------------
c timeout 30 systemctl stop fibd || bad "systemctl stop fibd"
r="$(prop ActiveState) $(prop Result) $(prop ExecMainStatus)"
[ "$r" = "inactive success 0" ] && ok "systemctl stop fibd: inactive, result success, exit 0" ||
	bad "after stop: ActiveState Result ExecMainStatus = $r"

# --- 9. upgrade, remove, purge ---------------------------------------------------------
# shellcheck disable=SC2086
c dpkg -i $debnames >"$tmp/dpkg-upgrade.log" 2>&1 || { cat "$tmp/dpkg-upgrade.log"; bad "dpkg -i over itself"; }
c timeout 30 systemctl is-active -q fibd || sleep 2
[ "$(prop ActiveState)/$(prop SubState)" = active/running ] &&
	ok "upgrade over itself: fibd active (running) again" || bad "after the upgrade: $(prop ActiveState)/$(prop SubState)"
c grep -q '^  level: debug$' /etc/fibd/fibd.yaml && ok "upgrade kept the changed conffile" ||
	bad "upgrade lost the change to /etc/fibd/fibd.yaml"
[ "$(c systemctl is-enabled fibd)" = enabled ] && ok "still enabled" || bad "not enabled after the upgrade"

c dpkg -r libfib-dev fibd libfib0 >"$tmp/dpkg-remove.log" 2>&1 || { cat "$tmp/dpkg-remove.log"; bad "dpkg -r"; }
[ "$(prop ActiveState)" != active ] && [ "$(prop MainPID)" = 0 ] && ok "remove stopped fibd" ||
	bad "fibd still running after dpkg -r"
list_files >"$tmp/files.removed"
left=$(comm -13 "$tmp/files.before" "$tmp/files.removed")
# The enablement symlink and deb-systemd-helper's state stay until purge.
extra=$(echo "$left" | grep -v -x -E '/etc/fibd|/etc/fibd/fibd.yaml|/etc/systemd/system/multi-user.target.wants(/fibd.service)?|/var/lib/systemd/deb-systemd-helper-enabled(/.*fibd.*|/multi-user.target.wants)?' | sed '/^$/d')
if echo "$left" | grep -qx /etc/fibd/fibd.yaml && [ -z "$extra" ]; then
	ok "remove left the conffile (and the unit's enablement until purge): $(echo $left)"
else
	bad "after remove, want the conffile only; left: $(echo $left)"
fi
[ "$(c dpkg-query -W -f '${db:Status-Abbrev}' fibd)" = "rc " ] && ok "fibd is in state rc" ||
	bad "fibd's state after remove: $(c dpkg-query -W -f '${db:Status-Abbrev}' fibd)"

c dpkg -P fibd libfib0 libfib-dev >"$tmp/dpkg-purge.log" 2>&1 || { cat "$tmp/dpkg-purge.log"; bad "dpkg -P"; }
list_files >"$tmp/files.purged"
if diff "$tmp/files.before" "$tmp/files.purged" >"$tmp/files.diff"; then
	ok "purge left nothing (file list as before the install)"
else
	bad "purge left files behind:"
	cat "$tmp/files.diff"
fi
c dpkg-query -W fibd >/dev/null 2>&1 && bad "dpkg still knows fibd after purge" || ok "dpkg has forgotten fibd"

echo "systemd_nspawn.sh: $((SECONDS - bash_t0)) s"
exit $fail
