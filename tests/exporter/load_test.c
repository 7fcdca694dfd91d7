// SPDX-License-Identifier: GPL-2.0
/*
 * Load test of kvm-statsfd-exporter on the host, loopback only: hostile
 * clients (half-open requests held, requests dripped a byte at a time,
 * requests abandoned with a reset, idle connections past the connection
 * limit, bursts of concurrent scrapes, a request trickled in past the
 * deadline, 560 trickling clients from one address, SIGHUP), each
 * followed by a normal scrape that must answer within a second; and the
 * exporter run unprivileged.  Bounded: at most about 1,200 sockets at
 * once, every wait has a deadline, and alarm() ends the whole test.
 *
 *   load_test EXPORTER
 *
 * Prints TAP; the last line is "N passed, N failed".
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

#define TIMEOUT_S	2	/* the exporter's --timeout here */
#define MAX_CONN	512	/* its --max-connections */
#define HALF_OPEN	300
#define DRIP		100
#define RESETS		200
#define OVER_LIMIT	(MAX_CONN + 100)
#define BURST		150
#define TRICKLE		560	/* past MAX_CONN, as in issue 22 */
#define TRICKLE_MAX_S	40	/* the flood stops then at the latest */
#define FLOOD_ADDR	"127.0.0.2"	/* the flood's address; scrapes use .1 */
#define REQ		"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"

static struct sockaddr_in addr;
static pid_t exporter = -1;
/* Source address of the next connections ("127.0.0.1" unless changed). */
static const char *src_addr = "127.0.0.1";

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A connected non-blocking socket, or -1; waits at most ms. */
static int connect_to(int ms)
{
	struct pollfd p;
	int fd, err = 0;
	socklen_t l = sizeof(err);

	struct sockaddr_in src = { .sin_family = AF_INET };

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* Loopback answers for all of 127/8: each test picks its address. */
	inet_pton(AF_INET, src_addr, &src.sin_addr);
	if (bind(fd, (struct sockaddr *)&src, sizeof(src)))
		goto fail;
	if (!connect(fd, (struct sockaddr *)&addr, sizeof(addr)))
		return fd;
	if (errno != EINPROGRESS)
		goto fail;
	p = (struct pollfd){ .fd = fd, .events = POLLOUT };
	if (poll(&p, 1, ms) != 1 ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) || err)
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

/*
 * One complete scrape within ms: 200, and the body ends with the
 * exporter's last metric.  Returns the time it took, or -1.
 */
static double scrape(int ms, char *why, size_t whylen)
{
	double t0 = now_ms(), left;
	static char buf[1 << 16];
	size_t got = 0;
	struct pollfd p;
	ssize_t n;
	int fd;

	snprintf(why, whylen, "connect");
	fd = connect_to(ms);
	if (fd < 0)
		return -1;
	if (write(fd, REQ, strlen(REQ)) != (ssize_t)strlen(REQ)) {
		snprintf(why, whylen, "write: %s", strerror(errno));
		close(fd);
		return -1;
	}
	for (;;) {
		left = ms - (now_ms() - t0);
		p = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (left <= 0 || poll(&p, 1, (int)left) != 1) {
			snprintf(why, whylen, "no answer within %d ms (%zu bytes)", ms, got);
			close(fd);
			return -1;
		}
		n = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			break;
		got += n;
		if (got == sizeof(buf) - 1)
			break;
	}
	close(fd);
	buf[got] = '\0';
	if (strncmp(buf, "HTTP/1.1 200", 12) || !strstr(buf, "\nkvm_exporter_vms ")) {
		snprintf(why, whylen, "bad answer: %.60s", buf);
		return -1;
	}
	return now_ms() - t0;
}

static void check_scrape(const char *what)
{
	char why[128];
	double ms = scrape(1000, why, sizeof(why));

	ok(ms >= 0, "%s: a normal scrape answers within 1 s (%.1f ms)", what, ms);
	if (ms < 0)
		tap_diag("%s", why);
}

