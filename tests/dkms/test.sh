#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test of the two ways to install the module, against the
# unpacked headers of the test kernels built with this host's compiler (one
# way on the oldest kbuild, the other on the newest), touching nothing of
# this machine:
#
#  - `make install KDIR=... INSTALL_MOD_PATH=<tmp>`: modules_install puts
#    kvm_statsfd.ko under <tmp>/lib/modules/<release>/extra and depmod -b
#    indexes it;
#  - DKMS (dkms.conf): add, build (signed with a throw-away key, as DKMS
#    does for Secure Boot), install, uninstall and remove, all in a private
#    tree (--dkmstree, --sourcetree, --installtree, --no-depmod).
#
# Every built module's modinfo is checked: vermagic names the kernel,
# license, author, description, version (= version.h = dkms.conf), the
# parameter's description, the dependency on kvm.  At the end, nothing may
# have appeared in /var/lib/dkms, /usr/src or /lib/modules.
#
# Signing is tested both ways Documentation/install.rst describes: by hand
# with the kernel's sign-file before make install, and by DKMS with the key
# its framework variables name (here from the environment).
#
# usage: tests/dkms/test.sh [KERNELS_FILE]   (root: dkms refuses otherwise)
# Prints TAP, then "N passed, N failed[, N skipped]" (a skip is not a
# pass).  KEEP=1 keeps the temporary tree.
set -uo pipefail
. "$(dirname "$0")/../vm/lib.sh"

PKG=kvm-statsfd
MOD=kvm_statsfd
T=$(mktemp -d "${TMPDIR:-/tmp}/ks-dkms.XXXXXX")

# ok, check, skip, tap_finish
. "$(dirname "$0")/../lib/host-tap.sh"

finish() {
	if [ "${KEEP:-0}" = 1 ]; then echo "# kept $T"; else rm -rf "$T"; fi
	tap_finish
	exit
}

# What the host has where DKMS and make install write by default.
snapshot() {
	find /var/lib/dkms /usr/src /lib/modules -maxdepth 3 2>/dev/null | sort
}

version_h=$(sed -n 's/^#define KVM_STATSFD_VERSION "\(.*\)"/\1/p' \
	"$TOP/include/kvm_statsfd/version.h")
# dkms.conf is a shell fragment; read it in a subshell.
dkms_conf() { (kernel_source_dir=KDIR; . "$TOP/dkms.conf"; eval "echo \"\${$1}\""); }
VER=$(dkms_conf PACKAGE_VERSION)

check "dkms.conf: PACKAGE_VERSION ($VER) is KVM_STATSFD_VERSION of version.h ($version_h)" \
	test -n "$VER" -a "$VER" = "$version_h"
check "dkms.conf: PACKAGE_NAME $PKG, BUILT_MODULE_NAME $MOD, MAKE builds only the module" \
	test "$(dkms_conf PACKAGE_NAME) $(dkms_conf 'BUILT_MODULE_NAME[0]') $(dkms_conf 'MAKE[0]')" \
	= "$PKG $MOD make module KDIR=KDIR"

if [ "$(id -u)" != 0 ]; then
	skip "dkms and make install" "not root (dkms needs root)"
	finish
fi
for tool in dkms openssl depmod modinfo; do
	command -v "$tool" > /dev/null ||
		{ ok 1 "$tool is installed (scripts/install-deps.sh)"; finish; }
done
# The kernels: "<series> <release> <root>" lines from a file (make check's
# own list) or fetched.  DKMS runs here against headers unpacked on this
# host, so only kernels built with the host's compiler take part; the
# others' modules are built in their release's chroot (tests/vm/chroot.sh).
if [ -n "${1:-}" ]; then
	mapfile -t all < "$1"
else
	mapfile -t all < <(test_kernels) || { ok 1 "test kernels fetched"; finish; }
fi
# One kernel per kbuild (6.1's serves 6.1-rt as well): what these cases
# prove is the install paths, the signing and DKMS's handling of one
# kbuild, the same for every flavour built with it; that the module builds
# against each kernel, make check's own builds prove.
KERNELS=()
declare -A kbuild_seen=()
for k in "${all[@]}"; do
	read -r series rel root <<< "$k"
	kb=$(find "$root/usr/lib" -maxdepth 1 -name 'linux-kbuild-*' -printf '%f\n' 2>/dev/null | head -n 1)
	if [ "$(builder_of_root "$root")" != host ]; then
		echo "# $series: not here (its module is built in a $(builder_of_root "$root"))"
	elif [ -n "$kb" ] && [ -n "${kbuild_seen[$kb]:-}" ]; then
		echo "# $series: not here ($kb, already covered by ${kbuild_seen[$kb]})"
	else
		KERNELS+=("$k")
		[ -z "$kb" ] || kbuild_seen[$kb]=$series
	fi
