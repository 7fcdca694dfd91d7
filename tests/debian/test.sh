#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of the Debian packaging (debian/, issue 23 item 1): the
# packages built as Documentation/install.rst says, `dpkg-buildpackage -us
# -uc -b`, in a copy of the tree, checked without installing them
# (dpkg-deb only: installing would change this host).  The build is
# tests/vm/debian-host/debs.sh's, the debian-host lane's packages, cached
# by a hash of the tree: make check builds the tree's packages once, a
# warm run not at all.  debs.sh records what only the build can tell (its
# CPU time, its log, the copy before it, its *.ko, `debian/rules clean`
# after it) beside the packages, and this judges those records.
#
#  - the version agrees everywhere: version.h, dkms.conf, debian/changelog,
#    the packages, /usr/src/kvm-statsfd-VERSION, the commands' --version;
#  - each package holds what Debian policy wants where it wants it: the
#    DKMS source with the tree's dkms.conf and no build output, the
#    modules-load.d entry, the commands, man pages, bash completion, the
#    exporter's unit (not enabled), its system user (sysusers.d, made in
#    a root of its own) and its /etc/default conffile, the
#    library with its soname, symbols and -dev files, an agent building
#    against the -dev package;
#  - lintian on the .changes: no error, no warning that is not
#    overridden, and every override says why in a comment;
#  - the build compiled no kernel module and ran no test suite (its CPU
#    time is printed), and `debian/rules clean` leaves the copy as it was;
#  - this run built the tree's packages at most once, and not at all when
#    debs.sh's cache had them.
#
# usage: tests/debian/test.sh        KEEP=1 keeps the temporary directory
# (the unpacked packages, lintian's log; the build's records stay in
# debs.sh's DIR, which the output names).  CACHE as debs.sh's.
# Prints TAP, then "N passed, N failed[, N skipped]" (a skip is not a
# pass).
# shellcheck disable=SC2016,SC2317 # sh -c '..."$1"...' sh ARG is meant; has() runs under check
set -uo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/ks-deb.XXXXXX")
# CPU seconds (user + system) the build may use: about 25 on two cores.
# (debs.sh stops a build that runs too long.)
BUILD_CPU_BUDGET=120

# ok, check, skip, tap_finish
# shellcheck source=tests/lib/host-tap.sh
. "$(dirname "$0")/../lib/host-tap.sh"

finish() {
	if [ "${KEEP:-0}" = 1 ]; then echo "# kept $T"; else rm -rf "$T"; fi
	tap_finish
	exit
}

for tool in dpkg-buildpackage dpkg-deb dpkg-parsechangelog lintian; do
	if ! command -v "$tool" > /dev/null; then
		skip "Debian packages build and pass lintian" \
			"no $tool (not a Debian host, or scripts/install-deps.sh not run)"
		finish
	fi
done

# --- the version's one place, and those that repeat it -------------------
version_h=$(sed -n 's/^#define KVM_STATSFD_VERSION "\(.*\)"/\1/p' \
	"$TOP/include/kvm_statsfd/version.h")
dkms_ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$TOP/dkms.conf")
deb_ver=$(dpkg-parsechangelog -l "$TOP/debian/changelog" -S Version)
upstream=${deb_ver%-*}
check "version.h ($version_h) = dkms.conf's PACKAGE_VERSION ($dkms_ver) = debian/changelog's upstream version ($upstream)" \
	test -n "$version_h" -a "$version_h" = "$dkms_ver" -a "$version_h" = "$upstream"
VER=$version_h