static void close_all(int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/*
 * n connections, each with the start of a request and no end; gives up
 * on the rest after 8 s (a server that stopped accepting).
 */
static int open_half(int *fds, int n, const char *part)
{
	double t0 = now_ms();
	int i, k = 0;

	for (i = 0; i < n; i++) {
		fds[i] = now_ms() - t0 < 8000 ? connect_to(3000) : -1;
		if (fds[i] < 0)
			continue;
		k++;
		if (part && write(fds[i], part, strlen(part)) < 0)
			continue;
	}
	return k;
}

static void reset_close(int fd)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}

static void test_half_open_and_drip(void)
{
	static int half[HALF_OPEN], drip[DRIP];
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
	int nh, nd, i, round;
	char b = 'a';

	nh = open_half(half, HALF_OPEN, "GET /metrics HTTP/1.1\r\nHost: x\r\n");
	ok(nh == HALF_OPEN, "%d of %d half-open requests connected", nh, HALF_OPEN);
	check_scrape("300 half-open requests held");

	nd = open_half(drip, DRIP, req);
	/* A byte each every 300 ms: never idle long enough to time out. */
	for (round = 0; round < 4; round++) {
		for (i = 0; i < DRIP; i++)
			if (drip[i] >= 0 && write(drip[i], &b, 1) < 0)
				continue;
		usleep(300 * 1000);
	}
	ok(nd == DRIP, "%d of %d drip-feeding clients connected", nd, DRIP);
	check_scrape("300 half-open + 100 drip-feeding clients held");
	close_all(half, HALF_OPEN);
	close_all(drip, DRIP);
}

static void test_resets(void)
{
	static int fds[RESETS];
	int i, round, n = 0;

	/* Half a request, then a reset: 3 rounds, more than once the limit's worth of churn. */
	for (round = 0; round < 3; round++) {
		n += open_half(fds, RESETS, "GET /metrics HTTP/1.1\r\nHo");
		for (i = 0; i < RESETS; i++)
			if (fds[i] >= 0)
				reset_close(fds[i]);
	}
	ok(n == 3 * RESETS, "%d of %d half-requests abandoned with a reset", n, 3 * RESETS);
	check_scrape("after 600 abandoned half-requests");
}

static void test_over_limit(void)
{
	static int fds[OVER_LIMIT];
	int n;

	/*
	 * Past the connection limit the kernel's listen queue holds the
	 * rest; idle ones are closed after --timeout, and the exporter must
	 * take new connections again, not stop listening for good.
	 */
	n = open_half(fds, OVER_LIMIT, NULL);
	ok(n >= MAX_CONN, "%d idle connections open (limit %d)", n, MAX_CONN);
	usleep((TIMEOUT_S * 1000 + 1500) * 1000);
	check_scrape("612 idle connections held past the timeout");
	close_all(fds, OVER_LIMIT);
	usleep(200 * 1000);
	check_scrape("after 612 idle connections closed");
}

