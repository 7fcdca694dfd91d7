// SPDX-License-Identifier: GPL-2.0
/* kvm-statsfd helpers: JSON emitter, QEMU -name parsing, stats rendering. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The exit names are checked against the build host's own kernel tables
 * where it has them (x86); elsewhere (the arm64 run under qemu-user)
 * against the generated ones, which still checks the bucket mapping.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <asm/svm.h>
#include <asm/vmx.h>
#define HAVE_X86_EXIT_TABLES	1
#endif

#include "kvmstats.h"
#include "kvm_statsfd/uapi.h"
#include "image.h"
#include "json.h"
#include "output.h"
#include "tap.h"
#include "tests.h"

/*
 * Run fn against a memstream; returns malloc()ed output.  Not inlined:
 * gcc 12 at -O2 without sanitizers (make valgrind) then takes the result
 * for a pointer to the local it was stored through (-Wdangling-pointer).
 */
static __attribute__((noinline)) char *capture(void (*fn)(FILE *f, void *arg),
						void *arg)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	fn(f, arg);
	fclose(f);
	return out;
}

static void write_str(FILE *f, void *arg)
{
	json_write_string(f, arg);
}

static void check_escape(const char *in, const char *want, const char *what)
{
	char *got = capture(write_str, (void *)in);

	ok(!strcmp(got, want), "json escape: %s -> %s", what, got);
	free(got);
}

static void doc_compact(FILE *f, void *arg)
{
	struct json j;

	(void)arg;
	json_init(&j, f, 0);
	json_obj_begin(&j);
	json_key(&j, "a");
	json_u64(&j, 18446744073709551615ull);
	json_key(&j, "b");
	json_arr_begin(&j);
	json_i64(&j, -5);
	json_str(&j, "x");
	json_obj_begin(&j);
	json_obj_end(&j);
	json_arr_begin(&j);
	json_arr_end(&j);
	json_arr_end(&j);
	json_key(&j, "c");
	json_str(&j, NULL);
	json_key(&j, "d\"");
	json_null(&j);
	json_obj_end(&j);
}

static void doc_pretty(FILE *f, void *arg)
{
	struct json j;

	(void)arg;
	json_init(&j, f, 1);
	json_obj_begin(&j);
	json_key(&j, "a");
	json_arr_begin(&j);
	json_arr_end(&j);
	json_key(&j, "b");
	json_arr_begin(&j);
	json_u64(&j, 1);
	json_u64(&j, 2);
	json_arr_end(&j);
	json_obj_end(&j);
	json_finish(&j);
}

