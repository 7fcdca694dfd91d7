#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The tree's Debian packages, built once for make check: the debian-host
# lane installs them, tests/debian/test.sh checks them.
# `dpkg-buildpackage -us -uc -b`, as Documentation/install.rst says, in a
# copy of the tree (DIR/old), and again in a second copy whose version is
# one step newer (DIR/new), for the lane's upgrade.  The newer one differs
# in its version only: version.h, dkms.conf and a debian/changelog entry,
# as a maintainer's next upload of the same source would.
#
# The copy is what git tracks plus files not yet added and not ignored,
# as they are in the working tree (a copy of HEAD would miss the change
# being tested), without tests/.  Debian's source package would carry
# tests/, but a binary build (-b) reads none of it: debian/rules overrides
# dh_auto_test, which would start the tree's make check.  With tests/ in
# the copy, the key below would change with every edit of a test, and
# each such run would build twice (about 30 CPU-seconds each) packages
# that come out the same.  Without it, a build that did start make check
# fails (no tests/vm/check.sh) instead of booting test kernels for an
# hour; test.sh checks the build's log for it as well.
#
# Cached in $CACHE/debian-host/debs-KEY, KEY a hash of every file of the
# copy (exactly those), of this script and of the host's installed
# packages (the compilers and debhelper the build uses); a warm run builds
# nothing.  Callers at the same time (make check runs the lane and
# test.sh side by side) queue on a lock: the first builds, the others get
# its DIR.
#
# Beside the packages, what tests/debian/test.sh needs to know of the
# build of the tree's version, which only the build can tell (they are
# part of the cached build: a cache hit has them too):
#   old/*.changes, old/*.buildinfo   what lintian reads
#   old.build.log    dpkg-buildpackage's output (new.build.log the other's)
#   old.times        bash's `times` after it: line 2 is the build's CPU time,
#                    user and system, children included
#   old.before       the copy before the build, one "TYPE PATH" a line
#                    (find's %y %P), sorted
#   old.ko           every *.ko in the copy after the build (none, we hope)
#   old.clean.log, old.clean.rc   `debian/rules clean` after the build
#   old.after-clean  the copy then, as old.before
#
# usage: debs.sh        prints DIR; DIR/versions is "OLD NEW" (upstream
#                       versions), DIR/old and DIR/new hold the .debs
set -euo pipefail

# A package build that takes longer than this is doing what it must not
# (building the module, running make check): stop it.
BUILD_TIMEOUT=900

here=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$here/../../.." && pwd)
CACHE=${CACHE:-$TOP/.cache}
log() { echo "  [debian-host] $*" >&2; }

