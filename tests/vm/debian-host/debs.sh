#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The debian-host lane's packages: `dpkg-buildpackage -us -uc -b`, as
# Documentation/install.rst says, in a copy of the tree (DIR/old), and
# again in a second copy whose version is one step newer (DIR/new), for
# the upgrade.  The newer one differs in its version only: version.h,
# dkms.conf and a debian/changelog entry, as a maintainer's next upload
# of the same source would.
#
# The copy is what git tracks plus files not yet added and not ignored,
# as they are in the working tree (tests/debian/test.sh does the same),
# without tests/: no package is built from it.  Cached in
# $CACHE/debian-host/debs-KEY, KEY a hash of every file of the copy, of
# this script and of the host's installed packages (the compilers and
# debhelper the build uses); a warm run builds nothing.
#
# usage: debs.sh        prints DIR; DIR/versions is "OLD NEW" (upstream
#                       versions), DIR/old and DIR/new hold the .debs
set -euo pipefail

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

for v in old new; do
	src=$(echo "$t/$v"/kvm-statsfd-*)
	log "building the $v packages ($(basename "$src")) with dpkg-buildpackage"
	if ! (cd "$src" && dpkg-buildpackage -us -uc -b) > "$t/$v.log" 2>&1; then
		tail -n 30 "$t/$v.log" >&2
		echo "dpkg-buildpackage of the $v version failed" >&2
		exit 1
	fi
	mkdir -p "$dir.tmp/$v"
	mv "$t/$v"/*.deb "$dir.tmp/$v/"
	cp "$t/$v.log" "$dir.tmp/$v.build.log"
done
echo "$old $new" > "$dir.tmp/versions"
touch "$dir.tmp/ok"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
# Builds of older trees go, but the newest few (other worktrees).
find "$CACHE/debian-host" -mindepth 1 -maxdepth 1 -name 'debs-*' -printf '%T@ %p\n' |
	sort -rn | tail -n +5 | cut -d" " -f2- | xargs -r rm -rf
echo "$dir"