# debian/rules refuses to build when one of them disagrees, before
# building anything: tried on a scratch copy of the four files involved.
mismatch() {	# mismatch FILE SED-EXPR: debian/rules fails, naming FILE's version
	local m=$T/mismatch out
	rm -rf "$m"
	mkdir -p "$m/debian" "$m/include/kvm_statsfd"
	cp "$TOP/debian/rules" "$TOP/debian/changelog" "$m/debian/"
	cp "$TOP/include/kvm_statsfd/version.h" "$m/include/kvm_statsfd/"
	cp "$TOP/dkms.conf" "$m/"
	sed -i "$2" "$m/$1"
	if out=$(cd "$m" && debian/rules clean 2>&1); then
		echo "debian/rules clean succeeded"
		return 1
	fi
	grep -q "version.h says '$VER'" <<< "$out" || { echo "$out"; return 1; }
}
check "debian/rules stops a build whose debian/changelog disagrees with version.h" \
	mismatch debian/changelog "1s/($VER-/(9$VER-/"
check "debian/rules stops a build whose dkms.conf disagrees with version.h" \
	mismatch dkms.conf "s/^PACKAGE_VERSION=\"$VER\"/PACKAGE_VERSION=\"9$VER\"/"

# --- the build ---------------------------------------------------------------
if ! out=$(cd "$TOP" && dpkg-checkbuilddeps 2>&1); then
	ok 1 "build dependencies installed (scripts/install-deps.sh)" "$out"
	finish
fi
ok 0 "build dependencies installed (dpkg-checkbuilddeps)"

# The debian-host lane's packages, built by debs.sh in a copy of the tree
# (without tests/: debs.sh says why), or found in its cache: built here
# too, they would be the same work twice.  Every dpkg-buildpackage of this
# run is counted (a wrapper first in PATH logs its directory): the tree's
# version is built once where debs.sh's cache lacks it, else never.  When
# the lane's debs.sh is building at the same time, ours waits for it on
# its lock and builds nothing.
mkdir -p "$T/bin"
real_dbp=$(command -v dpkg-buildpackage)
cat > "$T/bin/dpkg-buildpackage" << EOF
#!/bin/sh
echo "\$PWD" >> "$T/builds"
exec "$real_dbp" "\$@"
EOF
chmod +x "$T/bin/dpkg-buildpackage"
export PATH=$T/bin:$PATH
: > "$T/builds"
if ! debs=$("$TOP/tests/vm/debian-host/debs.sh" 2> "$T/debs.log"); then
	ok 1 "dpkg-buildpackage -us -uc -b (tests/vm/debian-host/debs.sh)" \
		"$(tail -n 30 "$T/debs.log")"
	finish
fi
# debs.sh says when it builds; a cache hit is silent.
want_builds=0
grep -q 'building the old packages' "$T/debs.log" && want_builds=1
tree_builds=$(grep -c "/kvm-statsfd-$VER\$" "$T/builds")
check "dpkg-buildpackage built the tree's packages ($VER) $tree_builds times in this run: $want_builds, as debs.sh's cache $( ((want_builds)) && echo lacked || echo had) them" \
	test "$tree_builds" = "$want_builds"
check "debs.sh's older packages are the tree's version ($debs/versions: $(cat "$debs/versions" 2>&1))" \
	sh -c 'read -r o n < "$1" && [ "$o" = "$2" ]' sh "$debs/versions" "$VER"
B=$debs/old	# the build of the tree's version: its packages, .changes
check "dpkg-buildpackage -us -uc -b, by debs.sh $(date -r "$debs/ok" '+%F %T'): $B.build.log says it finished" \
	grep -q '^dpkg-buildpackage: info: binary-only upload' "$B.build.log"

# What debs.sh recorded of that build (its header lists them): a record
# that is missing fails its case, as a build that left no evidence.
recorded() {	# recorded FILE CMD...: CMD, if debs.sh left FILE
	[ -f "$1" ] || { echo "debs.sh left no $1"; return 1; }
	"${@:2}"
}
check "debs.sh's copy of the tree had debian/rules (old.before, the copy before the build)" \
	recorded "$B.before" grep -qx "f debian/rules" "$B.before"
# bash's times, in debs.sh: the CPU time of the build's processes,
# children included.
secs() { awk -F'[ms]' '{ printf "%.1f", $1 * 60 + $2 }' <<< "$1"; }	# secs 1m2.5s
read -r b_user b_sys < <(sed -n 2p "$B.times" 2>/dev/null) || true
b_user=$(secs "${b_user:-999m}") b_sys=$(secs "${b_sys:-999m}")
echo "# dpkg-buildpackage: $b_user s user, $b_sys s system ($( ((want_builds)) &&
	echo "built in this run" || echo "debs.sh's cached build"))"
