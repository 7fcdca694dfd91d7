// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-statsfd-exporter: KVM binary statistics of every running VM as
 * Prometheus metrics over HTTP.  See Documentation/exporter.rst.
 *
 * Two threads: libmicrohttpd's own (its internal epoll loop, with a
 * connection timeout and limit: see serve()), which answers requests and
 * renders scrapes, and the main one, which waits for signals and closes
 * the stats fds of VMs whose VMM exited.  One lock keeps the VM state
 * theirs in turn.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <zlib.h>

#include "kvm_statsfd/version.h"
#include "auth.h"
#include "state.h"
#include "web_config.h"

#define EXIT_OK		0
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

#define DEFAULT_LISTEN	"127.0.0.1:9798"
#define DEFAULT_TIMEOUT	10	/* seconds for a request, and idle */
#define DEFAULT_MAX_CONN	512
/* /metrics requests in flight at once, as node_exporter's --web.max-requests. */
#define DEFAULT_MAX_REQUESTS	40
/*
 * zlib's fastest level: at 1,000 VMs x 10 vCPUs it deflates the 414 MB
 * of --vcpu --collect all text in about a third of level 6's time, for
 * a body about a third larger (Documentation/exporter.rst, "Scale").
 */
#define GZIP_LEVEL	1
/* libmicrohttpd's limit is ours plus this, for connections being closed. */
#define MHD_SLACK	64
#define CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"

static const char usage_text[] =
"NAME\n"
"    kvm-statsfd-exporter - Prometheus exporter of KVM VM and vCPU statistics\n"
"\n"
"SYNOPSIS\n"
"    kvm-statsfd-exporter [--listen ADDR:PORT] [--vcpu] [--collect GROUPS]\n"
"                         [--exit-reasons all|seen|none]\n"
"                         [--timeout S] [--max-connections N]\n"
"                         [--max-connections-per-address N]\n"
"                         [--max-requests N] [--web-config FILE] [-v]\n"
"    kvm-statsfd-exporter --once [--vcpu] [--collect GROUPS]\n"
"                         [--exit-reasons all|seen|none]\n"
"    kvm-statsfd-exporter --help | --version\n"
"\n"
"DESCRIPTION\n"
"    Serves the KVM binary statistics (KVM_GET_STATS_FD) of every VM on\n"
"    this host at http://ADDR:PORT/metrics, in the Prometheus text format\n"
"    (gzip-compressed when the client accepts it).  VMs are found the way\n"
"    kvm-statsfd finds them: /proc/*/fd, pidfd_getfd(2), KVM_GET_STATS_FD,\n"
"    or the VMM's own stats fds when KVM refuses the ioctl to outsiders;\n"
"    every fd taken is checked to be a KVM fd first.  Stats fds stay open\n"
"    between scrapes and are closed within a second of their VMM exiting.\n"
"    VM state is never changed.  Needs root (or CAP_SYS_PTRACE and\n"
"    CAP_DAC_READ_SEARCH): without them, an error says so and\n"
"    kvm_exporter_processes_denied counts the processes it could not\n"
"    look into.  Concurrent scrapes share one rendering.\n"
"\n"
"    Series are VM-wide (kvm_vm_*) unless --vcpu adds kvm_vcpu_* ones, and\n"
"    labelled vm: the libvirt domain name or machine name that\n"
"    systemd-machined has for the VMM, else OWNER/NAME from QEMU's -name\n"
"    (OWNER/pid-PID without one).  kvm_vm_info adds uuid, source, pid and\n"
"    comm.  Times are in seconds.  Documentation/exporter.rst has the\n"
"    full mapping.\n"
"\n"
"OPTIONS\n"
"    -l, --listen ADDR:PORT   where to listen (default " DEFAULT_LISTEN ");\n"
"                             [IPV6]:PORT for IPv6, :PORT for any address\n"
"    --once                   write one scrape to standard output and exit\n"
"    --vcpu                   per-vCPU series too (kvm_vcpu_*, label vcpu)\n"
"    --collect GROUPS         stat groups, comma-separated: scalars, exits,\n"
"                             userspace-exits, histograms; default (the\n"
"                             first three), all\n"
"    --exit-reasons WHICH     the exits group's kvm_*_exits_by_reason_total\n"
"                             (by the vendor's reason): every reason, zeros\n"
"                             too (all), the reasons counted so far (seen,\n"
"                             the default) or none; kvm_*_exits_by_class_total\n"
"                             (io, npf, msr, hlt, intr, ...: the same on\n"
"                             SVM and VMX) always has every class\n"
"    --timeout S              a request must arrive whole within S seconds\n"
"                             of the accept (or of the previous answer on\n"
"                             a kept-alive connection), and a connection\n"
"                             idle for S seconds is closed (default 10)\n"
"    --max-connections N      connections at once (default 512); past\n"
"                             it, the oldest whose request has not arrived\n"
"                             whole is closed to make room, or the new one\n"
"                             when all are being answered\n"
"    --max-connections-per-address N\n"
"                             the same for each client address (IPv4\n"
"                             address, IPv6 /64; loopback too); default\n"
"                             half of --max-connections\n"
"    --max-requests N         /metrics requests in flight at once (default\n"
"                             40; 0: no limit); past it, 503 (counted in\n"
"                             kvm_exporter_requests_refused_total)\n"
"    --web-config FILE        TLS and basic authentication, in the format\n"
"                             of Prometheus' exporter-toolkit:\n"
"                             tls_server_config (cert_file, key_file) and\n"
"                             basic_auth_users (NAME: bcrypt hash); other\n"
"                             keys are errors\n"
"    --no-machined            do not ask systemd-machined for VM names\n"
"                             (--libvirt-dir, which read libvirt's own\n"
"                             files, is accepted and ignored)\n"
"    --synthetic-vms N:V:FILE for tests: no discovery, N VMs of V vCPUs,\n"
"                             every stats fd FILE opened anew\n"
"    -v, --verbose            report VMs appearing and going on stderr\n"
"    --version                print the version and exit\n"
"    -h, --help               this text\n"
"\n"
"SIGNALS\n"
"    SIGINT, SIGTERM: stop.  SIGHUP: read --web-config again; its users\n"
"    apply at once, a new TLS key pair at the next start (an invalid file\n"
"    is reported and the old configuration kept).  Without --web-config,\n"
"    SIGHUP is logged and ignored.\n"
"\n"
"EXIT STATUS\n"
"    0 stopped by SIGINT or SIGTERM (or --once succeeded), 1 runtime error\n"
"    (cannot listen, cannot scan /proc), 2 usage error (an invalid\n"
"    --web-config too).  Errors go to standard error.\n";

