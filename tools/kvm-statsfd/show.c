// SPDX-License-Identifier: GPL-2.0
/* The list and show commands. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "kvmstats.h"
#include "output.h"

/* Discovery shared by list/show/watch; prints its own errors. */
int find_vms(const struct opts *o, struct kvmstats_vm **vms)
{
	unsigned int denied;
	int n = kvmstats_discover(vms, o->pid, &denied);

	if (n < 0) {
		fprintf(stderr, "kvm-statsfd: scanning /proc: %s\n",
			strerror(-n));
		return -1;
	}
	/*
	 * Not allowed to look: say so rather than print an empty list.  A
	 * VM found means we could see what we were asked about.
	 */
	if (!n && denied) {
		fprintf(stderr, "kvm-statsfd: permission denied: %u processes' fds cannot be read%s\n",
			denied,
			geteuid() ? " (needs root, or CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH)" : "");
		kvmstats_vms_free(*vms, 0);
		return -1;
	}
	if (!n && o->pid) {
		fprintf(stderr, "kvm-statsfd: no KVM VM found in pid %d%s\n",
			(int)o->pid,
			geteuid() ? " (not root: other users' processes are invisible)" : "");
		return -1;
	}
	return n;
}

static void json_proc_fields(struct json *j, const struct kvmstats_vm *p)
{
	json_key(j, "pid");
	json_i64(j, p->pid);
	json_key(j, "comm");
	json_str(j, p->comm);
	json_key(j, "guest");
	json_str(j, p->guest);
	json_key(j, "vm_fds");
	json_i64(j, p->nr_vm_fds);
	json_key(j, "vcpu_count");
	json_i64(j, p->nr_vcpus);
}

