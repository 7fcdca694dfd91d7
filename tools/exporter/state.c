// SPDX-License-Identifier: GPL-2.0
/*
 * VM bookkeeping between scrapes.  Discovery itself is libkvmstats'
 * (kvmstats_discover(), kvmstats_vm_open()): one implementation for both
 * tools.
 *
 * A VM is identified by its VMM's pid while the pidfd we hold for it has
 * not polled readable, so a reused pid is a new VM.  A VMM that is still
 * running but no longer holds any KVM fd is dropped at the next scrape;
 * one that destroyed its VM and created another under the same fd numbers
 * is not noticed (see Documentation/exporter.rst).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics.h"
#include "state.h"

static void entry_free(struct vm_entry *v, int verbose, const char *why)
{
	if (verbose)
		fprintf(stderr, "kvm-statsfd-exporter: pid %s: %s, closing its stats\n",
			v->pid, why);
	kvmstats_vm_close(&v->p);
	free(v->p.vcpus);
	free(v->p.guest);
	v->p.vcpus = NULL;
	v->p.guest = NULL;
}

unsigned int exporter_reap(struct exporter *e)
{
	unsigned int i, k = 0, gone = 0;

	for (i = 0; i < e->nr; i++) {
		if (e->vms[i].p.pidfd >= 0 && kvmstats_vm_exited(&e->vms[i].p)) {
			entry_free(&e->vms[i], e->verbose, "VMM exited");
			gone++;
			continue;
		}
		e->vms[k++] = e->vms[i];
	}
	e->nr = k;
	return gone;
}

static struct vm_entry *find_entry(struct exporter *e, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < e->nr; i++)
		if (e->vms[i].p.pid == pid)
			return &e->vms[i];
	return NULL;
}

static int cmp_vcpu(const void *a, const void *b)
{
	const struct kvmstats_vcpu *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/*
 * Fold a fresh scan of a VMM we already follow into our entry: vCPUs
 * created since are added, fd numbers of stats not yet open updated.
 * Open stats are kept as they are.
 */