check "the build stayed under $BUILD_CPU_BUDGET CPU seconds ($b_user user + $b_sys system, old.times)" \
	recorded "$B.times" \
	awk -v u="$b_user" -v s="$b_sys" -v b="$BUILD_CPU_BUDGET" 'BEGIN { exit !(u + s < b) }'
check "no kernel module was built (DKMS builds it at install time; old.ko, the copy's *.ko after the build)" \
	recorded "$B.ko" sh -c '! grep . "$1"' sh "$B.ko"
check "dh_auto_test did not start the tree's make check (old.build.log)" \
	recorded "$B.build.log" \
	sh -c '! grep -E "make (-j[0-9]+ )?check|tests/vm/check.sh" "$1"' sh "$B.build.log"

ARCH=$(dpkg-architecture -qDEB_HOST_ARCH)
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
CHANGES=$B/kvm-statsfd_${deb_ver}_$ARCH.changes
declare -A DEB=(
	[kvm-statsfd-dkms]=$B/kvm-statsfd-dkms_${deb_ver}_all.deb
	[kvm-statsfd]=$B/kvm-statsfd_${deb_ver}_$ARCH.deb
	[libkvmstats1]=$B/libkvmstats1_${deb_ver}_$ARCH.deb
	[libkvmstats-dev]=$B/libkvmstats-dev_${deb_ver}_$ARCH.deb
	[kvm-statsfd-collectd]=$B/kvm-statsfd-collectd_${deb_ver}_$ARCH.deb
)
for p in kvm-statsfd-dkms kvm-statsfd libkvmstats1 libkvmstats-dev kvm-statsfd-collectd; do
	if [ -f "${DEB[$p]}" ]; then
		ok 0 "built $(basename "${DEB[$p]}") ($(stat -c %s "${DEB[$p]}") bytes)"
		mkdir -p "$T/x/$p" "$T/ctl/$p"
		dpkg-deb -x "${DEB[$p]}" "$T/x/$p"
		dpkg-deb -e "${DEB[$p]}" "$T/ctl/$p"
	else
		ok 1 "built $(basename "${DEB[$p]}")" "$(ls "$B")"
		finish
	fi
done
check "built $(basename "$CHANGES")" test -f "$CHANGES"

field() { dpkg-deb -f "${DEB[$1]}" "$2"; }	# field PACKAGE FIELD
has() { test -e "$T/x/$1/$2" -o -L "$T/x/$1/$2"; }	# has PACKAGE PATH

for p in "${!DEB[@]}"; do
	check "$p: Version $deb_ver" test "$(field "$p" Version)" = "$deb_ver"
	check "$p: /usr/share/doc/$p/copyright is debian/copyright" \
		cmp "$T/x/$p/usr/share/doc/$p/copyright" "$TOP/debian/copyright"
done

# --- kvm-statsfd-dkms ----------------------------------------------------------
D=$T/x/kvm-statsfd-dkms
S=usr/src/kvm-statsfd-$VER
check "kvm-statsfd-dkms: Architecture all" test "$(field kvm-statsfd-dkms Architecture)" = all
check "kvm-statsfd-dkms: depends on dkms" \
	grep -Eq '(^|, )dkms( |,|$)' <<< "$(field kvm-statsfd-dkms Depends)"
check "kvm-statsfd-dkms: /$S/dkms.conf is the tree's" cmp "$D/$S/dkms.conf" "$TOP/dkms.conf"
check "kvm-statsfd-dkms: dkms.conf inside names /$S (PACKAGE_NAME-PACKAGE_VERSION)" \
	test "$(sed -n 's/^PACKAGE_NAME="\(.*\)"$/\1/p' "$D/$S/dkms.conf")-$(sed -n \
		's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$D/$S/dkms.conf")" = "kvm-statsfd-$VER"
