/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The parts of watch's ncurses view: drawing and the keys' effects
 * (watch_top.c), waiting for keys, the prompts and the help screen
 * (watch_input.c).
 */
#ifndef KVMSTATSFD_WATCH_TOP_H
#define KVMSTATSFD_WATCH_TOP_H

#include <signal.h>

#include "events.h"

struct row {
	const struct ev *v;
	const struct ev_kid *k;	/* NULL: the event itself */
	uint64_t total;
	double rate;
	int sub;		/* kids: bucket index or pid/vCPU order */
	int first, nr_kids;	/* events: where their kids' rows are */
};

struct top {
	struct watch *ws;
	struct wfilter *f;
	struct events e;
	double interval;
	double dt;		/* the last interval; 0 before the first */
	int by_total;		/* o: sort by Total only */
	int vms;		/* VMs shown */
	const struct kvmstats_vm *one;	/* the VM, when only one is shown */
	struct row *rows;	/* the events', then each one's kids */
	int nr_rows, cap_rows, nr_events;
	sigset_t waitmask;	/* the mask SIGINT and SIGTERM arrive in */
};

/* s cut to the screen's width (one column a character) at row y. */
void top_put(int y, int attr, const char *s);

/*
 * Wait for input until the monotonic time `until` (0: no limit).  1: a
 * key or a resize may be waiting, 0: time is up, -1: SIGINT, SIGTERM or
 * an error.
 */
int top_wait_input(const struct top *t, double until);
/* The keys' help, until a key is pressed. */
void top_help(struct top *t);
/*
 * The prompts of f and g (which: 's' events, 'g' guests), p and s.
 * 1: set, 0: Escape (unchanged), -1: SIGINT/SIGTERM.
 */
int top_ask_regex(struct top *t, int which);
int top_ask_pid(struct top *t);
int top_ask_interval(struct top *t);

#endif
