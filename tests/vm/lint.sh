#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make lint`: checkpatch.pl --strict over the module's sources, then a W=1
# build with sparse (C=1) against every test kernel.  Any warning fails.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

src=$("$TOP/tests/vm/fetch-linux-source.sh") || exit 1
rc=0

step "lint: checkpatch --strict"
files=$(cd "$TOP" && find src include tests/rig -name '*.[ch]' | sort)
# shellcheck disable=SC2086
if ! (cd "$TOP" && perl "$src/scripts/checkpatch.pl" --strict --no-tree \
	--terse --show-types --ignore FILE_PATH_CHANGES -f $files) > "$BUILD/checkpatch.log" 2>&1; then
	cat "$BUILD/checkpatch.log"
	rc=1
fi

while read -r series rel root; do
	step "lint: W=1 C=1 build against $rel"
	out="$BUILD/lint/$rel"
	rm -rf "$out"
	mirror_tree "$TOP" "$out" Kbuild src include
	if ! build_module "$rel" "$root" "$out" W=1 C=1; then
		rc=1
		continue
	fi
	# Anything the compiler or sparse says about our files is a failure.
	if grep -E '(warning|error):' "$out/build.log"; then
		rc=1
	fi
	# The benchmark variant (make bench) adds src/bench.c.
	rm -rf "$out-bench"
	mirror_tree "$TOP" "$out-bench" Kbuild src include
	if ! build_module "$rel" "$root" "$out-bench" W=1 C=1 \
		KVM_STATSFD_BENCH=1 || grep -E '(warning|error):' "$out-bench/build.log"; then
		rc=1
	fi
done < <(test_kernels)

[ "$rc" = 0 ] && echo "lint: clean" >&2
exit "$rc"