# Every file the module build needs, as the copy built had it
# (old.before), and nothing else.
want=$(awk '$1 != "f" { next }
	{ p = substr($0, 3) }
	p ~ /^(src|include)\// || p == "Kbuild" || p == "Makefile" || p == "dkms.conf" { print p }' \
	"$B.before" | LC_ALL=C sort)
got=$(cd "$D/$S" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)
check "kvm-statsfd-dkms: /$S holds Kbuild, Makefile, dkms.conf, src/, include/, no more, no less" \
	diff <(echo "$want") <(echo "$got")
check "kvm-statsfd-dkms: no build output in /$S (*.o, *.ko, .*.cmd)" \
	sh -c '! find "$1" \( -name "*.o" -o -name "*.ko" -o -name ".*.cmd" -o -name "*.mod*" \) | grep .' sh "$D/$S"
check "kvm-statsfd-dkms: postinst adds, builds and installs kvm-statsfd/$VER with DKMS" \
	grep -q "DKMS_VERSION=$VER" "$T/ctl/kvm-statsfd-dkms/postinst"
check "kvm-statsfd-dkms: prerm removes it" \
	grep -q 'dkms remove' "$T/ctl/kvm-statsfd-dkms/prerm"
check "kvm-statsfd-dkms: /usr/lib/modules-load.d/kvm_statsfd.conf loads kvm_statsfd at boot" \
	test "$(sed '/^#/d; /^$/d' "$D/usr/lib/modules-load.d/kvm_statsfd.conf" 2>&1)" = kvm_statsfd
# dh_compress gzips a document past 4 KiB: README.Debian is either.
has_doc() { has "$1" "usr/share/doc/$1/$2" || has "$1" "usr/share/doc/$1/$2.gz"; }
check "kvm-statsfd-dkms: README.Debian" has_doc kvm-statsfd-dkms README.Debian

# --- kvm-statsfd ---------------------------------------------------------------
K=$T/x/kvm-statsfd
for f in usr/sbin/kvm-statsfd usr/sbin/kvm-statsfd-exporter; do
	check "kvm-statsfd: /$f, executable" test -f "$K/$f" -a -x "$K/$f"
done
for f in kvm-statsfd kvm-statsfd-exporter; do
	check "kvm-statsfd: man page /usr/share/man/man8/$f.8.gz" \
		sh -c 'zcat "$1" | grep -qi "^\.TH \"\?'"$f"'\"\? \"\?8"' sh "$K/usr/share/man/man8/$f.8.gz"
	check "kvm-statsfd: bash completion /usr/share/bash-completion/completions/$f" \
		bash -n "$K/usr/share/bash-completion/completions/$f"
done
# The commands, run from the unpacked package: nothing is installed.
check "kvm-statsfd: kvm-statsfd --version says $VER" \
	test "$("$K/usr/sbin/kvm-statsfd" --version 2>&1)" = "kvm-statsfd $VER"
check "kvm-statsfd: kvm-statsfd-exporter --version says $VER" \
	test "$("$K/usr/sbin/kvm-statsfd-exporter" --version 2>&1)" = "kvm-statsfd-exporter $VER"
UNIT=lib/systemd/system/kvm-statsfd-exporter.service
check "kvm-statsfd: the unit /$UNIT" test -f "$K/$UNIT"
check "kvm-statsfd: the unit starts /usr/sbin/kvm-statsfd-exporter" \
	grep -q '^ExecStart=/usr/sbin/kvm-statsfd-exporter ' "$K/$UNIT"
check "kvm-statsfd: the unit reads /etc/default/kvm-statsfd-exporter" \
	grep -qx 'EnvironmentFile=-/etc/default/kvm-statsfd-exporter' "$K/$UNIT"
check "kvm-statsfd: /etc/default/kvm-statsfd-exporter is a conffile" \
	grep -qx /etc/default/kvm-statsfd-exporter "$T/ctl/kvm-statsfd/conffiles"
