#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Host test of kvm-statsfd watch without KVM: a stats file (mkstats)
# watched with --file, its values rewritten between intervals.  The log
# and CSV modes are compared exactly (header, per-interval growth); the
# ncurses view runs on a pseudo-terminal (ptyrun) whose screen is read
# back, driven by kvm_stat's keys; option errors are status 2.
#
#   watch_test.sh BUILD_DIR HELPER_DIR
#     BUILD_DIR: kvm-statsfd;  HELPER_DIR: mkstats and ptyrun
#
# Prints TAP; the last line is "N passed, N failed".
set -u
KS=$1/kvm-statsfd
H=$2
T=$(mktemp -d /tmp/ks-watch.XXXXXX)
trap 'rm -rf "$T"' EXIT
# ok, skip, tap_finish
. "$(dirname "$0")/../lib/host-tap.sh"

F=$T/stats
STAMP='[0-9]\{4\}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]'
# The SVM exit-reason histogram's buckets of io and hlt.
IO=83
HLT=80

# mk EXITS IO_EXITS HALT_NS IO_BUCKET HLT_BUCKET: the stats file's values.
# pages is an instant value: not an event, never shown.
mk() {
	"$H/mkstats" "$F" exits="$1" io_exits="$2" halt_wait_ns:ns="$3" \
		pages:inst=7 exit_reasons_svm:hist=120/$IO:"$4",$HLT:"$5"
}

st() {	# st CMD...: status of CMD, its output in $T/out and $T/err
	timeout 60 "$@" > "$T/out" 2> "$T/err"
	echo $?
}

# nlines FILE: its number of lines, 0 if there is no FILE yet.
nlines() {
	if [ -f "$1" ]; then wc -l < "$1"; else echo 0; fi
}

# lines_at_least FILE N: wait (20 s at most) until FILE has N lines.
lines_at_least() {
	i=0
	while [ "$(nlines "$1")" -lt "$2" ]; do
		i=$((i + 1))
		[ $i -gt 400 ] && return 1
		sleep 0.05
	done
}

# --- options -------------------------------------------------------------

mk 100 40 5000 3 4
for a in "watch --file $F --csv" "watch --file $F -b -l" "watch --file $F -b -L $T/x" \
	 "watch --file $F -L" "watch --file $F --log-to-file=" "show --file $F -l" "list --csv" \
	 "watch --file $F -l -i abc" "watch --file $F -n 0 -l"; do
	# shellcheck disable=SC2086
	r=$(st "$KS" $a)
	[ "$r" = 2 ] && [ ! -s "$T/out" ] && grep -q "Try 'kvm-statsfd --help'" "$T/err"
	ok $? "kvm-statsfd $a: usage error, status 2, said on stderr" \
		"status $r: $(cat "$T/err" "$T/out")"
done
r=$(st "$KS" watch --file "$F" --csv)
grep -q -- "--csv needs -l or -L" "$T/err"
ok $? "watch --csv alone: says it needs -l or -L" "$(cat "$T/err")"
r=$(st "$KS" watch --file "$F" -l -f '(')
[ "$r" = 2 ] && grep -q "^kvm-statsfd: -f '(': " "$T/err"
ok $? "watch -l -f '(': a bad regex is status 2, named" "status $r: $(cat "$T/err")"
r=$(st "$KS" watch --file "$F" -L "$T/no/such/dir/log" -n 1 -i 0.01)
[ "$r" = 1 ] && grep -q "$T/no/such/dir/log: No such file or directory" "$T/err"
ok $? "watch -L into a missing directory: status 1, the file named" \
	"status $r: $(cat "$T/err")"
"$KS" watch --file "$F" -l -n 1 -i 0.01 > /dev/full 2> "$T/err"; r=$?
[ "$r" = 1 ] && grep -q "standard output" "$T/err"
ok $? "watch -l > /dev/full: status 1 and why" "status $r: $(cat "$T/err")"
r=$(st "$KS" --help)
grep -q -- "-L, --log-to-file FILE" "$T/out" && grep -q -- "--csv" "$T/out"
ok $? "--help names -l, -L and --csv"

