// SPDX-License-Identifier: GPL-2.0
/*
 * ks-qmp: a minimal QMP client for the guest-side QEMU tests (busybox has
 * no unix-socket client).  Links statically; no library beyond libc.
 *
 * usage: ks-qmp [-t SECONDS] [-s|-S|-f KEY,...] SOCKET COMMAND_JSON...
 *
 * Connects to QEMU's QMP socket (waiting for it to appear, up to the
 * timeout), reads the greeting, negotiates capabilities, then sends each
 * COMMAND_JSON in turn and waits for its answer, skipping events.  An
 * "error" answer is printed on stderr and ends the run with status 1.
 *
 * Output, one answer after the other:
 *   default  the "return" value as compact JSON, one line per command
 *   -s       a query-stats answer as lines
 *              <qom-path|-> <provider> <name> <value>
 *            (a histogram's value is its buckets joined by commas)
 *   -S       a query-stats-schemas answer as lines
 *              <provider> <target> <name> <type> <unit|-> <base|->
 *              <exponent> <bucket-size|->
 *   -f KEYS  a list answer as one line per element: the members KEYS
 *            (comma-separated) of each, as words ("-" when absent)
 * In -s, -S and -f modes an answer that is not a list (e.g. from "stop")
 * prints nothing.  A connection QEMU closes after "quit" is not an error.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
	enum jtype type;
	bool b;
	char *s;		/* J_STR: the string; J_NUM: its text */
	size_t n;		/* J_ARR/J_OBJ: number of items */
	char **keys;		/* J_OBJ */
	struct jval **items;	/* J_ARR/J_OBJ */
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("ks-qmp: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory");
	return p;
}

/* ---- JSON parser (enough for QMP: no surrogate pairs needed) ---- */

static const char *jp;

static void skip_ws(void)
{
	while (*jp == ' ' || *jp == '\t' || *jp == '\r' || *jp == '\n')
		jp++;
}

static struct jval *jnew(enum jtype t)
{
	struct jval *v = xrealloc(NULL, sizeof(*v));

	memset(v, 0, sizeof(*v));
	v->type = t;
	return v;
}

static char *parse_string(void)
{
	size_t len = 0, cap = 16;
	char *s = xrealloc(NULL, cap);

	if (*jp != '"')
		die("JSON: expected a string at '%.20s'", jp);
	jp++;
	while (*jp != '"') {
		char c = *jp++;

		if (!c)
			die("JSON: unterminated string");
		if (c == '\\') {
			c = *jp++;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u': {
				unsigned int u;

				if (sscanf(jp, "%4x", &u) != 1)
					die("JSON: bad \\u escape");
				jp += 4;
				c = u < 0x80 ? (char)u : '?';
				break;
			}
			default: break;	/* \" \\ \/ */
			}
		}
		if (len + 2 > cap)
			s = xrealloc(s, cap *= 2);
		s[len++] = c;
	}
	jp++;
	s[len] = 0;
	return s;
}

static struct jval *parse_value(void)
{
	struct jval *v;

	skip_ws();
	if (*jp == '{' || *jp == '[') {
		bool obj = *jp == '{';

		v = jnew(obj ? J_OBJ : J_ARR);
		jp++;
		skip_ws();
		if (*jp == (obj ? '}' : ']')) {
			jp++;
			return v;
		}
		for (;;) {
			v->items = xrealloc(v->items, (v->n + 1) * sizeof(*v->items));
			if (obj) {
				v->keys = xrealloc(v->keys, (v->n + 1) * sizeof(*v->keys));
				skip_ws();
				v->keys[v->n] = parse_string();
				skip_ws();
				if (*jp++ != ':')
					die("JSON: expected ':'");
			}
			v->items[v->n++] = parse_value();
			skip_ws();
			if (*jp == ',') {
				jp++;
				continue;
			}
			if (*jp++ != (obj ? '}' : ']'))
				die("JSON: expected ',' or a closing bracket");
			return v;
		}
	}
	if (*jp == '"') {
		v = jnew(J_STR);
		v->s = parse_string();
		return v;
	}
	if (!strncmp(jp, "true", 4) || !strncmp(jp, "false", 5)) {
		v = jnew(J_BOOL);
		v->b = *jp == 't';
		jp += v->b ? 4 : 5;
		return v;
	}
	if (!strncmp(jp, "null", 4)) {
		jp += 4;
		return jnew(J_NULL);
	}
	if (*jp == '-' || (*jp >= '0' && *jp <= '9')) {
		const char *start = jp;

		v = jnew(J_NUM);
		while (*jp && strchr("+-0123456789.eE", *jp))
			jp++;
		v->s = strndup(start, jp - start);
		return v;
	}
	die("JSON: unexpected '%.20s'", jp);
	return NULL;
}