check "kvm-statsfd: /etc/default/kvm-statsfd-exporter sets nothing the unit does not default" \
	sh -c '! grep -v "^#" "$1" | grep .' sh "$K/etc/default/kvm-statsfd-exporter"
# dh_installsystemd --no-enable: the postinst enables the unit again only
# where it was installed and enabled before (an upgrade), never on a first
# installation.
check "kvm-statsfd: postinst does not enable the unit on a fresh install (README.Debian)" \
	sh -c 'grep -q "deb-systemd-helper debian-installed .kvm-statsfd-exporter.service" "$1" &&
		[ "$(grep -c "deb-systemd-helper enable" "$1")" = 1 ]' sh \
	"$T/ctl/kvm-statsfd/postinst"
check "kvm-statsfd: postrm forgets the unit on purge" \
	grep -q "deb-systemd-helper purge 'kvm-statsfd-exporter.service'" "$T/ctl/kvm-statsfd/postrm"
check "kvm-statsfd: prerm stops the unit on removal" \
	grep -q "deb-systemd-invoke stop 'kvm-statsfd-exporter.service'" "$T/ctl/kvm-statsfd/prerm"
# The exporter's system user: a sysusers.d file, applied by the postinst
# before the unit is handled; the unit runs as the user it makes.
SYSU=usr/lib/sysusers.d/kvm-statsfd-exporter.conf
check "kvm-statsfd: /$SYSU is the tree's tools/exporter/kvm-statsfd-exporter.sysusers" \
	cmp "$K/$SYSU" "$TOP/tools/exporter/kvm-statsfd-exporter.sysusers"
check "kvm-statsfd: the unit runs as User=/Group=_kvm-statsfd-exporter, the user /$SYSU makes, not DynamicUser=" \
	sh -c 'grep -qx "User=_kvm-statsfd-exporter" "$1" && grep -qx "Group=_kvm-statsfd-exporter" "$1" &&
		! grep -q "^DynamicUser=" "$1" &&
		grep -Eq "^u +_kvm-statsfd-exporter +- " "$2"' sh "$K/$UNIT" "$K/$SYSU"
check "kvm-statsfd: postinst runs systemd-sysusers kvm-statsfd-exporter.conf before it handles the unit" \
	awk '/systemd-sysusers .*kvm-statsfd-exporter\.conf/ && !u { u = NR }
	     /deb-systemd-helper/ && !h { h = NR }
	     END { exit !(u && h && u < h) }' "$T/ctl/kvm-statsfd/postinst"
check "kvm-statsfd: depends on a systemd-sysusers (dh_installsysusers)" \
	grep -q 'systemd | systemd-standalone-sysusers | systemd-sysusers' <<< "$(field kvm-statsfd Depends)"
# What the postinst does, into a root of its own (not this host's):
# systemd-sysusers --root, on the packaged file.
if command -v systemd-sysusers > /dev/null; then
	R=$T/sysusers-root
	mkdir -p "$R/etc" "$R/usr/lib/sysusers.d"
	cp "$K/$SYSU" "$R/$SYSU"
	systemd-sysusers --root="$R" kvm-statsfd-exporter.conf > "$T/sysusers.log" 2>&1
	check "kvm-statsfd: after systemd-sysusers, user _kvm-statsfd-exporter exists: a system uid, its own group, home /nonexistent, nologin" \
		awk -F: -v n=_kvm-statsfd-exporter '
			FNR == NR { if ($1 == n && $3 > 0 && $3 < 1000 && $6 == "/nonexistent" &&
				       $7 ~ /nologin$/) gid = $4; next }
			$1 == n && gid != "" && $3 == gid { found = 1 }
			END { exit !found }' "$R/etc/passwd" "$R/etc/group"
else
	skip "kvm-statsfd: the user systemd-sysusers makes" "no systemd-sysusers on this host"
fi
check "kvm-statsfd: README.Debian, the Prometheus rules and Grafana dashboard" \
	sh -c 'for f in README.Debian examples/kvm-statsfd.rules.yml examples/kvm-statsfd.json; do
		[ -e "$1/$f" ] || [ -e "$1/$f.gz" ] || { echo "no $f"; exit 1; }; done' sh \
	"$K/usr/share/doc/kvm-statsfd"