# --- log and CSV, exact ----------------------------------------------------

# log_run OUTFILE ARGS...: watch in the background, logging to $LOGF.
# Once its first sample is taken ($LOGF's next line: the header, or the
# first values in a CSV file that has a header already), the values grow
# by 10 exits, 1 io exit, 1000 ns and 2 io reasons; once a line shows
# that, by 20 exits and 1 hlt; once a line shows that and one more line
# follows, SIGTERM ends it.  Each rewrite waits for the line that shows
# the one before, so no two land in one interval however late the test
# runs; lines of no growth may come between (a late rewrite), so they
# are counted apart: $T/zero lines, and $T/got the others.
log_run() {
	out=$1
	shift
	base=$(nlines "$LOGF")
	mk 100 40 5000 3 4
	"$KS" watch --file "$F" -i 0.5 "$@" > "$out" 2> "$T/log.err" &
	pid=$!
	lines_at_least "$LOGF" $((base + 1)) && mk 110 41 6000 5 4 &&
		grown 1 && mk 130 41 6000 5 5 && grown 2 &&
		lines_at_least "$LOGF" $(($(nlines "$LOGF") + 1))
	kill -TERM $pid
	wait $pid
	r=$?
	values | grep '[1-9]' > "$T/got"
	values | grep -vc '[1-9]' > "$T/zero"
	return $r
}

# values: the lines of values (no header, no time stamp) since $base.
values() {
	sed -n "$((base + 1)),\$p" "$LOGF" | grep "^$STAMP" | cut -c20-
}

# grown N: wait (20 s at most) until N lines since $base show growth.
grown() {
	i=0
	while [ "$(values | grep -c '[1-9]')" -lt "$1" ]; do
		i=$((i + 1))
		[ $i -gt 400 ] && return 1
		sleep 0.05
	done
}

# The values of a line (no time stamp) in the plain log's columns.
logline() {
	printf ' %16s %9s %12s %9s\n' "$@"
}

LOGF=$T/log
rm -f "$LOGF"
log_run "$LOGF" -l; r=$?
echo "time                exit_reasons_svm     exits halt_wait_ns  io_exits" > "$T/want0"
{ logline 2 10 1000 1; logline 1 20 0 0; } > "$T/want"
# Every line after the header has a time stamp.
bad=$(sed -n '2,$p' "$LOGF" | grep -vc "^$STAMP ")
head -n 1 "$LOGF" | cmp -s - "$T/want0" && cmp -s "$T/got" "$T/want" &&
	[ "$(cat "$T/zero")" -ge 1 ] && [ "$r" = 0 ] && [ "$bad" = 0 ] &&
	grep -q "^$STAMP$(logline 0 0 0 0)\$" "$LOGF"
ok $? "watch -l: header of events by name, a line of each interval's growth" \
	"status $r, $bad lines without a time stamp" "$(cat "$LOGF" "$T/log.err")"

rm -f "$LOGF"
log_run "$LOGF" -l --csv -f '^(exits|io_exits|exit_reasons_svm)$'; r=$?
echo "timestamp,exit_reasons_svm,exits,io_exits" > "$T/want0"
printf ',2,10,1\n,1,20,0\n' > "$T/want"
bad=$(sed -n '2,$p' "$LOGF" | grep -vc "^$STAMP,")
head -n 1 "$LOGF" | cmp -s - "$T/want0" && cmp -s "$T/got" "$T/want" &&
	[ "$r" = 0 ] && [ "$bad" = 0 ] && grep -q "^$STAMP,0,0,0\$" "$LOGF"
ok $? "watch -l --csv -f: comma-separated, only the events -f names" \
	"status $r, $bad lines without a time stamp" "$(cat "$LOGF" "$T/log.err")"

