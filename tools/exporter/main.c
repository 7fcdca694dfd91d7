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
#include "state.h"

#define EXIT_OK		0
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

#define DEFAULT_LISTEN	"127.0.0.1:9798"
#define DEFAULT_TIMEOUT	10	/* seconds a connection may stay idle */
#define DEFAULT_MAX_CONN	512
#define CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"

static const char usage_text[] =
"NAME\n"
"    kvm-statsfd-exporter - Prometheus exporter of KVM VM and vCPU statistics\n"
"\n"
"SYNOPSIS\n"
"    kvm-statsfd-exporter [--listen ADDR:PORT] [--vcpu] [--collect GROUPS]\n"
"                         [--timeout S] [--max-connections N] [-v]\n"
"    kvm-statsfd-exporter --once [--vcpu] [--collect GROUPS]\n"
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
"    VM state is never changed.  Needs root (CAP_SYS_PTRACE).\n"
"\n"
"    Series are VM-wide (kvm_vm_*) unless --vcpu adds kvm_vcpu_* ones, and\n"
"    labelled vm: the libvirt domain name, or OWNER/NAME from QEMU's -name\n"
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
"    --timeout S              close connections idle for S seconds\n"
"                             (default 10)\n"
"    --max-connections N      connections served at once (default 512);\n"
"                             more wait in the listen queue\n"
"    --libvirt-dir DIR        libvirt's QEMU run directory (default\n"
"                             " LIBVIRT_QEMU_RUN_DIR "); '' to ignore libvirt\n"
"    -v, --verbose            report VMs appearing and going on stderr\n"
"    --version                print the version and exit\n"
"    -h, --help               this text\n"
"\n"
"EXIT STATUS\n"
"    0 stopped by SIGINT or SIGTERM (or --once succeeded), 1 runtime error\n"
"    (cannot listen, cannot scan /proc), 2 usage error.  Errors go to\n"
"    standard error.\n";

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
	if (status == MHD_HTTP_OK && !strcmp(type, CONTENT_TYPE))
		MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
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

/* in[0..len) as a gzip member, in a malloc()ed *out. */
static int gzip_buf(const char *in, size_t len, char **out, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap = deflateBound(&z, len) + 32;
	int ret;

	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, len);
	*out = malloc(cap);
	if (!*out) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)*out;
	z.avail_out = (uInt)cap;
	if (len > UINT32_MAX || cap > UINT32_MAX)
		ret = Z_BUF_ERROR;
	else
		ret = deflate(&z, Z_FINISH);
	*out_len = z.total_out;
	deflateEnd(&z);
	if (ret != Z_STREAM_END) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One scrape into *buf: the exporter's state is shared, so under the lock. */
static int scrape(char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	char dur[40];
	double t0 = now_s();
	int ret;

	if (!f)
		return -ENOMEM;
	pthread_mutex_lock(&exp_lock);
	ret = exporter_scrape(&exp_state, f);
	pthread_mutex_unlock(&exp_lock);
	prom_format_double(now_s() - t0, dur, sizeof(dur));
	fprintf(f, "# HELP kvm_exporter_scrape_duration_seconds Time this scrape took to read every stats fd and render, before compression.\n"
		"# TYPE kvm_exporter_scrape_duration_seconds gauge\n"
		"kvm_exporter_scrape_duration_seconds %s\n", dur);
	fputs("# HELP kvm_exporter_build_info The exporter's version; always 1.\n"
	      "# TYPE kvm_exporter_build_info gauge\n"
	      "kvm_exporter_build_info{version=\"" KVM_STATSFD_VERSION "\"} 1\n", f);
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (ret) {
		free(*buf);
		*buf = NULL;
	}
	return ret;
}

static enum MHD_Result serve_metrics(struct MHD_Connection *c)
{
	char *buf = NULL, *gz, msg[160];
	size_t len = 0, gz_len;
	int ret;

