// SPDX-License-Identifier: GPL-2.0
/*
 * The watch command: finds the VMs (or the --file stats file), keeps
 * their previous samples, and hands them to one of three modes: the
 * ncurses view on a terminal (watch_top.c), a log of per-interval deltas
 * (-l, -L, --csv: watch_log.c) or plain frames (-b, or no terminal:
 * watch_frames.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "watch.h"

volatile sig_atomic_t watch_stop;
volatile sig_atomic_t watch_hup;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		watch_hup = 1;
	else
		watch_stop = 1;
}

double watch_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int wf_set(struct wfilter *f, int which, const char *pat, char *err,
	   size_t len)
{
	regex_t *re = which == 's' ? &f->stat_re : &f->guest_re;
	int *have = which == 's' ? &f->have_stat : &f->have_guest;
	char *saved = which == 's' ? f->stat_pat : f->guest_pat;
	regex_t fresh;
	int ret;

	if (!*pat) {
		if (*have)
			regfree(re);
		*have = 0;
		*saved = '\0';
		return 0;
	}
	if (strlen(pat) >= sizeof(f->stat_pat)) {
		snprintf(err, len, "longer than %zu characters",
			 sizeof(f->stat_pat) - 1);
		return -1;
	}
	ret = regcomp(&fresh, pat, REG_EXTENDED | REG_NOSUB);
	if (ret) {
		regerror(ret, &fresh, err, len);
		return -1;
	}
	if (*have)
		regfree(re);
	*re = fresh;
	*have = 1;
	strcpy(saved, pat);
	return 0;
}

void wf_clear(struct wfilter *f)
{
	wf_set(f, 's', "", NULL, 0);
	wf_set(f, 'g', "", NULL, 0);
	f->pid = 0;
}

int wf_stat(const struct wfilter *f, const char *name)
{
	return !f->have_stat || !regexec(&f->stat_re, name, 0, NULL, 0);
}

int wf_vm(const struct wfilter *f, const struct kvmstats_vm *p)
{
	char pid[16];

	if (f->pid && p->pid != f->pid)
		return 0;
	if (!f->have_guest)
		return 1;
	snprintf(pid, sizeof(pid), "%d", (int)p->pid);
	return (p->guest && !regexec(&f->guest_re, p->guest, 0, NULL, 0)) ||
	       !regexec(&f->guest_re, p->comm, 0, NULL, 0) ||
	       !regexec(&f->guest_re, pid, 0, NULL, 0);
}

static void sample_init(struct sample *sm, struct kvmstats *st)
{
	size_t size = kvmstats_data_size(st);

	sm->st = st;
	sm->prev = malloc(size ? size : 8);
	if (sm->prev)
		memcpy(sm->prev, kvmstats_data(st), size);
}

static void sample_save(struct sample *sm)
{
	if (sm->prev)
		memcpy(sm->prev, kvmstats_data(sm->st),
		       kvmstats_data_size(sm->st));
}

static void refresh_vm(struct wvm *w)
{
	struct kvmstats_vm *p = w->p;
	int k;

	if (w->gone)
		return;
	if (kvmstats_vm_exited(p)) {
		/* Release our VM references as soon as the VMM is gone. */
		kvmstats_vm_close(p);
		w->gone = 1;
		return;
	}
	/* A stats fd that stops reading is dropped, not retried. */
	if (p->vm_open && kvmstats_refresh(p->vm)) {
		kvmstats_free(p->vm);
		p->vm = NULL;
		p->vm_open = 0;
	}
	for (k = 0; k < p->nr_vcpus; k++) {
		if (p->vcpus[k].open && kvmstats_refresh(p->vcpus[k].st)) {
			kvmstats_free(p->vcpus[k].st);
			p->vcpus[k].st = NULL;
			p->vcpus[k].open = 0;
		}
	}
}

void watch_refresh(struct watch *ws)
{
	int i;

	for (i = 0; i < ws->n; i++)
		refresh_vm(&ws->w[i]);
}

