// SPDX-License-Identifier: GPL-2.0
/*
 * watch on a terminal: kvm_stat's ncurses view.  One table of events
 * (events.h) summed over the VMs shown: Event, Total (the value now, or
 * its growth since r), %Total (of the counts' sum), Current (per second
 * over the last interval); sorted by Current then Total, or by Total
 * (o).  kvm_stat's keys change what is shown (watch_input.c has their
 * prompts and help).
 *
 * The first frame is drawn at once (Current still blank), then one
 * every interval; a key's effect is drawn at once.  Every frame is drawn
 * whole into ncurses' screen and ncurses sends only what changed.
 */
#define _GNU_SOURCE
#include <curses.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "watch_top.h"

#define NAME_W		40

/* s cut to the screen's width (one column a character) at row y. */
void top_put(int y, int attr, const char *s)
{
	int cols = 0, n;
	const char *p = s;

	while (*p && cols < COLS) {
		n = kvmstats_utf8_len((const unsigned char *)p);
		p += n ? n : 1;
		cols++;
	}
	attron(attr);
	mvaddnstr(y, 0, s, (int)(p - s));
	if (attr & A_STANDOUT)
		for (; cols < COLS; cols++)
			addch(' ');
	attroff(attr);
}

static void sample(struct top *t)
{
	watch_refresh(t->ws);
	ev_sample(&t->e, t->ws, t->f);
	watch_save(t->ws);
}

static int counts(const struct ev *v)
{
	return v->hist || v->d.unit == KVM_STATS_UNIT_NONE;
}

static int cmp_row(const void *a, const void *b, void *arg)
{
	const struct row *x = a, *y = b;
	const struct top *t = arg;

	if (!t->by_total && x->rate != y->rate)
		return x->rate < y->rate ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->v != y->v)
		return strcmp(x->v->name, y->v->name);
	return x->sub - y->sub;
}

static int add_row(struct top *t, const struct ev *v, const struct ev_kid *k)
{
	uint64_t total = k ? ev_kid_total(&t->e, k) : ev_total(&t->e, v);
	uint64_t delta = k ? k->delta : v->delta;
	struct row *r;

	if (!total && !delta)
		return 0;	/* nothing happened: as kvm_stat, not shown */
	if (t->nr_rows == t->cap_rows) {
		r = realloc(t->rows, (t->cap_rows * 2 + 64) * sizeof(*r));
		if (!r)
			return -1;
		t->rows = r;
		t->cap_rows = t->cap_rows * 2 + 64;
	}
	t->rows[t->nr_rows++] = (struct row){
		.v = v, .k = k, .total = total,
		.rate = t->dt > 0 ? delta / t->dt : 0,
		.sub = k ? (int)(k - v->kid) : 0,
	};
	return 0;
}

/* The events sorted; with drilldown, after them each one's kids, sorted. */
static void build_rows(struct top *t)
{
	const struct ev *v;
	int i, k, first;

	t->nr_rows = 0;
	for (i = 0; i < t->e.n; i++)
		if (wf_stat(t->f, t->e.ev[i].name) && add_row(t, &t->e.ev[i], NULL))
			break;
	qsort_r(t->rows, t->nr_rows, sizeof(*t->rows), cmp_row, t);
	t->nr_events = t->nr_rows;
	for (i = 0; i < t->nr_events; i++) {
		v = t->rows[i].v;
		first = t->nr_rows;
		for (k = 0; t->e.drill && k < v->nr_kid; k++)
			if (add_row(t, v, &v->kid[k]))
				break;
		qsort_r(t->rows + first, t->nr_rows - first, sizeof(*t->rows),
			cmp_row, t);
		t->rows[i].first = first;
		t->rows[i].nr_kids = t->nr_rows - first;
	}
}