static void list_json(const struct kvmstats_vm *vms, int n)
{
	struct json j;
	int i, k;

	json_init(&j, stdout, 1);
	json_obj_begin(&j);
	out_json_head(&j);
	json_key(&j, "vms");
	json_arr_begin(&j);
	for (i = 0; i < n; i++) {
		json_obj_begin(&j);
		json_proc_fields(&j, &vms[i]);
		json_key(&j, "vcpus");
		json_arr_begin(&j);
		for (k = 0; k < vms[i].nr_vcpus; k++)
			json_i64(&j, vms[i].vcpus[k].id);
		json_arr_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_finish(&j);
}

int cmd_list(const struct opts *o)
{
	struct kvmstats_vm *vms;
	int i, n = find_vms(o, &vms);
	char comm[256], guest[512];

	if (n < 0)
		return EXIT_RUNTIME;
	if (o->json) {
		list_json(vms, n);
	} else {
		printf("%-8s %-16s %-24s %5s %5s\n",
		       "PID", "COMMAND", "GUEST", "VMS", "VCPUS");
		for (i = 0; i < n; i++)
			printf("%-8d %-16s %-24s %5d %5d\n", (int)vms[i].pid,
			       term_safe(vms[i].comm, comm, sizeof(comm)),
			       vms[i].guest ? term_safe(vms[i].guest, guest, sizeof(guest)) : "-",
			       vms[i].nr_vm_fds, vms[i].nr_vcpus);
	}
	kvmstats_vms_free(vms, n);
	return EXIT_OK;
}

static int any_vcpu_open(const struct kvmstats_vm *p)
{
	int i;

	for (i = 0; i < p->nr_vcpus; i++)
		if (p->vcpus[i].open)
			return 1;
	return 0;
}

/*
 * QEMU without the module: the vCPUs' stats were borrowed, the VM's could
 * not be had (KVMSTATS_VM_UNAVAILABLE).  Not a failure, but said on stderr.
 */
void note_vm_unavailable(const struct kvmstats_vm *p)
{
	if (p->vm_unavailable && any_vcpu_open(p))
		fprintf(stderr, "kvm-statsfd: note: pid %d: %s; the vCPUs' stats are read from the stats fds the VMM keeps\n",
			(int)p->pid, KVMSTATS_VM_UNAVAILABLE);
}

static void show_human(const struct kvmstats_vm *p, const struct opts *o)
{
	char buf[512];
	int i;

	printf("VM pid %d (%s)", (int)p->pid, term_safe(p->comm, buf, sizeof(buf)));
	if (p->guest)
		printf(" guest %s", term_safe(p->guest, buf, sizeof(buf)));
	printf(", %d vCPU%s", p->nr_vcpus, p->nr_vcpus == 1 ? "" : "s");
	if (p->vm_open)
		printf(": %s", term_safe(kvmstats_id(p->vm), buf, sizeof(buf)));
	putchar('\n');
	if (p->nr_vm_fds > 1)
		printf("  note: process holds %d VM fds; vCPUs are attributed to the first\n",
		       p->nr_vm_fds);
	if (p->vm_open && o->vcpu < 0)
		out_stats_human(stdout, p->vm, "  ");
	else if (p->vm_unavailable && o->vcpu < 0)
		printf("  VM-wide stats: unavailable (KVM refuses them to other processes and the VMM keeps no VM stats fd; load kvm_statsfd.ko)\n");
	for (i = 0; i < p->nr_vcpus; i++) {
		const struct kvmstats_vcpu *v = &p->vcpus[i];

		if (!v->open)
			continue;
		printf("vCPU %d: %s\n", v->id, term_safe(kvmstats_id(v->st), buf, sizeof(buf)));
		out_stats_human(stdout, v->st, "  ");
	}
}

static void show_json_vm(struct json *j, const struct kvmstats_vm *p,
			 const struct opts *o)
{
	int i;

	json_obj_begin(j);
	json_proc_fields(j, p);
	json_key(j, "error");
	json_str(j, p->err[0] ? p->err : NULL);
	json_key(j, "vm");
	if (p->vm_open && o->vcpu < 0)
		out_stats_json(j, p->vm);
	else
		json_null(j);
	json_key(j, "vm_unavailable");
	json_str(j, p->vm_unavailable && o->vcpu < 0 ? KVMSTATS_VM_UNAVAILABLE : NULL);
	json_key(j, "vcpus");
	json_arr_begin(j);
	for (i = 0; i < p->nr_vcpus; i++) {
		const struct kvmstats_vcpu *v = &p->vcpus[i];

		if (o->vcpu >= 0 && v->id != o->vcpu)
			continue;
		json_obj_begin(j);
		json_key(j, "vcpu");
		json_i64(j, v->id);
		out_stats_fields(j, v->open ? v->st : NULL);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static int has_vcpu(const struct kvmstats_vm *p, int id)
{
	int i;

	for (i = 0; i < p->nr_vcpus; i++)
		if (p->vcpus[i].id == id)
			return 1;
	return 0;
}

/* show --file: a saved image of a stats fd, e.g. from `cat` of one. */
static int show_file(const struct opts *o)
{
	struct kvmstats *s;
	struct json j;
	char buf[512];
	int fd, ret;

	s = kvmstats_new();
	if (!s) {
		fprintf(stderr, "kvm-statsfd: out of memory\n");
		return EXIT_RUNTIME;
	}
	fd = open(o->file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "kvm-statsfd: %s: %s\n", o->file, strerror(errno));
		kvmstats_free(s);
		return EXIT_RUNTIME;
	}
	ret = kvmstats_open(s, fd);
	if (ret) {
		fprintf(stderr, "kvm-statsfd: %s: %s\n", o->file, kvmstats_errmsg(s));
		close(fd);
		kvmstats_free(s);
		return EXIT_RUNTIME;
	}
	if (o->json) {
		json_init(&j, stdout, 1);
		json_obj_begin(&j);
		out_json_head(&j);
		json_key(&j, "file");
		json_str(&j, o->file);
		out_stats_fields(&j, s);
		json_obj_end(&j);
		json_finish(&j);
	} else {
		printf("%s: ", term_safe(o->file, buf, sizeof(buf)));
		printf("%s\n", term_safe(kvmstats_id(s), buf, sizeof(buf)));
		out_stats_human(stdout, s, "  ");
	}
	kvmstats_free(s);
	return EXIT_OK;
}

int cmd_show(const struct opts *o)
{
	struct kvmstats_vm *vms;
	int i, n, rc = EXIT_OK;
	struct json j;

	if (o->file)
		return show_file(o);
	n = find_vms(o, &vms);
	if (n < 0)
		return EXIT_RUNTIME;
	for (i = 0; i < n; i++) {
		if (o->vcpu >= 0 && !has_vcpu(&vms[i], o->vcpu)) {
			snprintf(vms[i].err, sizeof(vms[i].err),
				 "pid %d has no vCPU %d", (int)vms[i].pid, o->vcpu);
		} else if (!kvmstats_vm_open(&vms[i], o->vcpu)) {
			note_vm_unavailable(&vms[i]);
			continue;
		}
		fprintf(stderr, "kvm-statsfd: %s\n", vms[i].err);
		rc = EXIT_RUNTIME;
	}
	if (o->json) {
		json_init(&j, stdout, 1);
		json_obj_begin(&j);
		out_json_head(&j);
		json_key(&j, "vms");
		json_arr_begin(&j);
		for (i = 0; i < n; i++)
			show_json_vm(&j, &vms[i], o);
		json_arr_end(&j);
		json_obj_end(&j);
		json_finish(&j);
	} else {
		for (i = 0; i < n; i++)
			show_human(&vms[i], o);
	}
	kvmstats_vms_free(vms, n);
	return rc;
}