void watch_save(struct watch *ws)
{
	struct wvm *w;
	int i, k;

	for (i = 0; i < ws->n; i++) {
		w = &ws->w[i];
		if (w->gone)
			continue;
		if (w->p->vm_open)
			sample_save(&w->vm);
		for (k = 0; k < w->p->nr_vcpus; k++)
			if (w->p->vcpus[k].open)
				sample_save(&w->vcpu[k]);
	}
}

int watch_over(const struct watch *ws)
{
	int i;

	if (!ws->o->file && !ws->o->pid)
		return 0;
	for (i = 0; i < ws->n; i++)
		if (!ws->w[i].gone)
			return 0;
	return 1;
}

static int setup(struct wvm *w, struct kvmstats_vm *p)
{
	int k;

	memset(w, 0, sizeof(*w));
	w->p = p;
	w->vcpu = calloc(p->nr_vcpus ? p->nr_vcpus : 1, sizeof(*w->vcpu));
	if (!w->vcpu)
		return -ENOMEM;
	if (p->vm_open)
		sample_init(&w->vm, p->vm);
	for (k = 0; k < p->nr_vcpus; k++)
		if (p->vcpus[k].open)
			sample_init(&w->vcpu[k], p->vcpus[k].st);
	return 0;
}

static void teardown(struct wvm *w)
{
	int k;

	free(w->vm.prev);
	free(w->vm.evmap);
	for (k = 0; k < w->p->nr_vcpus; k++) {
		free(w->vcpu[k].prev);
		free(w->vcpu[k].evmap);
	}
	free(w->vcpu);
}

static int known(const struct watch *ws, pid_t pid)
{
	int i;

	for (i = 0; i < ws->n; i++)
		if (ws->w[i].p->pid == pid && !ws->w[i].gone)
			return 1;
	return 0;
}

void watch_pick_up(struct watch *ws, const struct wfilter *f)
{
	struct kvmstats_vm *fresh, *np, **ne;
	struct wvm *nw;
	int i, n;

	if (ws->o->file)
		return;
	n = kvmstats_discover(&fresh, ws->o->pid, NULL);
	if (n <= 0)
		return;
	for (i = 0; i < n; i++) {
		if (known(ws, fresh[i].pid) ||
		    (!ws->keep_all && !wf_vm(f, &fresh[i])))
			continue;
		np = malloc(sizeof(*np));
		nw = realloc(ws->w, (ws->n + 1) * sizeof(*nw));
		if (nw)
			ws->w = nw;
		ne = realloc(ws->extra, (ws->nr_extra + 1) * sizeof(*ne));
		if (ne)
			ws->extra = ne;
		if (!np || !nw || !ne) {
			free(np);
			break;
		}
		*np = fresh[i];
		/* Moved to np: not freed with fresh. */
		fresh[i].vcpus = NULL;
		fresh[i].nr_vcpus = 0;
		fresh[i].guest = NULL;
		fresh[i].pidfd = -1;
		ws->extra[ws->nr_extra++] = np;
		kvmstats_vm_open(np, -1);
		if (setup(&ws->w[ws->n], np))
			break;
		ws->n++;
	}
	kvmstats_vms_free(fresh, n);
}

static int any_open(const struct kvmstats_vm *p)
{
	int k;

	for (k = 0; k < p->nr_vcpus; k++)
		if (p->vcpus[k].open)
			return 1;
	return p->vm_open;
}

/*
 * watch --file: a stats file (e.g. a live copy someone keeps rewriting)
 * watched as vCPU 0 of a pseudo VM with pid 0, for testing without KVM.
 */
static int file_vm(const struct opts *o, struct kvmstats_vm **out)
{
	struct kvmstats_vm *p = calloc(1, sizeof(*p));
	int fd;

	if (p)
		p->vcpus = calloc(1, sizeof(*p->vcpus));
	if (!p || !p->vcpus) {
		free(p);
		fprintf(stderr, "kvm-statsfd: out of memory\n");
		return -1;
	}
	*out = p;
	p->pidfd = -1;
	p->nr_vcpus = 1;
	snprintf(p->comm, sizeof(p->comm), "(file)");
	fd = open(o->file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "kvm-statsfd: %s: %s\n", o->file, strerror(errno));
		return 1;
	}
	p->vcpus[0].st = kvmstats_new();
	if (!p->vcpus[0].st) {
		fprintf(stderr, "kvm-statsfd: out of memory\n");
		close(fd);
		return 1;
	}
	if (kvmstats_open(p->vcpus[0].st, fd)) {
		fprintf(stderr, "kvm-statsfd: %s: %s\n", o->file,
			kvmstats_errmsg(p->vcpus[0].st));
		close(fd);
		return 1;
	}
	p->vcpus[0].open = 1;
	return 1;
}

