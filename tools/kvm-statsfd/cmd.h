/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMSTATSFD_CMD_H
#define KVMSTATSFD_CMD_H

#include <sys/types.h>

/* Exit codes, documented in --help and Documentation/kvm-statsfd-tool.rst */
#define EXIT_OK		0
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

struct opts {
	pid_t pid;		/* 0: all VMs */
	int vcpu;		/* -1: all vCPUs */
	int json;
	double interval;	/* watch, seconds */
	long count;		/* watch frames, 0: forever */
	const char *file;	/* show --file */
	const char *stat_filter;	/* watch -f REGEX */
	const char *guest_filter;	/* watch -g REGEX */
	int batch;		/* watch -b: plain frames even on a terminal */
	int log;		/* watch -l: a line of deltas each interval */
	const char *log_file;	/* watch -L FILE: that log, appended to FILE */
	int csv;		/* watch --csv: the log comma-separated */
};

struct kvmstats_vm;
/* Discovery with error reporting; -1 on error (already printed). */
int find_vms(const struct opts *o, struct kvmstats_vm **vms);
/* The stderr note for a VM whose own stats are unavailable (kvmstats.h). */
void note_vm_unavailable(const struct kvmstats_vm *p);

int cmd_list(const struct opts *o);
int cmd_show(const struct opts *o);
int cmd_watch(const struct opts *o);

#endif
