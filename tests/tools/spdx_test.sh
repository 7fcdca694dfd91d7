#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Every file git tracks says its licence, the one its directory allows,
# and that licence's text is in LICENSES/ (COPYING says which is where).
#
#   spdx_test.sh [TOP]          (TOP: the checkout, default this one's)
#
# One case per rule, failing with the files that break it; first the
# checker itself is tried on files made to break each rule, so that a
# checker which accepts everything fails too.  Prints TAP; the last line
# is "N passed, N failed".
set -u
TOP=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d /tmp/ks-spdx.XXXXXX)
trap 'rm -rf "$T"' EXIT
# ok, skip, tap_finish
. "$(dirname "$0")/../lib/host-tap.sh"


LIB_LICENSE="LGPL-2.1 OR BSD-2-Clause"
UAPI_LICENSE="GPL-2.0 WITH Linux-syscall-note"

# Files that are not the project's work or cannot carry a comment: the
# licence texts themselves, and git's own ignore lists.  The Debian
# packaging follows Debian's conventions instead: debian/copyright, in
# DEP-5, says the licence of debian/* (and of every other file).
exempt() {
	case $1 in
	COPYING | LICENSES/* | .gitignore | */.gitignore | debian/*) return 0 ;;
	esac
	return 1
}

# exprs_of FILE...: "FILE<TAB>EXPR" for each FILE, in order: the licence
# expression of its SPDX-License-Identifier in its first three lines (a
# script's #! line, then a JSON file's "description" may come first),
# without the comment syntax around it; EXPR is empty when there is none.
# One process for the whole tree (a few per file cost 20 CPU-seconds).
exprs_of() {
	awk '
	FNR <= 3 && !(FILENAME in expr) && (p = index($0, "SPDX-License-Identifier:")) {
		n = split(substr($0, p + 24), f, /[ \t]+/)
		out = ""
		for (i = 1; i <= n; i++) {
			w = f[i]
			if (w == "")
				continue
			gsub(/[()]/, "", w)
			sub(/[.,"]+$/, "", w)
			if (w !~ /^[A-Za-z0-9.+-]+$/)
				break
			out = out (out == "" ? "" : " ") w
			if (i < n && f[i + 1] != "OR" && f[i + 1] != "AND" &&
			    f[i + 1] != "WITH" && w != "OR" && w != "AND" &&
			    w != "WITH")
				break
		}
		expr[FILENAME] = out
	}
	END {
		for (i = 1; i < ARGC; i++)
			print ARGV[i] "\t" expr[ARGV[i]]
	}' "$@"
}

# allowed PATH: ALLOWED becomes the expressions PATH may carry, one a
# line (set, not printed: no subshell per file).
allowed() {
	case $1 in
	# Data generated from the kernel's uapi headers keeps their licence.
	tools/lib/exit_tables.c)
		ALLOWED=$UAPI_LICENSE ;;
	tools/lib/*)
		ALLOWED=$LIB_LICENSE ;;
	include/kvm_statsfd/uapi.h | include/kvm_statsfd/stats_dev.h)
		ALLOWED=$UAPI_LICENSE ;;
	src/* | include/* | Kbuild | dkms.conf)
		ALLOWED="GPL-2.0" ;;
	# What is copied into, or documents, programs that link libkvmstats.
	tools/man/libkvmstats* | tools/examples/*)
		ALLOWED="$LIB_LICENSE
GPL-2.0" ;;
	*)
		ALLOWED="GPL-2.0" ;;
	esac
}

# judge_expr PATH EXPR: nothing if EXPR is allowed for PATH, else one line
# saying why not.
judge_expr() {
	allowed "$1"
	if [ -z "$2" ]; then
		echo "$1: no SPDX-License-Identifier in its first 3 lines"
		return
	fi
	case "
$ALLOWED
" in
	*"
$2
"*) ;;
	*) echo "$1: '$2', where $(dirname "$1")/ allows: $(echo "$ALLOWED" | paste -sd '|')" ;;
	esac
}

# judge FILE PATH: judge_expr for FILE, tracked as PATH.
judge() {
	judge_expr "$2" "$(exprs_of "$1" | cut -f 2)"
}

# texts_missing EXPR: the identifiers of EXPR with no text in LICENSES/.
texts_missing() {
	for id in $1; do
		case $id in OR | AND | WITH) continue ;; esac
		grep -qsx -e "Valid-License-Identifier: $id" \
			-e "SPDX-Exception-Identifier: $id" "$TOP"/LICENSES/*/* ||
			echo "$id"
	done
}

