#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The exporter's --web-config on the host (loopback, no KVM needed): TLS
# with a throw-away key pair, basic authentication against bcrypt hashes,
# the cache that spares a bcrypt check per scrape, SIGHUP, and every kind
# of invalid file refused at start with its line.
#
# usage: web_config_test.sh EXPORTER BCRYPT_HASH
# Prints TAP; the last line is "N passed, N failed".
set -uo pipefail
EXP=$1 HASH=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/ks-web.XXXXXX")
pid=
finish() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null
	rm -rf "$T"
	tap_finish
	exit
}
. "$(dirname "$0")/../lib/host-tap.sh"

for tool in openssl curl; do
	command -v $tool > /dev/null || { ok 1 "$tool installed (scripts/install-deps.sh)"; finish; }
done
# A port of our own: the exporter's default one may be in use here.
PORT=$((20000 + $$ % 20000))
URL=https://127.0.0.1:$PORT

# A key pair for 127.0.0.1, and another whose key matches nothing here.
pair() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$T/$1.key" -out "$T/$1.crt" -days 2 -subj /CN=localhost \
		-addext subjectAltName=IP:127.0.0.1 > /dev/null 2>&1
}
pair a && pair b
ok $? "throw-away key pairs made with openssl"
# Cost 12: a check takes a quarter of a second or more, so that 20 of them
# cannot hide in the cache test's bound.
H_PROM=$("$HASH" s3cret 12) && H_NEW=$("$HASH" n3w 4)
ok $? "bcrypt hashes made"

config() {	# config FILE: a valid file, with user prom
	cat > "$1" <<EOF
# As exporter-toolkit's web-config.yml.
tls_server_config:
  cert_file: $T/a.crt
  key_file: $T/a.key
basic_auth_users:
  prom: '$H_PROM'
EOF
}
config "$T/web.yml"

start() {	# start CONFIG: the exporter in the background, on $PORT
	"$EXP" --listen "127.0.0.1:$PORT" --synthetic-vms 0:0:/dev/null \
		--web-config "$1" 2> "$T/stderr" &
	pid=$!
	# A connection, not a request: requests are counted.
	for _ in $(seq 100); do
		(exec 3<> "/dev/tcp/127.0.0.1/$PORT") 2> /dev/null && return 0
		sleep 0.1
	done
	return 1
}
stop() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=; }
code() {	# code [CURL ARGS...]: the HTTP status of GET /metrics
	curl -s -o "$T/body" -D "$T/head" -w '%{http_code}' --cacert "$T/a.crt" \
		"$@" "$URL/metrics"
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }

start "$T/web.yml"
ok $? "exporter starts with TLS and basic_auth_users" "$(cat "$T/stderr")"
c=$(code -u prom:s3cret)
[ "$c" = 200 ] && grep -q '^kvm_exporter_build_info' "$T/body"
ok $? "HTTPS, the right credentials: 200 and the metrics (got $c)"
c=$(code)
[ "$c" = 401 ] && grep -qi '^WWW-Authenticate: Basic realm="kvm-statsfd-exporter"' "$T/head"
ok $? "no credentials: 401 with a Basic challenge (got $c)" "$(cat "$T/head")"
c=$(code -u prom:wrong)
ok "$([ "$c" = 401 ]; echo $?)" "a wrong password: 401 (got $c)"
c=$(code -u nobody:s3cret)
ok "$([ "$c" = 401 ]; echo $?)" "an unknown user: 401 (got $c)"
c=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/a.crt" -u prom:s3cret \
	-X POST "$URL/metrics")
ok "$([ "$c" = 405 ]; echo $?)" "authorized, then the method checked: POST gets 405 (got $c)"
c=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/metrics")
ok "$([ "$c" = 000 ]; echo $?)" "plain HTTP to the TLS port gets no HTTP answer (got $c)"
code -u prom:s3cret > /dev/null
refusals=$(sed -n 's/^kvm_exporter_http_requests_unauthorized_total //p' "$T/body")
ok "$([ "$refusals" = 3 ]; echo $?)" \
	"kvm_exporter_http_requests_unauthorized_total counts the three 401s (got '$refusals')"

# The first check of a password pays bcrypt; the next scrapes do not.  40
# more requests, each with a TLS handshake of its own, must cost less than
# a quarter of what checking each again would.
t0=$(cpu_ticks)
code -u prom:s3cret -H 'X-First: 1' > /dev/null
code -u prom:wrong2 > /dev/null
t1=$(cpu_ticks)
for _ in $(seq 20); do
	code -u prom:s3cret > /dev/null
	code -u prom:wrong2 > /dev/null
