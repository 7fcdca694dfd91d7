// SPDX-License-Identifier: GPL-2.0
/*
 * kvm_statsfd.ko loads, shows up live in sysfs, refuses a second load and
 * unloads cleanly, several times over; and it traces only the kernel
 * functions it says it does (kvm_ioctls_untraced), so that it lives beside
 * a livepatch of KVM's ioctl handlers (beside_a_livepatch).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ks_harness.h"
#include "ks_util.h"
#include "kvmstats.h"

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

TEST_F(module, load_unload_loop)
{
	int i;

	for (i = 0; i < 20; i++) {
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
	static const unsigned char hlt[] = { 0xf4 };
	struct ks_exit_codes ec;
	struct kvmstats s;
	struct ks_vm vm;
	int fd, ret;

	ks_host_exit_codes(&ec);
	ret = ks_vm_create(&vm, hlt, sizeof(hlt), 1);
	if (ret)
		return ret;
	fd = ioctl(vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	ret = fd < 0 ? -errno : kvmstats_open(&s, fd);
	if (!ret) {
		ret = kvmstats_find(&s, ec.stat) != NULL;
		kvmstats_close(&s);	/* closes fd */
	} else if (fd >= 0) {
		close(fd);		/* not taken on failure */
	}
	ks_vm_destroy(&vm);
	return ret;
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
	char path[512];
	const char *ko = ks_module_path(), *slash = strrchr(ko, '/');
	int native = ks_native_binary_stats();

	ASSERT_LE(0, native);
	snprintf(path, sizeof(path), "%.*s/" STANDIN ".ko",
		 slash ? (int)(slash - ko) : 1, slash ? ko : ".");
	if (access(path, R_OK))
		SKIP(return, "no %s: not built for this lane", path);
	if (ks_module_loaded())
		ASSERT_EQ(0, ks_module_unload());

	/* The livepatch first, then the module. */
	ASSERT_EQ(0, ks_insmod(path, "")) TH_LOG("loading %s", path);
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
	EXPECT_EQ(native ? 0 : -EBUSY, ks_insmod(path, ""));
	EXPECT_EQ(1, stats_fd_is_modules());
	unload_module(STANDIN);
	ASSERT_EQ(0, ks_module_unload());
	ASSERT_EQ(0, ks_module_load("cross_process=1"));
	EXPECT_EQ(-EBUSY, ks_insmod(path, ""));
	EXPECT_EQ(1, stats_fd_is_modules());
	EXPECT_EQ(0, ks_module_unload());
}

TEST_HARNESS_MAIN
