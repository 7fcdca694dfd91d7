// SPDX-License-Identifier: GPL-2.0
/*
 * The watch command: per-second rates of cumulative stats, per VM (VM
 * stats plus the sum over its vCPUs) and per vCPU, sorted by rate.
 * Histogram buckets are cumulative counts too; for exit-reason histograms
 * (stats named exit_reason*) the per-bucket rates are shown by reason name
 * (exit_reasons_svm/_vmx, see kvmstats_exit_reason_name()) or, for other
 * such histograms, by bucket index.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "kvmstats.h"
#include "output.h"

#define TOP_COUNTERS	8
#define TOP_OTHER	4
#define TOP_VCPU	3
#define MAX_REASONS	16

struct rate {
	const struct kvmstats_desc *d;	/* first desc seen with this name */
	double per_sec;
};

struct rates {
	struct rate *r;
	int n, cap;
};

/* Previous sample of one stats file. */
struct sample {
	struct kvmstats *st;
	uint64_t *prev;
};

struct wvm {
	struct kvmstats_vm *p;
	struct sample vm;
	struct sample *vcpu;	/* parallel to p->vcpus */
	int gone;
	double score;		/* sort key: exits/s or all counters/s */
};

static volatile sig_atomic_t stop;

/* A frame is written here first, then to stdout cut to the terminal. */
static FILE *wout;
/* -f: only stats whose name matches; -g: only VMs whose name matches. */
static regex_t stat_re, guest_re;
static int have_stat_re, have_guest_re;

static int stat_wanted(const struct kvmstats_desc *d)
{
	return !have_stat_re || !regexec(&stat_re, d->name, 0, NULL, 0);
}