done
t2=$(cpu_ticks)
ok "$([ $((t2 - t1)) -lt $((5 * (t1 - t0))) ]; echo $?)" \
	"40 more requests with the same good and bad passwords skip bcrypt ($((t2 - t1)) ticks; 2 checks took $((t1 - t0)))"

# SIGHUP: the users apply at once; an invalid file keeps the old ones.
cat > "$T/web.yml" <<EOF
tls_server_config:
  cert_file: $T/a.crt
  key_file: $T/a.key
basic_auth_users:
  fresh: $H_NEW
EOF
kill -HUP "$pid"
for _ in $(seq 50); do grep -q 'read again' "$T/stderr" && break; sleep 0.1; done
ok "$([ "$(code -u fresh:n3w)" = 200 ] && [ "$(code -u prom:s3cret)" = 401 ]; echo $?)" \
	"SIGHUP: the new user is let in, the removed one refused" "$(cat "$T/stderr")"
echo "basic_auth_users: [" > "$T/web.yml"
kill -HUP "$pid"
for _ in $(seq 50); do grep -q 'keeping the configuration' "$T/stderr" && break; sleep 0.1; done
grep -q 'web.yml:.*keeping the configuration in use' "$T/stderr" &&
	[ "$(code -u fresh:n3w)" = 200 ]
ok $? "SIGHUP with an invalid file: the error on stderr, the old users kept" "$(cat "$T/stderr")"
stop

# An empty file: no TLS, no authentication (as exporter-toolkit).
: > "$T/empty.yml"
start "$T/empty.yml"
c=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/metrics")
ok "$([ "$c" = 200 ]; echo $?)" "an empty file: plain HTTP, no authentication (got $c)"
stop

# Refused at start, with the file and line, exit status 2.
refused() {	# refused NAME PATTERN: $T/bad.yml is refused saying PATTERN
	"$EXP" --listen "127.0.0.1:$PORT" --web-config "$T/bad.yml" > /dev/null 2> "$T/err"
	rc=$?
	ok "$([ $rc = 2 ] && grep -q -- "$2" "$T/err"; echo $?)" \
		"refused at start: $1 (status $rc)" "$(cat "$T/err")"
}
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n  client_ca_file: %s\n' \
	"$T/a.crt" "$T/a.key" "$T/a.crt" > "$T/bad.yml"
refused "a TLS setting not supported (client_ca_file)" "bad.yml:4: .*client_ca_file' is not supported"
printf 'http_server_config:\n  headers: {}\n' > "$T/bad.yml"
refused "an unknown section" "bad.yml:1: 'http_server_config' is not supported"
printf 'tls_server_config:\n  cert_file: %s\n' "$T/a.crt" > "$T/bad.yml"
refused "cert_file without key_file" "cert_file and key_file are both needed"
printf 'tls_server_config:\n  cert_file: %s/none.crt\n  key_file: %s\n' "$T" "$T/a.key" > "$T/bad.yml"
refused "a certificate that cannot be read" "bad.yml:2: cannot read .*none.crt"
printf 'basic_auth_users:\n  prom: plaintext\n' > "$T/bad.yml"
refused "a password that is not a bcrypt hash" "bad.yml:2: .*bcrypt hash"
printf "basic_auth_users:\n  prom: '%s'\n  prom: '%s'\n" "$H_NEW" "$H_NEW" > "$T/bad.yml"
refused "a user twice" "bad.yml:3: .*'prom' twice"
printf 'basic_auth_users: [\n' > "$T/bad.yml"
refused "not YAML" "bad.yml:"
rm -f "$T/bad.yml"
refused "a file that does not exist" "bad.yml: No such file"
"$EXP" --once --web-config "$T/web.yml" > /dev/null 2> "$T/err"
ok "$([ $? = 2 ]; echo $?)" "--once with --web-config is a usage error" "$(cat "$T/err")"

# A key that is not the certificate's: the server cannot start (status 1).
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$T/a.crt" "$T/b.key" > "$T/bad.yml"
"$EXP" --listen "127.0.0.1:$PORT" --web-config "$T/bad.yml" > /dev/null 2> "$T/err"
rc=$?
ok "$([ $rc = 1 ] && grep -q 'cannot start the HTTP server.*TLS key' "$T/err"; echo $?)" \
	"a key that is not the certificate's: the server does not start (status $rc)" "$(cat "$T/err")"
finish
