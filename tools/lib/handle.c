// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The handle's life and what it shows of itself.  struct kvmstats is
 * opaque to programs (kvmstats.h) so that libkvmstats.so.1 can change
 * what it keeps; these are the only ways in.
 */
#include <stdlib.h>

#include "internal.h"

struct kvmstats *kvmstats_new(void)
{
	struct kvmstats *s = malloc(sizeof(*s));

	if (s)
		kvmstats__reset(s);
	return s;
}

void kvmstats_free(struct kvmstats *s)
{
	if (!s)
		return;
	kvmstats_close(s);
	free(s);
}

const char *kvmstats_errmsg(const struct kvmstats *s)
{
	return s ? s->err : "no handle";
}

int kvmstats_fd(const struct kvmstats *s)
{
	return s ? s->fd : -1;
}

const char *kvmstats_id(const struct kvmstats *s)
{
	return s ? s->id : NULL;
}

unsigned int kvmstats_num_desc(const struct kvmstats *s)
{
	return s ? s->num_desc : 0;
}

const struct kvmstats_desc *kvmstats_desc_at(const struct kvmstats *s,
					     unsigned int i)
{
	return s && s->descs && i < s->num_desc ? &s->descs[i] : NULL;
}

const uint64_t *kvmstats_data(const struct kvmstats *s)
{
	return s ? s->data : NULL;
}

size_t kvmstats_data_size(const struct kvmstats *s)
{
	return s && s->data ? s->data_size : 0;
}
