/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The watch command's parts: the set of VMs watched and their previous
 * samples (watch.c), the filters, and the three ways of showing them:
 * plain frames (watch_frames.c), a log (watch_log.c) and the ncurses
 * view (watch_top.c, watch_input.c), the last two on the event table of
 * events.c.
 */
#ifndef KVMSTATSFD_WATCH_H
#define KVMSTATSFD_WATCH_H

#include <regex.h>
#include <signal.h>

#include "cmd.h"
#include "kvmstats.h"

/* Previous sample of one stats file. */
struct sample {
	struct kvmstats *st;
	uint64_t *prev;		/* the data block as last saved */
	int *evmap;		/* event of each descriptor (events.c) */
};

struct wvm {
	struct kvmstats_vm *p;
	struct sample vm;
	struct sample *vcpu;	/* parallel to p->vcpus */
	int gone;
	double score;		/* frames' sort key: exits/s or counters/s */
};

struct watch {
	struct wvm *w;
	int n;
	struct kvmstats_vm **extra;	/* VMs found after the start */
	int nr_extra;
	const struct opts *o;
	/*
	 * Keep VMs the guest filter does not match: the ncurses view can
	 * change that filter, so it needs them all.
	 */
	int keep_all;
};

/*
 * What is shown: -f and -g from the command line, changed by the
 * ncurses view's f, g, p and c keys.
 */
struct wfilter {
	regex_t stat_re, guest_re;
	int have_stat, have_guest;
	char stat_pat[256], guest_pat[256];
	pid_t pid;		/* p: only this VMM; 0: all */
};

/* Set by SIGINT and SIGTERM: every mode ends, with status 0. */
extern volatile sig_atomic_t watch_stop;
/* Set by SIGHUP in log-to-file mode: reopen the file. */
extern volatile sig_atomic_t watch_hup;

/*
 * Compile pat as the stat (which 's') or guest ('g') filter; an empty
 * pat clears it.  On a bad pattern the filter is unchanged and err says
 * why; returns -1.
 */
int wf_set(struct wfilter *f, int which, const char *pat, char *err,
	   size_t len);
void wf_clear(struct wfilter *f);
int wf_stat(const struct wfilter *f, const char *name);
/* The guest filter matches the guest name, the process name or the pid. */
int wf_vm(const struct wfilter *f, const struct kvmstats_vm *p);

double watch_now(void);
/* Re-read every stats file; drop VMs whose process exited. */
void watch_refresh(struct watch *ws);
/* The values just read become the previous sample. */
void watch_save(struct watch *ws);
/* New VMs join the watch, as kvm_stat's do. */
void watch_pick_up(struct watch *ws, const struct wfilter *f);
/* True when the one VM (PID or --file) being watched is gone. */
int watch_over(const struct watch *ws);

int watch_frames(struct watch *ws, struct wfilter *f);
int watch_log(struct watch *ws, struct wfilter *f);
/* 0, EXIT_RUNTIME, or -1 when the terminal cannot be used by ncurses. */
int watch_top(struct watch *ws, struct wfilter *f);

#endif
