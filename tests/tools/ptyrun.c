// SPDX-License-Identifier: GPL-2.0
/*
 * ptyrun: run a full-screen program on a pseudo-terminal, type at it and
 * look at its screen, for the tests of watch's ncurses view.
 *
 *   ptyrun [-s COLSxROWS] SCRIPT CMD [ARG...]
 *
 * SCRIPT holds one step a line:
 *   wait TEXT          until the screen shows TEXT
 *   gone TEXT          until the screen no longer shows TEXT
 *   keys STRING        type STRING (\r, \e, \b and \\ escapes)
 *   sh COMMAND         run COMMAND with sh -c; it must succeed
 *   resize COLSxROWS   change the window size (the program gets SIGWINCH)
 *   kill INT|TERM      send the program that signal
 *   sleep SECONDS
 *   clears N           the screen was cleared whole at most N times so far
 *   screen             once the program is quiet (0.2 s), print the screen
 *                      between "--- screen" and "--- end"
 *   exit STATUS        until the program exits with STATUS; then it must
 *                      have given the terminal back: cooked mode (ICANON
 *                      and ECHO), cursor shown, alternate screen left
 * Waits give up after $PTYRUN_TIMEOUT seconds (default 20).  Exit status
 * 0 when every step passed, else 1 with the step and the screen on
 * standard error.
 *
 * The screen is a small terminal emulator that understands what the
 * terminfo entry of tests/tools/watch_test.sh declares (cup, el, ed,
 * clear, attributes, smcup/rmcup, civis/cnorm) and plain characters, so
 * that what ncurses sends can be read back as the rows a user would see.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define MAX_COLS	256
#define MAX_ROWS	100

static char scr[MAX_ROWS][MAX_COLS + 1];
static int rows = 24, cols = 80, cy, cx;
static int alt_screen, cursor_hidden, clears;
static int master = -1, slave = -1;
static pid_t child;
static int exited, status;
static double timeout_s = 20;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void clear_cells(int y, int x0, int x1)
{
	for (; x0 < x1; x0++)
		scr[y][x0] = ' ';
}

static void clear_screen(void)
{
	int y;

	for (y = 0; y < MAX_ROWS; y++) {
		memset(scr[y], ' ', MAX_COLS);
		scr[y][MAX_COLS] = '\0';
	}
}

static void csi(const int *p, int np, int priv, char final)
{
	int a = np > 0 ? p[0] : 0, b = np > 1 ? p[1] : 0, y;

	switch (final) {
	case 'H':
	case 'f':
		cy = (a ? a : 1) - 1;
		cx = (b ? b : 1) - 1;
		break;
	case 'J':
		if (a == 2) {
			clears++;
			clear_screen();
		} else {
			clear_cells(cy, cx, cols);
			for (y = cy + 1; y < rows; y++)
				clear_cells(y, 0, cols);
		}
		break;
	case 'K':
		clear_cells(cy, cx, cols);
		break;
	case 'h':
	case 'l':
		if (priv && a == 1049)
			alt_screen = final == 'h';
		if (priv && a == 25)
			cursor_hidden = final == 'l';
		break;
	}
	/* Anything else (attributes, 'm') changes no cell. */
	if (cy >= rows)
		cy = rows - 1;
	if (cx >= cols)
		cx = cols - 1;
}

/* The emulator: one byte of the program's output at a time. */
static void feed(unsigned char c)
{
	static enum { TEXT, ESC, CSI } state;
	static int p[16], np, priv;

	if (state == ESC) {
		state = c == '[' ? CSI : TEXT;
		np = 0;
		priv = 0;
		memset(p, 0, sizeof(p));
		return;
	}
	if (state == CSI) {
		if (c == '?') {
			priv = 1;
		} else if (c >= '0' && c <= '9') {
			if (!np)
				np = 1;
			p[np - 1] = p[np - 1] * 10 + (c - '0');
		} else if (c == ';') {
			if (!np)
				np = 1;
			if (np < 16)
				np++;
		} else {
			csi(p, np, priv, c);
			state = TEXT;
		}
		return;
	}
	switch (c) {
	case 033:
		state = ESC;
		return;
	case '\r':
		cx = 0;
		return;
	case '\n':
		if (cy < rows - 1)
			cy++;
		return;
	case '\b':
		if (cx)
			cx--;
		return;
	}
	/* UTF-8 continuation bytes take no cell; NUL padding neither. */
	if (c < ' ' || (c & 0xc0) == 0x80)
		return;
	scr[cy][cx] = c < 0x80 ? c : '?';
	if (cx < cols - 1)
		cx++;
}

static void print_screen(FILE *f)
{
	int y, n;

	fprintf(f, "--- screen\n");
	for (y = 0; y < rows; y++) {
		for (n = cols; n > 0 && scr[y][n - 1] == ' '; n--)
			;
		fprintf(f, "%.*s\n", n, scr[y]);
	}
	fprintf(f, "--- end\n");
}

static int shows(const char *text)
{
	int y;

	for (y = 0; y < rows; y++) {
		char line[MAX_COLS + 1];

		memcpy(line, scr[y], cols);
		line[cols] = '\0';
		if (strstr(line, text))
			return 1;
	}
	return 0;
}

/* Read what the program wrote, for up to `wait` seconds. */
static void drain(double wait)
{
	struct pollfd pfd = { .fd = master, .events = POLLIN };
	unsigned char buf[4096];
	ssize_t n, i;

	if (poll(&pfd, 1, (int)(wait * 1000)) <= 0)
		return;
	n = read(master, buf, sizeof(buf));
	for (i = 0; i < n; i++)
		feed(buf[i]);
}

/*
 * Until the program has been quiet for a while: a frame is written in
 * one go, so the screen is then not half drawn.
 */