check "kvm-statsfd: no module-loading entry (kvm-statsfd-dkms owns it)" \
	sh -c '! find "$1" -path "*modules-load.d*" -type f | grep .' sh "$K"

# --- libkvmstats1, libkvmstats-dev ---------------------------------------------
L=$T/x/libkvmstats1 V=$T/x/libkvmstats-dev
LIBV=$(sed -n 's/^LIB_VERSION := *//p' "$TOP/tools/Makefile")
check "libkvmstats1: /usr/lib/$MA/libkvmstats.so.1 -> libkvmstats.so.$LIBV" \
	test -n "$LIBV" -a "$(readlink "$L/usr/lib/$MA/libkvmstats.so.1")" = "libkvmstats.so.$LIBV" -a \
	-f "$L/usr/lib/$MA/libkvmstats.so.$LIBV"
check "libkvmstats1: soname libkvmstats.so.1" \
	sh -c 'readelf -d "$1" | grep -q "Library soname: \[libkvmstats.so.1\]"' sh \
	"$L/usr/lib/$MA/libkvmstats.so.$LIBV"
check "libkvmstats1: Multi-Arch: same" test "$(field libkvmstats1 Multi-Arch)" = same
check "libkvmstats1: shlibs and symbols control files" \
	test -s "$T/ctl/libkvmstats1/shlibs" -a -s "$T/ctl/libkvmstats1/symbols"