/* The ncurses view needs a terminal on both sides that can address. */
static int interactive(const struct opts *o)
{
	const char *term = getenv("TERM");

	return !o->batch && !o->log && !o->log_file &&
	       isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) &&
	       term && *term && strcmp(term, "dumb");
}

static int run(struct watch *ws, struct wfilter *f)
{
	int rc;

	if (ws->o->log || ws->o->log_file)
		return watch_log(ws, f);
	if (ws->keep_all) {
		rc = watch_top(ws, f);
		if (rc >= 0)
			return rc;
		fprintf(stderr, "kvm-statsfd: TERM=%s unknown to ncurses: plain frames instead\n",
			getenv("TERM"));
	}
	return watch_frames(ws, f);
}

/* Filters from -f and -g; a bad pattern is a usage error. */
static int filters(const struct opts *o, struct wfilter *f)
{
	char err[128];

	if (o->stat_filter && wf_set(f, 's', o->stat_filter, err, sizeof(err))) {
		fprintf(stderr, "kvm-statsfd: -f '%s': %s\n", o->stat_filter, err);
		return -1;
	}
	if (o->guest_filter &&
	    wf_set(f, 'g', o->guest_filter, err, sizeof(err))) {
		fprintf(stderr, "kvm-statsfd: -g '%s': %s\n", o->guest_filter, err);
		return -1;
	}
	return 0;
}

int cmd_watch(const struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int i, n, ready = 0, opened = 0, wanted = 0, rc = EXIT_RUNTIME;
	struct watch ws = { .o = o, .keep_all = interactive(o) };
	struct wfilter f = { 0 };
	struct kvmstats_vm *vms;

	if (filters(o, &f)) {
		wf_clear(&f);
		return EXIT_USAGE;
	}
	n = o->file ? file_vm(o, &vms) : find_vms(o, &vms);
	if (n < 0) {
		wf_clear(&f);
		return EXIT_RUNTIME;
	}
	ws.w = calloc(n ? n : 1, sizeof(*ws.w));
	for (; ws.w && ready < n; ready++) {
		int want = wf_vm(&f, &vms[ready]);

		wanted += want;
		if (!want && !ws.keep_all) {
			vms[ready].pid = -1;	/* not shown; freed below */
			continue;
		}
		if (!o->file && kvmstats_vm_open(&vms[ready], -1))
			fprintf(stderr, "kvm-statsfd: %s\n", vms[ready].err);
		else if (!o->file && want)
			note_vm_unavailable(&vms[ready]);
		opened += any_open(&vms[ready]);
		if (setup(&ws.w[ws.n], &vms[ready]))
			break;
		ws.n++;
	}
	if (ready < n)
		fprintf(stderr, "kvm-statsfd: out of memory\n");
	else if (n && !wanted)
		fprintf(stderr, "kvm-statsfd: no VM matches -g '%s'\n", o->guest_filter);
	else if (ws.n && !opened)
		fprintf(stderr, "kvm-statsfd: no statistics could be opened\n");
	if (ready == n && (n ? wanted && opened : !o->file)) {
		/* No VM yet is fine: the view waits for them, as kvm_stat does. */
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		if (o->log_file)
			sigaction(SIGHUP, &sa, NULL);
		rc = run(&ws, &f);
	}
	for (i = 0; i < ws.n; i++)
		teardown(&ws.w[i]);
	free(ws.w);
	for (i = 0; i < ws.nr_extra; i++)
		kvmstats_vms_free(ws.extra[i], 1);
	free(ws.extra);
	kvmstats_vms_free(vms, n);
	wf_clear(&f);
	return rc;
}