/* -g matches the guest name (QEMU -name), the process name or the pid. */
static int vm_wanted(const struct kvmstats_vm *p)
{
	char pid[16];

	if (!have_guest_re)
		return 1;
	snprintf(pid, sizeof(pid), "%d", (int)p->pid);
	return (p->guest && !regexec(&guest_re, p->guest, 0, NULL, 0)) ||
	       !regexec(&guest_re, p->comm, 0, NULL, 0) ||
	       !regexec(&guest_re, pid, 0, NULL, 0);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sample_init(struct sample *sm, struct kvmstats *st)
{
	sm->st = st;
	sm->prev = malloc(kvmstats_data_size(st) ? kvmstats_data_size(st) : 8);
	if (sm->prev)
		memcpy(sm->prev, kvmstats_data(st), kvmstats_data_size(st));
}

static void rate_add(struct rates *rs, const struct kvmstats_desc *d,
		     double v)
{
	struct rate *r;
	int i;

	for (i = 0; i < rs->n; i++) {
		if (!strcmp(rs->r[i].d->name, d->name)) {
			rs->r[i].per_sec += v;
			return;
		}
	}
	if (rs->n == rs->cap) {
		r = realloc(rs->r, (rs->cap * 2 + 16) * sizeof(*r));
		if (!r)
			return;		/* drop the stat rather than fail */
		rs->r = r;
		rs->cap = rs->cap * 2 + 16;
	}
	rs->r[rs->n++] = (struct rate){ d, v };
}

static double delta(const struct sample *sm, const struct kvmstats_desc *d,
		    unsigned int i, double dt)
{
	uint64_t cur = kvmstats_value(sm->st, d, i);
	uint64_t old = sm->prev[d->offset / 8 + i];

	return cur >= old ? (cur - old) / dt : 0;
}

static int is_reason_hist(const struct kvmstats_desc *d)
{
	return kvmstats_is_hist(d) && !strncmp(d->name, "exit_reason", 11);
}

static int has_rate(const struct rates *rs, const char *name)
{
	int i;

	for (i = 0; i < rs->n; i++)
		if (!strcmp(rs->r[i].d->name, name))
			return 1;
	return 0;
}

/*
 * Rates of one stats file: cumulative values and exit-reason buckets.
 * only_new: skip stats already in out.  The VM's file is collected after
 * its vCPUs' with only_new set, because a stat that both have (the
 * module's own stats, which the VM file serves summed over the vCPUs)
 * would otherwise be counted twice.
 */
static void collect(const struct sample *sm, double dt, struct rates *out,
		    double *reasons, unsigned int nb, int only_new)
{
	const struct kvmstats *s = sm->st;
	unsigned int i, b;

	for (i = 0; i < kvmstats_num_desc(s); i++) {
		const struct kvmstats_desc *d = kvmstats_desc_at(s, i);

		if ((only_new && has_rate(out, d->name)) || !stat_wanted(d))
			continue;
		if (d->type == KVM_STATS_TYPE_CUMULATIVE)
			rate_add(out, d, delta(sm, d, 0, dt));
		if (!is_reason_hist(d) || !reasons)
			continue;
		/* reasons[b] accumulates bucket b over all vCPUs. */
		for (b = 0; b < d->size && b < nb; b++)
			reasons[b] += delta(sm, d, b, dt);
	}
}

static void sample_save(struct sample *sm)
{
	if (sm->prev)
		memcpy(sm->prev, kvmstats_data(sm->st), kvmstats_data_size(sm->st));
}

static int cmp_rate(const void *a, const void *b)
{
	const struct rate *x = a, *y = b;

	return (x->per_sec < y->per_sec) - (x->per_sec > y->per_sec);
}

static void fmt_rate(const struct rate *r, char *buf, size_t len)
{
	char v[32];

	if (r->d->unit == KVM_STATS_UNIT_NONE) {
		snprintf(buf, len, r->per_sec < 10 ? "%.1f" : "%.0f",
			 r->per_sec);
		return;
	}
	kvmstats_format(r->d, (uint64_t)(r->per_sec + 0.5), v, sizeof(v));
	snprintf(buf, len, "%s", v);
}

/* "name rate, name rate" for the top entries matching want_none. */
static int print_top(const char *label, struct rates *rs, int want_none,
		     int max)
{
	char v[48];
	int i, shown = 0;

	qsort(rs->r, rs->n, sizeof(*rs->r), cmp_rate);
	for (i = 0; i < rs->n && shown < max; i++) {
		const struct rate *r = &rs->r[i];

		if ((r->d->unit == KVM_STATS_UNIT_NONE) != want_none ||
		    r->per_sec <= 0)
			continue;
		fmt_rate(r, v, sizeof(v));
		fprintf(wout, "%s%s %s", shown ? ", " : label, r->d->name, v);
		shown++;
	}
	return shown;
}

static double find_rate(const struct rates *rs, const char *name)
{
	int i;

	for (i = 0; i < rs->n; i++)
		if (!strcmp(rs->r[i].d->name, name))
			return rs->r[i].per_sec;
	return -1;
}

static double score(const struct rates *rs)
{
	double v = find_rate(rs, "exits"), sum = 0;
	int i;

	if (v >= 0)
		return v;
	for (i = 0; i < rs->n; i++)
		if (rs->r[i].d->unit == KVM_STATS_UNIT_NONE)
			sum += rs->r[i].per_sec;
	return sum;
}

struct reason {
	unsigned int idx;
	double per_sec;
};

static int cmp_reason(const void *a, const void *b)
{
	const struct reason *x = a, *y = b;

	return (x->per_sec < y->per_sec) - (x->per_sec > y->per_sec);
}

/*
 * Reasons by name when d is a known exit-reason histogram, else by bucket
 * index ("#12").  Rates round to whole exits/s; below 0.5/s they show as
 * "<1" so that a rare reason does not look absent.
 */
static void print_reasons(const double *rates, unsigned int nb,
			  const struct kvmstats_desc *d)
{
	struct reason *r = calloc(nb ? nb : 1, sizeof(*r));
	int named = kvmstats_exit_reason_kind(d) != KVMSTATS_EXIT_NONE;
	unsigned int i, n = 0;
	char name[48];

	if (!r)
		return;
	for (i = 0; i < nb; i++)
		if (rates[i] > 0)
			r[n++] = (struct reason){ i, rates[i] };
	qsort(r, n, sizeof(*r), cmp_reason);
	if (n)
		fprintf(wout, "  exit reasons/s:%s", named ? "" : " (by index)");
	for (i = 0; i < n && i < MAX_REASONS; i++) {
		if (named)
			kvmstats_exit_reason_name(d, r[i].idx, name, sizeof(name));
		else
			snprintf(name, sizeof(name), "#%u", r[i].idx);
		if (r[i].per_sec < 0.5)
			fprintf(wout, "%s %s <1", i ? "," : "", name);
		else
			fprintf(wout, "%s %s %.0f", i ? "," : "", name, r[i].per_sec);
	}
	if (n > MAX_REASONS)
		fprintf(wout, ", ... (%u more)", n - MAX_REASONS);
	if (n)
		fputc('\n', wout);
	free(r);
}

/* Buckets to sum over, and the (largest) histogram that names them. */
static unsigned int reason_buckets(const struct kvmstats_vm *p,
				   const struct kvmstats_desc **hist)
{
	unsigned int i, max = 0;
	int k;

	*hist = NULL;
	for (k = 0; k < p->nr_vcpus; k++) {
		const struct kvmstats *s = p->vcpus[k].st;

		if (!p->vcpus[k].open)
			continue;
		for (i = 0; i < kvmstats_num_desc(s); i++) {
			const struct kvmstats_desc *d = kvmstats_desc_at(s, i);

			if (is_reason_hist(d) && stat_wanted(d) && d->size > max) {
				max = d->size;
				*hist = d;
			}
		}
	}
	return max;
}

static void show_vcpus(struct wvm *w, double dt)
{
	struct kvmstats_vm *p = w->p;
	struct rates one = { 0 };
	int k;

	fprintf(wout, "  %-6s %10s  %s\n", "VCPU", "EXITS/S", "TOP/S");
	for (k = 0; k < p->nr_vcpus; k++) {
		if (!p->vcpus[k].open)
			continue;
		one.n = 0;
		collect(&w->vcpu[k], dt, &one, NULL, 0, 0);
		fprintf(wout, "  %-6d %10.0f", p->vcpus[k].id, score(&one));
		print_top("  ", &one, 1, TOP_VCPU);
		fputc('\n', wout);
	}
	free(one.r);
}

static void show_vm(struct wvm *w, double dt)
{
	struct kvmstats_vm *p = w->p;
	const struct kvmstats_desc *hist;
	struct rates all = { 0 };
	unsigned int nb = reason_buckets(p, &hist);
	double *reasons;
	int k;

	char buf[512];

	fprintf(wout, "PID %d %s", (int)p->pid, term_safe(p->comm, buf, sizeof(buf)));
	if (p->guest)
		fprintf(wout, " guest %s", term_safe(p->guest, buf, sizeof(buf)));
	fprintf(wout, ", %d vCPUs", p->nr_vcpus);
	if (w->gone) {
		fprintf(wout, " (exited)\n");
		return;
	}
	reasons = calloc(nb ? nb : 1, sizeof(*reasons));
	for (k = 0; k < p->nr_vcpus; k++)
		if (p->vcpus[k].open)
			collect(&w->vcpu[k], dt, &all, reasons, reasons ? nb : 0, 0);
	if (p->vm_open)
		collect(&w->vm, dt, &all, NULL, 0, 1);
	w->score = score(&all);
	fprintf(wout, ", %.0f exits/s\n", w->score);
	if (print_top("  counters/s: ", &all, 1, TOP_COUNTERS))
		fputc('\n', wout);
	if (print_top("  other/s:    ", &all, 0, TOP_OTHER))
		fputc('\n', wout);
	if (reasons)
		print_reasons(reasons, nb, hist);
	show_vcpus(w, dt);
	free(all.r);
	free(reasons);
}

static int cmp_wvm(const void *a, const void *b)
{
	const struct wvm *x = a, *y = b;

	return (x->score < y->score) - (x->score > y->score);
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

static void save_vm(struct wvm *w)
{
	int k;

	if (w->gone)
		return;
	if (w->p->vm_open)
		sample_save(&w->vm);
	for (k = 0; k < w->p->nr_vcpus; k++)
		if (w->p->vcpus[k].open)
			sample_save(&w->vcpu[k]);
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
	for (k = 0; k < w->p->nr_vcpus; k++)
		free(w->vcpu[k].prev);
	free(w->vcpu);
}

static void sleep_for(double sec)
{
	struct timespec ts = {
		.tv_sec = (time_t)sec,
		.tv_nsec = (long)((sec - (time_t)sec) * 1e9),
	};

	/* EINTR from SIGINT ends the wait; the loop then sees `stop`. */
	nanosleep(&ts, NULL);
}

/*
 * Clear the screen between frames only on a terminal that can do it, and
 * not in batch mode (-b); else (a pipe, a file, TERM=dumb) frames follow
 * each other, separated by a blank line, so the output can be logged or
 * parsed.
 */
static int can_clear(const struct opts *o)
{
	const char *term = getenv("TERM");

	return !o->batch && isatty(STDOUT_FILENO) && term && *term &&
	       strcmp(term, "dumb");
}

/* Columns of the terminal, or 0 (no limit) when not writing to one. */
static int term_width(int tty)
{
	struct winsize ws;

	if (tty && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col)
		return ws.ws_col;
	return 0;
}

/* buf's lines to stdout, each cut to width characters (0: whole). */
static void emit(const char *buf, size_t len, int width)
{
	const char *p = buf, *end = buf + len, *nl;
	int cols, n;

	while (p < end) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		for (cols = 0; p < nl && (!width || cols < width); cols++) {
			n = kvmstats_utf8_len((const unsigned char *)p);
			n = n ? n : 1;
			fwrite(p, 1, n, stdout);
			p += n;
		}
		p = nl + 1;
		if (nl < end)
			putchar('\n');
	}
}

struct watch {
	struct wvm *w;
	int n;
	struct kvmstats_vm **extra;	/* VMs found after the start */
	int nr_extra;
};

static int known(const struct watch *ws, pid_t pid)
{
	int i;

	for (i = 0; i < ws->n; i++)
		if (ws->w[i].p->pid == pid && !ws->w[i].gone)
			return 1;
	return 0;
}

/* New VMs since the last frame join the view, as kvm_stat's do. */
static void pick_up(struct watch *ws, const struct opts *o)
{
	struct kvmstats_vm *fresh, *np, **ne;
	struct wvm *nw;
	int i, n;

	n = kvmstats_discover(&fresh, o->pid, NULL);
	if (n <= 0)
		return;
	for (i = 0; i < n; i++) {
		if (known(ws, fresh[i].pid) || !vm_wanted(&fresh[i]))
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

static void run(struct watch *ws, const struct opts *o)
{
	int tty = can_clear(o), i, gone;
	double t0 = now(), t1;
	char *buf = NULL;
	size_t len = 0;
	long frame;

	for (frame = 1; !stop && (!o->count || frame <= o->count); frame++) {
		sleep_for(o->interval);
		if (stop)
			break;
		for (i = 0; i < ws->n; i++)
			refresh_vm(&ws->w[i]);
		t1 = now();
		/* The previous frame's order is good enough to sort by. */
		qsort(ws->w, ws->n, sizeof(*ws->w), cmp_wvm);
		wout = open_memstream(&buf, &len);
		if (!wout)
			break;
		fprintf(wout, "kvm-statsfd watch: %d VM%s, interval %.2f s, frame %ld\n",
			ws->n, ws->n == 1 ? "" : "s", t1 - t0, frame);
		for (i = gone = 0; i < ws->n; i++) {
			show_vm(&ws->w[i], t1 - t0 > 0 ? t1 - t0 : 1e-9);
			save_vm(&ws->w[i]);
			gone += ws->w[i].gone;
		}
		fclose(wout);
		wout = NULL;
		fputs(tty ? "\033[H\033[2J" : (frame > 1 ? "\n" : ""), stdout);
		emit(buf, len, term_width(tty));
		free(buf);
		buf = NULL;
		if (fflush(stdout) || ferror(stdout))
			break;	/* main() reports it */
		t0 = t1;
		if (!o->file)
			pick_up(ws, o);
		if (gone == ws->n && (o->file || o->pid))
			break;
	}
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

	if (!p || !(p->vcpus = calloc(1, sizeof(*p->vcpus)))) {
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

static int compile(regex_t *re, const char *pat, const char *what)
{
	char msg[128];
	int ret = regcomp(re, pat, REG_EXTENDED | REG_NOSUB);

	if (ret) {
		regerror(ret, re, msg, sizeof(msg));
		fprintf(stderr, "kvm-statsfd: %s '%s': %s\n", what, pat, msg);
		return -1;
	}
	return 0;
}

int cmd_watch(const struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int i, n, ready = 0, opened = 0, rc = EXIT_RUNTIME;
	struct watch ws = { 0 };
	struct kvmstats_vm *vms;

	if (o->stat_filter && compile(&stat_re, o->stat_filter, "-f"))
		return EXIT_USAGE;
	have_stat_re = !!o->stat_filter;
	if (o->guest_filter && compile(&guest_re, o->guest_filter, "-g"))
		return EXIT_USAGE;
	have_guest_re = !!o->guest_filter;
	n = o->file ? file_vm(o, &vms) : find_vms(o, &vms);
	if (n < 0)
		return EXIT_RUNTIME;
	ws.w = calloc(n ? n : 1, sizeof(*ws.w));
	for (; ws.w && ready < n; ready++) {
		if (!vm_wanted(&vms[ready])) {
			vms[ready].pid = -1;	/* not shown; freed below */
			continue;
		}
		if (!o->file && kvmstats_vm_open(&vms[ready], -1))
			fprintf(stderr, "kvm-statsfd: %s\n", vms[ready].err);
		else if (!o->file)
			note_vm_unavailable(&vms[ready]);
		opened += any_open(&vms[ready]);
		if (setup(&ws.w[ws.n], &vms[ready]))
			break;
		ws.n++;
	}
	if (ready < n)
		fprintf(stderr, "kvm-statsfd: out of memory\n");
	else if (n && !ws.n)
		fprintf(stderr, "kvm-statsfd: no VM matches -g '%s'\n", o->guest_filter);
	else if (ws.n && !opened)
		fprintf(stderr, "kvm-statsfd: no statistics could be opened\n");
	if (ready == n && (ws.n ? opened : !n && !o->file)) {
		/* No VM yet is fine: the view waits for them, as kvm_stat does. */
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		run(&ws, o);
		rc = EXIT_OK;
	}
	for (i = 0; i < ws.n; i++)
		teardown(&ws.w[i]);
	free(ws.w);
	for (i = 0; i < ws.nr_extra; i++)
		kvmstats_vms_free(ws.extra[i], 1);
	free(ws.extra);
	kvmstats_vms_free(vms, n);
	if (have_stat_re)
		regfree(&stat_re);
	if (have_guest_re)
		regfree(&guest_re);
	return rc;
}
