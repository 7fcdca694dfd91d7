# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the project's guest-side shell tests (busybox sh):
#   ok STATUS NAME [DIAG...]   case passes when STATUS is 0; DIAG lines are
#                              printed as comments when it fails
#   skip NAME REASON           a skipped case
#   all_cases skip|fail DETAIL LIST
#                              every case named in LIST (one a line) with
#                              one outcome: skipped, or failed, for DETAIL
#   tap_end                    prints the plan; exits 0 only if none failed
#   section NAME               whether this run has section NAME: every
#                              one, or those in KS_CASES (init.sh sets it
#                              from tests/vm/manifest's "cases" lines)
#   start_vm LOG ARGS...       runs $VMM (demo-vm) ARGS in the background,
#                              waits until it runs, sets $vm; 1 if it died
#   stop_bg PID / kill_bg      stop one background process / all of them
#   freeze_vm PID              SIGSTOP a VMM and wait until every thread of
#                              it has stopped (its counters hold still); 1
#                              if one has not within 5 s.  kill -CONT ends it
#   json_vals FILE             "CTX NAME VALUE" and "CTX NAME:REASON VALUE"
#                              lines from kvm-statsfd show --json (CTX: vm,
#                              vcpuN)
#   jget FILE CTX NAME         one value of json_vals' output
# The guest has it at /bin/ks-tap.sh; source it with ". ks-tap.sh".

n=0
failed=0
bg_pids=""

ok() {
	st=$1 name=$2
	shift 2
	n=$((n + 1))
	if [ "$st" = 0 ]; then
		echo "ok $n $name"
	else
		echo "not ok $n $name"
		failed=$((failed + 1))
		for l in "$@"; do echo "# $l"; done
	fi
}

skip() {
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}

section() {
	case " ${KS_CASES:-$1} " in
	*" $1 "*) return 0 ;;
	*) return 1 ;;
	esac
}

# A here-document, not a pipe: ok and skip must count in this shell.
all_cases() {
	while IFS= read -r t; do
		if [ "$1" = skip ]; then skip "$t" "$2"; else ok 1 "$t" "$2"; fi
	done <<EOF
$3
EOF
}

start_vm() {
	log=$1
	shift
	# Emptied here: the child's own ">" may come after the first look
	# below, which would then find an earlier run's "running".
	: > "$log"
	"$VMM" "$@" >> "$log" 2>&1 &
	vm=$!
	bg_pids="$bg_pids $vm"
	i=0
	until grep -q running "$log" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$vm" 2>/dev/null; then
			echo "# $VMM did not start:"
			sed 's/^/#   /' "$log"
			return 1
		fi
		sleep 0.1
	done
	return 0
}

freeze_vm() {
	kill -STOP "$1" || return 1
	fz_i=0
	while [ $fz_i -lt 100 ]; do
		fz_all=1
		for fz_t in /proc/"$1"/task/*/stat; do
			# The state is the field after the command's ")".
			case "$(sed 's/.*) \(.\).*/\1/' "$fz_t" 2>/dev/null)" in
			T | t) ;;
			*) fz_all=0 ;;
			esac
		done
		[ $fz_all = 1 ] && return 0
		sleep 0.05
		fz_i=$((fz_i + 1))
	done
	return 1
}

# Forget a background process without stopping it.
forget_bg() {
	bg_pids=$(echo " $bg_pids " | sed "s/ $1 / /")
}

stop_bg() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	forget_bg "$1"
}

kill_bg() {
	for p in $bg_pids; do kill "$p" 2>/dev/null; done
	for p in $bg_pids; do wait "$p" 2>/dev/null; done
	bg_pids=""
}

# json_vals FILE: "ctx name value" and "ctx name:reason value" from
# kvm-statsfd show --json (pretty printed: one key or value a line).
json_vals() {
	awk '
	/"vm": \{/ { ctx = "vm" }
	/"vcpu": [0-9]+/ { v = $0; gsub(/[^0-9]/, "", v); ctx = "vcpu" v }
	/"name": "/ { name = $0; sub(/.*"name": "/, "", name); sub(/".*/, "", name) }
	/"value": / { v = $0; gsub(/[^0-9]/, "", v); print ctx, name, v }
	/"reasons": \{/ { inr = 1; next }
	inr && /\}/ { inr = 0; next }
	inr { r = $0; sub(/^ *"/, "", r); sub(/".*/, "", r); v = $0; sub(/.*: /, "", v); sub(/,/, "", v); print ctx, name ":" r, v }
	' "$1"
}

jget() {
	awk -v c="$2" -v w="$3" '$1 == c && $2 == w { print $3; exit }' "$1"
}

tap_end() {
	echo "1..$n"
	exit $((failed != 0))
}