static void test_burst(void)
{
	static int fds[BURST];
	static char buf[1 << 16];
	struct pollfd p[BURST];
	int i, n, done = 0, okc = 0, busy = 0;
	double t0 = now_ms();
	ssize_t r;

	for (i = 0; i < BURST; i++) {
		fds[i] = connect_to(2000);
		if (fds[i] >= 0 && write(fds[i], REQ, strlen(REQ)) != (ssize_t)strlen(REQ)) {
			close(fds[i]);
			fds[i] = -1;
		}
	}
	/*
	 * Read every answer to its end: a 200, or past --max-requests (40,
	 * the default) a 503 at once, never nothing.
	 */
	while (done < BURST && now_ms() - t0 < 10000) {
		for (i = 0, n = 0; i < BURST; i++)
			p[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
		if (poll(p, BURST, 100) < 0)
			break;
		for (i = 0; i < BURST; i++) {
			if (fds[i] < 0)
				continue;
			n++;
			if (!p[i].revents)
				continue;
			r = read(fds[i], buf, sizeof(buf));
			if (r < 0 && errno == EAGAIN)
				continue;
			if (r > 12 && !strncmp(buf, "HTTP/1.1 200", 12))
				okc++;
			if (r > 12 && !strncmp(buf, "HTTP/1.1 503", 12))
				busy++;
			if (r <= 0) {
				close(fds[i]);
				fds[i] = -1;
				done++;
			}
		}
		if (!n)
			break;
	}
	for (i = 0; i < BURST; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	ok(okc >= 40 && okc + busy == BURST,
	   "%d concurrent scrapes all answered within 10 s (%.0f ms): %d with 200, %d with 503 (--max-requests 40)",
	   BURST, now_ms() - t0, okc, busy);
}

/*
 * A request dripped a byte every 500 ms, never idle for --timeout: the
 * exporter must close it once --timeout seconds have passed since the
 * connection was accepted, whatever keeps trickling in.
 */
static void test_deadline(void)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
	double t0 = now_ms(), closed_ms = -1;
	struct pollfd p;
	char b = 'a', buf[512];
	int fd = connect_to(2000);

	if (fd >= 0 && write(fd, req, strlen(req)) < 0) {
		close(fd);
		fd = -1;
	}
	/* Give up at 3 x --timeout: an idle timeout never closes it. */
	while (fd >= 0 && now_ms() - t0 < 3 * TIMEOUT_S * 1000) {
		p = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 500) == 1 && read(fd, buf, sizeof(buf)) <= 0) {
			closed_ms = now_ms() - t0;
			break;
		}
		if (write(fd, &b, 1) < 0) {
			closed_ms = now_ms() - t0;
			break;
		}
	}
	if (fd >= 0)
		close(fd);
	/*
	 * The exporter checks its deadlines four times a second; 1.5 s of
	 * slack covers that and a loaded machine.
	 */
	ok(closed_ms >= 0 && closed_ms < TIMEOUT_S * 1000 + 1500,
	   "a request trickling in is closed --timeout (%d s) after accept, not kept while it trickles (closed after %.0f ms)",
	   TIMEOUT_S, closed_ms);
}

/*
 * The trickle flood of issue 22: TRICKLE clients from FLOOD_ADDR, each
 * sending one header byte a second (never idle for --timeout), in a
 * child process, until stop is readable (or TRICKLE_MAX_S).  A client the
 * exporter closes reconnects at once, as an attacker's would.  Writes the
 * most clients connected at once to out.
 */
static void trickle_flood(int stop, int out)
{
	struct pollfd sp = { .fd = stop, .events = POLLIN };
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
	static int fds[TRICKLE];
	double t0 = now_ms(), next = 0;
	int i, n, most = 0, reconnects = 0;
	char b = 'a', buf[256];

	src_addr = FLOOD_ADDR;
	for (i = 0; i < TRICKLE; i++) {
		fds[i] = connect_to(1000);
		if (fds[i] >= 0 && write(fds[i], req, strlen(req)) < 0) {
			close(fds[i]);
			fds[i] = -1;
		}
	}
	while (now_ms() - t0 < TRICKLE_MAX_S * 1000) {
		if (poll(&sp, 1, 50) != 0)
			break;
		if (now_ms() < next)
			continue;
		next = now_ms() + 1000;
		for (i = 0, n = 0; i < TRICKLE; i++) {
			/* Closed by the exporter (EOF or reset): come back. */
			if (fds[i] >= 0 && (read(fds[i], buf, sizeof(buf)) == 0 ||
					    write(fds[i], &b, 1) < 0)) {
				close(fds[i]);
				fds[i] = -1;
			}
			if (fds[i] < 0) {
				fds[i] = connect_to(100);
				reconnects++;
				if (fds[i] >= 0 && write(fds[i], req, strlen(req)) < 0) {
					close(fds[i]);
					fds[i] = -1;
				}
			}
			n += fds[i] >= 0;
		}
		if (n > most)
			most = n;
	}
	close_all(fds, TRICKLE);
	dprintf(out, "%d %d\n", most, reconnects);
	_exit(0);
}

