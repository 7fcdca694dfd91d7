// SPDX-License-Identifier: GPL-2.0
/*
 * kvm_statsfd.ko loads, shows up live in sysfs, refuses a second load and
 * unloads cleanly, several times over; and it traces only the kernel
 * functions it says it does (kvm_ioctls_untraced), so that it lives beside
 * a livepatch of KVM's ioctl handlers (beside_a_livepatch); every function
 * it hooks is really traced once loaded (hooks_live), and a VM's
 * destruction reaches it (vm_destruction_reaches_the_module).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ks_harness.h"
#include "ks_util.h"
#include "internal.h"	/* white-box: reads the handle's fields */

static void read_sysfs(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

FIXTURE(module) {
	int was_loaded;
};

FIXTURE_SETUP(module)
{
	self->was_loaded = ks_module_loaded();
	if (self->was_loaded)
		ASSERT_EQ(0, ks_module_unload());
}

#define STANDIN	"livepatch_standin"

FIXTURE_TEARDOWN(module)
{
	/* beside_a_livepatch's module, if it stopped before unloading it. */
	syscall(SYS_delete_module, STANDIN, O_NONBLOCK);
	if (self->was_loaded && !ks_module_loaded())
		ks_module_load("");
	else if (!self->was_loaded && ks_module_loaded())
		ks_module_unload();
}

TEST_F(module, load_unload)
{
	char state[64];

	ASSERT_EQ(0, ks_module_load("")) TH_LOG("loading %s", ks_module_path());
	read_sysfs("/sys/module/kvm_statsfd/initstate", state, sizeof(state));
	EXPECT_STREQ("live", state);
	EXPECT_EQ(0, ks_module_unload());
	EXPECT_EQ(0, ks_module_loaded());
}

TEST_F(module, second_load_refused)
{
	ASSERT_EQ(0, ks_module_load(""));
	EXPECT_EQ(-EEXIST, ks_module_load(""));
	EXPECT_EQ(0, ks_module_unload());
}

/*
 * Repeated cycles, for what leaks or wears out a little each time: 8 at
 * KS_STRESS_SCALE=1 where kmemleak watches them (the debug lane: it sees
 * a leak of one), 3 elsewhere (a reference or slot left behind shows as
 * a refused load; under Bochs a cycle takes seconds); 20 a scale under
 * make stress.
 */
TEST_F(module, load_unload_loop)
{
	int scale = ks_stress_scale(), i, n;

	if (scale > 1)
		n = 20 * scale;
	else
		n = access("/sys/kernel/debug/kmemleak", F_OK) ? 3 : 8;

	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, ks_module_load("")) TH_LOG("iteration %d", i);
		ASSERT_EQ(0, ks_module_unload()) TH_LOG("iteration %d", i);
	}
}

static int unload_module(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) < 0 ? -errno : 0;
}

/*
 * The vendor module (kvm_amd, kvm_intel, ...): the one module that uses
 * kvm.ko, as /proc/modules lists it, other than ours.  Its name goes to
 * @buf; 0, or -ENOENT if there is not exactly one.
 */
static int kvm_vendor_module(char *buf, size_t len)
{
	FILE *f = fopen("/proc/modules", "r");
	char line[512], name[64], users[256];
	int found = 0;
	char *u, *save;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %*s %*s %255s", name, users) != 2 ||
		    strcmp(name, "kvm"))
			continue;
		for (u = strtok_r(users, ",", &save); u;
		     u = strtok_r(NULL, ",", &save)) {
			if (!strcmp(u, "-") || !strcmp(u, "kvm_statsfd"))
				continue;
			snprintf(buf, len, "%s", u);
			found++;
		}
	}
	fclose(f);
	return found == 1 ? 0 : -ENOENT;
}

/*
 * Without kvm.ko the module must refuse to load, cleanly.  This unloads
 * KVM, so it runs only where that is harmless: the test guest sets
 * KS_KVM_MODULES to the directory holding kvm.ko and the vendor module.
 */
