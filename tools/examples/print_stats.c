// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The smallest useful libkvmstats agent: print every statistic of a KVM
 * stats file, once, then again each second if asked.  Copy it.
 *
 *   print_stats FILE [SECONDS]
 *
 * FILE is anything that holds a stats file: a saved copy (`cat` of a
 * stats fd), or /proc/PID/fd/N of a stats fd a VMM holds (opening that
 * path gives a new file on the same stats).  Build it against the
 * installed library:
 *
 *   cc -o print_stats print_stats.c $(pkg-config --cflags --libs libkvmstats)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <kvmstats/kvmstats.h>

static void print_all(const struct kvmstats *s)
{
	const struct kvmstats_desc *d;
	unsigned int i;
	char val[64];

	printf("%s\n", kvmstats_id(s));
	for (i = 0; i < kvmstats_num_desc(s); i++) {
		d = kvmstats_desc_at(s, i);
		/* A histogram's first bucket alone means little: say its size. */
		if (kvmstats_is_hist(d)) {
			printf("%s: histogram of %u buckets\n", d->name, d->size);
			continue;
		}
		kvmstats_format(d, kvmstats_value(s, d, 0), val, sizeof(val));
		printf("%s: %s\n", d->name, val);
	}
}

int main(int argc, char **argv)
{
	struct kvmstats *s;
	int fd, interval = argc > 2 ? atoi(argv[2]) : 0;

	if (argc < 2) {
		fprintf(stderr, "usage: print_stats FILE [SECONDS]\n");
		return 2;
	}
	s = kvmstats_new();
	if (!s) {
		perror("kvmstats_new");
		return 1;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[1]);
		kvmstats_free(s);
		return 1;
	}
	/* On success the handle owns fd; on failure it is still ours. */
	if (kvmstats_open(s, fd)) {
		fprintf(stderr, "%s: %s\n", argv[1], kvmstats_errmsg(s));
		close(fd);
		kvmstats_free(s);
		return 1;
	}
	print_all(s);
	while (interval > 0) {
		sleep(interval);
		if (kvmstats_refresh(s)) {
			fprintf(stderr, "%s: %s\n", argv[1], kvmstats_errmsg(s));
			break;
		}
		print_all(s);
	}
	kvmstats_free(s);	/* closes fd */
	return 0;
}
