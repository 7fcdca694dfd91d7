// SPDX-License-Identifier: GPL-2.0
/*
 * Input of watch's ncurses view: waiting for a key (or the time of the
 * next frame, or a signal), the prompts of kvm_stat's f, g, p and s
 * keys, and the help screen.
 */
#define _GNU_SOURCE
#include <curses.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"
#include "watch_top.h"

#define KEY_ESC		27

static const char *const help_text[] = {
	"c     clear filters (events, guests, pid)",
	"f     filter events by regular expression",
	"g     filter guests by regular expression (name, process, pid)",
	"h, ?  this help",
	"o     toggle sorting: Current then Total, or Total",
	"p     show one VMM process by pid (0: all)",
	"q     quit",
	"r     reset: Total counts from now",
	"s     set the update interval",
	"x     toggle drilldown: per vCPU, per histogram bucket",
	"Any other key refreshes the statistics at once.",
	NULL
};

/*
 * ppoll() lets SIGINT and SIGTERM in only while waiting, so one that
 * comes just before cannot be slept through.
 */
int top_wait_input(const struct top *t, double until)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	struct timespec ts;
	double left;
	int n;

	if (watch_stop)
		return -1;
	left = until ? until - watch_now() : 0;
	if (until && left <= 0)
		return 0;
	ts.tv_sec = (time_t)left;
	ts.tv_nsec = (long)((left - (time_t)left) * 1e9);
	n = ppoll(&pfd, 1, until ? &ts : NULL, &t->waitmask);
	if (watch_stop)
		return -1;
	/* EINTR from ncurses' SIGWINCH handler: getch() has KEY_RESIZE. */
	if (n < 0 && errno == EINTR)
		return 1;
	if (n < 0)
		return -1;
	if (n && (pfd.revents & (POLLHUP | POLLERR)) && !(pfd.revents & POLLIN))
		return -1;	/* the terminal went away */
	return n > 0;
}

/* The next key, waiting as long as it takes; ERR on SIGINT/SIGTERM. */
static int next_key(const struct top *t)
{
	int ch;

	for (;;) {
		ch = getch();
		if (ch != ERR || top_wait_input(t, 0) < 0)
			return ch;
	}
}

void top_help(struct top *t)
{
	int i, ch;

	do {
		erase();
		top_put(0, A_BOLD, "Interactive commands reference");
		top_put(2, A_STANDOUT, "Press any key to continue");
		for (i = 0; help_text[i]; i++)
			top_put(4 + i, 0, help_text[i]);
		refresh();
		ch = next_key(t);
	} while (ch == KEY_RESIZE);
}

/*
 * A line of input under a title; the current value and the last error
 * shown above it.  1: entered (buf), 0: Escape, -1: SIGINT/SIGTERM.
 */
static int prompt(struct top *t, const char *title, const char *current,
		  const char *label, const char *err, char *buf, size_t len)
{
	size_t n = 0;
	int ch;

	buf[0] = '\0';
	curs_set(1);
	for (;;) {
		erase();
		top_put(0, A_BOLD, title);
		top_put(2, 0, current);
		top_put(5, 0, err);
		top_put(3, 0, label);
		addstr(buf);
		refresh();
		ch = next_key(t);
		if (ch == ERR || ch == KEY_ESC || ch == '\n' || ch == '\r' ||
		    ch == KEY_ENTER)
			break;
		if (ch == KEY_BACKSPACE || ch == 127 || ch == '\b') {
			if (n)
				buf[--n] = '\0';
		} else if (ch >= ' ' && ch < 256 && n + 1 < len) {
			buf[n++] = (char)ch;
			buf[n] = '\0';
		}
	}
	curs_set(0);
	return ch == ERR ? -1 : ch != KEY_ESC;
}

/* f and g: a regular expression; empty clears, a bad one asks again. */
int top_ask_regex(struct top *t, int which)
{
	char cur[300], in[256], err[160] = "", safe[280];
	const char *pat = which == 's' ? t->f->stat_pat : t->f->guest_pat;
	int r;

	snprintf(cur, sizeof(cur), "Current regex: %s",
		 *pat ? term_safe(pat, safe, sizeof(safe)) : "(none)");
	for (;;) {
		r = prompt(t, which == 's' ?
			   "Show statistics for events matching a regex." :
			   "Show statistics for guests whose name, process name or pid matches a regex.",
			   cur, "New regex (empty: none): ", err, in, sizeof(in));
		if (r <= 0)
			return r;
		if (!wf_set(t->f, which, in, err + 9, sizeof(err) - 9))
			return 1;
		memcpy(err, "Invalid: ", 9);
	}
}

int top_ask_pid(struct top *t)
{
	char cur[64], in[32], err[96] = "", *end;
	long pid;
	int r, i;

	snprintf(cur, sizeof(cur), "Current pid: %d", (int)t->f->pid);
	for (;;) {
		r = prompt(t, "Show statistics for one VMM process.", cur,
			   "Pid [0 or pid]: ", err, in, sizeof(in));
		if (r <= 0)
			return r;
		errno = 0;
		pid = *in ? strtol(in, &end, 10) : 0;
		if (*in && (errno || *end || pid < 0 || pid > 0x7fffffff)) {
			snprintf(err, sizeof(err), "\"%.20s\": not a valid pid", in);
			continue;
		}
		for (i = 0; pid && i < t->ws->n; i++)
			if (t->ws->w[i].p->pid == pid && !t->ws->w[i].gone)
				break;
		if (pid && i == t->ws->n) {
			snprintf(err, sizeof(err), "%ld: no VM in that process", pid);
			continue;
		}
		t->f->pid = (pid_t)pid;
		return 1;
	}
}

int top_ask_interval(struct top *t)
{
	char cur[64], in[32], err[96] = "", *end;
	double v;
	int r;

	snprintf(cur, sizeof(cur), "Current interval: %.2f s", t->interval);
	for (;;) {
		r = prompt(t, "Set the update interval.", cur,
			   "New interval in seconds (0.01 to 3600): ", err, in,
			   sizeof(in));
		if (r <= 0)
			return r;
		errno = 0;
		v = strtod(in, &end);
		/* As -i: a range test, so that NaN fails too. */
		if (!errno && end != in && !*end && v >= 0.01 && v <= 3600) {
			t->interval = v;
			return 1;
		}
		snprintf(err, sizeof(err), "\"%.20s\": not 0.01 to 3600 seconds", in);
	}
}