static const char index_html[] =
"<html><head><title>kvm-statsfd-exporter</title></head><body>\n"
"<h1>kvm-statsfd-exporter</h1><p><a href=\"/metrics\">Metrics</a></p>\n"
"</body></html>\n";

static void usage_error(const char *fmt, const char *arg)
{
	fputs("kvm-statsfd-exporter: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'kvm-statsfd-exporter --help'.\n", stderr);
	exit(EXIT_USAGE);
}

/*
 * "127.0.0.1:9798", "[::1]:9798", ":9798", "localhost:9798".  Returns the
 * getaddrinfo() list, or exits with a usage error.
 */
static struct addrinfo *parse_listen(const char *arg)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	};
	struct addrinfo *ai;
	char host[256], *colon, *end;
	const char *port;
	long p;
	int ret;

	if (strlen(arg) >= sizeof(host))
		usage_error("listen address too long: '%s'", arg);
	strcpy(host, arg);
	if (host[0] == '[') {
		colon = strchr(host, ']');
		if (!colon || colon[1] != ':')
			usage_error("invalid listen address '%s' (want [IPV6]:PORT)", arg);
		*colon = '\0';
		port = colon + 2;
		memmove(host, host + 1, strlen(host));
	} else {
		colon = strrchr(host, ':');
		if (!colon || strchr(host, ':') != colon)
			usage_error("invalid listen address '%s' (want ADDR:PORT)", arg);
		*colon = '\0';
		port = colon + 1;
	}
	errno = 0;
	p = strtol(port, &end, 10);
	if (errno || end == port || *end || p < 1 || p > 65535)
		usage_error("invalid port in '%s' (1 to 65535)", arg);
	ret = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
	if (ret) {
		fprintf(stderr, "kvm-statsfd-exporter: listen address '%s': %s\n",
			arg, gai_strerror(ret));
		exit(ret == EAI_NONAME ? EXIT_USAGE : EXIT_RUNTIME);
	}
	return ai;
}

/* Our own listening socket, so that bind errors are ours to explain. */
static int open_listener(const char *arg)
{
	struct addrinfo *ai = parse_listen(arg), *a;
	int fd = -1, one = 1, err = 0;

	for (a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC,
			    a->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, a->ai_addr, a->ai_addrlen) && !listen(fd, SOMAXCONN))
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		fprintf(stderr, "kvm-statsfd-exporter: cannot listen on %s: %s\n",
			arg, strerror(err));
	return fd;
}

static struct exporter exp_state;
static pthread_mutex_t exp_lock = PTHREAD_MUTEX_INITIALIZER;
/* --web-config: its path, and what was read at start. */
static const char *web_config_path;
static struct web_config web;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Connections.  libmicrohttpd's own timeout is an idle one, and its
 * per-IP limit refuses new connections where the old ones are the slow
 * ones, so the exporter keeps its own list (notify_conn()):
 *
 * - a request must arrive whole within --timeout seconds of the accept
 *   (or of the end of the previous answer on a kept-alive connection),
 *   however it trickles in: sweep_deadlines(), from the main thread four
 *   times a second, shuts down the socket of any that has not;
 * - each peer address (IPv4 address, IPv6 /64) has at most
 *   --max-connections-per-address, all of them at most --max-connections;
 *   a connection past either limit makes room by closing the oldest one
 *   of that address (or of all) whose request has not arrived whole yet,
 *   and is closed itself only when every one is being answered.  So a
 *   client that sends its request at once is served whatever others
 *   hold, as long as it is not outpaced by a flood of new connections.
 *
 * Sockets are only ever shut down under conn_lock, and a connection
 * leaves the list (under conn_lock, in libmicrohttpd's close
 * notification) before libmicrohttpd closes its fd: no fd number is shut
 * down after it was reused.
 */
struct conn {
	struct conn *prev, *next;
	int fd;
	unsigned char key[16];	/* address bucket */
	double start;		/* deadline counts from here */
	int busy;		/* request arrived whole: being answered */
	int closing;		/* shut down by us, not yet closed */
};

static pthread_mutex_t conn_lock = PTHREAD_MUTEX_INITIALIZER;
static struct conn *conns;
static unsigned int conn_timeout = DEFAULT_TIMEOUT;
static unsigned int conn_max = DEFAULT_MAX_CONN;
static unsigned int conn_max_per_addr;	/* default: half of conn_max, in main() */
static unsigned long conns_refused;	/* closed by the limits */
static unsigned long conns_timed_out;	/* closed by the deadline */