TEST_F(module, refused_without_kvm)
{
	const char *dir = getenv("KS_KVM_MODULES");
	char path[256], vendor[64];

	if (!dir)
		SKIP(return, "KS_KVM_MODULES not set: will not unload KVM here");
	/* No kvm.ko to unload where KVM is built in (arm64: CONFIG_KVM=y). */
	if (access("/sys/module/kvm/initstate", F_OK))
		SKIP(return, "KVM is built into this kernel: no kvm.ko to unload");
	ASSERT_EQ(0, kvm_vendor_module(vendor, sizeof(vendor)))
		TH_LOG("no single module using kvm in /proc/modules");
	ASSERT_EQ(0, unload_module(vendor)) TH_LOG("unloading %s", vendor);
	ASSERT_EQ(0, unload_module("kvm"));
	EXPECT_EQ(-ENOENT, ks_module_load(""));
	EXPECT_EQ(0, ks_module_loaded());

	snprintf(path, sizeof(path), "%s/kvm.ko", dir);
	ASSERT_EQ(0, ks_insmod(path, ""));
	snprintf(path, sizeof(path), "%s/%s.ko", dir, vendor);
	ASSERT_EQ(0, ks_insmod(path, "")) TH_LOG("loading %s", path);
	ASSERT_EQ(0, access("/dev/kvm", R_OK | W_OK));

	/* And with KVM back, it loads again. */
	EXPECT_EQ(0, ks_module_load(""));
	EXPECT_EQ(0, ks_module_unload());
}

TEST_F(module, bad_mode_refused)
{
	EXPECT_EQ(-EINVAL, ks_module_load("mode=bogus"));
	EXPECT_EQ(0, ks_module_loaded());
	ASSERT_EQ(0, ks_module_load("mode=own"));
	EXPECT_EQ(0, ks_module_unload());
}

/*
 * Where KVM has its own stats fds, the module by default traces none of
 * KVM's ioctl handlers: a KVM_RUN (and every other ioctl) passes no code
 * of the module's, and a livepatch of those handlers is free to load.  It
 * takes over the stats file where KVM makes it (anon_inode_getfile()).
 * With cross_process=1 it must answer KVM_GET_STATS_FD before KVM's
 * same-process check, so it traces both handlers, as it does on kernels
 * where it brings the ioctl (before 5.14); seeing them there is also the
 * proof that this test can see a traced handler.
 */
/* Whether both of KVM's ioctl handlers are traced (@want) @when. */
static void handlers_traced(struct __test_metadata *_metadata, int want,
			    const char *when)
{
	EXPECT_EQ(want, ks_traced("kvm_vm_ioctl")) TH_LOG("kvm_vm_ioctl, %s", when);
	EXPECT_EQ(want, ks_traced("kvm_vcpu_ioctl"))
		TH_LOG("kvm_vcpu_ioctl, %s", when);
}

TEST_F(module, kvm_ioctls_untraced)
{
	int native = ks_native_binary_stats();
	int ret;

	ASSERT_LE(0, native);
	if (ks_module_loaded())
		ASSERT_EQ(0, ks_module_unload());
	ret = ks_traced("kvm_vcpu_ioctl");
	ASSERT_LE(0, ret) TH_LOG("no tracefs enabled_functions: %s",
				 strerror(-ret));

	ASSERT_EQ(0, ks_module_load_default(""));
	handlers_traced(_metadata, !native, native ?
			"default load, kernel with binary stats" :
			"default load, kernel without binary stats");
	if (native)
		EXPECT_EQ(1, ks_traced("anon_inode_getfile"));
	ASSERT_EQ(0, ks_module_unload());
	handlers_traced(_metadata, 0, "after rmmod");

	ASSERT_EQ(0, ks_module_load("cross_process=1"));
	handlers_traced(_metadata, 1, "cross_process=1");
	ASSERT_EQ(0, ks_module_unload());
}

