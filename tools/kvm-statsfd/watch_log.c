// SPDX-License-Identifier: GPL-2.0
/*
 * watch -l, -L FILE, --csv: kvm_stat's logging mode.  One header line
 * naming the events (cumulative stats and histograms that -f lets
 * through, by name), then every interval one line: the local time and
 * how much each event grew over that interval, summed over the VMs
 * watched, in the stat's own unit (halt_wait_ns in ns).  Growth per
 * interval, not per second, as kvm_stat -l prints it: whole numbers
 * that add up to the counters' growth exactly.
 *
 * The events are those of the first sample that has any: a table keeps
 * its columns; one that appears later is not logged, one that goes away
 * logs 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "events.h"
#include "output.h"

struct logger {
	const struct opts *o;
	FILE *f;
	int *col;		/* event of each column */
	int *width;		/* plain format: each column's width */
	int nr_col;
};

static int cmp_name(const void *a, const void *b, void *arg)
{
	const struct events *e = arg;

	return strcmp(e->ev[*(const int *)a].name, e->ev[*(const int *)b].name);
}

/* The columns: the events -f lets through, by name, as kvm_stat's. */
static int columns(struct logger *lg, const struct events *e,
		   const struct wfilter *f)
{
	int i;

	lg->col = calloc(e->n ? e->n : 1, sizeof(*lg->col));
	lg->width = calloc(e->n ? e->n : 1, sizeof(*lg->width));
	if (!lg->col || !lg->width)
		return -1;
	for (i = 0; i < e->n; i++)
		if (wf_stat(f, e->ev[i].name))
			lg->col[lg->nr_col++] = i;
	qsort_r(lg->col, lg->nr_col, sizeof(*lg->col), cmp_name, (void *)e);
	return 0;
}

/* A CSV field: quoted when it holds a comma or a quote (RFC 4180). */
static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void header(struct logger *lg, const struct events *e)
{
	char buf[512];
	const char *name;
	int i, w;

	fputs(lg->o->csv ? "timestamp" : "time               ", lg->f);
	for (i = 0; i < lg->nr_col; i++) {
		name = term_safe(e->ev[lg->col[i]].name, buf, sizeof(buf));
		if (lg->o->csv) {
			fputc(',', lg->f);
			csv_field(lg->f, name);
			continue;
		}
		/* At least as wide as a 9-digit count, as kvm_stat's. */
		w = strlen(name);
		lg->width[i] = w > 9 ? w : 9;
		fprintf(lg->f, " %*s", lg->width[i], name);
	}
	fputc('\n', lg->f);
}

static void line(struct logger *lg, const struct events *e)
{
	char stamp[32];
	struct tm tm;
	time_t t = time(NULL);
	int i;

	localtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
	fputs(stamp, lg->f);
	for (i = 0; i < lg->nr_col; i++) {
		unsigned long long v = e->ev[lg->col[i]].delta;

		if (lg->o->csv)
			fprintf(lg->f, ",%llu", v);
		else
			fprintf(lg->f, " %*llu", lg->width[i], v);
	}
	fputc('\n', lg->f);
}

/*
 * -L appends, as kvm_stat's does.  A CSV file that already has lines
 * gets no second header: it stays one table.
 */
static int open_log(struct logger *lg, int *want_header)
{
	struct stat st;

	*want_header = 1;
	if (!lg->o->log_file) {
		lg->f = stdout;
		return 0;
	}
	lg->f = fopen(lg->o->log_file, "ae");
	if (!lg->f) {
		fprintf(stderr, "kvm-statsfd: %s: %s\n", lg->o->log_file,
			strerror(errno));
		return -1;
	}
	if (lg->o->csv && !fstat(fileno(lg->f), &st) && st.st_size)
		*want_header = 0;
	return 0;
}

static int close_log(struct logger *lg)
{
	int err;

	if (!lg->f || lg->f == stdout)
		return 0;
	err = ferror(lg->f);
	if (fclose(lg->f) || err) {
		fprintf(stderr, "kvm-statsfd: writing %s: %s\n",
			lg->o->log_file, strerror(errno ? errno : EIO));
		lg->f = NULL;
		return -1;
	}
	lg->f = NULL;
	return 0;
}

/* Sleep until the monotonic time `until`; a signal ends it early. */
static void sleep_until(double until)
{
	struct timespec ts = {
		.tv_sec = (time_t)until,
		.tv_nsec = (long)((until - (time_t)until) * 1e9),
	};

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static void sample(struct events *e, struct watch *ws, const struct wfilter *f)
{
	watch_refresh(ws);
	ev_sample(e, ws, f);
	watch_save(ws);
}

int watch_log(struct watch *ws, struct wfilter *f)
{
	struct logger lg = { .o = ws->o };
	struct events e = { 0 };
	int rc = EXIT_OK, want_header, have_cols = 0;
	double next = watch_now();
	long done = 0;

	if (open_log(&lg, &want_header)) {
		rc = EXIT_RUNTIME;
		goto out;
	}
	sample(&e, ws, f);
	for (;;) {
		/* The columns of the first sample that has events. */
		if (!have_cols && e.n) {
			if (columns(&lg, &e, f)) {
				fprintf(stderr, "kvm-statsfd: out of memory\n");
				rc = EXIT_RUNTIME;
				break;
			}
			have_cols = 1;
			if (want_header)
				header(&lg, &e);
		}
		if (fflush(lg.f) || ferror(lg.f))
			break;	/* reported below, or by main() for stdout */
		if (watch_stop || (ws->o->count && done >= ws->o->count) ||
		    watch_over(ws))
			break;
		/* Deadlines on a grid: a slow interval does not shift the next. */
		next += ws->o->interval;
		while (!watch_stop && !watch_hup && watch_now() < next)
			sleep_until(next);
		if (watch_stop)
			break;
		if (watch_hup) {
			/* logrotate moved the file: go on in a new one. */
			watch_hup = 0;
			next -= ws->o->interval;
			if (close_log(&lg) || open_log(&lg, &want_header)) {
				rc = EXIT_RUNTIME;
				break;
			}
			if (have_cols && want_header)
				header(&lg, &e);
			continue;
		}
		sample(&e, ws, f);
		if (have_cols)
			line(&lg, &e);
		done++;
		watch_pick_up(ws, f);
	}
out:
	if (lg.f && lg.f != stdout && close_log(&lg))
		rc = EXIT_RUNTIME;
	free(lg.col);
	free(lg.width);
	ev_free(&e);
	return rc;
}
