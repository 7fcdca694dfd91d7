// SPDX-License-Identifier: GPL-2.0
/*
 * VM bookkeeping between scrapes.  Discovery itself is kvm-statsfd's
 * (discover_vms(), vm_open_stats()): one implementation for both tools.
 *
 * A VM is identified by its VMM's pid while the pidfd we hold for it has
 * not polled readable, so a reused pid is a new VM.  A VMM that is still
 * running but no longer holds any KVM fd is dropped at the next scrape;
 * one that destroyed its VM and created another under the same fd numbers
 * is not noticed (see Documentation/exporter.rst).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "state.h"

static void entry_free(struct vm_entry *v, int verbose, const char *why)
{
	if (verbose)
		fprintf(stderr, "kvm-statsfd-exporter: pid %s: %s, closing its stats\n",
			v->pid, why);
	vm_close_stats(&v->p);
	free(v->p.vcpus);
	free(v->p.guest);
	v->p.vcpus = NULL;
	v->p.guest = NULL;
}

unsigned int exporter_reap(struct exporter *e)
{
	unsigned int i, k = 0, gone = 0;

	for (i = 0; i < e->nr; i++) {
		if (e->vms[i].p.pidfd >= 0 && vm_proc_exited(&e->vms[i].p)) {
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
	const struct vcpu_ref *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/*
 * Fold a fresh scan of a VMM we already follow into our entry: vCPUs
 * created since are added, fd numbers of stats not yet open updated.
 * Open stats are kept as they are.
 */
static int merge(struct vm_proc *old, const struct vm_proc *fresh)
{
	struct vcpu_ref *v;
	int i, k;

	if (!old->vm_open) {
		old->vm_fdnum = fresh->vm_fdnum;
		old->vm_stats_fdnum = fresh->vm_stats_fdnum;
	}
	old->nr_vm_fds = fresh->nr_vm_fds;
	for (i = 0; i < fresh->nr_vcpus; i++) {
		const struct vcpu_ref *f = &fresh->vcpus[i];

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
		v->st.fd = -1;
		v->open = 0;
	}
	qsort(old->vcpus, old->nr_vcpus, sizeof(*old->vcpus), cmp_vcpu);
	return 0;
}

static int all_open(const struct vm_proc *p)
{
	int i;

	if (!p->vm_open && (p->vm_fdnum >= 0 || p->vm_stats_fdnum >= 0))
		return 0;
	for (i = 0; i < p->nr_vcpus; i++)
		if (!p->vcpus[i].open)
			return 0;
	return 1;
}

/* Rescan /proc and bring e->vms in line with it. */
static int rescan(struct exporter *e)
{
	struct vm_entry *nv, *old;
	struct vm_proc *fresh;
	unsigned int i, k, nr = 0;
	int n, ret = 0;

	n = discover_vms(&fresh, 0);
	if (n < 0)
		return n;
	nv = calloc(n ? n : 1, sizeof(*nv));
	if (!nv) {
		free_vms(fresh, n);
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
			/* Now owned by nv: not freed with fresh below. */
			fresh[i].vcpus = NULL;
			fresh[i].nr_vcpus = 0;
			fresh[i].guest = NULL;
			if (e->verbose)
				fprintf(stderr, "kvm-statsfd-exporter: pid %d (%s): new VM with %d vCPUs\n",
					(int)fresh[i].pid, fresh[i].comm,
					fresh[i].nr_vcpus);
			nr++;
		}
	}
	/* Still running but no KVM fd any more: drop. */
	for (k = 0; k < e->nr; k++)
		if (e->vms[k].p.pid)
			entry_free(&e->vms[k], e->verbose, "no KVM fds any more");
	free(e->vms);
	free_vms(fresh, n);	/* fds never opened; vcpus/guest moved out */
	e->vms = nv;
	e->nr = nr;
	return ret;
}

static void report(struct vm_entry *v)
{
	if (v->reported || !v->p.err[0])
		return;
	fprintf(stderr, "kvm-statsfd-exporter: %s\n", v->p.err);
	v->reported = 1;
}

static void refresh_one(struct exporter *e, struct vm_entry *v,
			struct kvmstats *st, int *open, const char *what)
{
	if (!*open || !kvmstats_refresh(st))
		return;
	/* A VM KVM marked dead gives EIO: close it, retried next scrape. */
	snprintf(v->p.err, sizeof(v->p.err), "pid %s %s: reading stats: %s",
		 v->pid, what, st->err);
	report(v);
	e->errors++;
	kvmstats_close(st);
	*open = 0;
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

	exporter_reap(e);
	ret = rescan(e);
	if (ret)
		return ret;
	for (i = 0; i < e->nr; i++) {
		struct vm_entry *v = &e->vms[i];

		if (!all_open(&v->p) && vm_open_stats(&v->p, -1)) {
			e->errors++;
			report(v);
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
		struct vm_proc *p = &e->vms[i].p;

		pm[i].pid = e->vms[i].pid;
		pm[i].name = p->guest;
		pm[i].comm = p->comm;
		pm[i].vm = p->vm_open ? &p->vm : NULL;
		pm[i].vcpus = &pv[nv];
		pm[i].nr_vcpus = p->nr_vcpus;
		for (k = 0; k < p->nr_vcpus; k++, nv++) {
			snprintf(ids[nv], sizeof(ids[nv]), "%d", p->vcpus[k].id);
			pv[nv].id = ids[nv];
			pv[nv].st = p->vcpus[k].open ? &p->vcpus[k].st : NULL;
		}
	}
	ret = prom_render(f, pm, e->nr, &res);
	if (ret)
		goto out;
	fprintf(f, "# HELP kvm_exporter_vms VMM processes the exporter follows.\n"
		"# TYPE kvm_exporter_vms gauge\nkvm_exporter_vms %u\n", e->nr);
	fprintf(f, "# HELP kvm_exporter_stats_fds KVM stats fds the exporter holds open.\n"
		"# TYPE kvm_exporter_stats_fds gauge\nkvm_exporter_stats_fds %u\n",
		nfds);
	fprintf(f, "# HELP kvm_exporter_errors_total Stats fds that could not be opened or read, since the exporter started.\n"
		"# TYPE kvm_exporter_errors_total counter\nkvm_exporter_errors_total %lu\n",
		e->errors);
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
}