/* 1 if a stats fd of a new VM's vCPU is the module's, 0 if KVM's, -errno. */
static int stats_fd_is_modules(void)
{
	struct ks_exit_codes ec;
	struct kvmstats s = { 0 };
	struct ks_vm vm;
	int fd, ret;

	ks_host_exit_codes(&ec);
	ret = ks_vm_create(&vm, ks_code_out_hlt, ks_code_out_hlt_len, 1);
	if (ret)
		return ret;
	fd = ioctl(vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	ret = fd < 0 ? -errno : kvmstats_open(&s, fd);
	if (!ret) {
		ret = ks_find(&s, ec.stat) != NULL;
		kvmstats_close(&s);	/* closes fd */
	} else if (fd >= 0) {
		close(fd);		/* not taken on failure */
	}
	ks_vm_destroy(&vm);
	return ret;
}

/*
 * Where KVM's functions are: in kvm.ko on x86, in the kernel proper on
 * arm64 (Debian builds KVM in there: CONFIG_KVM=y).
 */
#if defined(__aarch64__)
#define KVM_MOD		NULL
#else
#define KVM_MOD		"kvm"
#endif

/*
 * The functions whose addresses hooks_live reads (hooked_functions()) and
 * the livepatch stand-in is given (standin_params()).
 */
static const char *const ksym_names[] = {
	"kvm_arch_destroy_vm", "anon_inode_getfile", "anon_inode_getfile_fmode",
	"kvm_vm_ioctl", "kvm_vcpu_ioctl", "kvm_vm_ioctl_check_extension",
};

/*
 * The text address of kernel function @func, one of ksym_names (in module
 * @mod, "kvm", or in the kernel proper when NULL), from /proc/kallsyms; 0
 * if not found or hidden.  One pass over the file for all of them: it has
 * a line per kernel symbol, and under TCG each pass takes a second.
 */
static uint64_t kallsyms_addr(const char *func, const char *mod)
{
	static uint64_t in_kernel[ARRAY_SIZE(ksym_names)];
	static uint64_t in_kvm[ARRAY_SIZE(ksym_names)];
	static int scanned;
	char line[512], name[256], owner[64];
	unsigned int i;
	uint64_t addr;
	FILE *f;
	char type;
	int n;

	if (!scanned && (f = fopen("/proc/kallsyms", "re"))) {
		while (fgets(line, sizeof(line), f)) {
			owner[0] = '\0';
			n = sscanf(line, "%" SCNx64 " %c %255s [%63[^]]]", &addr,
				   &type, name, owner);
			if (n < 3 || (type != 't' && type != 'T'))
				continue;
			for (i = 0; i < ARRAY_SIZE(ksym_names); i++) {
				if (strcmp(name, ksym_names[i]))
					continue;
				if (n == 3)
					in_kernel[i] = addr;
				else if (!strcmp(owner, "kvm"))
					in_kvm[i] = addr;
			}
		}
		fclose(f);
		scanned = 1;
	}
	for (i = 0; i < ARRAY_SIZE(ksym_names); i++)
		if (!strcmp(func, ksym_names[i]))
			return mod ? (strcmp(mod, "kvm") ? 0 : in_kvm[i]) :
				     in_kernel[i];
	return 0;
}

/*
 * The stand-in's parameters for @target ("kvm_ioctls" or "anon_inodes"):
 * the functions' addresses, so that it need not look their names up
 * (livepatch_standin.c), or only the target if /proc/kallsyms hides them.
 */
static const char *standin_params(const char *target)
{
	static char buf[96];
	int anon = !strcmp(target, "anon_inodes");
	uint64_t a, b;

	if (anon) {
		a = kallsyms_addr("anon_inode_getfile", NULL);
		b = kallsyms_addr("anon_inode_getfile_fmode", NULL);
	} else {
		a = kallsyms_addr("kvm_vm_ioctl", KVM_MOD);
		b = kallsyms_addr("kvm_vcpu_ioctl", KVM_MOD);
	}
	if (!a || (!anon && !b))
		snprintf(buf, sizeof(buf), "target=%s", target);
	else
		snprintf(buf, sizeof(buf), "target=%s ip=0x%" PRIx64 ",0x%" PRIx64,
			 target, a, b);
	return buf;
}

/* The livepatch stand-in, beside kvm_statsfd.ko: 0 if it is there. */
static int standin_path(char *path, size_t len)
{
	const char *ko = ks_module_path(), *slash = strrchr(ko, '/');

	snprintf(path, len, "%.*s/" STANDIN ".ko",
		 slash ? (int)(slash - ko) : 1, slash ? ko : ".");
	return access(path, R_OK);
}

/*
 * Beside a livepatch of KVM's ioctl handlers, here a test module that owns
 * both the way a livepatch does (an ftrace_ops with IPMODIFY on each:
 * tests/rig/livepatch_standin/), loaded before or after the module: where
 * KVM has binary stats the default load lives beside it and serves its
 * stats fds; with cross_process=1 (and before 5.14, where the module
 * brings the ioctl) the module needs those handlers itself, so whichever
 * of the two comes second is refused with EBUSY, and the first works on.
 */
TEST_F(module, beside_a_livepatch)
{
	int native = ks_native_binary_stats();
	char path[512];

	ASSERT_LE(0, native);
	if (standin_path(path, sizeof(path)))
		SKIP(return, "no %s: not built for this lane", path);
	if (ks_module_loaded())
		ASSERT_EQ(0, ks_module_unload());

	/* The livepatch first, then the module. */
	ASSERT_EQ(0, ks_insmod(path, standin_params("kvm_ioctls"))) TH_LOG("loading %s", path);
	if (native) {
		ASSERT_EQ(0, ks_module_load_default(""));
		EXPECT_EQ(1, stats_fd_is_modules());
		EXPECT_EQ(0, ks_module_unload());
	} else {
		EXPECT_EQ(-EBUSY, ks_module_load_default(""));
	}
	EXPECT_EQ(-EBUSY, ks_module_load("cross_process=1"));
	EXPECT_EQ(0, ks_module_loaded());
	ASSERT_EQ(0, unload_module(STANDIN));

	/* The module first, then the livepatch. */
	ASSERT_EQ(0, ks_module_load_default(""));
	EXPECT_EQ(native ? 0 : -EBUSY, ks_insmod(path, standin_params("kvm_ioctls")));
	EXPECT_EQ(1, stats_fd_is_modules());
	unload_module(STANDIN);
	ASSERT_EQ(0, ks_module_unload());
	ASSERT_EQ(0, ks_module_load("cross_process=1"));
	EXPECT_EQ(-EBUSY, ks_insmod(path, standin_params("kvm_ioctls")));
	EXPECT_EQ(1, stats_fd_is_modules());
	EXPECT_EQ(0, ks_module_unload());
}

/*
 * Beside a livepatch of fs/anon_inodes.c (the stand-in with
 * target=anon_inodes), loaded before or after the module.  Where KVM has
 * binary stats the default load owns anon_inode_getfile() with IPMODIFY,
 * as such a livepatch would: whichever of the two comes second is refused
 * with EBUSY, and the first works on; a load with cross_process=1, which
 * hooks KVM's ioctl handlers instead, lives beside the livepatch and
 * serves its stats fds.  Where the module brings the ioctl (before 5.14)
 * it never hooks anon_inodes: both orders live side by side.
 */
TEST_F(module, beside_an_anon_inodes_livepatch)
{
	int native = ks_native_binary_stats();
	char path[512];

	ASSERT_LE(0, native);
	if (standin_path(path, sizeof(path)))
		SKIP(return, "no %s: not built for this lane", path);
	if (ks_module_loaded())
		ASSERT_EQ(0, ks_module_unload());

	/* The livepatch first, then the module. */
	ASSERT_EQ(0, ks_insmod(path, standin_params("anon_inodes")))
		TH_LOG("loading %s", path);
	EXPECT_EQ(native ? -EBUSY : 0, ks_module_load_default(""));
	if (ks_module_loaded()) {
		EXPECT_EQ(1, stats_fd_is_modules());
		EXPECT_EQ(0, ks_module_unload());
	}
	ASSERT_EQ(0, ks_module_load("cross_process=1"));
	EXPECT_EQ(1, stats_fd_is_modules());
	EXPECT_EQ(0, ks_module_unload());
	ASSERT_EQ(0, unload_module(STANDIN));

	/* The module first, then the livepatch. */
	ASSERT_EQ(0, ks_module_load_default(""));
	EXPECT_EQ(native ? -EBUSY : 0, ks_insmod(path, standin_params("anon_inodes")));
	EXPECT_EQ(1, stats_fd_is_modules());
	if (!native)
		EXPECT_EQ(0, unload_module(STANDIN));
	EXPECT_EQ(0, ks_module_unload());
}

/*
 * Read @len bytes of kernel memory at @addr through /proc/kcore (an ELF
 * core whose PT_LOAD segments map kernel text, modules included).
 * 0 or -errno.
 */
static int kcore_read(uint64_t addr, void *buf, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd, i, ret = -ENOENT;

	fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
		close(fd);
		return -EINVAL;
	}
	for (i = 0; i < eh.e_phnum && ret == -ENOENT; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
		    sizeof(ph)) {
			ret = -EIO;
			break;
		}
		if (ph.p_type != PT_LOAD || addr < ph.p_vaddr ||
		    addr + len > ph.p_vaddr + ph.p_filesz)
			continue;
		ret = pread(fd, buf, len, ph.p_offset + (addr - ph.p_vaddr)) ==
		      (ssize_t)len ? 0 : -EIO;
	}
	close(fd);
	return ret;
}