/* IPv4: the address; IPv6: its /64 (one host usually has a whole /64). */
static void addr_key(const struct sockaddr *sa, unsigned char key[16])
{
	memset(key, 0, 16);
	if (sa && sa->sa_family == AF_INET) {
		memcpy(key, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			memcpy(key, &a->s6_addr[12], 4);
		} else {
			key[15] = 6;	/* never equal to an IPv4 key */
			memcpy(key, a, 8);
		}
	}
}

static void conn_shut(struct conn *k)
{
	k->closing = 1;
	shutdown(k->fd, SHUT_RDWR);
}

/*
 * The oldest connection still waiting for its request, of key's address
 * (or of any with key NULL).
 */
static struct conn *oldest_waiting(const unsigned char *key)
{
	struct conn *k, *best = NULL;

	for (k = conns; k; k = k->next)
		if (!k->busy && !k->closing && (!key || !memcmp(k->key, key, 16)) &&
		    (!best || k->start < best->start))
			best = k;
	return best;
}

/* A new connection: make room for it within the limits, or close it. */
static void conn_admit(struct conn *n)
{
	unsigned int all = 0, same = 0;
	struct conn *k, *victim = NULL;

	for (k = conns; k; k = k->next) {
		if (k->closing)
			continue;
		all++;
		same += !memcmp(k->key, n->key, 16);
	}
	if (same >= conn_max_per_addr) {
		victim = oldest_waiting(n->key);
		if (!victim) {
			conn_shut(n);
			conns_refused++;
			return;
		}
	} else if (all >= conn_max) {
		victim = oldest_waiting(NULL);
		if (!victim) {
			conn_shut(n);
			conns_refused++;
			return;
		}
	}
	if (victim) {
		conn_shut(victim);
		conns_refused++;
	}
}

static void notify_conn(void *cls, struct MHD_Connection *c,
			void **socket_context, enum MHD_ConnectionNotificationCode toe)
{
	const union MHD_ConnectionInfo *ci;
	struct conn *k = *socket_context;

	(void)cls;
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (!k)
			return;
		pthread_mutex_lock(&conn_lock);
		if (k->prev)
			k->prev->next = k->next;
		else
			conns = k->next;
		if (k->next)
			k->next->prev = k->prev;
		pthread_mutex_unlock(&conn_lock);
		free(k);
		*socket_context = NULL;
		return;
	}
	k = calloc(1, sizeof(*k));
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!k || !ci) {
		free(k);
		if (ci)
			shutdown(ci->connect_fd, SHUT_RDWR);
		return;
	}
	k->fd = ci->connect_fd;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	addr_key(ci ? ci->client_addr : NULL, k->key);
	k->start = now_s();
	pthread_mutex_lock(&conn_lock);
	conn_admit(k);
	k->next = conns;
	if (conns)
		conns->prev = k;
	conns = k;
	pthread_mutex_unlock(&conn_lock);
	*socket_context = k;
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static void conn_set_busy(struct MHD_Connection *c, int busy)
{
	struct conn *k = conn_of(c);

	if (!k)
		return;
	pthread_mutex_lock(&conn_lock);
	k->busy = busy;
	if (!busy)
		k->start = now_s();	/* the next request's deadline */
	pthread_mutex_unlock(&conn_lock);
}

/* Shut down the connections whose request is late.  Main thread. */
static void sweep_deadlines(void)
{
	double now = now_s();
	struct conn *k;

	pthread_mutex_lock(&conn_lock);
	for (k = conns; k; k = k->next)
		if (!k->busy && !k->closing && now - k->start >= conn_timeout) {
			conn_shut(k);
			conns_timed_out++;
		}
	pthread_mutex_unlock(&conn_lock);
}

/*
 * Scrapes.  One render at a time, made by the render thread, outside
 * libmicrohttpd's thread and under exp_lock only: a scrape request
 * suspends its connection and joins the render being made, if that
 * render makes its encoding (plain or gzip), or the next one; when the
 * render is done every connection that joined it is resumed and answered
 * from it.  So any number of concurrent scrapes cost one render, and
 * libmicrohttpd's thread only ever copies bytes (non-blocking sockets: a
 * client that reads slowly delays nobody else).  The render is made as
 * the text is written: deflated on the fly for gzip, and the plain text
 * kept only when a client asked for it.
 */
struct render {
	int refs;		/* under render_lock */
	int want_plain, want_gz;
	int ret;		/* 0 or -errno */
	char *plain, *gz;
	size_t plain_len, plain_cap, gz_len, gz_cap;
	z_stream z;
	int z_ok;
};

struct scrape_req {
	struct scrape_req *next;
	struct MHD_Connection *c;
	int gzip;
	struct render *r;	/* set before it is resumed; a reference */
};

static pthread_mutex_t render_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t render_cond = PTHREAD_COND_INITIALIZER;
static struct scrape_req *waiting;	/* for the next render */
static struct scrape_req *joined;	/* for the render being made */
static struct render *current;		/* being made, or NULL */
static int render_stop;
static unsigned long renders;
/* /metrics requests from arrival to their answer's end; past the limit, 503. */
static unsigned int requests, max_requests = DEFAULT_MAX_REQUESTS;
static unsigned long requests_refused;
static int serving;	/* over HTTP, not --once */
/* *con_cls of a request answered, and of one whose head arrived. */
static char answered_marker, head_marker;