# The copy's files, NUL-separated, relative to TOP.
files() {
	if git -C "$TOP" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
		(cd "$TOP" && git ls-files -z --cached --others --exclude-standard) |
			while IFS= read -r -d '' f; do
				case "$f" in tests/*) continue ;; esac
				[ -f "$f" ] && printf '%s\0' "$f"
			done
	else
		(cd "$TOP" && find . -path ./tests -prune -o -path ./.git -prune \
			-o -path ./.cache -prune -o -path ./build -prune \
			-o -type f -printf '%P\0')
	fi
}

key=$({
	cat "$0"
	(cd "$TOP" && files | LC_ALL=C sort -z | xargs -0r sha256sum)
	sha256sum < /var/lib/dpkg/status
} | sha256sum | cut -c1-40)
dir=$CACHE/debian-host/debs-$key

mkdir -p "$CACHE/debian-host"
exec 9> "$CACHE/debian-host/debs.lock"
flock 9
if [ -f "$dir/ok" ]; then
	# Used now: the pruning below, by age, keeps it.
	touch "$dir"
	echo "$dir"
	exit 0
fi

old=$(sed -n 's/^#define KVM_STATSFD_VERSION "\(.*\)"/\1/p' "$TOP/include/kvm_statsfd/version.h")
new=$old.1
t=$(mktemp -d "${TMPDIR:-/tmp}/ks-debhost-debs.XXXXXX")
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/old/kvm-statsfd-$old" "$t/new/kvm-statsfd-$new" "$dir.tmp"
rm -rf "$dir.tmp"/*
(cd "$TOP" && files | tar --null -T - -c) | tar -x -C "$t/old/kvm-statsfd-$old"
(cd "$TOP" && files | tar --null -T - -c) | tar -x -C "$t/new/kvm-statsfd-$new"

# The next version: upstream OLD.1, Debian revision 1.  debian/rules
# checks that the three agree.
n=$t/new/kvm-statsfd-$new
sed -i "s/^#define KVM_STATSFD_VERSION \"$old\"/#define KVM_STATSFD_VERSION \"$new\"/" \
	"$n/include/kvm_statsfd/version.h"
sed -i "s/^PACKAGE_VERSION=\"$old\"/PACKAGE_VERSION=\"$new\"/" "$n/dkms.conf"
maint=$(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$n/debian/changelog" | head -n 1)
{
	printf 'kvm-statsfd (%s-1) UNRELEASED; urgency=medium\n\n' "$new"
	printf '  * The upgrade of make check'"'"'s debian-host lane: the same source\n'
	printf '    as %s, a newer version.\n\n' "$old"
	printf ' -- %s  %s\n\n' "$maint" "$(date -R)"
	cat "$n/debian/changelog"
} > "$n/debian/changelog.new"
mv "$n/debian/changelog.new" "$n/debian/changelog"

# listing: the copy in the current directory, as old.before says.
listing() { find . -printf '%y %P\n' | LC_ALL=C sort; }

# Each build in a subshell whose `times` gives its CPU time (the
# children's line).  Only the tree's version gets the records test.sh
# judges: the newer one is the same source but for its version, and the
# lane wants its .debs alone.
for v in old new; do
	src=$(echo "$t/$v"/kvm-statsfd-*)
	log "building the $v packages ($(basename "$src")) with dpkg-buildpackage"
	[ "$v" != old ] || (cd "$src" && listing) > "$dir.tmp/old.before"
	if ! (
		cd "$src" && timeout "$BUILD_TIMEOUT" dpkg-buildpackage -us -uc -b
		st=$?
		times > "$t/$v.times"
		exit $st
	) > "$t/$v.log" 2>&1; then
		tail -n 30 "$t/$v.log" >&2
		echo "dpkg-buildpackage of the $v version failed" >&2
		exit 1
	fi
	mkdir -p "$dir.tmp/$v"
	mv "$t/$v"/*.deb "$dir.tmp/$v/"
	cp "$t/$v.log" "$dir.tmp/$v.build.log"
	[ "$v" = old ] || continue
	mv "$t/old"/*.changes "$t/old"/*.buildinfo "$dir.tmp/old/"
	cp "$t/old.times" "$dir.tmp/old.times"
	(cd "$src" && find . -name '*.ko' -printf '%P\n' | LC_ALL=C sort) > "$dir.tmp/old.ko"
	# Its status is test.sh's to judge, with the listing after it.
	st=0
	(cd "$src" && debian/rules clean) > "$dir.tmp/old.clean.log" 2>&1 || st=$?
	echo "$st" > "$dir.tmp/old.clean.rc"
	(cd "$src" && listing) > "$dir.tmp/old.after-clean"
done
echo "$old $new" > "$dir.tmp/versions"
touch "$dir.tmp/ok"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
# Builds of other trees go, but the few used last (other worktrees; a
# cache hit touches its DIR).
find "$CACHE/debian-host" -mindepth 1 -maxdepth 1 -name 'debs-*' -printf '%T@ %p\n' |
	sort -rn | tail -n +5 | cut -d" " -f2- | xargs -r rm -rf
echo "$dir"