enum fentry_state { FENTRY_UNKNOWN, FENTRY_NOP, FENTRY_CALL };

#if defined(__aarch64__)
/*
 * What sits at the ftrace location of @func: arm64 kernels built with
 * patchable function entries start each traceable function with
 * "mov x9, x30" and the ftrace site, a NOP while nothing traces the
 * function and a BL to ftrace's trampoline while something does (Debian's
 * 6.12: the first instruction; with BTI or CALL_OPS' literal, a word
 * further).  The words go to the test's output.
 */
static enum fentry_state fentry_state(struct __test_metadata *_metadata,
				      const char *func, const char *mod)
{
	static const uint32_t mov_x9_x30 = 0xaa1e03e9, nop = 0xd503201f;
	uint64_t addr = kallsyms_addr(func, mod);
	uint32_t w[4];
	unsigned int i;
	int ret;

	if (!addr) {
		TH_LOG("%s: not in /proc/kallsyms", func);
		return FENTRY_UNKNOWN;
	}
	ret = kcore_read(addr, w, sizeof(w));
	if (ret) {
		TH_LOG("%s: reading /proc/kcore: %s", func, strerror(-ret));
		return FENTRY_UNKNOWN;
	}
	/* stderr, unbuffered, as in the x86 version below. */
	fprintf(stderr, "# %s: %08x %08x %08x %08x\n", func, w[0], w[1], w[2],
		w[3]);
	for (i = 0; i + 1 < ARRAY_SIZE(w); i++) {
		if (w[i] != mov_x9_x30)
			continue;
		if (w[i + 1] == nop)
			return FENTRY_NOP;
		if ((w[i + 1] & 0xfc000000) == 0x94000000)	/* BL */
			return FENTRY_CALL;
	}
	return FENTRY_UNKNOWN;
}
#else
/*
 * What sits at the ftrace location of @func: the 5-byte NOP ftrace keeps
 * there while nothing traces the function, or a CALL (0xe8) to ftrace's
 * trampoline while something does.  The location is the function's first
 * byte, or 4 bytes in, past an ENDBR64 or what an IBT kernel seals it
 * with: whichever of the two holds either instruction (a NOP5 or a CALL
 * cannot start 4 bytes after another).  The bytes go to the test's
 * output, where a sealed ENDBR shows.
 */