static struct jval *get(const struct jval *o, const char *key)
{
	size_t i;

	if (!o || o->type != J_OBJ)
		return NULL;
	for (i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return o->items[i];
	return NULL;
}

static void print_json(FILE *f, const struct jval *v)
{
	size_t i;
	const char *c;

	switch (v->type) {
	case J_NULL: fputs("null", f); break;
	case J_BOOL: fputs(v->b ? "true" : "false", f); break;
	case J_NUM: fputs(v->s, f); break;
	case J_STR:
		fputc('"', f);
		for (c = v->s; *c; c++) {
			if (*c == '"' || *c == '\\')
				fputc('\\', f);
			if ((unsigned char)*c < 0x20)
				fprintf(f, "\\u%04x", *c);
			else
				fputc(*c, f);
		}
		fputc('"', f);
		break;
	case J_ARR:
	case J_OBJ:
		fputc(v->type == J_OBJ ? '{' : '[', f);
		for (i = 0; i < v->n; i++) {
			if (i)
				fputc(',', f);
			if (v->type == J_OBJ)
				fprintf(f, "\"%s\":", v->keys[i]);
			print_json(f, v->items[i]);
		}
		fputc(v->type == J_OBJ ? '}' : ']', f);
		break;
	}
}

/* A scalar as one word: numbers and booleans as such, strings bare. */
static void print_word(const struct jval *v)
{
	size_t i;

	if (!v) {
		fputs("-", stdout);
		return;
	}
	switch (v->type) {
	case J_STR: fputs(v->s, stdout); break;
	case J_NUM: fputs(v->s, stdout); break;
	case J_BOOL: fputs(v->b ? "true" : "false", stdout); break;
	case J_ARR:
		for (i = 0; i < v->n; i++) {
			if (i)
				fputc(',', stdout);
			print_word(v->items[i]);
		}
		break;
	default: print_json(stdout, v); break;
	}
}

static void print_stats(const struct jval *ret)
{
	size_t i, j;

	for (i = 0; i < ret->n; i++) {
		const struct jval *r = ret->items[i];
		const struct jval *stats = get(r, "stats");

		if (!stats || stats->type != J_ARR)
			continue;
		for (j = 0; j < stats->n; j++) {
			print_word(get(r, "qom-path"));
			putchar(' ');
			print_word(get(r, "provider"));
			putchar(' ');
			print_word(get(stats->items[j], "name"));
			putchar(' ');
			print_word(get(stats->items[j], "value"));
			putchar('\n');
		}
	}
}

static void print_schemas(const struct jval *ret)
{
	static const char *const fields[] = {
		"name", "type", "unit", "base", "exponent", "bucket-size",
	};
	size_t i, j, k;

	for (i = 0; i < ret->n; i++) {
		const struct jval *r = ret->items[i];
		const struct jval *stats = get(r, "stats");

		if (!stats || stats->type != J_ARR)
			continue;
		for (j = 0; j < stats->n; j++) {
			print_word(get(r, "provider"));
			putchar(' ');
			print_word(get(r, "target"));
			for (k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
				putchar(' ');
				print_word(get(stats->items[j], fields[k]));
			}
			putchar('\n');
		}
	}
}

static void print_fields(const struct jval *ret, const char *keys)
{
	size_t i;

	for (i = 0; i < ret->n; i++) {
		char *list = strdup(keys), *save = NULL, *k;
		bool first = true;

		for (k = strtok_r(list, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
			if (!first)
				putchar(' ');
			first = false;
			print_word(get(ret->items[i], k));
		}
		putchar('\n');
		free(list);
	}
}

/* ---- the connection ---- */

static int sock = -1;
static char *rbuf;
static size_t rlen, rcap;

/* One line from QEMU without its line end, or NULL at end of stream. */
static char *read_line(void)
{
	static size_t consumed;
	char *nl;
	ssize_t r;

	if (consumed) {
		memmove(rbuf, rbuf + consumed, rlen - consumed);
		rlen -= consumed;
		consumed = 0;
	}
	for (;;) {
		nl = rlen ? memchr(rbuf, '\n', rlen) : NULL;
		if (nl) {
			*nl = 0;
			consumed = nl - rbuf + 1;
			return rbuf;
		}
		if (rlen + 4097 > rcap)
			rbuf = xrealloc(rbuf, rcap = (rcap + 4097) * 2);
		r = read(sock, rbuf + rlen, rcap - rlen - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("read: %s", strerror(errno));
		if (r == 0)
			return NULL;
		rlen += r;
	}
}

static void send_line(const char *s)
{
	size_t len = strlen(s), off = 0;
	ssize_t r;

	while (off < len + 1) {
		r = off < len ? write(sock, s + off, len - off) : write(sock, "\n", 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("write: %s", strerror(errno));
		off += r;
	}
}

/* The next message that is not an event; NULL at end of stream. */
static struct jval *next_answer(void)
{
	char *line;
	struct jval *v;

	while ((line = read_line())) {
		jp = line;
		skip_ws();
		if (!*jp)
			continue;
		v = parse_value();
		if (get(v, "event"))
			continue;
		return v;
	}
	return NULL;
}

static void on_alarm(int sig)
{
	static const char msg[] = "ks-qmp: timed out\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(3);
}

static void connect_socket(const char *path, int timeout)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	time_t end = time(NULL) + timeout;

	if (strlen(path) >= sizeof(sa.sun_path))
		die("socket path too long");
	strcpy(sa.sun_path, path);
	for (;;) {
		sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (sock < 0)
			die("socket: %s", strerror(errno));
		if (!connect(sock, (struct sockaddr *)&sa, sizeof(sa)))
			return;
		if (errno != ENOENT && errno != ECONNREFUSED)
			die("connect %s: %s", path, strerror(errno));
		close(sock);
		if (time(NULL) >= end)
			die("connect %s: %s (waited %ds)", path, strerror(errno), timeout);
		nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	int timeout = 30, opt, i;
	char mode = 'j';
	const char *fields = NULL;
	struct jval *v, *ret;

	while ((opt = getopt(argc, argv, "+t:sSf:")) != -1) {
		switch (opt) {
		case 't': timeout = atoi(optarg); break;
		case 'f': mode = 'f'; fields = optarg; break;
		case 's': mode = 's'; break;
		case 'S': mode = 'S'; break;
		default:
			fprintf(stderr, "usage: ks-qmp [-t SECONDS] [-s|-S|-f KEY,...] SOCKET COMMAND_JSON...\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: ks-qmp [-t SECONDS] [-s|-S|-f KEY,...] SOCKET COMMAND_JSON...\n");
		return 2;
	}
	signal(SIGALRM, on_alarm);
	alarm(timeout);
	connect_socket(argv[optind], timeout);

	v = next_answer();
	if (!v || !get(v, "QMP"))
		die("no QMP greeting");
	send_line("{\"execute\":\"qmp_capabilities\"}");
	v = next_answer();
	if (!v || !get(v, "return"))
		die("qmp_capabilities was refused");

	for (i = optind + 1; i < argc; i++) {
		send_line(argv[i]);
		v = next_answer();
		if (!v) {
			/* QEMU closes the socket as it quits. */
			if (strstr(argv[i], "\"quit\""))
				return 0;
			die("connection closed before the answer to %s", argv[i]);
		}
		if (get(v, "error")) {
			fprintf(stderr, "ks-qmp: %s: ", argv[i]);
			print_json(stderr, get(v, "error"));
			fputc('\n', stderr);
			return 1;
		}
		ret = get(v, "return");
		if (!ret)
			die("answer without \"return\" to %s", argv[i]);
		if (mode == 'j') {
			print_json(stdout, ret);
			putchar('\n');
		} else if (ret->type == J_ARR) {
			if (mode == 's')
				print_stats(ret);
			else if (mode == 'S')
				print_schemas(ret);
			else
				print_fields(ret, fields);
		}
	}
	return 0;
}
