/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The event table of watch's log and ncurses view, kvm_stat's model:
 * one event per cumulative stat or histogram name, summed over the VMs
 * the filter lets through and their vCPUs, with its value now and its
 * growth over the last interval; with drilldown, child events per vCPU
 * (of a counter) or per bucket (of a histogram).
 */
#ifndef KVMSTATSFD_EVENTS_H
#define KVMSTATSFD_EVENTS_H

#include <stdint.h>

#include "watch.h"

/* A child event: a vCPU's share of a counter, or a histogram's bucket. */
struct ev_kid {
	pid_t pid;		/* per vCPU: the VMM */
	int idx;		/* the vCPU's id, or the bucket */
	uint64_t now, delta, acc;
};

struct ev {
	char *name;
	/* A copy of the first descriptor seen, for units and bucket names. */
	struct kvmstats_desc d;
	int hist;		/* the value is the sum of the buckets */
	uint64_t now;		/* the cumulative value now */
	uint64_t delta;		/* growth over the last interval */
	uint64_t acc;		/* growth since the last reset */
	struct ev_kid *kid;	/* histograms: one per bucket, by index */
	int nr_kid;
	unsigned int stamp;	/* the last VM whose vCPUs have it */
};

struct events {
	struct ev *ev;
	int n, cap;
	int drill;		/* collect child events */
	int reset;		/* "Total" is the growth since the reset */
	unsigned int stamp;
};

/*
 * Sum the samples watch_refresh() just read, against the previous ones,
 * over the VMs f lets through.  A stat that a VM's file serves and its
 * vCPUs' files have too (the module's own, summed) is counted once,
 * from the vCPUs.  Call watch_save() afterwards.
 */
void ev_sample(struct events *e, struct watch *ws, const struct wfilter *f);
/* From now on, "Total" counts from zero. */
void ev_reset(struct events *e);
void ev_free(struct events *e);

static inline uint64_t ev_total(const struct events *e, const struct ev *v)
{
	return e->reset ? v->acc : v->now;
}

static inline uint64_t ev_kid_total(const struct events *e,
				    const struct ev_kid *k)
{
	return e->reset ? k->acc : k->now;
}

#endif