/*
 * While the flood runs, scrapes from another address must be answered,
 * and a scrape right after the flood ends too.  Timing tolerances, for
 * a loaded 2-core machine: each scrape may take 2 s (it takes
 * milliseconds), and 4 of the 6 during the flood must be answered (an
 * exporter without a deadline and a per-address share answers none).
 */
static void test_trickle_flood(void)
{
	int pfd[2], stop[2], i, answered = 0, same = 0, most = 0, reconnects = 0, st;
	char why[128], line[64] = "";
	ssize_t n;
	pid_t child;

	if (pipe(pfd) || pipe(stop)) {
		ok(0, "pipe");
		return;
	}
	child = fork();
	if (!child) {
		close(pfd[0]);
		close(stop[1]);
		trickle_flood(stop[0], pfd[1]);
	}
	close(pfd[1]);
	close(stop[0]);
	sleep(2);	/* the flood connected and trickling */
	for (i = 0; i < 6; i++) {
		double t0 = now_ms();

		src_addr = "127.0.0.1";
		if (scrape(2000, why, sizeof(why)) >= 0)
			answered++;
		else
			tap_diag("scrape %d during the flood: %s", i, why);
		src_addr = FLOOD_ADDR;
		if (i < 2)
			same += scrape(2000, why, sizeof(why)) >= 0;
		src_addr = "127.0.0.1";
		if (now_ms() - t0 < 600)
			usleep((useconds_t)(600 - (now_ms() - t0)) * 1000);
	}
	close(stop[1]);		/* the flood ends */
	n = read(pfd[0], line, sizeof(line) - 1);
	if (n > 0)
		line[n] = '\0';
	close(pfd[0]);
	waitpid(child, &st, 0);
	if (sscanf(line, "%d %d", &most, &reconnects) != 2)
		tap_diag("the flood reported nothing");
	ok(most >= MAX_CONN, "%d trickling clients from %s: up to %d connected at once (%d reconnections)",
	   TRICKLE, FLOOD_ADDR, most, reconnects);
	ok(answered >= 4, "during the flood, %d of 6 scrapes from another address answered within 2 s (4 needed)",
	   answered);
	tap_diag("during the flood, %d of 2 scrapes from the flood's own address answered", same);
	/* Right after: the flood's sockets are closed, none may linger. */
	check_scrape("right after the trickle flood ended");
	src_addr = FLOOD_ADDR;
	check_scrape("right after the trickle flood ended, from the flood's address");
	src_addr = "127.0.0.1";
}

static void test_sighup(void)
{
	int st;

	kill(exporter, SIGHUP);
	usleep(300 * 1000);
	if (waitpid(exporter, &st, WNOHANG) == exporter)
		exporter = -1;	/* reaped: SIGTERM below fails */
	ok(exporter > 0, "SIGHUP does not stop the exporter");
	check_scrape("after SIGHUP");
}

/*
 * Without the privilege to read other processes' fds the exporter must
 * say so: an error on standard error, and kvm_exporter_processes_denied
 * above 0 (as root it is 0).  Needs root and setpriv(1) to drop to
 * nobody; skipped otherwise.
 */