static enum fentry_state fentry_state(struct __test_metadata *_metadata,
				      const char *func, const char *mod)
{
	/*
	 * The atomic 5-byte NOPs x86 ftrace writes: P6's, and before 5.13
	 * on AMD CPUs, K8's (seen on 5.10 under QEMU's "max" CPU).
	 */
	static const unsigned char nop5[][5] = {
		{ 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		{ 0x66, 0x66, 0x66, 0x66, 0x90 },
	};
	uint64_t addr = kallsyms_addr(func, mod);
	unsigned char b[9];
	unsigned int off, i;
	int ret;

	if (!addr) {
		TH_LOG("%s: not in /proc/kallsyms", func);
		return FENTRY_UNKNOWN;
	}
	ret = kcore_read(addr, b, sizeof(b));
	if (ret) {
		TH_LOG("%s: reading /proc/kcore: %s", func, strerror(-ret));
		return FENTRY_UNKNOWN;
	}
	/*
	 * stderr, unbuffered: the harness's child leaves by _exit(), and
	 * stdout buffered into a pipe (the Bochs guest's report) is lost.
	 */
	fprintf(stderr, "# %s: %02x %02x %02x %02x %02x %02x %02x %02x %02x\n",
		func, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8]);
	for (off = 0; off <= 4; off += 4) {
		for (i = 0; i < ARRAY_SIZE(nop5); i++)
			if (!memcmp(b + off, nop5[i], sizeof(nop5[i])))
				return FENTRY_NOP;
		if (b[off] == 0xe8)
			return FENTRY_CALL;
	}
	return FENTRY_UNKNOWN;
}
#endif

struct hooked {
	const char *func, *mod;
};

/*
 * The functions a load hooks (hook.c): VM destruction always; where KVM
 * makes its stats files by default, else KVM's ioctl handlers (and its
 * capability check where the module brings the ioctl).  @fmode: whether
 * the kernel has anon_inode_getfile_fmode(), which the module also hooks.
 */
static int hooked_functions(struct hooked *h, int native, int cross, int fmode)
{
	int n = 0;

	h[n++] = (struct hooked){ "kvm_arch_destroy_vm", KVM_MOD };
	if (native && !cross) {
		h[n++] = (struct hooked){ "anon_inode_getfile", NULL };
		if (fmode)
			h[n++] = (struct hooked){ "anon_inode_getfile_fmode",
						  NULL };
		return n;
	}
	h[n++] = (struct hooked){ "kvm_vm_ioctl", KVM_MOD };
	h[n++] = (struct hooked){ "kvm_vcpu_ioctl", KVM_MOD };
	if (!native)
		h[n++] = (struct hooked){ "kvm_vm_ioctl_check_extension",
					  KVM_MOD };
	return n;
}

