#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Host test of the two commands' conventions, no VM needed: --version and
# --help, exit codes, write errors detected (> /dev/full), a clear error
# and status 1 for a user who may not look, one JSON head (schema and
# timestamp) on every document, the exporter's unit verified by
# systemd-analyze, and `make install` placing what it should under DESTDIR.
#
#   host_test.sh BUILD_DIR      (kvm-statsfd and kvm-statsfd-exporter in it)
#
# Prints TAP; the last line is "N passed, N failed".
set -u
B=$1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
KS=$B/kvm-statsfd
EXP=$B/kvm-statsfd-exporter
T=$(mktemp -d /tmp/ks-host.XXXXXX)
trap 'rm -rf "$T"' EXIT
# ok, skip, tap_finish
. "$(dirname "$0")/../lib/host-tap.sh"


st() {	# st CMD...: status of CMD, its output in $T/out and $T/err
	"$@" > "$T/out" 2> "$T/err"
	echo $?
}

v=$(sed -n 's/.*KVM_STATSFD_VERSION "\(.*\)"/\1/p' "$TOP/include/kvm_statsfd/version.h")
for p in "$KS" "$EXP"; do
	r=$(st "$p" --version)
	[ "$r" = 0 ] && [ "$(cat "$T/out")" = "$(basename "$p") $v" ]
	ok $? "$(basename "$p") --version prints '$(basename "$p") $v', status 0" \
		"status $r: $(cat "$T/out" "$T/err")"
	r=$(st "$p" --help)
	[ "$r" = 0 ] && grep -q '^SYNOPSIS' "$T/out" && [ ! -s "$T/err" ]
	ok $? "$(basename "$p") --help on stdout, status 0" "status $r"
	r=$(st "$p" --no-such-option)
	[ "$r" = 2 ] && [ ! -s "$T/out" ] && grep -q "Try '" "$T/err"
	ok $? "$(basename "$p"): unknown option is status 2, error on stderr only" \
		"status $r: $(cat "$T/err")"
done

# kvm-statsfd's usage errors (status 2) and a PID without a VM (status 1,
# said why): no VM needed, so here and not in the guests' tool test.
for a in "" frobnicate "show --bogus" "watch -i 0" "list 12"; do
	# shellcheck disable=SC2086
	r=$(st "$KS" $a)
	[ "$r" = 2 ] && [ ! -s "$T/out" ] && grep -q "Try '" "$T/err"
	ok $? "kvm-statsfd ${a:-(no command)}: usage error, status 2, on stderr" \
		"status $r: $(cat "$T/err")"
done
for pid in 2147483000 $$; do
	r=$(st "$KS" show $pid)
	[ "$r" = 1 ] && grep -q "no KVM VM found in pid $pid" "$T/err"
	ok $? "kvm-statsfd show $pid (no VM there): status 1, says so" \
		"status $r: $(cat "$T/err")"
done

# The exporter's listen address and arguments: usage errors.
for a in "--listen 127.0.0.1" "--listen 127.0.0.1:70000" "extra"; do
	# shellcheck disable=SC2086
	r=$(st "$EXP" $a)
	ok $((r != 2)) "kvm-statsfd-exporter $a: status 2" "status $r: $(cat "$T/err")"
done

# A value the exporter does not know is a usage error, named.
for a in "--exit-reasons some" "--exit-reasons=" "--collect scalars,nope"; do
	# shellcheck disable=SC2086
	r=$(st "$EXP" --once $a)
	[ "$r" = 2 ] && [ ! -s "$T/out" ] && grep -qe "${a%%[ =]*}" "$T/err"
	ok $? "kvm-statsfd-exporter $a: status 2, the option named on stderr" \
		"status $r: $(cat "$T/err")"
done

# Output that cannot be written is an error (status 1, a reason on stderr).
for args in "--help" "list" "list --json" "show --json"; do
	# shellcheck disable=SC2086
	"$KS" $args > /dev/full 2> "$T/err"; r=$?
	[ "$r" = 1 ] && grep -q "standard output" "$T/err"
	ok $? "kvm-statsfd $args > /dev/full: status 1 and why" "status $r: $(cat "$T/err")"
done
"$EXP" --once > /dev/full 2> "$T/err"; r=$?
ok $((r != 1)) "kvm-statsfd-exporter --once > /dev/full: status 1" "status $r: $(cat "$T/err")"

# One JSON head on every document.
for args in "list --json" "show --json"; do
	# shellcheck disable=SC2086
	r=$(st "$KS" $args)
	grep -q '"schema": "kvm-statsfd/1"' "$T/out" &&
		grep -Eq '"timestamp": "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z"' "$T/out"
	ok $((r != 0 || $? != 0)) "kvm-statsfd $args: schema and RFC 3339 timestamp" \
		"status $r" "$(head -n 4 "$T/out")"
done

