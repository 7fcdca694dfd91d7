/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Harness-level helpers for the selftests; include after
 * kselftest_harness.h (they use SKIP, ASSERT and TH_LOG).
 */
#ifndef KS_HARNESS_H
#define KS_HARNESS_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ks_util.h"

/*
 * The harness gives a TEST_F without a timeout of its own 30 s, a bound
 * sized for hardware.  make check runs these tests under TCG, on the debug
 * kernel (KASAN, lockdep) too, with its other guests on the same cores:
 * the debug kernel alone took 17 and 18 s for the VM files' every-offset
 * read sweeps (stats_superset_test, stats_fd_test), and with the other
 * lanes beside it one of them ran out of the 30 s.  300 s still ends a
 * hang long before the guest's own timeout.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

/*
 * KS_CASES="name ..." in the environment runs only the tests so named
 * (every variant of each; a name is TEST's or "fixture.TEST").  make check
 * sets it per lane from tests/vm/manifest ("cases" lines): a lane that can
 * fail only some of a program's cases differently runs those.  The 6.12
 * harness has -t for this; the 6.1 one (make check's) has nothing, hence
 * this filter of the harness's own lists, run just before it walks them.
 */
static inline int ks_case_wanted(const char *want, const char *fixture,
				 const char *test)
{
	size_t fl = strlen(fixture), tl = strlen(test), n;
	const char *w = want;

	while (*w) {
		w += strspn(w, " ");
		n = strcspn(w, " ");
		if ((n == tl && !strncmp(w, test, n)) ||
		    (n == fl + 1 + tl && !strncmp(w, fixture, fl) &&
		     w[fl] == '.' && !strncmp(w + fl + 1, test, tl)))
			return 1;
		w += n;
	}
	return 0;
}

static inline void ks_select_cases(void)
{
	struct __test_metadata *t, *next, *head, *tail;
	const char *want = getenv("KS_CASES");
	struct __fixture_metadata *f;

	if (!want || !*want)
		return;
	for (f = __fixture_list; f; f = f->next) {
		head = NULL;
		tail = NULL;
		for (t = f->tests; t; t = next) {
			next = t->next;
			if (!ks_case_wanted(want, f->name, t->name))
				continue;
			/* The harness's list: next ends in NULL, head->prev is the tail. */
			t->next = NULL;
			t->prev = tail;
			if (tail)
				tail->next = t;
			else
				head = t;
			tail = t;
		}
		if (head)
			head->prev = tail;
		f->tests = head;
	}
}

/* TEST_HARNESS_MAIN's call, expanded after this: filter, then run. */
#define test_harness_run(argc, argv) \
	(ks_select_cases(), test_harness_run(argc, argv))

/*
 * In a FIXTURE_SETUP: skip without a usable /dev/kvm, remember in @mod
 * whether kvm_statsfd was loaded (the teardown restores that) and make
 * sure it is loaded in @mode ("superset" or "own"; NULL: the fixture loads
 * it as it needs).
 */
#define KS_SETUP_MODULE(mod, mode) do {					\
	int __ks_ret;							\
									\
	if (access("/dev/kvm", R_OK | W_OK))				\
		SKIP(return, "/dev/kvm is not usable: %s",		\
		     strerror(errno));					\
	ks_module_save(mod);						\
	__ks_ret = (mode) ? ks_module_ensure(mode) : 0;			\
	ASSERT_EQ(0, __ks_ret) TH_LOG("loading %s mode=%s: %s",	\
				      ks_module_path(), (mode),		\
				      strerror(-__ks_ret));		\
} while (0)

/*
 * In a FIXTURE_TEARDOWN, last: close every fd the test left open (none may
 * keep a reference) and put the module back as KS_SETUP_MODULE found it.
 */
#define KS_TEARDOWN_MODULE(mod) do {					\
	int __ks_ret;							\
									\
	ks_close_from(3);						\
	__ks_ret = ks_module_restore(mod);				\
	EXPECT_EQ(0, __ks_ret) TH_LOG("restoring the module: %s",	\
				      strerror(-__ks_ret));		\
} while (0)

/*
 * What a test must leave as it found it: the module's live VM and vCPU
 * states and open stats files (/sys/kernel/debug/kvm_statsfd), and the
 * process's open fds.
 */
struct ks_baseline {
	long vms, vcpus, files;
	int fds;
};

/*
 * In a FIXTURE_SETUP: take the baseline once the states of VMs destroyed
 * before are freed, waiting up to @wait_ms for that (KVM's destruction,
 * an RCU grace period and a work item).
 */
#define KS_BASELINE_TAKE(b, wait_ms) do {				\
	(b)->vms = ks_objects_wait_le("vms", 0, (wait_ms));		\
	(b)->vcpus = ks_objects_wait_le("vcpus", 0, (wait_ms));		\
	(b)->files = ks_objects_read("files");				\
	(b)->fds = ks_count_fds();					\
	ASSERT_LE(0, (b)->vms);						\
	ASSERT_LE(0, (b)->vcpus);					\
	ASSERT_LE(0, (b)->files);					\
	ASSERT_LT(0, (b)->fds);						\
} while (0)

/*
 * At the end of a test: every fd it opened is closed, no stats file is
 * open, and the VM and vCPU states are freed again (polled, @wait_ms).
 */
#define KS_BASELINE_CHECK(b, wait_ms) do {				\
	EXPECT_EQ((b)->fds, ks_count_fds()) TH_LOG("fds left open");	\
	EXPECT_EQ((b)->files, ks_objects_read("files"));		\
	EXPECT_EQ((b)->vms,						\
		  ks_objects_wait_le("vms", (b)->vms, (wait_ms)));	\
	EXPECT_EQ((b)->vcpus,						\
		  ks_objects_wait_le("vcpus", (b)->vcpus, (wait_ms)));	\
} while (0)

#endif /* KS_HARNESS_H */
