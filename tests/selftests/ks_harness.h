/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Harness-level helpers for the selftests; include after
 * kselftest_harness.h (they use SKIP, ASSERT and TH_LOG).
 */
#ifndef KS_HARNESS_H
#define KS_HARNESS_H

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ks_util.h"

/*
 * In a FIXTURE_SETUP: skip without a usable /dev/kvm, remember in @mod
 * whether kvm_statsfd was loaded (the teardown restores that) and make
 * sure it is loaded in @mode ("superset" or "own").
 */
#define KS_SETUP_MODULE(mod, mode) do {					\
	int __ks_ret;							\
									\
	if (access("/dev/kvm", R_OK | W_OK))				\
		SKIP(return, "/dev/kvm is not usable: %s",		\
		     strerror(errno));					\
	ks_module_save(mod);						\
	__ks_ret = ks_module_ensure(mode);				\
	ASSERT_EQ(0, __ks_ret) TH_LOG("loading %s mode=%s: %s",	\
				      ks_module_path(), (mode),		\
				      strerror(-__ks_ret));		\
} while (0)

#endif /* KS_HARNESS_H */