# A user who may not look into other processes is told, not shown nothing.
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
	install -m 0755 "$KS" "$T/kvm-statsfd"
	chmod 0755 "$T"
	for c in list show; do
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$T/kvm-statsfd" $c > "$T/out" 2> "$T/err"; r=$?
		[ "$r" = 1 ] && grep -q "permission denied" "$T/err" && [ ! -s "$T/out" ]
		ok $? "kvm-statsfd $c as nobody: status 1, 'permission denied' on stderr" \
			"status $r: $(cat "$T/err")"
	done
else
	ok 1 "kvm-statsfd as nobody: the test needs root and setpriv to drop to nobody"
fi

# The unit: systemd's own checker, and the sandboxing it promises.
U=$TOP/tools/exporter/kvm-statsfd-exporter.service
if command -v systemd-analyze > /dev/null; then
	mkdir -p "$T/unit/usr/sbin"
	sed "s|/usr/sbin/kvm-statsfd-exporter|$EXP|" "$U" > "$T/unit/kvm-statsfd-exporter.service"
	systemd-analyze verify --man=no "$T/unit/kvm-statsfd-exporter.service" > "$T/out" 2>&1; r=$?
	! grep -q 'kvm-statsfd-exporter.service' "$T/out"
	ok $((r != 0 || $? != 0)) "systemd-analyze verify accepts the unit" "$(cat "$T/out")"
else
	ok 1 "systemd-analyze verify accepts the unit" "no systemd-analyze"
fi
grep -q '^CapabilityBoundingSet=CAP_SYS_PTRACE CAP_DAC_READ_SEARCH$' "$U" &&
	grep -q '^AmbientCapabilities=CAP_SYS_PTRACE CAP_DAC_READ_SEARCH$' "$U" &&
	grep -q '^NoNewPrivileges=yes$' "$U" && grep -q '^ProtectSystem=strict$' "$U" &&
	grep -q '^User=_kvm-statsfd-exporter$' "$U" && grep -q '^Group=_kvm-statsfd-exporter$' "$U"
ok $? "unit: an unprivileged user with CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH only, NoNewPrivileges, ProtectSystem=strict"
# A static system user, not DynamicUser=: dbus-daemon does not resolve
# dynamic users (systemd issue #22737), and the exporter asks
# systemd-machined on the system bus.  The sysusers.d file makes it.
SU=$TOP/tools/exporter/kvm-statsfd-exporter.sysusers
! grep -q '^DynamicUser=' "$U" && grep -q '^RemoveIPC=yes$' "$U" &&
	grep -Eq '^u +_kvm-statsfd-exporter +- +"[^"]+" +/nonexistent +-$' "$SU"
ok $? "unit: no DynamicUser= (no system bus), RemoveIPC=yes as it implied; the sysusers.d file makes _kvm-statsfd-exporter, home /nonexistent, nologin"

# Every system call the exporter makes that a sandbox might refuse.
filt=$(sed -n 's/^SystemCallFilter=//p' "$U")
allowed=$T/allowed
: > "$allowed"
# expand GROUP...: the system calls of the groups, nested groups too.
expand() {
	for g in "$@"; do
		case $g in
		@*) systemd-analyze syscall-filter "$g" 2>/dev/null |
			sed -n '2,$s/^ *\([@a-z_0-9-]*\)$/\1/p' | while read -r m; do
				case $m in @*) expand "$m" ;; *) echo "$m" ;; esac
			done ;;
		*) echo "$g" ;;
		esac
	done
}
# shellcheck disable=SC2086
expand $filt > "$allowed"
missing=
for sc in pidfd_open pidfd_getfd ioctl pread64 readlinkat getdents64 openat \
	  epoll_wait accept4 sendto recvfrom signalfd4 poll prctl; do
	grep -qx "$sc" "$allowed" || missing="$missing $sc"
done
ok $([ -z "$missing" ] && [ -n "$filt" ]; echo $?) \
	"unit: SystemCallFilter allows what the exporter calls (pidfd_getfd, ioctl, ...)" \
	"not allowed:$missing"

# make install under DESTDIR/PREFIX.
D=$T/destdir
make -s -C "$TOP/tools" O="$B" DESTDIR="$D" PREFIX=/usr install > "$T/out" 2>&1; r=$?
missing=
for f in usr/sbin/kvm-statsfd usr/sbin/kvm-statsfd-exporter \
	 usr/share/man/man8/kvm-statsfd.8 usr/share/man/man8/kvm-statsfd-exporter.8 \
	 usr/share/bash-completion/completions/kvm-statsfd \
	 usr/share/bash-completion/completions/kvm-statsfd-exporter \
	 usr/lib/systemd/system/kvm-statsfd-exporter.service \
	 usr/lib/sysusers.d/kvm-statsfd-exporter.conf; do
	[ -s "$D/$f" ] || missing="$missing $f"
done
ok $((r != 0)) "make -C tools install DESTDIR=... PREFIX=/usr succeeds" "$(tail -n 5 "$T/out")"
ok $([ -z "$missing" ]; echo $?) "install places the tools, man pages, completions, unit and sysusers.d file" \
	"missing:$missing"

tap_finish
