// SPDX-License-Identifier: GPL-2.0
/* The event table of watch's log and ncurses view (events.h). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "events.h"

static int wanted_type(const struct kvmstats_desc *d)
{
	return d->type == KVM_STATS_TYPE_CUMULATIVE || kvmstats_is_hist(d);
}

/*
 * The event of d's stem, made if new; -1 when out of memory.  A VM
 * file's sum over its vCPUs (vcpus_X) is their event X.
 */
static int ev_find(struct events *e, const struct kvmstats_desc *d)
{
	const char *name = kvmstats_stem(d);
	struct ev *v;
	int i;

	for (i = 0; i < e->n; i++)
		if (!strcmp(e->ev[i].name, name))
			return i;
	if (e->n == e->cap) {
		v = realloc(e->ev, (e->cap * 2 + 32) * sizeof(*v));
		if (!v)
			return -1;
		e->ev = v;
		e->cap = e->cap * 2 + 32;
	}
	v = &e->ev[e->n];
	memset(v, 0, sizeof(*v));
	v->name = strdup(name);
	v->hist = kvmstats_is_hist(d);
	if (v->hist)
		v->kid = calloc(d->size, sizeof(*v->kid));
	if (!v->name || (v->hist && !v->kid)) {
		free(v->name);
		free(v->kid);
		return -1;
	}
	for (i = 0; v->hist && i < d->size; i++)
		v->kid[i].idx = i;
	if (v->hist)
		v->nr_kid = d->size;
	v->d = *d;
	v->d.name = v->name;
	return e->n++;
}

/*
 * The event of each of the file's descriptors, looked up once: an open
 * stats file keeps its descriptors, and events are never removed.
 */
static int *evmap(struct events *e, struct sample *sm)
{
	unsigned int i, n = kvmstats_num_desc(sm->st);
	const struct kvmstats_desc *d;

	if (sm->evmap)
		return sm->evmap;
	sm->evmap = malloc((n ? n : 1) * sizeof(*sm->evmap));
	if (!sm->evmap)
		return NULL;
	for (i = 0; i < n; i++) {
		d = kvmstats_desc_at(sm->st, i);
		sm->evmap[i] = wanted_type(d) ? ev_find(e, d) : -1;
	}
	return sm->evmap;
}

static struct ev_kid *vcpu_kid(struct ev *v, pid_t pid, int id)
{
	struct ev_kid *k;
	int i;

	for (i = 0; i < v->nr_kid; i++)
		if (v->kid[i].pid == pid && v->kid[i].idx == id)
			return &v->kid[i];
	k = realloc(v->kid, (v->nr_kid + 1) * sizeof(*k));
	if (!k)
		return NULL;
	v->kid = k;
	k = &v->kid[v->nr_kid++];
	memset(k, 0, sizeof(*k));
	k->pid = pid;
	k->idx = id;
	return k;
}

/* A counter that went backwards (a reset we did not see) grew by 0. */
static uint64_t growth(uint64_t cur, uint64_t old)
{
	return cur >= old ? cur - old : 0;
}

static void add_hist(struct events *e, struct ev *v, const struct sample *sm,
		     const struct kvmstats_desc *d)
{
	uint64_t cur, old;
	unsigned int b;

	for (b = 0; b < d->size; b++) {
		cur = kvmstats_value(sm->st, d, b);
		old = sm->prev[d->offset / 8 + b];
		v->now += cur;
		v->delta += growth(cur, old);
		if (e->drill && b < (unsigned int)v->nr_kid) {
			v->kid[b].now += cur;
			v->kid[b].delta += growth(cur, old);
		}
	}
}

/* One stats file; vcpu is its vCPU's id, or -1 for the VM's own file. */
static void add_file(struct events *e, struct sample *sm, pid_t pid, int vcpu)
{
	const struct kvmstats_desc *d;
	struct ev_kid *k;
	unsigned int i;
	uint64_t cur, old;
	int *map = evmap(e, sm);
	struct ev *v;

	if (!map || !sm->prev)
		return;
	for (i = 0; i < kvmstats_num_desc(sm->st); i++) {
		if (map[i] < 0)
			continue;
		v = &e->ev[map[i]];
		d = kvmstats_desc_at(sm->st, i);
		if (vcpu < 0 && v->stamp == e->stamp)
			continue;	/* the vCPUs had it */
		if (vcpu >= 0)
			v->stamp = e->stamp;
		/* Same name, other shape (another KVM): not comparable. */
		if (v->hist != kvmstats_is_hist(d) ||
		    (v->hist && d->size != v->d.size))
			continue;
		if (v->hist) {
			add_hist(e, v, sm, d);
			continue;
		}
		cur = kvmstats_value(sm->st, d, 0);
		old = sm->prev[d->offset / 8];
		v->now += cur;
		v->delta += growth(cur, old);
		if (e->drill && vcpu >= 0) {
			k = vcpu_kid(v, pid, vcpu);
			if (k) {
				k->now += cur;
				k->delta += growth(cur, old);
			}
		}
	}
}

void ev_sample(struct events *e, struct watch *ws, const struct wfilter *f)
{
	struct kvmstats_vm *p;
	struct ev *v;
	int i, k;

	for (i = 0; i < e->n; i++) {
		v = &e->ev[i];
		v->now = 0;
		v->delta = 0;
		for (k = 0; k < v->nr_kid; k++) {
			v->kid[k].now = 0;
			v->kid[k].delta = 0;
		}
	}
	for (i = 0; i < ws->n; i++) {
		p = ws->w[i].p;
		if (ws->w[i].gone || !wf_vm(f, p))
			continue;
		/* Never 0: a fresh event's stamp is 0. */
		e->stamp = e->stamp + 1 ? e->stamp + 1 : 1;
		for (k = 0; k < p->nr_vcpus; k++)
			if (p->vcpus[k].open)
				add_file(e, &ws->w[i].vcpu[k], p->pid,
					 p->vcpus[k].id);
		if (p->vm_open)
			add_file(e, &ws->w[i].vm, p->pid, -1);
	}
	for (i = 0; i < e->n; i++) {
		v = &e->ev[i];
		v->acc += v->delta;
		for (k = 0; k < v->nr_kid; k++)
			v->kid[k].acc += v->kid[k].delta;
	}
}

void ev_reset(struct events *e)
{
	int i, k;

	e->reset = 1;
	for (i = 0; i < e->n; i++) {
		e->ev[i].acc = 0;
		for (k = 0; k < e->ev[i].nr_kid; k++)
			e->ev[i].kid[k].acc = 0;
	}
}

void ev_free(struct events *e)
{
	int i;

	for (i = 0; i < e->n; i++) {
		free(e->ev[i].name);
		free(e->ev[i].kid);
	}
	free(e->ev);
	memset(e, 0, sizeof(*e));
}