static void settle(void)
{
	struct pollfd pfd = { .fd = master, .events = POLLIN };
	double end = now() + timeout_s;

	while (now() < end && poll(&pfd, 1, 200) > 0)
		drain(0);
}

static void reap(void)
{
	if (!exited && waitpid(child, &status, WNOHANG) == child)
		exited = 1;
}

static int fail(const char *step, const char *why)
{
	fprintf(stderr, "ptyrun: step '%s': %s\n", step, why);
	print_screen(stderr);
	if (!exited)
		kill(child, SIGKILL);
	return 1;
}

/* Until the screen shows (want 1) or stops showing (want 0) text. */
static int until(const char *text, int want)
{
	double end = now() + timeout_s;

	while (now() < end) {
		if (shows(text) == want)
			return 0;
		drain(0.05);
	}
	return shows(text) == want ? 0 : -1;
}

static void type(const char *s)
{
	char c;

	for (; *s; s++) {
		c = *s;
		if (c == '\\' && s[1]) {
			s++;
			c = *s == 'r' ? '\r' : *s == 'e' ? 033 :
			    *s == 'b' ? 0177 : *s;
		}
		if (write(master, &c, 1) != 1)
			return;
		/* As a person types: keys arrive one by one. */
		drain(0.02);
	}
}

static int set_size(const char *spec)
{
	struct winsize ws = { 0 };
	int c, r;

	if (sscanf(spec, "%dx%d", &c, &r) != 2 || c < 20 || c > MAX_COLS ||
	    r < 5 || r > MAX_ROWS)
		return -1;
	cols = c;
	rows = r;
	ws.ws_col = c;
	ws.ws_row = r;
	return ioctl(master, TIOCSWINSZ, &ws);
}

static int restored(char *why, size_t len)
{
	struct termios t;

	if (tcgetattr(slave, &t)) {
		snprintf(why, len, "tcgetattr: %s", strerror(errno));
		return 0;
	}
	if (!(t.c_lflag & ICANON) || !(t.c_lflag & ECHO)) {
		snprintf(why, len, "terminal left in raw mode (lflag %#o)",
			 t.c_lflag);
		return 0;
	}
	if (cursor_hidden || alt_screen) {
		snprintf(why, len, "cursor %s, alternate screen %s",
			 cursor_hidden ? "hidden" : "shown",
			 alt_screen ? "still on" : "left");
		return 0;
	}
	return 1;
}

static int run_step(char *line)
{
	char *arg = strchr(line, ' '), why[160];
	double end;
	int want;

	if (arg)
		*arg++ = '\0';
	else
		arg = line + strlen(line);
	if (!strcmp(line, "wait") || !strcmp(line, "gone")) {
		if (until(arg, line[0] == 'w'))
			return fail(arg, line[0] == 'w' ? "not shown" :
				    "still shown");
	} else if (!strcmp(line, "keys")) {
		type(arg);
	} else if (!strcmp(line, "sh")) {
		if (system(arg))
			return fail(arg, "command failed");
	} else if (!strcmp(line, "resize")) {
		if (set_size(arg))
			return fail(arg, "bad size");
	} else if (!strcmp(line, "kill")) {
		kill(child, !strcmp(arg, "TERM") ? SIGTERM : SIGINT);
	} else if (!strcmp(line, "sleep")) {
		end = now() + atof(arg);
		while (now() < end)
			drain(end - now());
	} else if (!strcmp(line, "clears")) {
		settle();
		if (clears > atoi(arg)) {
			snprintf(why, sizeof(why), "cleared %d times", clears);
			return fail(arg, why);
		}
	} else if (!strcmp(line, "screen")) {
		settle();
		print_screen(stdout);
		fflush(stdout);
	} else if (!strcmp(line, "exit")) {
		want = atoi(arg);
		end = now() + timeout_s;
		for (reap(); !exited && now() < end; reap())
			drain(0.05);
		if (!exited)
			return fail(arg, "still running");
		/* What it wrote last: endwin()'s restoring sequences. */
		drain(0.2);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != want) {
			snprintf(why, sizeof(why), "exit status %d",
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			return fail(arg, why);
		}
		if (!restored(why, sizeof(why)))
			return fail(arg, why);
	} else if (*line && *line != '#') {
		return fail(line, "unknown step");
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *size = "100x30", *t = getenv("PTYRUN_TIMEOUT");
	char line[1024];
	FILE *script;
	int i = 1;

	if (argc > 2 && !strcmp(argv[1], "-s")) {
		size = argv[2];
		i = 3;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: ptyrun [-s COLSxROWS] SCRIPT CMD [ARG...]\n");
		return 2;
	}
	if (t)
		timeout_s = atof(t);
	script = fopen(argv[i], "r");
	if (!script) {
		perror(argv[i]);
		return 2;
	}
	clear_screen();
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) || unlockpt(master) ||
	    set_size(size)) {
		perror("ptyrun: pty");
		return 2;
	}
	/* Kept open here, to look at its modes once the program is gone. */
	slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0) {
		perror("ptyrun: pty slave");
		return 2;
	}
	child = fork();
	if (!child) {
		setsid();
		ioctl(slave, TIOCSCTTY, 0);
		dup2(slave, 0);
		dup2(slave, 1);
		dup2(slave, 2);
		execvp(argv[i + 1], argv + i + 1);
		perror(argv[i + 1]);
		_exit(127);
	}
	while (fgets(line, sizeof(line), script)) {
		line[strcspn(line, "\n")] = '\0';
		if (run_step(line))
			return 1;
	}
	reap();
	if (!exited) {
		kill(child, SIGKILL);
		return fail("(end)", "the program did not exit");
	}
	return 0;
}