static void kid_label(const struct top *t, const struct row *r, char *buf,
		      size_t len)
{
	const struct kvmstats_desc *d = &r->v->d;
	unsigned int i = r->k->idx;

	if (!r->v->hist) {
		if (t->vms > 1)
			snprintf(buf, len, "%d vcpu %d", (int)r->k->pid, r->k->idx);
		else
			snprintf(buf, len, "vcpu %d", r->k->idx);
	} else if (kvmstats_exit_reason_kind(d) != KVMSTATS_EXIT_NONE) {
		kvmstats_exit_reason_name(d, i, buf, len);
	} else if (kvmstats_is_userspace_exits(d)) {
		kvmstats_userspace_exit_name(d, i, buf, len);
	} else {
		out_bucket_label(d, i, buf, len);
	}
}

/* Counts as whole numbers (tenths below 10/s); other units scaled. */
static void fmt_rate(const struct ev *v, double rate, char *buf, size_t len)
{
	if (counts(v))
		snprintf(buf, len, rate < 10 ? "%.1f" : "%.0f", rate);
	else
		kvmstats_format(&v->d, (uint64_t)(rate + 0.5), buf, len);
}

static void draw_row(const struct top *t, int y, const struct row *r,
		     uint64_t sum)
{
	char name[NAME_W * 4 + 8], label[96], total[32], pct[16], cur[32];
	char line[512];
	uint64_t delta = r->k ? r->k->delta : r->v->delta;

	if (r->k) {
		kid_label(t, r, label, sizeof(label));
		snprintf(name, sizeof(name), "  %s", label);
	} else {
		term_safe(r->v->name, name, sizeof(name));
	}
	if (counts(r->v))
		snprintf(total, sizeof(total), "%llu",
			 (unsigned long long)r->total);
	else
		kvmstats_format(&r->v->d, r->total, total, sizeof(total));
	pct[0] = '\0';
	cur[0] = '\0';
	if (counts(r->v) && sum)
		snprintf(pct, sizeof(pct), "%.1f", r->total * 100.0 / sum);
	/* Blank before the first interval and for no growth, as kvm_stat. */
	if (t->dt > 0 && delta)
		fmt_rate(r->v, r->rate, cur, sizeof(cur));
	snprintf(line, sizeof(line), " %-*.*s %10s %7s %10s", NAME_W, NAME_W,
		 name, total, pct, cur);
	top_put(y, 0, line);
}

static void draw_head(struct top *t)
{
	char line[512], a[300], b[300];
	int i, n;

	t->vms = 0;
	t->one = NULL;
	for (i = 0; i < t->ws->n; i++) {
		if (t->ws->w[i].gone || !wf_vm(t->f, t->ws->w[i].p))
			continue;
		t->vms++;
		t->one = t->ws->w[i].p;
	}
	if (t->vms == 1) {
		n = snprintf(line, sizeof(line), "kvm statistics - pid %d %s",
			     (int)t->one->pid, term_safe(t->one->comm, a, sizeof(a)));
		if (t->one->guest)
			snprintf(line + n, sizeof(line) - n, " (%s)",
				 term_safe(t->one->guest, b, sizeof(b)));
	} else {
		snprintf(line, sizeof(line), "kvm statistics - %d VMs", t->vms);
	}
	top_put(0, A_BOLD, line);
	i = strlen(line) + 2;
	n = snprintf(line, sizeof(line), "interval %.2f s, sort %s%s%s  (h: help)",
		     t->interval, t->by_total ? "Total" : "Current",
		     t->e.drill ? ", drilldown" : "",
		     t->e.reset ? ", since reset" : "");
	/* Right-aligned where there is room, else after the title, cut. */
	if (i < COLS)
		mvaddnstr(0, i + n < COLS ? COLS - n : i, line, COLS - i);
	n = 0;
	line[0] = '\0';
	if (t->f->have_stat)
		n += snprintf(line + n, sizeof(line) - n, "regex filter: %s  ",
			      term_safe(t->f->stat_pat, a, sizeof(a)));
	if (t->f->have_guest && n < (int)sizeof(line))
		n += snprintf(line + n, sizeof(line) - n, "guest filter: %s  ",
			      term_safe(t->f->guest_pat, a, sizeof(a)));
	if (t->f->pid && n < (int)sizeof(line))
		snprintf(line + n, sizeof(line) - n, "pid: %d", (int)t->f->pid);
	top_put(1, 0, line);
	snprintf(line, sizeof(line), " %-*s %10s %7s %10s", NAME_W, "Event",
		 "Total", "%Total", "Current");
	top_put(2, A_STANDOUT, line);
}