static void test_json(void)
{
	char *got;

	check_escape("plain", "\"plain\"", "plain");
	check_escape("a\"b\\c", "\"a\\\"b\\\\c\"", "quote and backslash");
	check_escape("\n\r\t\b\f\x01\x1f\x7f", "\"\\n\\r\\t\\b\\f\\u0001\\u001f\\u007f\"",
		     "control characters");
	check_escape("caf\xc3\xa9 \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"",
		     "valid UTF-8 kept");
	check_escape("\xff\xc0\x80", "\"\\ufffd\\ufffd\\ufffd\"", "invalid and overlong UTF-8");
	check_escape("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"", "UTF-16 surrogate");
	check_escape("x\xe2\x82", "\"x\\ufffd\\ufffd\"", "truncated sequence at end");
	check_escape("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"", "beyond U+10FFFF");

	got = capture(doc_compact, NULL);
	ok(!strcmp(got, "{\"a\":18446744073709551615,\"b\":[-5,\"x\",{},[]],"
			"\"c\":null,\"d\\\"\":null}"),
	   "json compact document: %s", got);
	free(got);
	got = capture(doc_pretty, NULL);
	ok(!strcmp(got, "{\n  \"a\": [],\n  \"b\": [\n    1,\n    2\n  ]\n}\n"),
	   "json pretty document");
	free(got);
}

static void check_guest(const char *cmd, size_t len, const char *want,
			const char *what)
{
	char *got = kvmstats__guest_name(cmd, len);

	ok(want ? got && !strcmp(got, want) : !got,
	   "guest name: %s -> %s", what, got ? got : "(none)");
	free(got);
}

#define GUEST(lit, want, what) check_guest(lit, sizeof(lit) - 1, want, what)

static void test_guest(void)
{
	GUEST("qemu\0-name\0foo\0-m\0" "1G\0", "foo", "-name foo");
	GUEST("qemu\0-name\0guest=foo,debug-threads=on\0", "foo", "guest=foo,...");
	GUEST("qemu\0-name\0foo,debug-threads=on\0", "foo", "implied key");
	GUEST("qemu\0-name\0debug-threads=on,guest=bar\0", "bar", "guest= not first");
	GUEST("qemu\0-name\0a,,b,process=p\0", "a,b", "escaped comma");
	GUEST("qemu\0--name\0x\0", "x", "--name");
	GUEST("qemu\0-name\0a\0-name\0b\0", "b", "last -name wins");
	GUEST("qemu\0-name\0foo", "foo", "unterminated last argument");
	GUEST("qemu\0-m\0" "1G\0", NULL, "no -name");
	GUEST("qemu\0-name\0", NULL, "-name without value");
	GUEST("qemu\0-name\0process=p\0", NULL, "no guest key");
	GUEST("qemu\0-name\0guest=\0", NULL, "empty guest");
	GUEST("qemu\0-namex\0foo\0", NULL, "-namex is not -name");
	GUEST("firecracker\0--id\0vm1\0", NULL, "firecracker");
	check_guest("", 0, NULL, "empty cmdline");
}

static void render_json(FILE *f, void *arg)
{
	struct json j;

	json_init(&j, f, 0);
	out_stats_json(&j, arg);
}

static void render_human(FILE *f, void *arg)
{
	out_stats_human(f, arg, "  ");
}

static const struct img_stat tiny[] = {
	{ "exits", KVM_STATS_TYPE_CUMULATIVE, 0, 1, 0, 0 },
	{ "lat", KVM_STATS_TYPE_LINEAR_HIST | KVM_STATS_UNIT_SECONDS, -6, 3, 8, 10 },
};

static void test_output(void)
{
	struct kvmstats s = { 0 };
	struct img im;
	char *got;

	img_build(&im, "kvm-7", 48, tiny, 2, LAYOUT_UPSTREAM);
	memset(im.buf + im.data_off + 16, 0, 8);	/* lat bucket 1 = 0 */
	kvmstats_parse(&s, im.buf, im.len);
	got = capture(render_json, &s);
	ok(!strcmp(got, "{\"id\":\"kvm-7\",\"stats\":["
			"{\"name\":\"exits\",\"type\":\"cumulative\",\"unit\":\"none\","
			"\"base\":\"pow10\",\"exponent\":0,\"size\":1,\"value\":1000},"
			"{\"name\":\"lat\",\"type\":\"linear_hist\",\"unit\":\"seconds\","
			"\"base\":\"pow10\",\"exponent\":-6,\"size\":3,\"bucket_size\":10,"
			"\"buckets\":[2000,0,2002]}]}"),
	   "stats JSON object: %s", got);
	free(got);
	got = capture(render_human, &s);
	ok(!strcmp(got, "  exits                            1000\n"
			"  lat                              linear_hist 2/3 buckets non-zero,"
			" total 4002: [0 s, 10 us) 2000, [20 us, inf) 2002\n"),
	   "human output: one line per stat, histogram summarised");
	if (tap_fail)
		tap_diag("got: %s", got);
	free(got);
	s.data[1] = 0;		/* lat bucket 0: separator must still be ':' */
	got = capture(render_human, &s);
	ok(strstr(got, "total 2002: [20 us, inf) 2002\n") != NULL,
	   "human output: histogram whose first bucket is empty");
	free(got);
	kvmstats_close(&s);
	img_free(&im);
}

static void check_reason(const struct kvmstats_desc *d, unsigned int i,
			 const char *want)
{
	char buf[48];
	int n = kvmstats_exit_reason_name(d, i, buf, sizeof(buf));

	if (!want)
		ok(n < 0 && !buf[0], "%s bucket %u has no name", d->name, i);
	else
		ok(n == (int)strlen(want) && !strcmp(buf, want),
		   "%s bucket %u is '%s' (got '%s')", d->name, i, want, buf);
}

/* The bucket of an SVM exit code. */
#define SVM(code)	kvm_statsfd_svm_index(code)

static const struct img_stat reasons[] = {
	{ "exit_reasons_svm", KVM_STATS_TYPE_LINEAR_HIST, 0, 120, 0, 1 },
	{ "exit_reasons_vmx", KVM_STATS_TYPE_LINEAR_HIST, 0, 81, 0, 1 },
	{ "exit_reasons_xyz", KVM_STATS_TYPE_LINEAR_HIST, 0, 4, 0, 1 },
};

/* Exit-reason histograms: bucket names, human and JSON rendering. */
static void test_exit_reasons(void)
{
	const struct kvmstats_desc *svm, *vmx, *xyz;
	struct kvmstats s = { 0 };
	struct img im;
	char *got;

	img_build(&im, "kvm-9/vcpu-0", 48, reasons, 3, LAYOUT_UPSTREAM);
	ok(!kvmstats_parse(&s, im.buf, im.len), "exit-reason image parses: %s", s.err);
	svm = kvmstats_find(&s, "exit_reasons_svm");
	vmx = kvmstats_find(&s, "exit_reasons_vmx");
	xyz = kvmstats_find(&s, "exit_reasons_xyz");
	ok(kvmstats_exit_reason_kind(svm) == KVMSTATS_EXIT_SVM &&
	   kvmstats_exit_reason_kind(vmx) == KVMSTATS_EXIT_VMX &&
	   kvmstats_exit_reason_kind(xyz) == KVMSTATS_EXIT_NONE &&
	   kvmstats_exit_reason_kind(NULL) == KVMSTATS_EXIT_NONE,
	   "exit-reason histograms recognised by name and size");
	check_reason(svm, SVM(0x00), "read_cr0");
	check_reason(svm, SVM(0x13), "write_cr3");
	check_reason(svm, SVM(0x27), "read_dr7");
	check_reason(svm, SVM(0x4e), "PF excp");
	check_reason(svm, SVM(0x60), "interrupt");
	check_reason(svm, SVM(0x72), "cpuid");
	check_reason(svm, SVM(0x78), "hlt");
	check_reason(svm, SVM(0x7b), "io");
	check_reason(svm, SVM(0x7c), "msr");
	check_reason(svm, SVM(0x81), "hypercall");
	check_reason(svm, SVM(0x69), "read_rt");
	check_reason(svm, SVM(0x90), "write_cr0_trap");
	check_reason(svm, SVM(0x93), "code_0x093");
	check_reason(svm, SVM(0x400), "npf");
	check_reason(svm, SVM(0x403), "vmgexit");
	/* Codes without a bucket of their own. */
	check_reason(svm, SVM(0x02), "other");
	check_reason(svm, SVM(0x91), "other");
	check_reason(svm, SVM(0xa7), "other");
	check_reason(svm, 119, "other");
	check_reason(svm, 120, NULL);
	check_reason(vmx, 12, "HLT");
	check_reason(vmx, 30, "IO_INSTRUCTION");
	check_reason(vmx, 48, "EPT_VIOLATION");
	check_reason(vmx, 70, "reason_70");
	check_reason(vmx, 80, "other");
	check_reason(xyz, 0, NULL);

	memset(s.data, 0, s.data_size);
	s.data[svm->offset / 8 + SVM(0x7b)] = 5;
	s.data[svm->offset / 8 + SVM(0x400)] = 7;
	s.data[svm->offset / 8 + 119] = 1;
	got = capture(render_human, &s);
	ok(strstr(got, "exit_reasons_svm                 linear_hist 3/120 buckets non-zero,"
		       " total 13: npf 7, io 5, other 1\n") != NULL,
	   "human output: exit reasons by name, largest first");
	if (tap_fail)
		tap_diag("got: %s", got);
	free(got);
	got = capture(render_json, &s);
	ok(strstr(got, "\"reasons\":{\"io\":5,\"npf\":7,\"other\":1}") != NULL,
	   "JSON: \"reasons\" object of the non-zero buckets by name");
	ok(strstr(got, "\"name\":\"exit_reasons_vmx\"") &&
	   strstr(strstr(got, "exit_reasons_vmx"), "\"reasons\":{}") &&
	   !strstr(strstr(got, "exit_reasons_xyz"), "\"reasons\""),
	   "JSON: empty reasons object for an all-zero histogram, none for unknown ones");
	free(got);
	kvmstats_close(&s);
	img_free(&im);
}

/*
 * The kernel's own exit-reason tables (linux-libc-dev's <asm/svm.h> and
 * <asm/vmx.h>) are the names' one source: every code they list that
 * uapi.h's map gives a bucket of its own carries the kernel's string
 * verbatim (found here through kvm_statsfd_*_index(), the library goes
 * through the inverse), and every other bucket below the last is the
 * fallback "code_0x%03x" / "reason_%u".
 */
#ifdef HAVE_X86_EXIT_TABLES
static const struct kvmstats__exit_name host_svm[] = {
	SVM_EXIT_REASONS
}, host_vmx[] = {
	VMX_EXIT_REASONS
};
#endif

static const struct kvmstats_desc exit_desc_svm = {
	.name = KVM_STATSFD_EXIT_STAT_SVM, .type = KVM_STATS_TYPE_LINEAR_HIST,
	.bucket_size = 1, .size = KVM_STATSFD_SVM_BUCKETS,
}, exit_desc_vmx = {
	.name = KVM_STATSFD_EXIT_STAT_VMX, .type = KVM_STATS_TYPE_LINEAR_HIST,
	.bucket_size = 1, .size = KVM_STATSFD_VMX_BUCKETS,
};

static void test_uapi_exit_tables(void)
{
	const char *want_svm[KVM_STATSFD_SVM_BUCKETS] = { NULL };
	const char *want_vmx[KVM_STATSFD_VMX_BUCKETS] = { NULL };
	unsigned int i, idx, kernel_named = 0, bad = 0;
	char name[64], fb[32];
#ifdef HAVE_X86_EXIT_TABLES
	const struct kvmstats__exit_name *ksvm = host_svm, *kvmx = host_vmx;
	unsigned int nksvm = sizeof(host_svm) / sizeof(host_svm[0]);
	unsigned int nkvmx = sizeof(host_vmx) / sizeof(host_vmx[0]);
#else
	const struct kvmstats__exit_name *ksvm = kvmstats__svm_exits;
	const struct kvmstats__exit_name *kvmx = kvmstats__vmx_exits;
	unsigned int nksvm = kvmstats__svm_exits_n, nkvmx = kvmstats__vmx_exits_n;
#endif

	for (i = 0; i < nksvm; i++) {
		if (ksvm[i].code > 0xffffffffull)
			continue;	/* SVM_EXIT_ERR: "other" by definition */
		idx = kvm_statsfd_svm_index((unsigned int)ksvm[i].code);
		if (idx != KVM_STATSFD_SVM_OTHER && !want_svm[idx])
			want_svm[idx] = ksvm[i].name;
	}
	for (i = 0; i < nkvmx; i++) {
		idx = kvm_statsfd_vmx_index((unsigned int)kvmx[i].code);
		if (idx != KVM_STATSFD_VMX_OTHER && !want_vmx[idx])
			want_vmx[idx] = kvmx[i].name;
	}
	for (i = 0; i < KVM_STATSFD_SVM_BUCKETS; i++) {
		if (want_svm[i])
			kernel_named++;
		else if (i == KVM_STATSFD_SVM_OTHER)
			snprintf(fb, sizeof(fb), "other");
		else
			snprintf(fb, sizeof(fb), "code_0x%03lx", kvm_statsfd_svm_code(i));
		kvmstats_exit_reason_name(&exit_desc_svm, i, name, sizeof(name));
		if (strcmp(name, want_svm[i] ? want_svm[i] : fb)) {
			bad++;
			tap_diag("SVM bucket %u: '%s', want '%s'", i, name,
				 want_svm[i] ? want_svm[i] : fb);
		}
	}
	for (i = 0; i < KVM_STATSFD_VMX_BUCKETS; i++) {
		if (want_vmx[i])
			kernel_named++;
		else if (i == KVM_STATSFD_VMX_OTHER)
			snprintf(fb, sizeof(fb), "other");
		else
			snprintf(fb, sizeof(fb), "reason_%ld", kvm_statsfd_vmx_code(i));
		kvmstats_exit_reason_name(&exit_desc_vmx, i, name, sizeof(name));
		if (strcmp(name, want_vmx[i] ? want_vmx[i] : fb)) {
			bad++;
			tap_diag("VMX bucket %u: '%s', want '%s'", i, name,
				 want_vmx[i] ? want_vmx[i] : fb);
		}
	}
	ok(kernel_named > 100 && !bad,
	   "exit names: %u buckets carry the kernel's SVM_EXIT_REASONS/VMX_EXIT_REASONS name verbatim, the rest the fallback (%u wrong)",
	   kernel_named, bad);
}

/* The class of bucket i is the one named want. */
static void check_class(const struct kvmstats_desc *d, unsigned int i,
			const char *want)
{
	char reason[64];
	int c = kvmstats_exit_reason_class(d, i);
	const char *got = c >= 0 ? kvmstats_exit_class_name((unsigned int)c) : NULL;

	kvmstats_exit_reason_name(d, i, reason, sizeof(reason));
	ok(got && !strcmp(got, want), "exit class: %s bucket %u (%s) is '%s' (got %d, '%s')",
	   d->name, i, reason, want, c, got ? got : "(none)");
}

/*
 * kvmstats_exit_class_*(): a fixed list of names, the module's five
 * latency classes first, "other" last; every bucket of both histograms
 * in one of them; -1 for anything that is not a bucket.
 */
static void test_exit_classes(void)
{
	static const char *const first[] = { "io", "npf", "msr", "hlt", "intr" };
	static const struct kvmstats_desc other_hist = {
		.name = "exit_reasons_svm", .type = KVM_STATS_TYPE_LINEAR_HIST,
		.bucket_size = 1, .size = 181,	/* the old SVM map's size */
	}, counter = {
		.name = "exits", .type = KVM_STATS_TYPE_CUMULATIVE, .size = 1,
	};
	unsigned int n = kvmstats_exit_class_count(), c, k, i, bad = 0;
	const struct kvmstats_desc *d;
	int cls, used[64] = { 0 };
	const char *name;

	ok(n > 5 && n <= 64, "exit classes: %u of them", n);
	for (c = 0; c < n; c++) {
		name = kvmstats_exit_class_name(c);
		if (!name || !*name) {
			bad++;
			tap_diag("class %u has no name", c);
			continue;
		}
		for (k = 0; k < c; k++) {
			if (kvmstats_exit_class_name(k) &&
			    !strcmp(kvmstats_exit_class_name(k), name)) {
				bad++;
				tap_diag("classes %u and %u are both '%s'", k, c, name);
			}
		}
	}
	ok(n && !bad, "exit classes: every class 0..%u has a name, all different", n ? n - 1 : 0);
	ok(!kvmstats_exit_class_name(n) && !kvmstats_exit_class_name(n + 1) &&
	   !kvmstats_exit_class_name(~0u), "exit classes: no name past the last (%u)", n);
	for (c = 0, bad = 0; c < 5; c++) {
		name = kvmstats_exit_class_name(c);
		if (!name || strcmp(name, first[c])) {
			bad++;
			tap_diag("class %u: '%s', want '%s'", c, name ? name : "(null)", first[c]);
		}
	}
	ok(!bad, "exit classes 0-4 are the module's latency classes io, npf, msr, hlt, intr");
	name = n ? kvmstats_exit_class_name(n - 1) : NULL;
	ok(name && !strcmp(name, "other"), "the last exit class is 'other' (got '%s')",
	   name ? name : "(null)");

	for (k = 0, bad = 0; k < 2; k++) {
		d = k ? &exit_desc_vmx : &exit_desc_svm;
		for (i = 0; i < d->size; i++) {
			cls = kvmstats_exit_reason_class(d, i);
			if (cls < 0 || (unsigned int)cls >= n) {
				bad++;
				tap_diag("%s bucket %u: class %d", d->name, i, cls);
				continue;
			}
			if ((unsigned int)cls < sizeof(used) / sizeof(used[0]))
				used[cls]++;
		}
	}
	ok(!bad, "exit classes: each of the %u SVM and %u VMX buckets has a class below %u",
	   KVM_STATSFD_SVM_BUCKETS, KVM_STATSFD_VMX_BUCKETS, n);
	for (c = 0, bad = 0; c < n && c < sizeof(used) / sizeof(used[0]); c++) {
		if (!used[c]) {
			bad++;
			tap_diag("class %u (%s) has no bucket", c, kvmstats_exit_class_name(c));
		}
	}
	ok(n && !bad, "exit classes: every class has a bucket of one vendor or the other");

	/* Spot checks, by hardware code (APM vol. 2 appendix C, SDM vol. 3 appendix C). */
	check_class(&exit_desc_svm, SVM(0x7b), "io");		/* IOIO */
	check_class(&exit_desc_vmx, 30, "io");			/* IO_INSTRUCTION */
	check_class(&exit_desc_svm, SVM(0x400), "npf");
	check_class(&exit_desc_vmx, 48, "npf");			/* EPT_VIOLATION */
	check_class(&exit_desc_vmx, 49, "npf");			/* EPT_MISCONFIG */
	check_class(&exit_desc_svm, SVM(0x7c), "msr");
	check_class(&exit_desc_vmx, 31, "msr");			/* MSR_READ */
	check_class(&exit_desc_vmx, 32, "msr");			/* MSR_WRITE */
	check_class(&exit_desc_svm, SVM(0x78), "hlt");
	check_class(&exit_desc_vmx, 12, "hlt");
	check_class(&exit_desc_svm, SVM(0x60), "intr");		/* INTR */
	check_class(&exit_desc_vmx, 1, "intr");			/* EXTERNAL_INTERRUPT */
	check_class(&exit_desc_svm, SVM(0x72), "cpuid");
	check_class(&exit_desc_vmx, 10, "cpuid");
	check_class(&exit_desc_svm, SVM(0x61), "nmi");
	check_class(&exit_desc_svm, SVM(0x4e), "exception");	/* #PF */
	check_class(&exit_desc_vmx, 0, "exception");		/* EXCEPTION_NMI */
	check_class(&exit_desc_svm, SVM(0x13), "cr_access");
	check_class(&exit_desc_svm, SVM(0x90), "cr_access");	/* CR0 write trap */
	check_class(&exit_desc_vmx, 28, "cr_access");
	check_class(&exit_desc_svm, SVM(0x81), "hypercall");	/* VMMCALL */
	check_class(&exit_desc_svm, SVM(0x403), "hypercall");	/* VMGEXIT */
	check_class(&exit_desc_vmx, 18, "hypercall");		/* VMCALL */
	check_class(&exit_desc_svm, SVM(0x64), "interrupt_window");	/* VINTR */
	check_class(&exit_desc_vmx, 8, "interrupt_window");	/* NMI_WINDOW */
	check_class(&exit_desc_vmx, 52, "timer");		/* PREEMPTION_TIMER */
	check_class(&exit_desc_svm, SVM(0x402), "apic");	/* AVIC unaccelerated */
	check_class(&exit_desc_vmx, 44, "apic");		/* APIC_ACCESS */
	check_class(&exit_desc_svm, SVM(0x7f), "shutdown");
	check_class(&exit_desc_vmx, 2, "shutdown");		/* TRIPLE_FAULT */
	check_class(&exit_desc_vmx, 33, "invalid");		/* INVALID_STATE */
	check_class(&exit_desc_svm, KVM_STATSFD_SVM_OTHER, "other");
	check_class(&exit_desc_vmx, KVM_STATSFD_VMX_OTHER, "other");
	check_class(&exit_desc_svm, SVM(0x70), "other");	/* PUSHF */
	check_class(&exit_desc_vmx, 70, "other");		/* ENCLV: no name */

	ok(kvmstats_exit_reason_class(NULL, 0) == -1 &&
	   kvmstats_exit_reason_class(&counter, 0) == -1 &&
	   kvmstats_exit_reason_class(&other_hist, 0) == -1,
	   "exit class: -1 for NULL and for what is not an exit-reason histogram");
	ok(kvmstats_exit_reason_class(&exit_desc_svm, KVM_STATSFD_SVM_BUCKETS) == -1 &&
	   kvmstats_exit_reason_class(&exit_desc_vmx, KVM_STATSFD_VMX_BUCKETS) == -1 &&
	   kvmstats_exit_reason_class(&exit_desc_svm, ~0u) == -1 &&
	   kvmstats_exit_reason_class(&exit_desc_vmx, ~0u) == -1,
	   "exit class: -1 for a bucket past the last");
}

/* Whether bucket i's name is one of the fallbacks, not the kernel's. */
static int is_fallback(const char *name)
{
	return !strncmp(name, "code_0x", 7) || !strncmp(name, "reason_", 7);
}

/*
 * The tables of Documentation/exit-reasons.rst: every bucket with a name
 * of the kernel's, then the last one.  main --exit-reason-tables prints
 * them; test_exit_reasons_doc() compares them with the document.
 */
void print_exit_reason_table(FILE *f, int vmx)
{
	const struct kvmstats_desc *d = vmx ? &exit_desc_vmx : &exit_desc_svm;
	unsigned int i;
	char name[64];

	fputs(vmx ? "  index  name\n" : "  index  code   name\n", f);
	for (i = 0; i < d->size; i++) {
		kvmstats_exit_reason_name(d, i, name, sizeof(name));
		if (is_fallback(name))
			continue;
		if (vmx)
			fprintf(f, "  %5u  %s\n", i, name);
		else if (kvm_statsfd_svm_code(i) < 0)
			fprintf(f, "  %5u  -      %s\n", i, name);
		else
			fprintf(f, "  %5u  0x%03lx  %s\n", i, kvm_statsfd_svm_code(i), name);
	}
}

/* The literal block that starts with header in the document, or NULL. */
static char *doc_block(const char *doc, const char *header)
{
	const char *p = strstr(doc, header), *e;

	if (!p)
		return NULL;
	e = strstr(p, "\n\n");
	return strndup(p, e ? (size_t)(e - p) + 1 : strlen(p));
}

/* Documentation/exit-reasons.rst as one string (free() it), or NULL. */
static char *read_exit_reasons_doc(void)
{
	FILE *f = fopen(EXIT_REASONS_RST, "r"), *m;
	char *doc = NULL, buf[4096];
	size_t len, dlen = 0;

	if (!f)
		return NULL;
	m = open_memstream(&doc, &dlen);
	while ((len = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, len, m);
	fclose(m);
	fclose(f);
	return doc;
}

static void test_exit_reasons_doc(void)
{
	static const char *const hdr[2] = {
		"  index  code   name\n", "  index  name\n"
	};
	char *doc = read_exit_reasons_doc(), *want, *got;
	size_t len = 0;
	int vmx;

	ok(!!doc, "%s readable", EXIT_REASONS_RST);
	for (vmx = 0; vmx < 2; vmx++) {
		FILE *m = open_memstream(&want, &len);

		print_exit_reason_table(m, vmx);
		fclose(m);
		got = doc ? doc_block(doc, hdr[vmx]) : NULL;
		if (!ok(got && !strcmp(got, want),
			"Documentation/exit-reasons.rst's %s table is the library's names (regenerate: unit-asan --exit-reason-tables)",
			vmx ? "VMX" : "SVM") && got)
			tap_diag("doc:\n%s\nlibrary:\n%s", got, want);
		free(got);
		free(want);
	}
	free(doc);
}

static const struct img_stat arm64_stats[] = {
	{ "exit_kinds_arm64", KVM_STATS_TYPE_LINEAR_HIST, 0, 5, 0, 1 },
	{ "exit_reasons_arm64", KVM_STATS_TYPE_LINEAR_HIST, 0, 64, 40, 1 },
};

/* The command's output names arm64's buckets as it names x86's. */
static void test_arm64_output(void)
{
	const struct kvmstats_desc *ec, *kind;
	struct kvmstats s = { 0 };
	struct img im;
	char *got;

	img_build(&im, "kvm-5/vcpu-0", 48, arm64_stats, 2, LAYOUT_UPSTREAM);
	ok(!kvmstats_parse(&s, im.buf, im.len), "arm64 image parses: %s", s.err);
	kind = kvmstats_find(&s, "exit_kinds_arm64");
	ec = kvmstats_find(&s, "exit_reasons_arm64");
	if (!ok(kind && ec, "arm64 image has both histograms")) {
		kvmstats_close(&s);
		img_free(&im);
		return;
	}
	memset(s.data, 0, s.data_size);
	s.data[kind->offset / 8 + 0] = 9;	/* IRQ */
	s.data[kind->offset / 8 + 2] = 163;	/* TRAP */
	s.data[ec->offset / 8 + 0x16] = 158;	/* HVC64 */
	s.data[ec->offset / 8 + 0x24] = 5;	/* DABT_LOW */
	got = capture(render_human, &s);
	ok(strstr(got, "exit_reasons_arm64               linear_hist 2/64 buckets non-zero,"
		       " total 163: HVC64 158, DABT_LOW 5\n") &&
	   strstr(got, "exit_kinds_arm64                 linear_hist 2/5 buckets non-zero,"
		       " total 172: TRAP 163, IRQ 9\n"),
	   "human output: arm64 exception classes and kinds by name");
	if (tap_fail)
		tap_diag("got: %s", got);
	free(got);
	got = capture(render_json, &s);
	ok(strstr(got, "\"reasons\":{\"HVC64\":158,\"DABT_LOW\":5}") &&
	   strstr(got, "\"reasons\":{\"IRQ\":9,\"TRAP\":163}"),
	   "JSON: arm64's non-zero buckets by name");
	if (tap_fail)
		tap_diag("got: %s", got);
	free(got);
	kvmstats_close(&s);
	img_free(&im);
}

static const struct kvmstats_desc exit_desc_arm64 = {
	.name = KVM_STATSFD_EXIT_STAT_ARM64, .type = KVM_STATS_TYPE_LINEAR_HIST,
	.bucket_size = 1, .size = KVM_STATSFD_ARM64_EC_BUCKETS,
}, kind_desc_arm64 = {
	.name = KVM_STATSFD_EXIT_KINDS_ARM64, .type = KVM_STATS_TYPE_LINEAR_HIST,
	.bucket_size = 1, .size = KVM_STATSFD_ARM64_KINDS,
};

/*
 * The rows of Documentation/exit-reasons.rst's arm64 table ("0x16   HVC64
 * ...", between its first two rule lines after the header) into
 * names[64]; the number of rows, or -1 if there is no such table.
 */
static int doc_arm64_classes(const char *doc, char names[][24])
{
	const char *p = doc ? strstr(doc, "\nEC     name") : NULL;
	unsigned int ec;
	char name[24];
	int rows = 0;

	if (!p || !(p = strstr(p + 1, "\n=====")))
		return -1;
	while ((p = strchr(p + 1, '\n')) && strncmp(p + 1, "=====", 5)) {
		if (sscanf(p + 1, "0x%x %23s", &ec, name) != 2 ||
		    ec >= KVM_STATSFD_ARM64_EC_BUCKETS)
			return -1;
		snprintf(names[ec], sizeof(names[ec]), "%s", name);
		rows++;
	}
	return rows;
}

/*
 * arm64's histograms: the exception classes are named as the document's
 * table names them, an unallocated one "EC_0x%02x"; the kinds IRQ,
 * SERROR, TRAP, ILLEGAL, other; each class bucket has an exit class, the
 * kinds none.
 */
static void test_arm64_exit_names(void)
{
	static const char *const kinds[] = { "IRQ", "SERROR", "TRAP", "ILLEGAL", "other" };
	struct kvmstats_desc wrong = exit_desc_arm64;
	char names[KVM_STATSFD_ARM64_EC_BUCKETS][24] = { { 0 } }, got[64], fb[16];
	char *doc = read_exit_reasons_doc();
	unsigned int i, named = 0, bad = 0;
	int rows, cls;

	rows = doc_arm64_classes(doc, names);
	ok(rows > 30, "Documentation/exit-reasons.rst has the arm64 class table (%d rows)", rows);
	for (i = 0; i < KVM_STATSFD_ARM64_EC_BUCKETS; i++) {
		const char *w = names[i];

		if (w[0]) {
			named++;
		} else {
			snprintf(fb, sizeof(fb), "EC_0x%02x", i);
			w = fb;
		}
		kvmstats_exit_reason_name(&exit_desc_arm64, i, got, sizeof(got));
		if (strcmp(got, w)) {
			bad++;
			tap_diag("arm64 class 0x%02x: '%s', want '%s'", i, got, w);
		}
	}
	ok(rows > 30 && named == (unsigned int)rows && !bad,
	   "arm64: the %u classes of the document's table by its names, the rest EC_0x.. (%u wrong)",
	   named, bad);
	free(doc);
	ok(kvmstats_exit_reason_kind(&exit_desc_arm64) == KVMSTATS_EXIT_ARM64 &&
	   kvmstats_exit_reason_kind(&kind_desc_arm64) == KVMSTATS_EXIT_ARM64_KIND,
	   "arm64: exit_reasons_arm64 and exit_kinds_arm64 are recognised");
	wrong.size = 63;
	ok(kvmstats_exit_reason_kind(&wrong) == KVMSTATS_EXIT_NONE &&
	   kvmstats_exit_reason_name(&wrong, 0, got, sizeof(got)) == -1 && !got[0],
	   "arm64: a histogram of that name but another size is not one");
	ok(kvmstats_exit_reason_name(&exit_desc_arm64, 64, got, sizeof(got)) == -1 && !got[0] &&
	   kvmstats_exit_reason_name(&kind_desc_arm64, 5, got, sizeof(got)) == -1 && !got[0],
	   "arm64: no name past the last bucket");
	for (i = 0, bad = 0; i < KVM_STATSFD_ARM64_KINDS; i++) {
		kvmstats_exit_reason_name(&kind_desc_arm64, i, got, sizeof(got));
		bad += !!strcmp(got, kinds[i]);
		bad += kvmstats_exit_reason_class(&kind_desc_arm64, i) != -1;
	}
	ok(!bad, "arm64: kinds IRQ, SERROR, TRAP, ILLEGAL, other, with no exit class");
	for (i = 0, bad = 0; i < KVM_STATSFD_ARM64_EC_BUCKETS; i++) {
		cls = kvmstats_exit_reason_class(&exit_desc_arm64, i);
		bad += cls < 0 || (unsigned int)cls >= kvmstats_exit_class_count();
	}
	ok(!bad && kvmstats_exit_reason_class(&exit_desc_arm64, 64) == -1,
	   "arm64: each of the 64 classes has an exit class, none past them");
	check_class(&exit_desc_arm64, 0x16, "hypercall");	/* HVC64 */
	check_class(&exit_desc_arm64, 0x17, "hypercall");	/* SMC64 */
	check_class(&exit_desc_arm64, 0x24, "npf");		/* DABT_LOW */
	check_class(&exit_desc_arm64, 0x20, "npf");		/* IABT_LOW */
	check_class(&exit_desc_arm64, 0x18, "msr");		/* SYS64 */
	check_class(&exit_desc_arm64, 0x03, "msr");		/* CP15_32 */
	check_class(&exit_desc_arm64, 0x01, "hlt");		/* WFx */
	check_class(&exit_desc_arm64, 0x1a, "nested_virt");	/* ERET */
	check_class(&exit_desc_arm64, 0x07, "exception");	/* FP_ASIMD */
	check_class(&exit_desc_arm64, 0x3c, "exception");	/* BRK64 */
	check_class(&exit_desc_arm64, 0x00, "other");		/* UNKNOWN */
	check_class(&exit_desc_arm64, 0x0b, "other");		/* unallocated */
}

/* Nothing a process or a stats file names may reach a terminal raw. */
static void test_term_safe(void)
{
	static const struct { const char *in, *want, *what; } c[] = {
		{ "qemu-system-x86", "qemu-system-x86", "plain ASCII unchanged" },
		{ "\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07", "OSC title sequence escaped" },
		{ "a\x1b[2Jb", "a\\x1b[2Jb", "clear-screen CSI escaped" },
		{ "x\ry\nz\t", "x\\x0dy\\x0az\\x09", "CR, LF, TAB escaped" },
		{ "\x7f", "\\x7f", "DEL escaped" },
		{ "\xc2\x9b" "31m", "\\xc2\\x9b31m", "C1 CSI (U+009B) escaped" },
		{ "gr\xc3\xbc\xc3\x9f" "e", "gr\xc3\xbc\xc3\x9f" "e", "valid UTF-8 kept" },
		{ "\xff\xfe", "\\xff\\xfe", "invalid UTF-8 escaped" },
		{ "a\\x1b", "a\\\\x1b", "a backslash is doubled, so escapes are unambiguous" },
	};
	char buf[64], small[8];
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		term_safe(c[i].in, buf, sizeof(buf));
		ok(!strcmp(buf, c[i].want), "term_safe: %s", c[i].what);
	}
	term_safe("\x1b\x1b\x1b\x1b", small, sizeof(small));
	ok(strlen(small) < sizeof(small) && !strchr(small, 0x1b),
	   "term_safe: truncates, never a partial escape (%s)", small);
	ok(!strcmp(term_safe(NULL, buf, sizeof(buf)), ""), "term_safe: NULL is empty");
}

void test_tool(void)
{
	test_uapi_exit_tables();
	test_exit_reasons_doc();
	test_term_safe();
	test_json();
	test_guest();
	test_output();
	test_exit_reasons();
	test_exit_classes();
	test_arm64_exit_names();
	test_arm64_output();
}