# The symbols file lists exactly what the version script exports, each
# function with the version of its node (KVMSTATS_1.0, KVMSTATS_1.1, ...).
map=$(awk '/^KVMSTATS_[0-9.]+ *\{/ { node = $1 }
	/^\t\tkvmstats_[a-z0-9_]*;$/ { sub(/^\t\t/, ""); sub(/;$/, ""); print $0 "@" node }' \
	"$TOP/tools/lib/libkvmstats.map" | sort)
sym=$(sed -n 's/^ \(kvmstats_[^ ]*\) .*/\1/p' "$T/ctl/libkvmstats1/symbols" | sort)
check "libkvmstats1: symbols file = tools/lib/libkvmstats.map ($(wc -l <<< "$map") functions)" \
	diff <(echo "$map") <(echo "$sym")
# ... and debian/libkvmstats1.symbols lists them all: a function added to
# the ABI without it gets no minimum version of its own.
src_sym=$(sed -n 's/^ \(kvmstats_[^ ]*\) .*/\1/p' "$TOP/debian/libkvmstats1.symbols" | sort)
check "debian/libkvmstats1.symbols lists every function of tools/lib/libkvmstats.map" \
	diff <(echo "$map") <(echo "$src_sym")
check "libkvmstats-dev: depends on libkvmstats1 (= $deb_ver)" \
	grep -q "libkvmstats1 (= $deb_ver)" <<< "$(field libkvmstats-dev Depends)"
for f in usr/include/kvmstats/kvmstats.h "usr/lib/$MA/libkvmstats.a" \
	"usr/lib/$MA/libkvmstats.so" "usr/lib/$MA/pkgconfig/libkvmstats.pc" \
	usr/share/man/man3/libkvmstats.3.gz usr/share/man/man3/kvmstats_open.3.gz; do
	check "libkvmstats-dev: /$f" has libkvmstats-dev "$f"
done
check "libkvmstats-dev: libkvmstats.pc says prefix /usr, libdir /usr/lib/$MA" \
	sh -c 'grep -qx "prefix=/usr" "$1" && grep -qx "libdir=/usr/lib/$2" "$1"' sh \
	"$V/usr/lib/$MA/pkgconfig/libkvmstats.pc" "$MA"
check "libkvmstats-dev: libkvmstats.a has no debug sections" \
	sh -c '! objdump -h "$1" | grep -q "\.debug_"' sh "$V/usr/lib/$MA/libkvmstats.a"
# An agent built as a user would, with pkg-config, against the unpacked
# -dev and library packages (a sysroot): it links and runs.
mkdir -p "$T/sysroot"
cp -a "$L/." "$V/." "$T/sysroot/"
check "libkvmstats-dev: tools/examples/print_stats.c builds with pkg-config against the packages and runs" \
	sh -c 'export PKG_CONFIG_SYSROOT_DIR="$1" PKG_CONFIG_LIBDIR="$1/usr/lib/$2/pkgconfig"
		cc -o "$3/print_stats" "$4" $(pkg-config --cflags --libs libkvmstats) &&
		LD_LIBRARY_PATH="$1/usr/lib/$2" "$3/print_stats" /dev/null 2>&1
		# an empty file is not a stats file: a clear error, not a crash
		rc=$?; [ $rc -eq 1 ] || [ $rc -eq 2 ]' sh "$T/sysroot" "$MA" "$T" "$TOP/tools/examples/print_stats.c"

# --- kvm-statsfd-collectd ---------------------------------------------------------
C=$T/x/kvm-statsfd-collectd
check "kvm-statsfd-collectd: /usr/lib/collectd/kvm_statsfd.so, linked to libkvmstats.so.1" \
	sh -c 'readelf -d "$1" | grep -q "NEEDED.*\[libkvmstats.so.1\]"' sh \
	"$C/usr/lib/collectd/kvm_statsfd.so"
check "kvm-statsfd-collectd: depends on collectd-core and libkvmstats1 (>= the symbols' version)" \
	sh -c 'echo "$1" | grep -q "collectd-core" && echo "$1" | grep -q "libkvmstats1 (>= "' sh \
	"$(field kvm-statsfd-collectd Depends)"
check "kvm-statsfd-collectd: the plugin has the package's hardening (relro, bind now, fortify)" \
	sh -c 'readelf -d "$1" | grep -q "BIND_NOW\|FLAGS.*NOW" && readelf -l "$1" | grep -q GNU_RELRO &&
		readelf -s --wide "$1" | grep -q "__[a-z]*_chk"' sh "$C/usr/lib/collectd/kvm_statsfd.so"

# --- lintian -------------------------------------------------------------------
lintian --tag-display-limit 0 --show-overrides "$CHANGES" > "$T/lintian.log" 2>&1
lint_e=$(grep -c '^E: ' "$T/lintian.log")
lint_w=$(grep -c '^W: ' "$T/lintian.log")
lint_o=$(grep -c '^O: ' "$T/lintian.log")
echo "# lintian: $lint_e errors, $lint_w warnings, $lint_o overridden, $(grep -c '^[IP]: ' "$T/lintian.log") informational"
check "lintian: no error" sh -c '! grep "^E: " "$1"' sh "$T/lintian.log"
check "lintian: no warning that is not overridden" sh -c '! grep "^W: " "$1"' sh "$T/lintian.log"
check "lintian: no unused or mismatched override" \
	sh -c '! grep -E "(unused|mismatched)-override" "$1"' sh "$T/lintian.log"
# Each override is justified: a comment right above it (or above the
# override it is grouped with).
check "every override in debian/*.lintian-overrides has a comment saying why" \
	awk 'FNR == 1 { why = 0 }
	     /^#/ { why = 1; next }
	     /^[[:space:]]*$/ { why = 0; next }
	     !why { print FILENAME ": " $0; bad = 1 }
	     END { exit bad }' "$TOP"/debian/*.lintian-overrides

# --- clean -------------------------------------------------------------------
# debs.sh ran it after the build and listed the copy before and after.
check "debian/rules clean succeeded (old.clean.rc, old.clean.log)" \
	recorded "$B.clean.rc" sh -c '[ "$(cat "$1")" = 0 ] || { tail -n 20 "$2"; exit 1; }' sh \
	"$B.clean.rc" "$B.clean.log"
check "debian/rules clean leaves the copy as it was (old.before, old.after-clean)" \
	recorded "$B.after-clean" diff "$B.before" "$B.after-clean"
finish