static void draw(struct top *t)
{
	char line[256], cur[32];
	uint64_t sum = 0;
	double rate = 0;
	int i, k, y = 3;

	erase();
	draw_head(t);
	build_rows(t);
	/* The sum over the events that count things, as kvm_stat's Total. */
	for (i = 0; i < t->nr_events; i++) {
		if (!counts(t->rows[i].v))
			continue;
		sum += t->rows[i].total;
		rate += t->rows[i].rate;
	}
	for (i = 0; i < t->nr_events && y < LINES - 1; i++) {
		const struct row *r = &t->rows[i];

		draw_row(t, y++, r, sum);
		for (k = r->first; k < r->first + r->nr_kids && y < LINES - 1; k++)
			draw_row(t, y++, &t->rows[k], sum);
	}
	if (y == 3) {
		top_put(4, 0, t->vms ? " No matching events reported yet" :
			  " No VM to show (yet)");
	} else if (y < LINES) {
		cur[0] = '\0';
		if (t->dt > 0 && rate > 0)
			snprintf(cur, sizeof(cur), rate < 10 ? "%.1f" : "%.0f",
				 rate);
		snprintf(line, sizeof(line), " %-*s %10llu %7s %10s", NAME_W,
			 "Total", (unsigned long long)sum, "", cur);
		top_put(y, A_BOLD, line);
	}
	refresh();
}

/* 1: quit, -1: SIGINT/SIGTERM, 0: go on (resample when *again). */
static int key(struct top *t, int ch, int *again)
{
	int r = 1;

	*again = 1;
	switch (ch) {
	case 'q':
		return 1;
	case 'f':
		*again = 0;	/* filtering events needs no new sample */
		r = top_ask_regex(t, 's');
		break;
	case 'g':
		r = top_ask_regex(t, 'g');
		break;
	case 'p':
		r = top_ask_pid(t);
		break;
	case 's':
		r = top_ask_interval(t);
		break;
	case 'c':
		wf_clear(t->f);
		break;
	case 'r':
		*again = 0;
		ev_reset(&t->e);
		break;
	case 'o':
		*again = 0;
		t->by_total = !t->by_total;
		break;
	case 'x':
		t->e.drill = !t->e.drill;
		break;
	case 'h':
	case '?':
		*again = 0;
		top_help(t);
		break;
	case KEY_RESIZE:
		*again = 0;
		break;
	}
	return r < 0 ? -1 : 0;
}

static int loop(struct top *t)
{
	const struct opts *o = t->ws->o;
	double last = watch_now(), next, now;
	long frames = 0;
	int ch, r, again;

	sample(t);
	draw(t);
	next = last + t->interval;
	for (;;) {
		ch = getch();
		if (ch != ERR) {
			r = key(t, ch, &again);
			if (r)
				break;
			if (!again) {
				draw(t);
				continue;
			}
		} else {
			r = top_wait_input(t, next);
			if (r < 0)
				break;
			if (r > 0)
				continue;
			frames++;
		}
		now = watch_now();
		sample(t);
		t->dt = now - last;
		last = now;
		next = now + t->interval;
		draw(t);
		if (o->count && frames >= o->count)
			break;
		watch_pick_up(t->ws, t->f);
		if (watch_over(t->ws))
			break;
	}
	return EXIT_OK;
}

int watch_top(struct watch *ws, struct wfilter *f)
{
	struct top t = { .ws = ws, .f = f, .interval = ws->o->interval };
	sigset_t block;
	SCREEN *scr;
	int rc;

	/* UTF-8 names; LC_CTYPE only, so that numbers keep their '.'. */
	setlocale(LC_CTYPE, "");
	scr = newterm(NULL, stdout, stdin);
	if (!scr)
		return -1;
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	set_escdelay(50);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &t.waitmask);
	rc = loop(&t);
	/* Every way out comes here: the terminal is always given back. */
	endwin();
	delscreen(scr);
	sigprocmask(SIG_SETMASK, &t.waitmask, NULL);
	free(t.rows);
	ev_free(&t.e);
	return rc;
}