static void test_unprivileged(const char *bin)
{
	char cmd[1024], line[512], err[1024] = "", err_file[64];
	unsigned int root_denied = ~0u, denied = 0;
	FILE *p;
	size_t n;

	if (geteuid() || access("/usr/bin/setpriv", X_OK)) {
		ok(1, "# SKIP unprivileged exporter: needs root and setpriv");
		return;
	}
	snprintf(err_file, sizeof(err_file), "/tmp/kvm-statsfd-load-test.%d.err", (int)getpid());
	snprintf(cmd, sizeof(cmd), "'%s' --once --no-machined 2>/dev/null", bin);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p))
		sscanf(line, "kvm_exporter_processes_denied %u", &root_denied);
	if (p)
		pclose(p);
	ok(root_denied == 0, "as root, kvm_exporter_processes_denied is 0 (%d)", (int)root_denied);
	snprintf(cmd, sizeof(cmd),
		 "setpriv --reuid=65534 --regid=65534 --clear-groups '%s' --once --no-machined 2>%s",
		 bin, err_file);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p))
		if (sscanf(line, "kvm_exporter_processes_denied %u", &denied) == 1)
			break;
	if (p) {
		while (fgets(line, sizeof(line), p))
			;
		pclose(p);
	}
	p = fopen(err_file, "r");
	if (p) {
		n = fread(err, 1, sizeof(err) - 1, p);
		err[n] = '\0';
		fclose(p);
	}
	unlink(err_file);
	ok(denied > 0, "as nobody, kvm_exporter_processes_denied is above 0 (%u)", denied);
	ok(strstr(err, "cannot be read") && strstr(err, "CAP_SYS_PTRACE"),
	   "as nobody, an error on standard error says the fds cannot be read (%.100s)", err);
}

static int start_exporter(const char *bin)
{
	char listen[64], why[128];
	int fd, i;
	socklen_t l = sizeof(addr);

	/* A free port: bind to 0, note it, let go. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = 0;
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    getsockname(fd, (struct sockaddr *)&addr, &l))
		return -1;
	close(fd);
	snprintf(listen, sizeof(listen), "127.0.0.1:%u", ntohs(addr.sin_port));
	exporter = fork();
	if (exporter < 0)
		return -1;
	if (!exporter) {
		char to[16], mc[16];

		snprintf(to, sizeof(to), "%d", TIMEOUT_S);
		snprintf(mc, sizeof(mc), "%d", MAX_CONN);
		execl(bin, bin, "--listen", listen, "--timeout", to,
		      "--max-connections", mc, "--no-machined", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 50; i++) {
		if (scrape(1000, why, sizeof(why)) >= 0)
			return 0;
		usleep(100 * 1000);
	}
	return -1;
}

static void on_alarm(int sig)
{
	(void)sig;
	if (exporter > 0)
		kill(exporter, SIGKILL);
	/* Not async-signal-safe, but the test is over either way. */
	ok(0, "load test finished within 120 s (the exporter stopped answering)");
	tap_done();
	fflush(stdout);
	_exit(1);
}

int main(int argc, char **argv)
{
	struct rlimit rl;
	int st = 0, i;

	if (argc != 2) {
		fprintf(stderr, "usage: load_test EXPORTER\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	alarm(120);
	/* Room for the sockets of the test and of the exporter. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < 4096) {
		rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (start_exporter(argv[1])) {
		ok(0, "exporter %s starts and answers", argv[1]);
		if (exporter > 0)
			kill(exporter, SIGKILL);
		return tap_done();
	}
	ok(1, "exporter starts and answers on 127.0.0.1:%u", ntohs(addr.sin_port));
	test_unprivileged(argv[1]);
	check_scrape("no load");
	test_half_open_and_drip();
	test_resets();
	test_over_limit();
	test_burst();
	test_deadline();
	test_trickle_flood();
	test_sighup();
	check_scrape("after everything");

	if (exporter < 0) {
		ok(0, "SIGTERM stops the exporter with status 0 within 2 s (it was gone)");
		return tap_done();
	}
	kill(exporter, SIGTERM);
	for (i = 0; i < 40 && !waitpid(exporter, &st, WNOHANG); i++)
		usleep(50 * 1000);
	if (i == 40) {
		kill(exporter, SIGKILL);
		waitpid(exporter, &st, 0);
	}
	ok(i < 40 && WIFEXITED(st) && !WEXITSTATUS(st),
	   "SIGTERM stops the exporter with status 0 within 2 s");
	return tap_done();
}