# The checker on files made to break each rule.
printf '/* no licence here */\nint x;\n' > "$T/none.c"
printf '// SPDX-License-Identifier: GPL-2.0\n' > "$T/gpl.c"
printf '/* SPDX-License-Identifier: %s */\n' "$LIB_LICENSE" > "$T/lib.h"
printf '#!/bin/sh\n# SPDX-License-Identifier: GPL-2.0\n' > "$T/script.sh"
printf '.. SPDX-License-Identifier: GPL-2.0\n' > "$T/doc.rst"
printf '<!-- SPDX-License-Identifier: GPL-2.0 -->\n' > "$T/doc.md"
r=$(judge "$T/none.c" src/none.c)
ok "$([ -n "$r" ]; echo $?)" "checker: a file without SPDX-License-Identifier is refused" "$r"
r=$(judge "$T/gpl.c" tools/lib/parse.c)
ok "$([ -n "$r" ]; echo $?)" "checker: GPL-2.0 in tools/lib/ is refused" "$r"
r=$(judge "$T/lib.h" src/main.c)
ok "$([ -n "$r" ]; echo $?)" "checker: the library's licence in src/ is refused" "$r"
r=$(judge "$T/lib.h" tools/lib/kvmstats.h; judge "$T/gpl.c" src/main.c
    judge "$T/script.sh" tests/x.sh; judge "$T/doc.rst" Documentation/x.rst
    judge "$T/doc.md" README.md)
ok "$([ -z "$r" ]; echo $?)" "checker: C, script, reST and Markdown identifiers are read" "$r"
r=$(texts_missing "GPL-2.0 WITH No-such-note OR MIT")
# shellcheck disable=SC2086,SC2116 # squash the spaces
ok "$([ "$(echo $r)" = "No-such-note MIT" ]; echo $?)" \
	"checker: an identifier without its text in LICENSES/ is found" "got: $r"

# The tree.
if ! files=$(git -C "$TOP" ls-files 2>/dev/null) || [ -z "$files" ]; then
	skip "tracked files carry allowed SPDX identifiers" "not a git checkout"
	tap_finish
	exit
fi
bad="" used="" tracked=""
for f in $files; do
	exempt "$f" && continue
	[ -f "$TOP/$f" ] && [ ! -L "$TOP/$f" ] || continue
	tracked="$tracked $f"
done
tab=$(printf '\t')
# shellcheck disable=SC2086 # paths without blanks, from git ls-files
exprs=$(cd "$TOP" && exprs_of $tracked)
while IFS="$tab" read -r f e; do
	r=$(judge_expr "$f" "$e")
	[ -n "$r" ] && bad="$bad
$r"
	used="$used
$e"
done <<EOF
$exprs
EOF
ok "$([ -z "$bad" ]; echo $?)" \
	"every tracked file has an SPDX-License-Identifier allowed in its directory" \
	"$(echo "$bad" | sed '/^$/d' | head -n 40)"
missing=
for e in $(echo "$used" | sort -u | tr ' ' '\n' | sort -u); do
	missing="$missing $(texts_missing "$e")"
done
# shellcheck disable=SC2086,SC2116 # squash the spaces
ok "$([ -z "$(echo $missing)" ]; echo $?)" \
	"every licence and exception used has its text under LICENSES/" \
	"missing:$missing"
for f in COPYING $LIB_LICENSE; do
	case $f in OR) continue ;; esac
	[ "$f" = COPYING ] && p=$TOP/COPYING || p=$(ls "$TOP"/LICENSES/*/"$f" 2>/dev/null)
	[ -s "$p" ]
	ok $? "$f is in the tree"
done

tap_finish