static void render_unref(struct render *r)
{
	int last;

	if (!r)
		return;
	pthread_mutex_lock(&render_lock);
	last = !--r->refs;
	pthread_mutex_unlock(&render_lock);
	if (!last)
		return;
	if (r->z_ok)
		deflateEnd(&r->z);
	free(r->plain);
	free(r->gz);
	free(r);
}

static int buf_append(char **buf, size_t *len, size_t *cap, const char *p,
		      size_t n)
{
	char *nb;
	size_t nc;

	if (*len + n > *cap) {
		nc = *cap ? *cap : 1 << 16;
		while (nc < *len + n)
			nc *= 2;
		nb = realloc(*buf, nc);
		if (!nb)
			return -ENOMEM;
		*buf = nb;
		*cap = nc;
	}
	memcpy(*buf + *len, p, n);
	*len += n;
	return 0;
}

/* Deflate avail_in (all of it, or to the end with Z_FINISH) into r->gz. */
static int render_deflate(struct render *r, int flush)
{
	int ret;

	do {
		if (r->gz_cap - r->gz_len < 1 << 15) {
			size_t nc = r->gz_cap ? r->gz_cap * 2 : 1 << 16;
			char *nb = realloc(r->gz, nc);

			if (!nb)
				return -ENOMEM;
			r->gz = nb;
			r->gz_cap = nc;
		}
		r->z.next_out = (Bytef *)r->gz + r->gz_len;
		r->z.avail_out = (uInt)(r->gz_cap - r->gz_len);
		ret = deflate(&r->z, flush);
		r->gz_len = r->gz_cap - r->z.avail_out;
		if (ret == Z_STREAM_ERROR)
			return -EIO;
	} while (flush == Z_FINISH ? ret != Z_STREAM_END : r->z.avail_in > 0);
	return 0;
}

static ssize_t render_write(void *cookie, const char *buf, size_t len)
{
	struct render *r = cookie;

	if (r->want_plain &&
	    buf_append(&r->plain, &r->plain_len, &r->plain_cap, buf, len)) {
		errno = ENOMEM;
		return -1;
	}
	if (r->want_gz) {
		r->z.next_in = (Bytef *)buf;
		r->z.avail_in = (uInt)len;	/* len: stdio's buffer at most */
		if (render_deflate(r, Z_NO_FLUSH)) {
			errno = ENOMEM;
			return -1;
		}
	}
	return (ssize_t)len;
}

/* One scrape written to f: the exporter's state is shared, so under the lock. */
static int scrape_to(FILE *f)
{
	char dur[40];
	double t0 = now_s();
	int ret;

	pthread_mutex_lock(&exp_lock);
	ret = exporter_scrape(&exp_state, f);
	pthread_mutex_unlock(&exp_lock);
	prom_format_double(now_s() - t0, dur, sizeof(dur));
	fprintf(f, "# HELP kvm_exporter_scrape_duration_seconds Time this scrape took to read every stats fd and render, compression included.\n"
		"# TYPE kvm_exporter_scrape_duration_seconds gauge\n"
		"kvm_exporter_scrape_duration_seconds %s\n", dur);
	if (!serving)
		goto build_info;	/* --once */
	pthread_mutex_lock(&conn_lock);
	fprintf(f, "# HELP kvm_exporter_http_connections_closed_total Connections the exporter closed: limit, past --max-connections or --max-connections-per-address; deadline, request not whole within --timeout.\n"
		"# TYPE kvm_exporter_http_connections_closed_total counter\n"
		"kvm_exporter_http_connections_closed_total{reason=\"limit\"} %lu\n"
		"kvm_exporter_http_connections_closed_total{reason=\"deadline\"} %lu\n",
		conns_refused, conns_timed_out);
	pthread_mutex_unlock(&conn_lock);
	pthread_mutex_lock(&render_lock);
	fprintf(f, "# HELP kvm_exporter_renders_total Scrapes rendered; concurrent requests share one.\n"
		"# TYPE kvm_exporter_renders_total counter\n"
		"kvm_exporter_renders_total %lu\n"
		"# HELP kvm_exporter_requests_refused_total Scrape requests answered 503: as many in flight as --max-requests.\n"
		"# TYPE kvm_exporter_requests_refused_total counter\n"
		"kvm_exporter_requests_refused_total %lu\n", renders, requests_refused);
	pthread_mutex_unlock(&render_lock);
	if (web_config_path)
		fprintf(f, "# HELP kvm_exporter_http_requests_unauthorized_total Requests answered 401: no credentials, or not those of a basic_auth_users entry of --web-config.\n"
			"# TYPE kvm_exporter_http_requests_unauthorized_total counter\n"
			"kvm_exporter_http_requests_unauthorized_total %lu\n",
			auth_refused());
build_info:
	fputs("# HELP kvm_exporter_build_info The exporter's version; always 1.\n"
	      "# TYPE kvm_exporter_build_info gauge\n"
	      "kvm_exporter_build_info{version=\"" KVM_STATSFD_VERSION "\"} 1\n", f);
	return ret;
}

