// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-statsfd: list, show and watch KVM binary statistics of running VMs.
 * See Documentation/kvm-statsfd-tool.rst.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "kvm_statsfd/version.h"

/*
 * Whatever was written must have reached standard output: a full disk or
 * a closed pipe is an error, not a silent success.
 */
static int finish(int rc)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "kvm-statsfd: writing standard output: %s\n",
			strerror(errno ? errno : EIO));
		return EXIT_RUNTIME;
	}
	return rc;
}

static const char usage_text[] =
"NAME\n"
"    kvm-statsfd - read KVM binary statistics of running VMs\n"
"\n"
"SYNOPSIS\n"
"    kvm-statsfd list [--json]\n"
"    kvm-statsfd show [PID] [--vcpu N] [--json]\n"
"    kvm-statsfd show --file PATH [--json]\n"
"    kvm-statsfd watch [PID | --file PATH] [-i SECONDS] [-n COUNT] [-f REGEX]\n"
"                      [-g REGEX] [-b | -l | -L FILE] [--csv]\n"
"    kvm-statsfd --help | --version\n"
"\n"
"DESCRIPTION\n"
"    Finds VMs by scanning /proc/*/fd for KVM VM and vCPU fds, duplicates\n"
"    them with pidfd_getfd(2) and reads their statistics through\n"
"    KVM_GET_STATS_FD.  If KVM refuses that ioctl from outside the VMM, they\n"
"    come from kvm_statsfd.ko's /dev/kvm-statsfd; without the module the\n"
"    stats fds the VMM already holds are borrowed (QEMU 8.1+ keeps its\n"
"    vCPUs', so its VM's own stats are reported unavailable; 7.2 keeps\n"
"    none).  VM state is never changed.  Needs root (or ptrace access to\n"
"    the VMM).\n"
"\n"
"COMMANDS\n"
"    list     one line per VMM process: pid, process name, guest name\n"
"             (QEMU -name), number of VM fds and vCPUs.\n"
"    show     every statistic of each VM and vCPU with scaled units;\n"
"             histograms are summarised by their non-zero buckets.\n"
"    watch    on a terminal, kvm_stat's view: one table of events (counters\n"
"             and histograms) summed over the VMs shown, with Total, %Total\n"
"             and Current (per second), and its keys (h lists them: q quit,\n"
"             f/g/p filter, c clear, r reset, s interval, x drilldown,\n"
"             o sort).  With -b, or off a terminal: plain frames of\n"
"             per-second rates per VM and per vCPU.  With -l/-L: a log,\n"
"             one line each interval.  VMs that start later join in.\n"
"\n"
"OPTIONS\n"
"    PID             only the VMM process PID\n"
"    --vcpu N        show only vCPU N (no VM-wide stats)\n"
"    --json          machine-readable output, schema \"kvm-statsfd/1\"\n"
"    --file PATH     read a stats file image instead of live VMs (show:\n"
"                    printed alone; watch: as vCPU 0 of a pid 0 VM)\n"
"    -i SECONDS      watch interval (default 1, may be fractional)\n"
"    -n COUNT        watch: stop after COUNT intervals (every mode)\n"
"    -f REGEX        watch: only stats whose name matches (extended regex)\n"
"    -g REGEX        watch: only VMs whose guest name, process name or pid\n"
"                    matches\n"
"    -b, --batch     watch: plain frames one after another, even on a\n"
"                    terminal\n"
"    -l, --log       watch: a header of event names, then each interval a\n"
"                    line of how much each grew (kvm_stat -l)\n"
"    -L, --log-to-file FILE\n"
"                    watch: that log appended to FILE (SIGHUP reopens it)\n"
"    -c, --csv       watch: the log comma-separated, with -l or -L\n"
"    -h, --help      this text\n"
"    --version       print the version and exit\n"
"\n"
"EXIT STATUS\n"
"    0 success, 1 runtime error (no such VM, permission denied, malformed\n"
"    stats, standard output or the -L file not writable), 2 usage error.\n"
"    Errors go to standard error.\n";

static void usage_error(const char *fmt, const char *arg)
{
	fputs("kvm-statsfd: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'kvm-statsfd --help'.\n", stderr);
	exit(EXIT_USAGE);
}

static long parse_long(const char *s, long min, long max, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		usage_error(what, s);
	return v;
}

static double parse_interval(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	/* Written as a range test so NaN fails too. */
	if (errno || end == s || *end || !(v >= 0.01 && v <= 3600))
		usage_error("invalid interval '%s' (0.01 to 3600 seconds)", s);
	return v;
}

