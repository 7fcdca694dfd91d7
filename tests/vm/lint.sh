#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make lint`: docutils over Documentation/*.rst (tests/lib/rst-check.py),
# checkpatch.pl --strict over the module's sources, then a W=1
# build with sparse (C=1) against every test kernel, each with the compiler
# that kernel was built with (host gcc-12 for bookworm's, the bullseye and
# sid chroots for 5.10 and the newest), and the same for the benchmark's
# test-only probe driver (tests/bench/probe_driver) on the kernels make
# bench boots (host-built ones: it needs vcpu_load(), which 7.x exports to
# KVM's vendor modules only).  Any warning fails.
#
# usage: lint.sh [KERNELS_FILE]
#   KERNELS_FILE  "<series> <release> <root>" lines (default: the test
#                 kernels).  With LINT_REUSE=1, a kernel whose module
#                 make check already built (W=1 C=1, BUILD/REL/module) is
#                 not built again: its log is read.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

src=$("$TOP/tests/vm/fetch-linux-source.sh") || exit 1
rc=0
mkdir -p "$BUILD"

# Anything the compiler or sparse says about our files is a failure, and
# so is a build where kbuild decided not to run sparse.
clean_log() {
	! grep -E '(warning|error):|C=1 specified, but' "$1"
}

step "lint: Documentation (docutils: anything it reports fails)"
# First a file it must refuse, so that a checker that passes everything
# does not pass for clean.
bad=$(mktemp)
printf '%s\n' 'Title' '=====' '' '====  ====' 'a     b' 'cdefg h' '====  ====' > "$bad"
if python3 "$TOP/tests/lib/rst-check.py" "$bad" > /dev/null; then
	echo "lint: rst-check.py passed a malformed table" >&2
	rc=1
fi
rm -f "$bad"
python3 "$TOP/tests/lib/rst-check.py" "$TOP"/Documentation/*.rst || rc=1

step "lint: checkpatch --strict"
files=$(cd "$TOP" && find src include tests/rig tests/bench/probe_driver \
	-name '*.[ch]' | sort)
# shellcheck disable=SC2086
if ! (cd "$TOP" && perl "$src/scripts/checkpatch.pl" --strict --no-tree \
	--terse --show-types --ignore FILE_PATH_CHANGES -f $files) > "$BUILD/checkpatch.log" 2>&1; then
	cat "$BUILD/checkpatch.log"
	rc=1
fi

if [ -n "${1:-}" ]; then
	kernels=$(cat "$1")
else
	kernels=$(test_kernels) || exit 1
fi
while read -r series rel root; do
	[ -n "$rel" ] || continue
	mod="$BUILD/$rel/module"
	if [ "${LINT_REUSE:-0}" = 1 ] && [ -f "$mod/kvm_statsfd.ko" ]; then
		step "lint: [$series] reading the W=1 C=1 build log of $rel"
	else
		step "lint: [$series] W=1 C=1 build against $rel"
		build_module_once "$rel" "$root" || { rc=1; continue; }
	fi
	clean_log "$mod/build.log" || rc=1
	[ "$(builder_of_root "$root")" = host ] || continue
	step "lint: [$series] W=1 C=1 build of the benchmark's probe driver"
	out="$BUILD/lint/$rel-probe-driver"
	rm -rf "$out"
	mirror_tree "$TOP/tests/bench/probe_driver" "$out" .
	if ! build_module "$rel" "$root" "$out" W=1 C=1 ||
		! clean_log "$out/build.log"; then
		rc=1
	fi
done <<< "$kernels"

[ "$rc" = 0 ] && echo "lint: clean" >&2
exit "$rc"