static void render_make(struct render *r)
{
	cookie_io_functions_t io = { .write = render_write };
	FILE *f;
	int ret;

	if (r->want_gz) {
		if (deflateInit2(&r->z, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8,
				 Z_DEFAULT_STRATEGY) != Z_OK) {
			r->ret = -ENOMEM;
			return;
		}
		r->z_ok = 1;
	}
	f = fopencookie(r, "w", io);
	if (!f) {
		r->ret = -ENOMEM;
		return;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	/* Only this thread writes to f: no lock per stdio call. */
	__fsetlocking(f, FSETLOCKING_BYCALLER);
	ret = scrape_to(f);
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (!ret && r->want_gz)
		ret = render_deflate(r, Z_FINISH);
	if (r->z_ok) {
		deflateEnd(&r->z);
		r->z_ok = 0;
	}
	r->ret = ret;
}

/*
 * Resume every connection of list, render_lock not held (libmicrohttpd
 * takes its own locks).  q->next is read first: once resumed, q may be
 * answered and freed by libmicrohttpd's thread at any moment.
 */
static void resume_all(struct scrape_req *list)
{
	struct scrape_req *q, *next;

	for (q = list; q; q = next) {
		next = q->next;
		MHD_resume_connection(q->c);
	}
}

static void *render_thread(void *arg)
{
	struct scrape_req *q, *list;
	struct render *r;

	(void)arg;
	pthread_mutex_lock(&render_lock);
	for (;;) {
		while (!waiting && !render_stop)
			pthread_cond_wait(&render_cond, &render_lock);
		if (render_stop)
			break;
		r = calloc(1, sizeof(*r));
		if (!r) {
			/* Answered 500 (no render) rather than never. */
			list = waiting;
			waiting = NULL;
			pthread_mutex_unlock(&render_lock);
			resume_all(list);
			pthread_mutex_lock(&render_lock);
			continue;
		}
		/* One reference for each request, one for this thread. */
		r->refs = 1;
		for (q = waiting; q; q = q->next) {
			r->want_gz |= q->gzip;
			r->want_plain |= !q->gzip;
		}
		joined = waiting;
		waiting = NULL;
		current = r;
		pthread_mutex_unlock(&render_lock);

		render_make(r);

		pthread_mutex_lock(&render_lock);
		renders++;
		current = NULL;
		list = joined;
		joined = NULL;
		for (q = list; q; q = q->next) {
			r->refs++;
			q->r = r;
		}
		pthread_mutex_unlock(&render_lock);
		resume_all(list);
		render_unref(r);
		pthread_mutex_lock(&render_lock);
	}
	/* Stopping: nobody waits for ever (answered 500). */
	list = waiting;
	waiting = NULL;
	pthread_mutex_unlock(&render_lock);
	resume_all(list);
	return NULL;
}

static ssize_t read_render(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct scrape_req *q = cls;
	const char *src = q->gzip ? q->r->gz : q->r->plain;
	size_t len = q->gzip ? q->r->gz_len : q->r->plain_len;

	if (pos >= len)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (max > len - pos)
		max = len - pos;
	memcpy(buf, src + pos, max);
	return (ssize_t)max;
}

static void free_req(void *cls)
{
	struct scrape_req *q = cls;

	render_unref(q->r);
	free(q);
	pthread_mutex_lock(&render_lock);
	requests--;
	pthread_mutex_unlock(&render_lock);
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned int status,
				 const char *type, char *buf, size_t len,
				 enum MHD_ResponseMemoryMode mode, int gzipped)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, buf, mode);
	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (gzipped)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_static(struct MHD_Connection *c, unsigned int status,
				   const char *msg)
{
	return send_text(c, status, "text/plain; charset=utf-8", (char *)msg,
			 strlen(msg), MHD_RESPMEM_PERSISTENT, 0);
}

/* Whether the client lists gzip in Accept-Encoding with a q above 0. */
static int wants_gzip(struct MHD_Connection *c)
{
	const char *ae = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_ACCEPT_ENCODING);
	const char *p, *e;
	size_t n;

	for (p = ae; p && *p; p = *e ? e + 1 : e) {
		p += strspn(p, " \t");
		e = strchrnul(p, ',');
		n = strcspn(p, ";, \t");
		if (n == 4 && !strncasecmp(p, "gzip", 4)) {
			const char *q = memmem(p, e - p, "q=", 2);

			return !q || strtod(q + 2, NULL) > 0;
		}
	}
	return 0;
}

/* First call for /metrics: wait for a render, suspended. */
static enum MHD_Result metrics_wait(struct MHD_Connection *c, void **con_cls)
{
	struct scrape_req *q = calloc(1, sizeof(*q));

	if (!q)
		return MHD_NO;
	q->c = c;
	q->gzip = wants_gzip(c);
	pthread_mutex_lock(&render_lock);
	if (render_stop) {
		pthread_mutex_unlock(&render_lock);
		free(q);
		return send_static(c, MHD_HTTP_SERVICE_UNAVAILABLE, "stopping\n");
	}
	if (max_requests && requests >= max_requests) {
		requests_refused++;
		pthread_mutex_unlock(&render_lock);
		free(q);
		return send_static(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				   "too many scrapes at once (--max-requests)\n");
	}
	requests++;	/* until free_req() */
	*con_cls = q;
	MHD_suspend_connection(c);
	/* The render being made, if it makes our encoding; else the next. */
	if (current && (q->gzip ? current->want_gz : current->want_plain)) {
		q->next = joined;
		joined = q;
	} else {
		q->next = waiting;
		waiting = q;
		pthread_cond_signal(&render_cond);
	}
	pthread_mutex_unlock(&render_lock);
	return MHD_YES;
}

