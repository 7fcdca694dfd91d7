// SPDX-License-Identifier: GPL-2.0
/*
 * watch's plain frames (-b, or standard output not a terminal): every
 * interval, per-second rates of cumulative stats, per VM (VM stats plus
 * the sum over its vCPUs) and per vCPU, sorted by rate.
 * Histogram buckets are cumulative counts too; for exit-reason histograms
 * (stats named exit_reason*) the per-bucket rates are shown by reason name
 * (exit_reasons_svm/_vmx, see kvmstats_exit_reason_name()) or, for other
 * such histograms, by bucket index.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "output.h"
#include "watch.h"

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

/* A frame is written here first, then to stdout cut to the terminal. */
static FILE *wout;
/* -f: only stats whose name matches; -g: only VMs whose name matches. */
static const struct wfilter *filter;

static int stat_wanted(const struct kvmstats_desc *d)
{
	return wf_stat(filter, kvmstats_stem(d));
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
	return kvmstats_is_hist(d) &&
	       !strncmp(kvmstats_stem(d), "exit_reason", 11);
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

		if ((only_new && has_rate(out, kvmstats_stem(d))) ||
		    !stat_wanted(d))
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

static void sleep_for(double sec)
{
	struct timespec ts = {
		.tv_sec = (time_t)sec,
		.tv_nsec = (long)((sec - (time_t)sec) * 1e9),
	};

	/* EINTR from SIGINT ends the wait; the loop then sees watch_stop. */
	nanosleep(&ts, NULL);
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

int watch_frames(struct watch *ws, struct wfilter *f)
{
	const struct opts *o = ws->o;
	int width = term_width(isatty(STDOUT_FILENO)), i;
	double t0 = watch_now(), t1;
	char *buf = NULL;
	size_t len = 0;
	long frame;
	int shown;

	filter = f;
	for (frame = 1; !watch_stop && (!o->count || frame <= o->count); frame++) {
		sleep_for(o->interval);
		if (watch_stop)
			break;
		watch_refresh(ws);
		t1 = watch_now();
		/* The previous frame's order is good enough to sort by. */
		qsort(ws->w, ws->n, sizeof(*ws->w), cmp_wvm);
		wout = open_memstream(&buf, &len);
		if (!wout)
			break;
		/* All VMs are kept when the ncurses view was meant to run. */
		for (i = shown = 0; i < ws->n; i++)
			shown += wf_vm(f, ws->w[i].p);
		fprintf(wout, "kvm-statsfd watch: %d VM%s, interval %.2f s, frame %ld\n",
			shown, shown == 1 ? "" : "s", t1 - t0, frame);
		for (i = 0; i < ws->n; i++)
			if (wf_vm(f, ws->w[i].p))
				show_vm(&ws->w[i], t1 - t0 > 0 ? t1 - t0 : 1e-9);
		watch_save(ws);
		fclose(wout);
		wout = NULL;
		/* Frames follow each other, a blank line between them. */
		fputs(frame > 1 ? "\n" : "", stdout);
		emit(buf, len, width);
		free(buf);
		buf = NULL;
		if (fflush(stdout) || ferror(stdout))
			break;	/* main() reports it */
		t0 = t1;
		watch_pick_up(ws, f);
		if (watch_over(ws))
			break;
	}
	return EXIT_OK;
}