# -L: the same into a file, appended; a CSV file keeps one header.
LOGF=$T/file.csv
rm -f "$LOGF"
log_run "$T/stdout" -L "$LOGF" --csv; r1=$?
cp "$T/got" "$T/got1"
log_run "$T/stdout2" -L "$LOGF" -c; r2=$?
printf ',2,10,1000,1\n,1,20,0,0\n' > "$T/want"
[ "$r1$r2" = 00 ] && [ "$(grep -c '^timestamp,' "$LOGF")" = 1 ] &&
	head -n 1 "$LOGF" | grep -q '^timestamp,exit_reasons_svm,exits,halt_wait_ns,io_exits$' &&
	cmp -s "$T/got1" "$T/want" && cmp -s "$T/got" "$T/want" &&
	[ ! -s "$T/stdout" ] && [ ! -s "$T/stdout2" ]
ok $? "watch -L FILE --csv twice: appended, one header, nothing on stdout" \
	"status $r1 $r2" "$(cat "$LOGF" "$T/stdout" "$T/log.err")"

# -n counts intervals; every mode ends with status 0 after them.
r=$(st "$KS" watch --file "$F" -l -n 2 -i 0.05)
[ "$r" = 0 ] && [ "$(wc -l < "$T/out")" = 3 ]
ok $? "watch -l -n 2: a header and 2 lines" "status $r" "$(cat "$T/out")"

# SIGHUP: logrotate moved the file; a new one starts with a header.
LOGF=$T/rot.log
rm -f "$LOGF" "$LOGF.1"
"$KS" watch --file "$F" -L "$LOGF" -i 0.2 2> "$T/err" &
pid=$!
lines_at_least "$LOGF" 2 && mv "$LOGF" "$LOGF.1" && kill -HUP $pid &&
	lines_at_least "$LOGF" 2
kill -TERM $pid
wait $pid; r=$?
[ "$r" = 0 ] && head -n 1 "$LOGF" | grep -q '^time ' &&
	head -n 1 "$LOGF.1" | grep -q '^time ' && [ "$(grep -c '^time' "$LOGF")" = 1 ]
ok $? "watch -L: SIGHUP reopens the file, with a header; SIGTERM ends it, status 0" \
	"status $r: $(cat "$T/err")" "$(cat "$LOGF")"

# --- plain frames ------------------------------------------------------------

for a in "-b" ""; do
	# shellcheck disable=SC2086
	r=$(st "$KS" watch --file "$F" -n 2 -i 0.05 $a)
	frames=$(grep -c '^kvm-statsfd watch: 1 VM, interval .* frame [12]$' "$T/out")
	esc=$(tr -dc '\033' < "$T/out" | wc -c)
	[ "$r" = 0 ] && [ "$frames" = 2 ] && [ "$esc" = 0 ] &&
		grep -q '^PID 0 (file), 1 vCPUs' "$T/out"
	ok $? "watch ${a:-(no terminal)} -n 2: two plain frames, no escapes" \
		"status $r, frames $frames, escapes $esc" "$(head -n 8 "$T/out")"
done

# --- the ncurses view ------------------------------------------------------

if ! command -v tic > /dev/null; then
	skip "watch on a terminal" "no tic (ncurses-bin) to make the test terminal"
	tap_finish
	exit