/* Resumed: answer from the render. */
static enum MHD_Result metrics_answer(struct MHD_Connection *c,
				      struct scrape_req *q, void **con_cls)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char msg[160];

	if (!q->r || q->r->ret) {
		if (q->r)
			snprintf(msg, sizeof(msg), "scrape failed: %s\n", strerror(-q->r->ret));
		else
			snprintf(msg, sizeof(msg), "scrape failed: %s\n",
				 render_stop ? "stopping" : strerror(ENOMEM));
		if (q->r)
			fprintf(stderr, "kvm-statsfd-exporter: %s", msg);
		return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				 "text/plain; charset=utf-8", msg, strlen(msg),
				 MHD_RESPMEM_MUST_COPY, 0);
	}
	r = MHD_create_response_from_callback(q->gzip ? q->r->gz_len : q->r->plain_len,
					      1 << 16, read_render, q, free_req);
	if (!r)
		return MHD_NO;
	*con_cls = NULL;	/* q now belongs to the response */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE);
	if (q->gzip)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* A request is over (answered, or its connection closed). */
static void request_done(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)toe;
	if (*con_cls && *con_cls != &answered_marker && *con_cls != &head_marker) {
		free_req(*con_cls);
		*con_cls = NULL;
	}
	conn_set_busy(c, 0);
}

/* Whether the request announces a body (Content-Length above 0, chunks). */
static int has_body(struct MHD_Connection *c)
{
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_LENGTH);

	return (cl && strspn(cl, "0") != strlen(cl)) ||
		MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					    MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

/*
 * With basic_auth_users, every request (whatever its path or method)
 * carries the credentials of one of them, or is answered 401 with the
 * challenge that makes a client send them.
 */
static int authorized(struct MHD_Connection *c)
{
	char *user, *pass = NULL;
	int ok;

	if (!auth_required())
		return 1;
	user = MHD_basic_auth_get_username_password(c, &pass);
	ok = user && pass && auth_check(user, pass);
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		MHD_free(pass);
	}
	if (user)
		MHD_free(user);
	return ok;
}

static enum MHD_Result send_unauthorized(struct MHD_Connection *c)
{
	static const char msg[] = "unauthorized\n";
	struct MHD_Response *r;
	enum MHD_Result ret;

	auth_count_refused();
	r = MHD_create_response_from_buffer(strlen(msg), (void *)msg,
					    MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	ret = MHD_queue_basic_auth_fail_response(c, "kvm-statsfd-exporter", r);
	MHD_destroy_response(r);
	return ret;
}

/*
 * Called once the request head has arrived whole (its deadline then no
 * longer applies), again when the request is complete, and for /metrics
 * once more when its render is done.  A body is never waited for: a
 * request announcing one, or any method but GET and HEAD, is answered
 * on the first call, and libmicrohttpd then closes the connection.
 */
static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	(void)cls;
	(void)version;
	(void)upload_data;
	if (!*con_cls) {
		conn_set_busy(c, 1);
		*con_cls = &answered_marker;
		if (!authorized(c))
			return send_unauthorized(c);
		if (strcmp(method, MHD_HTTP_METHOD_GET) &&
		    strcmp(method, MHD_HTTP_METHOD_HEAD))
			return send_static(c, MHD_HTTP_METHOD_NOT_ALLOWED,
					   "only GET and HEAD\n");
		if (has_body(c))
			return send_static(c, MHD_HTTP_CONTENT_TOO_LARGE,
					   "no request body is accepted\n");
		*con_cls = &head_marker;
		return MHD_YES;
	}
	if (*con_cls == &answered_marker || *upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*con_cls != &head_marker)
		return metrics_answer(c, *con_cls, con_cls);
	*con_cls = &answered_marker;
	if (!strcmp(url, "/metrics"))
		return metrics_wait(c, con_cls);
	if (!strcmp(url, "/"))
		return send_text(c, MHD_HTTP_OK, "text/html; charset=utf-8",
				 (char *)index_html, strlen(index_html),
				 MHD_RESPMEM_PERSISTENT, 0);
	return send_static(c, MHD_HTTP_NOT_FOUND, "not found; try /metrics\n");
}