done
before=$(snapshot)

# The source as DKMS gets it: the files the module build needs, no build
# output (Documentation/install.rst makes it with git archive).
copy_source() {	# copy_source DIR
	mkdir -p "$1"
	(cd "$TOP" && tar -c --exclude='*.o' --exclude='.*.cmd' --exclude='*.ko' \
		--exclude='*.mod' --exclude='*.mod.c' \
		Kbuild Makefile dkms.conf src include) | tar -x -C "$1"
}

# modinfo_checks LABEL FILE RELEASE: the module's metadata.
modinfo_checks() {
	local label=$1 f=$2 rel=$3 mi
	if ! mi=$(modinfo "$f" 2>&1); then
		ok 1 "$label: modinfo reads $f" "$mi"
		return
	fi
	field() { modinfo -F "$1" "$f" 2>/dev/null; }
	check "$label: vermagic names $rel" \
		grep -q "^vermagic: *$rel SMP .*mod_unload" <<< "$mi"
	check "$label: license GPL" test "$(field license)" = GPL
	check "$label: author" test -n "$(field author)"
	check "$label: description" test -n "$(field description)"
	check "$label: version $version_h" test "$(field version)" = "$version_h"
	check "$label: srcversion" test -n "$(field srcversion)"
	check "$label: depends on kvm" test "$(field depends)" = kvm
	check "$label: name $MOD" test "$(field name)" = "$MOD"
	check "$label: every parameter is described (mode)" \
		sh -c 'p=$(modinfo -F parm "$1"); [ -n "$p" ] &&
			! printf "%s\n" "$p" | grep -qv "^[a-z_]*:[^ ].* ([a-z]*)$" &&
			printf "%s\n" "$p" | grep -q "^mode:.*superset.*(charp)$" ||
			{ echo "parm: $p"; exit 1; }' sh "$f"
	check "$label: retpoline" test "$(field retpoline)" = Y
}

# A key and certificate to sign with, as DKMS makes for MOK enrolment.
openssl req -new -x509 -nodes -days 1 -subj "/CN=kvm-statsfd test signing key" \
	-newkey rsa:2048 -keyout "$T/mok.key" -outform DER -out "$T/mok.der" \
	> "$T/openssl.log" 2>&1 || ok 1 "openssl made a signing key" "$(cat "$T/openssl.log")"

DK=(--dkmstree "$T/dkms" --sourcetree "$T/usr-src" --installtree "$T/modules")
mkdir -p "$T/dkms" "$T/modules"
copy_source "$T/usr-src/$PKG-$VER"
check "dkms add $PKG/$VER (private trees)" \
	dkms add -m "$PKG" -v "$VER" "${DK[@]}"

# make_install_case: make install-module for the kernel in $series,
# $rel, $kdir, signed by hand.
make_install_case() {
	# make install into a private root, of a module signed by hand first
	# as Documentation/install.rst says: modules_install copies it (6.12
	# also compresses it), and its own attempt to sign with the
	# distribution's key, which is not there, changes nothing.
	src="$T/make-install-$rel"
	copy_source "$src"
	dest="$T/root-$rel"
	if out=$(make -C "$src" module KDIR="$kdir" 2>&1 &&
		"$sf" "$hash" "$T/mok.key" "$T/mok.der" "$src/$MOD.ko" 2>&1 &&
		make -C "$src" install-module KDIR="$kdir" INSTALL_MOD_PATH="$dest" 2>&1); then
		ok 0 "$L make install-module KDIR=... INSTALL_MOD_PATH=<tmp>"
	else
		ok 1 "$L make install-module KDIR=... INSTALL_MOD_PATH=<tmp>" "$(tail -n 25 <<< "$out")"
	fi
	# kbuild's INSTALL_MOD_DIR default: extra/ (6.1), updates/ (6.12,
	# which also compresses to .ko.xz).
	ko=$(find "$dest/lib/modules/$rel" -name "$MOD.ko*" 2>/dev/null | head -n 1)
	check "$L make install-module: lib/modules/$rel/{extra,updates}/$MOD.ko* under INSTALL_MOD_PATH" \
		grep -Eqx "(extra|updates)/$MOD\.ko(\.xz|\.gz|\.zst)?" <<< "${ko#"$dest/lib/modules/$rel/"}"
	check "$L make install-module: depmod -b indexed it (modules.dep)" \
		grep -Eq "^(extra|updates)/$MOD\.ko(\.xz|\.gz|\.zst)?:" "$dest/lib/modules/$rel/modules.dep"
	if [ -n "$ko" ]; then
		modinfo_checks "$L make install-module: modinfo" "$ko" "$rel"
		check "$L make install-module: the installed module keeps the signature made with sign-file" \
			test "$(modinfo -F signer "$ko") $(modinfo -F sig_hashalgo "$ko")" \
			= "kvm-statsfd test signing key $hash"
	fi
}

