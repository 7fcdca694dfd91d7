// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-statsfd-exporter: KVM binary statistics of every running VM as
 * Prometheus metrics over HTTP.  See Documentation/exporter.rst.
 *
 * One thread: libmicrohttpd in external epoll mode, polled together with a
 * signalfd and the pidfds of the VMMs we follow, so the stats fds of a VM
 * whose VMM exits are closed right away, not at the next scrape (a stats
 * fd keeps the VM's memory alive).  Requests are served one at a time,
 * which is also what makes scrapes read the shared VM state safely.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "state.h"

#define EXIT_OK		0
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

#define DEFAULT_LISTEN	"127.0.0.1:9798"
#define CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"

static const char usage_text[] =
"NAME\n"
"    kvm-statsfd-exporter - Prometheus exporter of KVM VM and vCPU statistics\n"
"\n"
"SYNOPSIS\n"
"    kvm-statsfd-exporter [--listen ADDR:PORT] [-v]\n"
"    kvm-statsfd-exporter --once\n"
"    kvm-statsfd-exporter --help\n"
"\n"
"DESCRIPTION\n"
"    Serves every KVM binary statistic (KVM_GET_STATS_FD) of every VM and\n"
"    vCPU on this host at http://ADDR:PORT/metrics, in the Prometheus text\n"
"    format.  VMs are found the way kvm-statsfd finds them: /proc/*/fd,\n"
"    pidfd_getfd(2), KVM_GET_STATS_FD, or the VMM's own stats fds when KVM\n"
"    refuses the ioctl to outsiders.  Each scrape rescans /proc once and\n"
"    reads each stats fd once; stats fds stay open between scrapes and are\n"
"    closed as soon as their VMM exits.  VM state is never changed.  Needs\n"
"    root (or ptrace access to the VMMs).\n"
"\n"
"    Metrics are named kvm_vm_* and kvm_vcpu_*, labelled pid, name (the\n"
"    guest name given with QEMU's -name, empty if none) and vcpu; times are\n"
"    in seconds.  Documentation/exporter.rst has the full mapping.\n"
"\n"
"OPTIONS\n"
"    -l, --listen ADDR:PORT   where to listen (default " DEFAULT_LISTEN ");\n"
"                             [IPV6]:PORT for IPv6, :PORT for any address\n"
"    --once                   write one scrape to standard output and exit\n"
"    -v, --verbose            report VMs appearing and going on stderr\n"
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
		if (!bind(fd, a->ai_addr, a->ai_addrlen) && !listen(fd, 16))
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

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned int status,
				 const char *type, char *buf, size_t len,
				 enum MHD_ResponseMemoryMode mode)
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
			 strlen(msg), MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result serve_metrics(struct MHD_Connection *c)
{
	char *buf = NULL, msg[160];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f)
		return send_static(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				   "out of memory\n");
	ret = exporter_scrape(&exp_state, f);
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (ret) {
		free(buf);
		snprintf(msg, sizeof(msg), "scrape failed: %s\n", strerror(-ret));
		fprintf(stderr, "kvm-statsfd-exporter: %s", msg);
		buf = strdup(msg);
		if (!buf)
			return MHD_NO;
		return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				 "text/plain; charset=utf-8", buf, strlen(buf),
				 MHD_RESPMEM_MUST_FREE);
	}
	return send_text(c, MHD_HTTP_OK, CONTENT_TYPE, buf, len,
			 MHD_RESPMEM_MUST_FREE);
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
				 MHD_RESPMEM_PERSISTENT);
	return send_static(c, MHD_HTTP_NOT_FOUND, "not found; try /metrics\n");
}

/* A stats fd per vCPU: ask for as many fds as we are allowed. */
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
	int ret = exporter_scrape(&exp_state, stdout);

	exporter_free(&exp_state);
	if (fflush(stdout) && !ret)
		ret = -errno;
	if (ret) {
		fprintf(stderr, "kvm-statsfd-exporter: %s\n", strerror(-ret));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static int serve(const char *listen_arg)
{
	const union MHD_DaemonInfo *info;
	struct pollfd *pfd = NULL;
	struct MHD_Daemon *d;
	MHD_UNSIGNED_LONG_LONG to;
	int lfd, sfd, epfd, timeout, rc = EXIT_RUNTIME;
	unsigned int i, n;
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		perror("kvm-statsfd-exporter: signalfd");
		return EXIT_RUNTIME;
	}
	lfd = open_listener(listen_arg);
	if (lfd < 0)
		goto out_sfd;
	d = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL,
			     handle, NULL,
			     MHD_OPTION_LISTEN_SOCKET, lfd,
			     MHD_OPTION_CONNECTION_TIMEOUT, 30u,
			     MHD_OPTION_CONNECTION_LIMIT, 64u,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "kvm-statsfd-exporter: cannot start the HTTP server on %s\n",
			listen_arg);
		close(lfd);
		goto out_sfd;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info) {
		fputs("kvm-statsfd-exporter: libmicrohttpd has no epoll fd\n", stderr);
		goto out_mhd;
	}
	epfd = info->epoll_fd;
	if (exp_state.verbose)
		fprintf(stderr, "kvm-statsfd-exporter: listening on %s\n", listen_arg);
	for (;;) {
		/* signalfd, MHD's epoll fd, then one pidfd per VM we follow. */
		n = 2 + exp_state.nr;
		free(pfd);
		pfd = calloc(n, sizeof(*pfd));
		if (!pfd) {
			fputs("kvm-statsfd-exporter: out of memory\n", stderr);
			goto out_mhd;
		}
		pfd[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = epfd, .events = POLLIN };
		for (i = 0; i < exp_state.nr; i++)
			pfd[2 + i] = (struct pollfd){
				.fd = exp_state.vms[i].p.pidfd, .events = POLLIN };
		timeout = -1;
		if (MHD_get_timeout(d, &to) == MHD_YES)
			timeout = to > 60000 ? 60000 : (int)to;
		if (poll(pfd, n, timeout) < 0 && errno != EINTR) {
			perror("kvm-statsfd-exporter: poll");
			goto out_mhd;
		}
		if (pfd[0].revents)
			break;
		for (i = 2; i < n; i++)
			if (pfd[i].revents)
				break;
		if (i < n)
			exporter_reap(&exp_state);
		MHD_run(d);
	}
	rc = EXIT_OK;
out_mhd:
	free(pfd);
	MHD_stop_daemon(d);	/* closes lfd too */
out_sfd:
	close(sfd);
	exporter_free(&exp_state);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "once", no_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *listen_arg = DEFAULT_LISTEN;
	int c, once = 0, listen_set = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":l:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen_arg = optarg;
			listen_set = 1;
			break;
		case 'o':
			once = 1;
			break;
		case 'v':
			exp_state.verbose = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
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
	return serve(listen_arg);
}