/* A stats fd per VM (and vCPU): ask for as many fds as we are allowed. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* --once: the scrape goes straight to standard output. */
static int run_once(void)
{
	int ret = scrape_to(stdout);

	exporter_free(&exp_state);
	identity_close();
	if (fflush(stdout) && !ret)
		ret = -errno;
	if (ferror(stdout) && !ret)
		ret = -EIO;
	if (ret) {
		fprintf(stderr, "kvm-statsfd-exporter: %s\n", strerror(-ret));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* SIGHUP: --web-config again (see the usage text). */
static void reload_web_config(void)
{
	struct web_config next;
	char err[512];

	if (!web_config_path) {
		fputs("kvm-statsfd-exporter: SIGHUP: nothing to reload (no --web-config), carrying on\n",
		      stderr);
		return;
	}
	if (web_config_load(web_config_path, &next, err, sizeof(err))) {
		fprintf(stderr, "kvm-statsfd-exporter: SIGHUP: %s; keeping the configuration in use\n",
			err);
		return;
	}
	if (auth_set_users(&next)) {
		fprintf(stderr, "kvm-statsfd-exporter: SIGHUP: %s; keeping the configuration in use\n",
			strerror(ENOMEM));
		web_config_free(&next);
		return;
	}
	if (!!next.cert_pem != !!web.cert_pem ||
	    (next.cert_pem && (strcmp(next.cert_pem, web.cert_pem) ||
			       strcmp(next.key_pem, web.key_pem))))
		fputs("kvm-statsfd-exporter: SIGHUP: the TLS settings changed: they apply at the next start; the users apply now\n",
		      stderr);
	else
		fprintf(stderr, "kvm-statsfd-exporter: SIGHUP: %s read again (%zu users)\n",
			web_config_path, next.n_users);
	/* Only the users were taken; the running TLS pair stays as read. */
	web_config_free(&next);
}

/*
 * Three threads: libmicrohttpd's, with its own epoll loop (it takes the
 * listening socket out of its set at its connection limit and back in
 * when a connection closes, and closes connections idle for --timeout);
 * the render thread (render_thread()); and this one, which waits for
 * signals, enforces the request deadline four times a second and, once a
 * second, closes the stats fds of VMs whose VMM exited (a stats fd keeps
 * the VM's memory alive).  SIGHUP is logged and otherwise ignored: all
 * configuration is on the command line.
 */
static int serve(const char *listen_arg)
{
	struct signalfd_siginfo si;
	struct MHD_Daemon *d;
	struct pollfd pfd;
	pthread_t render_tid;
	int lfd, sfd, rc = EXIT_RUNTIME;
	/* The key pair, when TLS is on; else the array is empty. */
	struct MHD_OptionItem tls_opts[] = {
		{ MHD_OPTION_HTTPS_MEM_CERT, 0, web.cert_pem },
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, web.key_pem },
		{ MHD_OPTION_END, 0, NULL },
	};
	double last_reap = 0;
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	/* Blocked before the other threads start, so they inherit the mask. */
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		perror("kvm-statsfd-exporter: signalfd");
		return EXIT_RUNTIME;
	}
	lfd = open_listener(listen_arg);
	if (lfd < 0)
		goto out_sfd;
	/* Say at start what this exporter cannot see. */
	pthread_mutex_lock(&exp_lock);
	exporter_discover(&exp_state);
	pthread_mutex_unlock(&exp_lock);
	serving = 1;
	if (pthread_create(&render_tid, NULL, render_thread, NULL)) {
		fputs("kvm-statsfd-exporter: cannot start the render thread\n", stderr);
		close(lfd);
		goto out_sfd;
	}
	/*
	 * libmicrohttpd's own limit is above ours: conn_admit() closes the
	 * connections past ours, and they count in its limit until closed.
	 * MHD's log names every client that goes away: only with -v.
	 */
	d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
			     (exp_state.verbose ? MHD_USE_ERROR_LOG : 0) |
			     (web.cert_pem ? MHD_USE_TLS : 0),
			     0, NULL, NULL, handle, NULL,
			     MHD_OPTION_ARRAY, tls_opts,
			     MHD_OPTION_LISTEN_SOCKET, lfd,
			     MHD_OPTION_CONNECTION_TIMEOUT, conn_timeout,
			     MHD_OPTION_CONNECTION_LIMIT, conn_max + MHD_SLACK,
			     MHD_OPTION_NOTIFY_CONNECTION, notify_conn, NULL,
			     MHD_OPTION_NOTIFY_COMPLETED, request_done, NULL,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "kvm-statsfd-exporter: cannot start the HTTP server on %s%s\n",
			listen_arg, web.cert_pem ?
			" (is the TLS key the certificate's, and both PEM?)" : "");
		close(lfd);
		goto out_render;
	}
	if (exp_state.verbose)
		fprintf(stderr, "kvm-statsfd-exporter: listening on %s%s\n", listen_arg,
			web.cert_pem ? " (TLS)" : "");
	pfd = (struct pollfd){ .fd = sfd, .events = POLLIN };
	for (;;) {
		if (poll(&pfd, 1, 250) < 0 && errno != EINTR) {
			perror("kvm-statsfd-exporter: poll");
			goto out_mhd;
		}
		if (pfd.revents) {
			if (read(sfd, &si, sizeof(si)) != sizeof(si) ||
			    si.ssi_signo != SIGHUP)
				break;
			reload_web_config();
		}
		sweep_deadlines();
		if (now_s() - last_reap >= 1) {
			last_reap = now_s();
			pthread_mutex_lock(&exp_lock);
			exporter_reap(&exp_state);
			pthread_mutex_unlock(&exp_lock);
		}
	}
	rc = EXIT_OK;
out_mhd:
	/* No connection may stay suspended when libmicrohttpd stops. */
	pthread_mutex_lock(&render_lock);
	render_stop = 1;
	pthread_cond_signal(&render_cond);
	pthread_mutex_unlock(&render_lock);
	pthread_join(render_tid, NULL);
	MHD_stop_daemon(d);	/* closes lfd too */
	goto out_sfd;
out_render:
	pthread_mutex_lock(&render_lock);
	render_stop = 1;
	pthread_cond_signal(&render_cond);
	pthread_mutex_unlock(&render_lock);
	pthread_join(render_tid, NULL);
out_sfd:
	close(sfd);
	exporter_free(&exp_state);
	identity_close();
	auth_set_users(NULL);
	web_config_free(&web);
	return rc;
}

static unsigned int parse_uint(const char *arg, const char *what,
			       unsigned long min, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max) {
		fprintf(stderr, "kvm-statsfd-exporter: invalid %s '%s' (%lu to %lu)\n",
			what, arg, min, max);
		fputs("Try 'kvm-statsfd-exporter --help'.\n", stderr);
		exit(EXIT_USAGE);
	}
	return (unsigned int)v;
}

