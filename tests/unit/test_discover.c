// SPDX-License-Identifier: GPL-2.0
/*
 * kvmstats_discover_again(): incremental discovery, on this host's real
 * /proc, with children of our own that hold many fds and no KVM fd (no
 * KVM here: what is tested is which processes a call looks into).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "kvmstats.h"
#include "procs.h"
#include "tap.h"
#include "tests.h"

#define CHILDREN	24
#define FDS		64

/* One call; what it looked into and skipped; its VMs freed. */
static int call(struct kvmstats_scan *sc, unsigned int *looked,
		unsigned int *skipped)
{
	struct kvmstats_vm *vms;
	unsigned int denied;
	int n = kvmstats_discover_again(sc, &vms, &denied);

	if (n >= 0)
		kvmstats_vms_free(vms, n);
	kvmstats_scan_counts(sc, looked, skipped);
	return n;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

void test_discover_again(void)
{
	unsigned int l1, s1, l2, s2, l3, s3, l4, s4;
	struct kvmstats_scan *sc, *none;
	pid_t kids[CHILDREN], late;
	int i, n;

	ok(kvmstats_discover_again(NULL, NULL, NULL) == -EINVAL,
	   "discover_again: no scan state is -EINVAL");
	kvmstats_scan_counts(NULL, &l1, &s1);
	ok(l1 == 0 && s1 == 0, "scan_counts of no state: 0, 0");
	kvmstats_scan_free(NULL);

	for (i = 0; i < CHILDREN; i++)
		kids[i] = procs_spawn(FDS);
	sc = kvmstats_scan_new(60000);
	none = kvmstats_scan_new(0);
	if (!ok(sc && none, "scan_new")) {
		for (i = 0; i < CHILDREN; i++)
			procs_reap(kids[i]);
		kvmstats_scan_free(sc);
		kvmstats_scan_free(none);
		return;
	}
	n = call(sc, &l1, &s1);
	ok(n >= 0 && l1 >= CHILDREN && s1 == 0,
	   "first call looks into every process (%u, %d children), skips none (%u)",
	   l1, CHILDREN, s1);
	n = call(sc, &l2, &s2);
	ok(n >= 0 && s2 >= CHILDREN && l2 < s2,
	   "second call skips the processes seen without KVM fds (%u skipped, %u looked into)",
	   s2, l2);

	/* A new process is looked into by the next call, the rest not. */
	late = procs_spawn(FDS);
	n = call(sc, &l3, &s3);
	/* (Other processes may come and go on this host meanwhile.) */
	ok(n >= 0 && late > 0 && l3 >= 1 && s3 >= CHILDREN,
	   "a new process is looked into at once, the others skipped (%u looked into, %u skipped)",
	   l3, s3);

	/* Gone processes are forgotten: nothing more is skipped for them. */
	for (i = 0; i < CHILDREN / 2; i++) {
		procs_reap(kids[i]);
		kids[i] = 0;
	}
	n = call(sc, &l4, &s4);
	ok(n >= 0 && s4 > 0 && s4 + CHILDREN / 2 <= s3 + l3,
	   "exited processes are no longer counted (%u skipped, was %u)",
	   s4, s3);

	/* recheck_ms 0: no memory, every process every time. */
	call(none, &l1, &s1);
	call(none, &l2, &s2);
	ok(s1 == 0 && s2 == 0 && l2 >= CHILDREN / 2,
	   "recheck 0: every call looks into everything (%u, %u)", l1, l2);
	kvmstats_scan_free(none);
	kvmstats_scan_free(sc);

	/*
	 * Once recheck_ms has passed, each is looked into again.  3 s: the
	 * second call must come within half of it of the first, which
	 * under ASan, qemu-user and make check's load took over 100 ms.
	 */
	sc = kvmstats_scan_new(3000);
	call(sc, &l1, &s1);
	call(sc, &l2, &s2);
	sleep_ms(3100);
	call(sc, &l3, &s3);
	ok(sc && s2 >= CHILDREN / 2 && s3 == 0 && l3 >= CHILDREN / 2,
	   "after recheck_ms (3000), every process is looked into again (%u skipped before, %u after)",
	   s2, s3);
	kvmstats_scan_free(sc);

	for (i = 0; i < CHILDREN; i++)
		procs_reap(kids[i]);
	procs_reap(late);
}