enum { OPT_JSON = 256, OPT_VCPU, OPT_FILE };

/* The letter each option has in parse_opts()' `allowed` strings. */
static char opt_letter(int c)
{
	switch (c) {
	case OPT_JSON:
		return 'j';
	case OPT_VCPU:
		return 'v';
	case OPT_FILE:
		return 'F';
	default:
		return (char)c;
	}
}

static const struct option long_opts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "vcpu", required_argument, NULL, OPT_VCPU },
	{ "file", required_argument, NULL, OPT_FILE },
	{ "interval", required_argument, NULL, 'i' },
	{ "count", required_argument, NULL, 'n' },
	{ "batch", no_argument, NULL, 'b' },
	{ "log", no_argument, NULL, 'l' },
	{ "log-to-file", required_argument, NULL, 'L' },
	{ "csv", no_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *opt_name(int c)
{
	static char buf[32];
	const struct option *lo;

	for (lo = long_opts; lo->name; lo++)
		if (lo->val == c)
			break;
	if (c >= 256 && lo->name)
		snprintf(buf, sizeof(buf), "--%s", lo->name);
	else
		snprintf(buf, sizeof(buf), "-%c", c);
	return buf;
}

/* Options are parsed for all commands, then checked against `allowed`. */
static void parse_opts(int argc, char **argv, const char *cmd,
		       const char *allowed, struct opts *o)
{
	char flag[2] = { 0 };
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":i:n:f:g:blL:ch", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			exit(finish(EXIT_OK));
		case ':':
			usage_error("option '%s' needs an argument", argv[optind - 1]);
			break;
		case '?':
			usage_error("unknown option '%s'", argv[optind - 1]);
			break;
		}
		flag[0] = opt_letter(c);
		if (!strchr(allowed, flag[0]))
			usage_error("option '%s' not valid for this command",
				    opt_name(c));
		switch (c) {
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_VCPU:
			o->vcpu = (int)parse_long(optarg, 0, 0x7fffffff,
						  "invalid vCPU '%s'");
			break;
		case OPT_FILE:
			o->file = optarg;
			break;
		case 'i':
			o->interval = parse_interval(optarg);
			break;
		case 'n':
			o->count = parse_long(optarg, 1, 1000000000L,
					      "invalid count '%s'");
			break;
		case 'f':
			o->stat_filter = optarg;
			break;
		case 'g':
			o->guest_filter = optarg;
			break;
		case 'b':
			o->batch = 1;
			break;
		case 'l':
			o->log = 1;
			break;
		case 'L':
			if (!*optarg)
				usage_error("%s: -L needs a file name", cmd);
			o->log_file = optarg;
			break;
		case 'c':
			o->csv = 1;
			break;
		}
	}
	if (optind < argc && strchr(allowed, 'p'))
		o->pid = (pid_t)parse_long(argv[optind++], 1, 0x7fffffff,
					   "invalid PID '%s'");
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->file && (o->pid || o->vcpu >= 0))
		usage_error("%s: --file takes no PID or --vcpu", cmd);
	/* One way of showing: as kvm_stat's, the log and batch modes exclude. */
	if (o->batch && (o->log || o->log_file))
		usage_error("%s: -b and -l/-L exclude each other", cmd);
	if (o->csv && !o->log && !o->log_file)
		usage_error("%s: --csv needs -l or -L", cmd);
}

int main(int argc, char **argv)
{
	struct opts o = { .vcpu = -1, .interval = 1.0 };
	const char *cmd;

	if (argc < 2)
		usage_error("%s", "missing command");
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		fputs(usage_text, stdout);
		return finish(EXIT_OK);
	}
	if (!strcmp(cmd, "--version")) {
		printf("kvm-statsfd %s\n", KVM_STATSFD_VERSION);
		return finish(EXIT_OK);
	}
	if (!strcmp(cmd, "list")) {
		parse_opts(argc - 1, argv + 1, cmd, "j", &o);
		return finish(cmd_list(&o));
	}
	if (!strcmp(cmd, "show")) {
		parse_opts(argc - 1, argv + 1, cmd, "pjvF", &o);
		return finish(cmd_show(&o));
	}
	if (!strcmp(cmd, "watch")) {
		parse_opts(argc - 1, argv + 1, cmd, "pinFfgblLc", &o);
		return finish(cmd_watch(&o));
	}
	usage_error("unknown command '%s'", cmd);
	return EXIT_USAGE;
}