static int merge(struct kvmstats_vm *old, const struct kvmstats_vm *fresh)
{
	struct kvmstats_vcpu *v;
	int i, k;

	if (!old->vm_open) {
		old->vm_fdnum = fresh->vm_fdnum;
		old->vm_stats_fdnum = fresh->vm_stats_fdnum;
	}
	old->nr_vm_fds = fresh->nr_vm_fds;
	for (i = 0; i < fresh->nr_vcpus; i++) {
		const struct kvmstats_vcpu *f = &fresh->vcpus[i];

		for (k = 0; k < old->nr_vcpus; k++)
			if (old->vcpus[k].id == f->id)
				break;
		if (k < old->nr_vcpus) {
			if (!old->vcpus[k].open) {
				old->vcpus[k].fdnum = f->fdnum;
				old->vcpus[k].stats_fdnum = f->stats_fdnum;
			}
			continue;
		}
		v = realloc(old->vcpus, (old->nr_vcpus + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		old->vcpus = v;
		v = &v[old->nr_vcpus++];
		*v = *f;
		v->st = NULL;
		v->open = 0;
	}
	qsort(old->vcpus, old->nr_vcpus, sizeof(*old->vcpus), cmp_vcpu);
	return 0;
}

static int all_open(const struct kvmstats_vm *p, int vcpus)
{
	int i;

	if (!p->vm_open && (p->vm_fdnum >= 0 || p->vm_stats_fdnum >= 0))
		return 0;
	for (i = 0; vcpus && i < p->nr_vcpus; i++)
		if (!p->vcpus[i].open)
			return 0;
	return 1;
}

/* Rescan /proc and bring e->vms in line with it. */
static int rescan(struct exporter *e)
{
	struct vm_entry *nv, *old;
	struct kvmstats_vm *fresh;
	unsigned int i, k, nr = 0;
	int n, ret = 0;

	if (!e->scan) {
		e->scan = kvmstats_scan_new(EXPORTER_RECHECK_MS);
		if (!e->scan)
			return -ENOMEM;
	}
	n = kvmstats_discover_again(e->scan, &fresh, &e->denied);
	if (n < 0)
		return n;
	nv = calloc(n ? n : 1, sizeof(*nv));
	if (!nv) {
		kvmstats_vms_free(fresh, n);
		return -ENOMEM;
	}
	for (i = 0; i < (unsigned int)n; i++) {
		old = find_entry(e, fresh[i].pid);
		if (old) {
			if (!ret)
				ret = merge(&old->p, &fresh[i]);
			nv[nr++] = *old;
			old->p.pid = 0;		/* taken */
		} else {
			nv[nr].p = fresh[i];
			snprintf(nv[nr].pid, sizeof(nv[nr].pid), "%d",
				 (int)fresh[i].pid);
			identity_of(e->use_machined, fresh[i].pid, fresh[i].uid,
				    fresh[i].guest, fresh[i].uuid, &nv[nr].id);
			if (e->verbose)
				fprintf(stderr, "kvm-statsfd-exporter: pid %d (%s): new VM with %d vCPUs\n",
					(int)fresh[i].pid, fresh[i].comm,
					fresh[i].nr_vcpus);
			/* The pidfd now belongs to nv, as do the vCPUs. */
			fresh[i].pidfd = -1;
			/* Now owned by nv: not freed with fresh below. */
			fresh[i].vcpus = NULL;
			fresh[i].nr_vcpus = 0;
			fresh[i].guest = NULL;
			nr++;
		}
	}
	/* Still running but no KVM fd any more: drop. */
	for (k = 0; k < e->nr; k++)
		if (e->vms[k].p.pid)
			entry_free(&e->vms[k], e->verbose, "no KVM fds any more");
	free(e->vms);
	kvmstats_vms_free(fresh, n);	/* fds never opened; vcpus/guest moved out */
	e->vms = nv;
	e->nr = nr;
	return ret;
}

/* One synthetic stats fd: a new open file of e->synth_file. */
static int synth_open(struct exporter *e, struct kvmstats **st)
{
	int fd, ret;

	*st = kvmstats_new();
	if (!*st)
		return -ENOMEM;
	fd = open(e->synth_file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = kvmstats_open(*st, fd);
	if (ret)
		close(fd);
	return ret;
}

/* --synthetic-vms: the VMs made once, never changed. */
static int synth_scan(struct exporter *e)
{
	struct vm_entry *v;
	unsigned int i, k;
	int ret;

	if (e->vms)
		return 0;
	e->vms = calloc(e->synth_vms ? e->synth_vms : 1, sizeof(*e->vms));
	if (!e->vms)
		return -ENOMEM;
	for (i = 0; i < e->synth_vms; i++) {
		v = &e->vms[e->nr++];
		v->p.pid = getpid();	/* alive as long as we are */
		v->p.pidfd = -1;
		v->p.vm_fdnum = -1;
		v->p.vm_stats_fdnum = -1;
		snprintf(v->p.comm, sizeof(v->p.comm), "synthetic");
		snprintf(v->pid, sizeof(v->pid), "%u", i);
		snprintf(v->id.vm, sizeof(v->id.vm), "synthetic/vm-%04u", i);
		v->id.source = "synthetic";
		ret = synth_open(e, &v->p.vm);
		if (ret)
			return ret;
		v->p.vm_open = 1;
		if (!e->opts.vcpu)
			continue;
		v->p.vcpus = calloc(e->synth_vcpus ? e->synth_vcpus : 1,
				    sizeof(*v->p.vcpus));
		if (!v->p.vcpus)
			return -ENOMEM;
		for (k = 0; k < e->synth_vcpus; k++) {
			struct kvmstats_vcpu *c = &v->p.vcpus[v->p.nr_vcpus++];

			c->id = (int)k;
			c->fdnum = -1;
			c->stats_fdnum = -1;
			ret = synth_open(e, &c->st);
			if (ret)
				return ret;
			c->open = 1;
		}
	}
	return 0;
}

int exporter_discover(struct exporter *e)
{
	int ret;

	if (e->synth_file)
		return synth_scan(e);
	exporter_reap(e);
	ret = rescan(e);
	if (!e->denied) {
		e->denied_said = 0;
	} else if (!e->denied_said) {
		fprintf(stderr, "kvm-statsfd-exporter: error: the fds of %u processes cannot be read (needs root, or CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH): their VMs, if any, are not exported (kvm_exporter_processes_denied)\n",
			e->denied);
		e->denied_said = 1;
	}
	return ret;
}

/*
 * QEMU without the module (kvmstats.h, KVMSTATS_VM_UNAVAILABLE): not an
 * error, said once per VM.
 */
static void note_unavailable(struct exporter *e, struct vm_entry *v)
{
	int k, vcpus = 0;

	if (v->noted || !v->p.vm_unavailable || v->p.err[0])
		return;
	for (k = 0; k < v->p.nr_vcpus; k++)
		vcpus += v->p.vcpus[k].open;
	if (e->opts.vcpu && !vcpus)
		return;		/* nothing read at all: an error, reported */
	fprintf(stderr, "kvm-statsfd-exporter: note: pid %s: %s; %s (kvm_vm_stats_available 0)\n",
		v->pid, KVMSTATS_VM_UNAVAILABLE,
		e->opts.vcpu ? "its vCPUs' stats are exported from the stats fds the VMM keeps" :
		"no VM-wide series of it are exported: --vcpu exports its vCPUs' stats where the VMM keeps stats fds (QEMU 8.1 and later)");
	v->noted = 1;
}

static void report(struct vm_entry *v)
{
	if (v->reported || !v->p.err[0])
		return;
	fprintf(stderr, "kvm-statsfd-exporter: %s\n", v->p.err);
	v->reported = 1;
}

/*
 * A VMM exiting, or destroying a VM, while we look at it is no error: its
 * fds close, the fd numbers we scanned go stale (EBADF, ENOENT), its
 * process vanishes (ESRCH), its VM reads as dead (EIO).  Those are
 * counted as races; only what remains when the VMM is alive and the
 * reason is none of these is an error.
 */
static int is_race(struct vm_entry *v, int err)
{
	if (kvmstats_vm_exited(&v->p))
		return 1;
	return err == -ESRCH || err == -EBADF || err == -ENOENT;
}

static void refresh_one(struct exporter *e, struct vm_entry *v,
			struct kvmstats **st, int *open, const char *what)
{
	int ret;

	if (!*open)
		return;
	ret = kvmstats_refresh(*st);
	if (!ret)
		return;
	/* A VM KVM marked dead gives EIO: close it, retried next scrape. */
	if (is_race(v, ret)) {
		e->races++;
	} else {
		snprintf(v->p.err, sizeof(v->p.err),
			 "pid %s %s: reading stats: %s", v->pid, what,
			 kvmstats_errmsg(*st));
		report(v);
		e->errors++;
	}
	kvmstats_free(*st);
	*st = NULL;
	*open = 0;
}

static int cmp_label(const void *a, const void *b)
{
	const struct prom_vm *x = *(const struct prom_vm *const *)a;
	const struct prom_vm *y = *(const struct prom_vm *const *)b;

	return strcmp(x->vm, y->vm);
}

/*
 * Two processes of one owner may claim the same -name: their series then
 * carry a pid label too, so each stays a distinct series.
 */
static int disambiguate(struct prom_vm *pm, unsigned int n)
{
	struct prom_vm **by;
	unsigned int i;

	if (n < 2)
		return 0;
	by = malloc(n * sizeof(*by));
	if (!by)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		by[i] = &pm[i];
	qsort(by, n, sizeof(*by), cmp_label);
	for (i = 1; i < n; i++)
		if (!strcmp(by[i - 1]->vm, by[i]->vm)) {
			by[i - 1]->pid = by[i - 1]->info_pid;
			by[i]->pid = by[i]->info_pid;
		}
	free(by);
	return 0;
}

int exporter_scrape(struct exporter *e, FILE *f)
{
	struct prom_vcpu *pv = NULL;
	struct prom_vm *pm = NULL;
	struct prom_result res;
	char (*ids)[12] = NULL;
	unsigned int i, nfds = 0, nv = 0;
	char what[32];
	int k, ret;

	ret = exporter_discover(e);
	if (ret)
		return ret;
	for (i = 0; i < e->nr; i++) {
		struct vm_entry *v = &e->vms[i];

		if (!all_open(&v->p, e->opts.vcpu)) {
			ret = kvmstats_vm_open(&v->p, e->opts.vcpu ? -1 : KVMSTATS_VM_ONLY);
			/*
			 * A VM whose stats cannot be opened (KVM refusing an
			 * outsider, no stats fd to borrow) stays so: one
			 * error per VM, not one per scrape.
			 */
			if (ret && is_race(v, ret)) {
				e->races++;
			} else if (ret && !v->reported) {
				e->errors++;
				report(v);
			}
			note_unavailable(e, v);
			v->p.err[0] = '\0';
		}
		refresh_one(e, v, &v->p.vm, &v->p.vm_open, "VM");
		nfds += v->p.vm_open;
		for (k = 0; k < v->p.nr_vcpus; k++) {
			snprintf(what, sizeof(what), "vCPU %d", v->p.vcpus[k].id);
			refresh_one(e, v, &v->p.vcpus[k].st, &v->p.vcpus[k].open,
				    what);
			nfds += v->p.vcpus[k].open;
		}
		nv += v->p.nr_vcpus;
	}

	pm = calloc(e->nr ? e->nr : 1, sizeof(*pm));
	pv = calloc(nv ? nv : 1, sizeof(*pv));
	ids = calloc(nv ? nv : 1, sizeof(*ids));
	ret = -ENOMEM;
	if (!pm || !pv || !ids)
		goto out;
	for (i = 0, nv = 0; i < e->nr; i++) {
		struct kvmstats_vm *p = &e->vms[i].p;

		pm[i].vm = e->vms[i].id.vm;
		pm[i].info_pid = e->vms[i].pid;
		pm[i].uuid = e->vms[i].id.uuid;
		pm[i].source = e->vms[i].id.source;
		pm[i].comm = p->comm;
		pm[i].vm_st = p->vm_open ? p->vm : NULL;
		pm[i].vcpus = &pv[nv];
		pm[i].nr_vcpus = p->nr_vcpus;
		for (k = 0; k < p->nr_vcpus; k++, nv++) {
			snprintf(ids[nv], sizeof(ids[nv]), "%d", p->vcpus[k].id);
			pv[nv].id = ids[nv];
			pv[nv].st = p->vcpus[k].open ? p->vcpus[k].st : NULL;
		}
	}
	ret = disambiguate(pm, e->nr);
	if (ret)
		goto out;
	ret = prom_render(f, pm, e->nr, &e->opts, &res);
	if (ret)
		goto out;
	e->scrapes++;
	fprintf(f, "# HELP kvm_exporter_vms VMM processes the exporter follows.\n"
		"# TYPE kvm_exporter_vms gauge\nkvm_exporter_vms %u\n", e->nr);
	fprintf(f, "# HELP kvm_exporter_stats_fds KVM stats fds the exporter holds open.\n"
		"# TYPE kvm_exporter_stats_fds gauge\nkvm_exporter_stats_fds %u\n",
		nfds);
	fprintf(f, "# HELP kvm_exporter_processes_denied Processes whose fds the exporter was not allowed to read at this scrape (it needs root, or CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH): VMs they run are missing.\n"
		"# TYPE kvm_exporter_processes_denied gauge\nkvm_exporter_processes_denied %u\n",
		e->denied);
	fprintf(f, "# HELP kvm_exporter_errors_total Stats fds that could not be opened or read although their VMM was running, since the exporter started.\n"
		"# TYPE kvm_exporter_errors_total counter\nkvm_exporter_errors_total %lu\n",
		e->errors);
	fprintf(f,
		"# HELP kvm_exporter_machined_errors_total Lookups of a new VMM in systemd-machined that failed (the system bus could not be reached, machined refused or did not answer), since the exporter started: such VMs are named from their command line.\n"
		"# TYPE kvm_exporter_machined_errors_total counter\nkvm_exporter_machined_errors_total %lu\n",
		identity_machined_errors());
	fprintf(f, "# HELP kvm_exporter_vm_exit_races_total Stats fds not opened or read because their VM or VMM was going away, since the exporter started.\n"
		"# TYPE kvm_exporter_vm_exit_races_total counter\nkvm_exporter_vm_exit_races_total %lu\n",
		e->races);
	fprintf(f, "# HELP kvm_exporter_skipped_stats Stats left out of this scrape because another stat has their metric name.\n"
		"# TYPE kvm_exporter_skipped_stats gauge\nkvm_exporter_skipped_stats %u\n",
		res.skipped);
out:
	free(pm);
	free(pv);
	free(ids);
	return ret;
}

void exporter_free(struct exporter *e)
{
	unsigned int i;

	for (i = 0; i < e->nr; i++)
		entry_free(&e->vms[i], 0, "");
	free(e->vms);
	e->vms = NULL;
	e->nr = 0;
	kvmstats_scan_free(e->scan);
	e->scan = NULL;
}
