// SPDX-License-Identifier: GPL-2.0
/*
 * kvm_statsfd.ko loads, shows up live in sysfs, refuses a second load and
 * unloads cleanly, several times over.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

TEST_HARNESS_MAIN
