// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark (c): why the counters are cache-line separated.  Two threads
 * on two CPUs each increment their own counter, as two vCPU threads do;
 * once with the counters packed in one cache line, once with each in its
 * own.  Prints the ratio packed / separated (false sharing's cost).
 * Runs on the host: it needs two real CPUs.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define ITERS 100000000UL

struct packed {
	uint64_t c[2];
} __attribute__((aligned(64)));

struct separated {
	struct {
		uint64_t c;
	} __attribute__((aligned(64))) line[2];
};

static struct packed packed;
static struct separated separated;

struct job {
	volatile uint64_t *counter;
	int cpu;
};

static void *worker(void *arg)
{
	struct job *job = arg;
	cpu_set_t set;
	unsigned long i;

	CPU_ZERO(&set);
	CPU_SET(job->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (i = 0; i < ITERS; i++)
		*job->counter = *job->counter + 1;	/* single writer, no atomic */
	return NULL;
}

static double run(volatile uint64_t *a, volatile uint64_t *b)
{
	struct job ja = { a, 0 }, jb = { b, 1 };
	struct timespec t0, t1;
	pthread_t x, y;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_create(&x, NULL, worker, &ja);
	pthread_create(&y, NULL, worker, &jb);
	pthread_join(x, NULL);
	pthread_join(y, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
}

int main(void)
{
	double p = 1e9, s = 1e9, t;
	int i;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("bench: layout skipped (needs 2 CPUs)\n");
		return 0;
	}
	for (i = 0; i < 3; i++) {	/* best of 3 each, interleaved */
		t = run(&packed.c[0], &packed.c[1]);
		p = t < p ? t : p;
		t = run(&separated.line[0].c, &separated.line[1].c);
		s = t < s ? t : s;
	}
	printf("bench: layout iterations=%lu packed_ns_per_inc=%.2f separated_ns_per_inc=%.2f ratio_packed_over_separated=%.2f\n",
	       ITERS, p * 1e9 / ITERS, s * 1e9 / ITERS, p / s);
	return 0;
}
