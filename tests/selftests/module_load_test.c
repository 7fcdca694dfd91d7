// SPDX-License-Identifier: GPL-2.0
/*
 * kvm_statsfd.ko loads, shows up live in sysfs, refuses a second load and
 * unloads cleanly, several times over.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ks_util.h"

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

FIXTURE_TEARDOWN(module)
{
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

static int load_module_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, "", 0) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int unload_module(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) < 0 ? -errno : 0;
}

/*
 * Without kvm.ko the module must refuse to load, cleanly.  This unloads
 * KVM, so it runs only where that is harmless: the test guest sets
 * KS_KVM_MODULES to the directory holding kvm.ko and kvm_amd.ko.
 */
TEST_F(module, refused_without_kvm)
{
	const char *dir = getenv("KS_KVM_MODULES");
	char path[256];

	if (!dir)
		SKIP(return, "KS_KVM_MODULES not set: will not unload KVM here");
	ASSERT_EQ(0, unload_module("kvm_amd"));
	ASSERT_EQ(0, unload_module("kvm"));
	EXPECT_EQ(-ENOENT, ks_module_load(""));
	EXPECT_EQ(0, ks_module_loaded());

	snprintf(path, sizeof(path), "%s/kvm.ko", dir);
	ASSERT_EQ(0, load_module_file(path));
	snprintf(path, sizeof(path), "%s/kvm_amd.ko", dir);
	ASSERT_EQ(0, load_module_file(path));
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

TEST_HARNESS_MAIN