fi
# A terminal that only has what ptyrun's screen understands.
cat > "$T/kstest.ti" <<'EOF'
kstest|kvm-statsfd test terminal,
	cols#80, lines#24,
	bel=^G, clear=\E[H\E[2J, cup=\E[%i%p1%d;%p2%dH, home=\E[H,
	el=\E[K, ed=\E[J,
	bold=\E[1m, rev=\E[7m, smso=\E[7m, rmso=\E[27m, sgr0=\E[0m,
	smcup=\E[?1049h, rmcup=\E[?1049l, civis=\E[?25l, cnorm=\E[?25h,
	kbs=^H,
EOF
tic -o "$T/terminfo" "$T/kstest.ti"
export TERMINFO="$T/terminfo"

# pty SCRIPT_FILE ARGS...: watch --file on the test terminal; screens in
# $T/screens, the status of ptyrun (0: every step passed) echoed.
pty() {
	s=$1
	shift
	TERM=kstest "$H/ptyrun" "$s" "$KS" watch --file "$F" "$@" \
		> "$T/screens" 2> "$T/pty.err"
	echo $?
}

# screen N: the Nth screen printed; rows: its event rows' names in order.
screen() {
	awk -v n="$1" '/^--- screen$/ { k++; next } /^--- end$/ { next } k == n' "$T/screens"
}
rows() {
	screen "$1" | awk '/^ Event /{ on = 1; next } /^ Total /{ on = 0 } on { print $1 }' |
		tr '\n' ' '
}

# tot N: the view's last row when the events' Totals add up to N.
tot() {
	printf ' %-40s %10s' Total "$1"
}

# -i 60: no refresh of its own during the test; keys make every sample.
# Numbers: the first frame sums to 1000 + 40 + 7 = 1047; after the
# rewrite, 1001 + 90 + 9 = 1100.
mk 1000 40 5000 3 4
cat > "$T/script" <<EOF
wait $(tot 1047)
screen
sh $H/mkstats $F exits=1001 io_exits=90 halt_wait_ns:ns=6000 pages:inst=7 exit_reasons_svm:hist=120/$IO:5,$HLT:4
keys  
wait $(tot 1100)
screen
keys o
wait sort Total
screen
keys o
wait sort Current
keys f^exits\$\r
wait $(tot 1001)
screen
keys x
wait    vcpu 0
screen
keys c
wait $(tot 1100)
gone regex filter
wait    hlt
screen
keys g
wait Show statistics for guests
keys nomatch\r
wait No VM to show
keys g
keys \r
wait $(tot 1100)
keys p
keys 12345\r
wait no VM in that process
keys \e
wait $(tot 1100)
keys s
keys abc\r
wait not 0.01 to 3600 seconds
keys 0.25\r
wait interval 0.25 s
sh $H/mkstats $F exits=1011 io_exits=90 halt_wait_ns:ns=6000 pages:inst=7 exit_reasons_svm:hist=120/$IO:5,$HLT:4
wait $(tot 1110)
keys r
wait No matching events reported yet
sh $H/mkstats $F exits=1018 io_exits=90 halt_wait_ns:ns=6000 pages:inst=7 exit_reasons_svm:hist=120/$IO:5,$HLT:4
wait $(tot 7)
screen
keys h
wait Any other key refreshes the statistics at once.
screen
keys z
gone Interactive commands reference
clears 1
resize 60x12
wait (file)  interval 0.25 s
screen
keys q
exit 0
EOF
r=$(pty "$T/script" -i 60)
ok "$r" "watch on a terminal: the keys' script ran (one clear-screen, the first; then ncurses' changes only), q quit with status 0, terminal restored" \
	"$(cat "$T/pty.err")"

# 1: the first frame, at once: Total column, no Current yet, no instants.
screen 1 > "$T/s"
grep -q '^ Event  *Total  %Total    Current$' "$T/s" &&
	grep -Eq '^ exits +1000 +95\.5 *$' "$T/s" &&
	grep -Eq '^ io_exits +40 +3\.8 *$' "$T/s" &&
	grep -Eq '^ exit_reasons_svm +7 +0\.7 *$' "$T/s" &&
	grep -Eq '^ halt_wait_ns +5 us *$' "$T/s" && ! grep -q pages "$T/s"
ok $? "first frame: Event, Total, %Total, Current; totals exact, no rates yet" "$(cat "$T/s")"

# 2: after a refresh key: rates, sorted by Current.
screen 2 > "$T/s"
grep -Eq '^ io_exits +90 +8\.2 +[0-9.]+$' "$T/s" &&
	grep -Eq '^ exits +1001 +91\.0 +[0-9.]+$' "$T/s" &&
	[ "$(rows 2)" = "halt_wait_ns io_exits exit_reasons_svm exits " ]
ok $? "any key samples at once: Current filled, rows sorted by Current" \
	"rows: $(rows 2)" "$(cat "$T/s")"
[ "$(rows 3)" = "halt_wait_ns exits io_exits exit_reasons_svm " ]
ok $? "o: sorted by Total" "rows: $(rows 3)" "$(screen 3)"

screen 4 > "$T/s"
grep -q '^regex filter: \^exits\$' "$T/s" && [ "$(rows 4)" = "exits " ]
ok $? "f ^exits\$: only that event, the filter shown" "rows: $(rows 4)" "$(cat "$T/s")"

screen 5 > "$T/s"
grep -Eq '^   vcpu 0 +1001 ' "$T/s" && [ "$(rows 5)" = "exits vcpu " ]
ok $? "x: drilldown, the event's vCPUs under it" "rows: $(rows 5)" "$(cat "$T/s")"

screen 6 > "$T/s"
grep -Eq '^ exit_reasons_svm +9 ' "$T/s" && grep -Eq '^   io +5 ' "$T/s" &&
	grep -Eq '^   hlt +4 ' "$T/s" && grep -q '^ io_exits ' "$T/s"
ok $? "c clears the filter; histogram buckets by exit reason under the event" \
	"$(cat "$T/s")"

screen 7 > "$T/s"
grep -Eq '^ exits +7 ' "$T/s" && grep -q 'since reset' "$T/s" &&
	! grep -q '^ io_exits' "$T/s"
ok $? "r: Total counts from the reset (7), events without growth hidden" "$(cat "$T/s")"

screen 8 | grep -q '^q     quit'
ok $? "h: the keys' help" "$(screen 8)"
screen 9 | head -n 1 | grep -q '^kvm statistics - pid 0 (file)  interval 0.25 s, sort Current$'
ok $? "resize to 60 columns: redrawn to the new width" "$(screen 9)"

# SIGTERM, SIGINT and -n end the view with status 0, terminal restored.
for how in "kill TERM" "kill INT" ""; do
	printf 'wait  Total\n%s\nexit 0\n' "$how" > "$T/script"
	if [ -n "$how" ]; then
		r=$(pty "$T/script" -i 0.2)
	else
		r=$(pty "$T/script" -i 0.1 -n 3)
	fi
	ok "$r" "watch on a terminal, ended by ${how:-"-n 3"}: status 0, terminal restored" \
		"$(cat "$T/pty.err")"
done

# Rates over the interval with no key pressed: the view refreshes itself.
mk 1000 40 5000 3 4
cat > "$T/script" <<EOF
wait $(tot 1047)
sh $H/mkstats $F exits=1100 io_exits=40 halt_wait_ns:ns=5000 pages:inst=7 exit_reasons_svm:hist=120/$IO:3,$HLT:4
wait $(tot 1147)
keys q
exit 0
EOF
r=$(pty "$T/script" -i 0.3)
ok "$r" "watch on a terminal refreshes every interval" "$(cat "$T/pty.err")"

# -b on a terminal, or a terminal ncurses does not know: plain frames.
printf 'wait kvm-statsfd watch: 1 VM\nexit 0\n' > "$T/script"
r=$(pty "$T/script" -b -n 1 -i 0.05)
ok "$r" "watch -b on a terminal: plain frames" "$(cat "$T/pty.err")"
printf 'wait unknown to ncurses: plain frames instead\nwait kvm-statsfd watch: 1 VM\nexit 0\n' > "$T/script"
r=$(TERMINFO=$T/none pty "$T/script" -n 1 -i 0.05)
ok "$r" "watch on a terminal ncurses does not know: says so, plain frames" \
	"$(cat "$T/pty.err")"

tap_finish