	ret = scrape(&buf, &len);
	if (ret) {
		snprintf(msg, sizeof(msg), "scrape failed: %s\n", strerror(-ret));
		fprintf(stderr, "kvm-statsfd-exporter: %s", msg);
		buf = strdup(msg);
		if (!buf)
			return MHD_NO;
		return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				 "text/plain; charset=utf-8", buf, strlen(buf),
				 MHD_RESPMEM_MUST_FREE, 0);
	}
	if (wants_gzip(c) && !gzip_buf(buf, len, &gz, &gz_len)) {
		free(buf);
		return send_text(c, MHD_HTTP_OK, CONTENT_TYPE, gz, gz_len,
				 MHD_RESPMEM_MUST_FREE, 1);
	}
	return send_text(c, MHD_HTTP_OK, CONTENT_TYPE, buf, len,
			 MHD_RESPMEM_MUST_FREE, 0);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	static int first_call;

	(void)cls;
	(void)version;
	(void)upload_data;
	/* The first call only announces the request; answer on the second. */
	if (!*con_cls) {
		*con_cls = &first_call;
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;	/* a body we do not want */
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return send_static(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				   "only GET and HEAD\n");
	if (!strcmp(url, "/metrics"))
		return serve_metrics(c);
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

static int run_once(void)
{
	char *buf = NULL;
	size_t len = 0;
	int ret = scrape(&buf, &len);

	exporter_free(&exp_state);
	if (!ret && fwrite(buf, 1, len, stdout) != len)
		ret = -errno;
	free(buf);
	if (fflush(stdout) && !ret)
		ret = -errno;
	if (ret) {
		fprintf(stderr, "kvm-statsfd-exporter: %s\n", strerror(-ret));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/*
 * libmicrohttpd runs in its own thread with its own epoll loop: it takes
 * the listening socket out of its set when the connection limit is
 * reached and back in when a connection closes, and closes connections
 * idle for --timeout seconds, so no number of slow or half-open clients
 * stops the server for longer than that.  This thread waits for signals
 * and, once a second, closes the stats fds of VMs whose VMM exited (a
 * stats fd keeps the VM's memory alive).
 */
static int serve(const char *listen_arg, unsigned int timeout,
		 unsigned int max_conn)
{
	struct MHD_Daemon *d;
	struct pollfd pfd;
	int lfd, sfd, rc = EXIT_RUNTIME;
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	/* Blocked before MHD's thread starts, so it inherits the mask. */
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
	/* MHD's log names every client that goes away: only with -v. */
	d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD |
			     (exp_state.verbose ? MHD_USE_ERROR_LOG : 0),
			     0, NULL, NULL, handle, NULL,
			     MHD_OPTION_LISTEN_SOCKET, lfd,
			     MHD_OPTION_CONNECTION_TIMEOUT, timeout,
			     MHD_OPTION_CONNECTION_LIMIT, max_conn,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "kvm-statsfd-exporter: cannot start the HTTP server on %s\n",
			listen_arg);
		close(lfd);
		goto out_sfd;
	}
	if (exp_state.verbose)
		fprintf(stderr, "kvm-statsfd-exporter: listening on %s\n", listen_arg);
	pfd = (struct pollfd){ .fd = sfd, .events = POLLIN };
	for (;;) {
		if (poll(&pfd, 1, 1000) < 0 && errno != EINTR) {
			perror("kvm-statsfd-exporter: poll");
			goto out_mhd;
		}
		if (pfd.revents)
			break;
		pthread_mutex_lock(&exp_lock);
		exporter_reap(&exp_state);
		pthread_mutex_unlock(&exp_lock);
	}
	rc = EXIT_OK;
out_mhd:
	MHD_stop_daemon(d);	/* closes lfd too */
out_sfd:
	close(sfd);
	exporter_free(&exp_state);
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

int main(int argc, char **argv)
{
	enum { OPT_ONCE = 256, OPT_VCPU, OPT_COLLECT, OPT_TIMEOUT,
	       OPT_MAXCONN, OPT_LIBVIRT, OPT_VERSION };
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "vcpu", no_argument, NULL, OPT_VCPU },
		{ "collect", required_argument, NULL, OPT_COLLECT },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "max-connections", required_argument, NULL, OPT_MAXCONN },
		{ "libvirt-dir", required_argument, NULL, OPT_LIBVIRT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *listen_arg = DEFAULT_LISTEN;
	unsigned int timeout = DEFAULT_TIMEOUT, max_conn = DEFAULT_MAX_CONN;
	int c, once = 0, listen_set = 0;

	exp_state.opts.groups = PROM_G_DEFAULT;
	exp_state.libvirt_dir = LIBVIRT_QEMU_RUN_DIR;
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
				usage_error("unknown stat group in '%s' (scalars, exits, userspace-exits, histograms, default, all)",
					    optarg);
			break;
		case OPT_TIMEOUT:
			timeout = parse_uint(optarg, "--timeout", 1, 3600);
			break;
		case OPT_MAXCONN:
			max_conn = parse_uint(optarg, "--max-connections", 1, 100000);
			break;
		case OPT_LIBVIRT:
			exp_state.libvirt_dir = *optarg ? optarg : NULL;
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
	raise_nofile();
	if (once)
		return run_once();
	/* Check the address before anything else: usage errors first. */
	freeaddrinfo(parse_listen(listen_arg));
	return serve(listen_arg, timeout, max_conn);
}