/* --synthetic-vms N:V:FILE (tests: Documentation/exporter.rst, "Scale"). */
static void parse_synth(const char *arg)
{
	unsigned int n, v;
	int end = 0;

	if (sscanf(arg, "%u:%u:%n", &n, &v, &end) != 2 || !end || !arg[end] ||
	    n > 100000 || v > 1000)
		usage_error("invalid --synthetic-vms '%s' (want N:V:FILE)", arg);
	exp_state.synth_vms = n;
	exp_state.synth_vcpus = v;
	exp_state.synth_file = arg + end;
}

int main(int argc, char **argv)
{
	enum { OPT_ONCE = 256, OPT_VCPU, OPT_COLLECT, OPT_REASONS, OPT_TIMEOUT,
	       OPT_MAXCONN, OPT_MAXPERADDR, OPT_MAXREQ, OPT_WEBCONF, OPT_NOMACHINED,
	       OPT_LIBVIRT, OPT_SYNTH, OPT_VERSION };
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "vcpu", no_argument, NULL, OPT_VCPU },
		{ "collect", required_argument, NULL, OPT_COLLECT },
		{ "exit-reasons", required_argument, NULL, OPT_REASONS },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "max-connections", required_argument, NULL, OPT_MAXCONN },
		{ "max-connections-per-address", required_argument, NULL, OPT_MAXPERADDR },
		{ "max-requests", required_argument, NULL, OPT_MAXREQ },
		{ "web-config", required_argument, NULL, OPT_WEBCONF },
		{ "no-machined", no_argument, NULL, OPT_NOMACHINED },
		{ "libvirt-dir", required_argument, NULL, OPT_LIBVIRT },
		{ "synthetic-vms", required_argument, NULL, OPT_SYNTH },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *listen_arg = DEFAULT_LISTEN;
	int c, once = 0, listen_set = 0, per_addr_set = 0;

	exp_state.opts.groups = PROM_G_DEFAULT;
	/*
	 * Of SVM's 120 reasons a VM uses a dozen: every one from the start
	 * was half of a VM's default series.  The class family keeps a zero
	 * for each class, for rate() and alerts.
	 */
	exp_state.opts.reasons = PROM_REASONS_SEEN;
	exp_state.use_machined = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":l:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen_arg = optarg;
			listen_set = 1;
			break;
		case OPT_ONCE:
			once = 1;
			break;
		case OPT_VCPU:
			exp_state.opts.vcpu = 1;
			break;
		case OPT_COLLECT:
			if (prom_parse_groups(optarg, &exp_state.opts.groups))
				usage_error("unknown stat group in --collect '%s' (scalars, exits, userspace-exits, histograms, default, all)",
					    optarg);
			break;
		case OPT_REASONS:
			if (prom_parse_reasons(optarg, &exp_state.opts.reasons))
				usage_error("invalid --exit-reasons '%s' (all, seen, none)",
					    optarg);
			break;
		case OPT_TIMEOUT:
			conn_timeout = parse_uint(optarg, "--timeout", 1, 3600);
			break;
		case OPT_MAXCONN:
			conn_max = parse_uint(optarg, "--max-connections", 1, 100000);
			break;
		case OPT_MAXPERADDR:
			conn_max_per_addr = parse_uint(optarg, "--max-connections-per-address",
						       1, 100000);
			per_addr_set = 1;
			break;
		case OPT_MAXREQ:
			max_requests = parse_uint(optarg, "--max-requests", 0, 100000);
			break;
		case OPT_WEBCONF:
			web_config_path = optarg;
			break;
		case OPT_SYNTH:
			parse_synth(optarg);
			break;
		case OPT_NOMACHINED:
			exp_state.use_machined = 0;
			break;
		case OPT_LIBVIRT:
			/* Kept so that old configurations still start. */
			fputs("kvm-statsfd-exporter: --libvirt-dir is ignored: libvirt's VMs are named through systemd-machined\n",
			      stderr);
			break;
		case 'v':
			exp_state.verbose = 1;
			break;
		case OPT_VERSION:
			if (printf("kvm-statsfd-exporter %s\n", KVM_STATSFD_VERSION) < 0 ||
			    fflush(stdout)) {
				perror("kvm-statsfd-exporter: standard output");
				return EXIT_RUNTIME;
			}
			return EXIT_OK;
		case 'h':
			if (fputs(usage_text, stdout) < 0 || fflush(stdout)) {
				perror("kvm-statsfd-exporter: standard output");
				return EXIT_RUNTIME;
			}
			return EXIT_OK;
		case ':':
			usage_error("option '%s' needs an argument", argv[optind - 1]);
			break;
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (once && listen_set)
		usage_error("%s", "--once does not listen: no --listen with it");
	if (once && web_config_path)
		usage_error("%s", "--once does not serve: no --web-config with it");
	raise_nofile();
	if (once)
		return run_once();
	/* Check the address before anything else: usage errors first. */
	freeaddrinfo(parse_listen(listen_arg));
	if (web_config_path) {
		char err[512];

		if (web_config_load(web_config_path, &web, err, sizeof(err))) {
			fprintf(stderr, "kvm-statsfd-exporter: --web-config %s\n", err);
			return EXIT_USAGE;
		}
		if (auth_set_users(&web)) {
			fprintf(stderr, "kvm-statsfd-exporter: %s\n", strerror(ENOMEM));
			web_config_free(&web);
			return EXIT_RUNTIME;
		}
	}
	/* By default an address may take half the connections. */
	if (!per_addr_set)
		conn_max_per_addr = conn_max > 1 ? conn_max / 2 : 1;
	if (conn_max_per_addr > conn_max)
		conn_max_per_addr = conn_max;
	return serve(listen_arg);
}