/*
 * Every function a load hooks is traced, where ftrace says (its
 * enabled_functions) and in its code (ftrace's CALL at its ftrace
 * location, read back from /proc/kcore); after rmmod, each is a NOP
 * again.  The module checks the CALL itself at load (hook.c,
 * ks_ftrace_verify()); this checks from outside, with a control that the
 * reading can tell the two apart.  An IBT kernel on IBT hardware seals
 * ENDBRs (kvm_arch_destroy_vm's on Debian's 6.12), which once made the
 * module hook the wrong address.
 */
TEST_F(module, hooks_live)
{
	static const char *const params[] = { "", "cross_process=1" };
	int native = ks_native_binary_stats();
	int fmode = kallsyms_addr("anon_inode_getfile_fmode", NULL) != 0;
	struct hooked h[5];
	unsigned int p;
	int i, n, kcore;

	ASSERT_LE(0, native);
	if (ks_module_loaded())
		ASSERT_EQ(0, ks_module_unload());
	if (!kallsyms_addr("kvm_arch_destroy_vm", KVM_MOD))
		SKIP(return, "no kernel addresses in /proc/kallsyms");
	/*
	 * Without /proc/kcore (the debug kernel's config leaves it out) the
	 * code cannot be read from here: ftrace's list alone is checked, and
	 * the module's own check at load (ks_ftrace_verify()) stands.
	 */
	kcore = !access("/proc/kcore", R_OK);
	if (!kcore)
		TH_LOG("no /proc/kcore: enabled_functions checked, not the code");
	for (p = 0; p < ARRAY_SIZE(params); p++) {
		n = hooked_functions(h, native, p, fmode);
		ASSERT_EQ(0, ks_module_load_default(params[p]))
			TH_LOG("load with '%s'", params[p]);
		for (i = 0; i < n; i++) {
			EXPECT_EQ(1, ks_traced(h[i].func))
				TH_LOG("%s in enabled_functions, load '%s'",
				       h[i].func, params[p]);
			if (kcore)
				EXPECT_EQ(FENTRY_CALL,
					  fentry_state(_metadata, h[i].func,
						       h[i].mod))
					TH_LOG("%s: ftrace's call, load '%s'",
					       h[i].func, params[p]);
		}
		/* The control: what the default load leaves untraced. */
		if (kcore && native && !p)
			EXPECT_EQ(FENTRY_NOP,
				  fentry_state(_metadata, "kvm_vcpu_ioctl",
					       KVM_MOD));
		ASSERT_EQ(0, ks_module_unload());
		for (i = 0; i < n; i++) {
			EXPECT_EQ(0, ks_traced(h[i].func))
				TH_LOG("%s after rmmod", h[i].func);
			if (kcore)
				EXPECT_EQ(FENTRY_NOP,
					  fentry_state(_metadata, h[i].func,
						       h[i].mod))
					TH_LOG("%s: a NOP again after rmmod",
					       h[i].func);
		}
	}
}

/*
 * A VM's destruction reaches the module: its state, made when its stats
 * fd was opened, is freed when the VM goes (the kvm_arch_destroy_vm hook),
 * and objects/vms is back where it was.  Were the hook silently dead, the
 * state would stay.
 */
TEST_F(module, vm_destruction_reaches_the_module)
{
	long base, during;
	struct ks_vm vm;
	int i, fd;

	ASSERT_EQ(0, ks_module_load_default(""));
	base = ks_objects_wait_le("vms", 0, 10000);
	ASSERT_LE(0, base);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, ks_vm_create(&vm, ks_code_out_hlt,
					  ks_code_out_hlt_len, 1));
		EXPECT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm.vcpu[0]));
		fd = ioctl(vm.fd, KVM_GET_STATS_FD, 0);
		EXPECT_LE(0, fd) TH_LOG("KVM_GET_STATS_FD: %s",
					strerror(errno));
		during = ks_objects_read("vms");
		EXPECT_EQ(base + 1, during) TH_LOG("VM %d's state", i);
		if (fd >= 0)
			close(fd);
		ks_vm_destroy(&vm);
		EXPECT_EQ(base, ks_objects_wait_le("vms", base, 10000))
			TH_LOG("VM %d's state left after its destruction", i);
	}
	EXPECT_EQ(0, ks_module_unload());
}

TEST_HARNESS_MAIN