# dkms_case: the DKMS life cycle for that kernel.
dkms_case() {
	# DKMS: build (signed), install, uninstall.
	if out=$(sign_file=$sf mok_signing_key=$T/mok.key mok_certificate=$T/mok.der \
		dkms build -m "$PKG" -v "$VER" -k "$rel" --kernelsourcedir "$kdir" \
		"${DK[@]}" 2>&1); then
		ok 0 "$L dkms build -k $rel --kernelsourcedir <headers>"
	else
		ok 1 "$L dkms build -k $rel --kernelsourcedir <headers>" "$(tail -n 25 <<< "$out")" \
			"make.log:" "$(tail -n 25 "$T/dkms/$PKG/$VER/build/make.log" 2>/dev/null)"
	fi
	built=$(find "$T/dkms/$PKG/$VER/$rel" -path '*/module/*' -name "$MOD.ko*" 2>/dev/null | head -n 1)
	check "$L dkms build: $MOD.ko in the DKMS tree" test -n "$built"
	if [ -n "$built" ]; then
		modinfo_checks "$L dkms: modinfo" "$built" "$rel"
		check "$L dkms: signed with the configured key ($hash, the kernel's CONFIG_MODULE_SIG_HASH)" \
			test "$(modinfo -F signer "$built") $(modinfo -F sig_hashalgo "$built")" \
			= "kvm-statsfd test signing key $hash"
	fi
	# DKMS installs only for a kernel whose module directory exists.
	mkdir -p "$T/modules/$rel"
	check "$L dkms install --installtree <tmp> --no-depmod" \
		dkms install -m "$PKG" -v "$VER" -k "$rel" --kernelsourcedir "$kdir" \
		--no-depmod "${DK[@]}"
	check "$L dkms install: $T/modules/$rel/updates/dkms/$MOD.ko" \
		test -f "$T/modules/$rel/updates/dkms/$MOD.ko"
	check "$L dkms status: installed" \
		sh -c 'dkms status "$@" | grep -q "'"$PKG/$VER, $rel"', .*: installed"' sh \
		-m "$PKG" "${DK[@]}"
	check "$L dkms uninstall" \
		dkms uninstall -m "$PKG" -v "$VER" -k "$rel" --no-depmod "${DK[@]}"
	check "$L dkms uninstall: the module left the install tree" \
		test ! -e "$T/modules/$rel/updates/dkms/$MOD.ko"
}

# Each way to install once: make install on the first kernel (the oldest
# kbuild), DKMS on the last; both on the one kernel if there is one.
# What differs between kbuilds (the install directory, compression)
# is checked whichever way installs; the modinfo facts are the same.
i=0
for k in "${KERNELS[@]}"; do
	read -r series rel root <<< "$k"
	kdir=$(kdir_of "$rel" "$root")
	L="[$series]"

	sf=$(find "$root/usr/lib" -path '*/linux-kbuild-*/scripts/sign-file' | head -n 1)
	hash=$(sed -n 's/^CONFIG_MODULE_SIG_HASH="\(.*\)"/\1/p' "$kdir/.config")
	if [ "$i" = 0 ]; then make_install_case; fi
	if [ "$i" = $((${#KERNELS[@]} - 1)) ]; then dkms_case; fi
	i=$((i + 1))
done

check "dkms remove --all" \
	dkms remove -m "$PKG" -v "$VER" --all --no-depmod "${DK[@]}"
check "dkms remove: nothing of $PKG left in the DKMS tree" \
	sh -c '! find "$1" -mindepth 1 | grep .' sh "$T/dkms/$PKG"
after=$(snapshot)
check "nothing written to /var/lib/dkms, /usr/src or /lib/modules of this machine" \
	diff <(echo "$before") <(echo "$after")
finish
