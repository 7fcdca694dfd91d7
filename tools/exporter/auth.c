// SPDX-License-Identifier: GPL-2.0
/*
 * HTTP basic authentication (--web-config's basic_auth_users).
 *
 * A bcrypt check costs tens of milliseconds by design, and Prometheus
 * sends the same credentials with every scrape, many times a minute: each
 * outcome, good or bad, is remembered for the process's life (until the
 * users change) under a key that is a fast salted hash of the credentials
 * (SHA-256 crypt, its minimum 1,000 rounds, a salt drawn at start), so
 * that no password is kept and a repeated scrape costs about a
 * millisecond.  An unknown user is checked against a dummy hash, so that
 * the answer takes as long as for a known one.
 */
#define _GNU_SOURCE
#include <crypt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"

#define CACHE_SLOTS	64
/* The longest user:password the cache keys (longer ones are never kept). */
#define MAX_CRED	512

struct user {
	char *name;
	char *hash;
};

struct slot {
	char key[CRYPT_OUTPUT_SIZE];
	int ok;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct user *users;
static size_t n_users;
static char salt[CRYPT_GENSALT_OUTPUT_SIZE];
static struct slot cache[CACHE_SLOTS];
static unsigned int cache_next;
static unsigned long refused;
/* bcrypt of "dummy" at cost 10: the time an unknown user's check takes. */
static const char dummy_hash[] =
	"$2b$10$vEj82rRTFIRmGnK387W82e0inDmFuXHetTqaCWmgQ8JyoDLRxLjzm";

static void free_list(struct user *u, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(u[i].name);
		free(u[i].hash);
	}
	free(u);
}

int auth_set_users(const struct web_config *wc)
{
	struct user *u = NULL;
	size_t i, n = wc ? wc->n_users : 0;

	if (n) {
		u = calloc(n, sizeof(*u));
		if (!u)
			return -1;
		for (i = 0; i < n; i++) {
			u[i].name = strdup(wc->users[i].name);
			u[i].hash = strdup(wc->users[i].hash);
			if (!u[i].name || !u[i].hash) {
				free_list(u, n);
				return -1;
			}
		}
	}
	pthread_mutex_lock(&lock);
	if (!salt[0] && n &&
	    !crypt_gensalt_rn("$5$", 1000, NULL, 0, salt, sizeof(salt))) {
		pthread_mutex_unlock(&lock);
		free_list(u, n);
		return -1;
	}
	free_list(users, n_users);
	users = u;
	n_users = n;
	explicit_bzero(cache, sizeof(cache));
	cache_next = 0;
	pthread_mutex_unlock(&lock);
	return 0;
}

int auth_required(void)
{
	int r;

	pthread_mutex_lock(&lock);
	r = n_users > 0;
	pthread_mutex_unlock(&lock);
	return r;
}

/* Equal strings, in a time that does not depend on where they differ. */
static int same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i;
	unsigned char d = la != lb;

	for (i = 0; i < la && i < lb; i++)
		d |= (unsigned char)a[i] ^ (unsigned char)b[i];
	return !d;
}

/* @pass against bcrypt @hash, in @cd's scratch space. */
static int bcrypt_ok(struct crypt_data *cd, const char *pass, const char *hash)
{
	const char *r = crypt_r(pass, hash, cd);

	return r && r[0] != '*' && same(r, hash);
}

int auth_check(const char *user, const char *pass)
{
	/* One crypt_data (32 KB) for the cache key and the bcrypt check. */
	struct crypt_data *cd;
	char cred[MAX_CRED + 1], key[CRYPT_OUTPUT_SIZE] = "";
	const char *r, *hash = NULL;
	size_t i, lu, lp;
	int ok, cached = -1;

	pthread_mutex_lock(&lock);
	if (!n_users) {
		pthread_mutex_unlock(&lock);
		return 1;
	}
	cd = calloc(1, sizeof(*cd));
	if (!cd) {
		pthread_mutex_unlock(&lock);
		return 0;
	}
	lu = strlen(user);
	lp = strlen(pass);
	if (lu + 1 + lp <= MAX_CRED) {
		memcpy(cred, user, lu);
		cred[lu] = ':';
		memcpy(cred + lu + 1, pass, lp + 1);
		r = crypt_r(cred, salt, cd);
		explicit_bzero(cred, sizeof(cred));
		if (r && r[0] != '*')
			snprintf(key, sizeof(key), "%s", r);
	}
	for (i = 0; key[0] && i < CACHE_SLOTS; i++)
		if (cache[i].key[0] && same(cache[i].key, key))
			cached = cache[i].ok;
	for (i = 0; cached < 0 && i < n_users; i++)
		if (!strcmp(users[i].name, user))
			hash = users[i].hash;
	if (cached >= 0) {
		ok = cached;
	} else {
		ok = bcrypt_ok(cd, pass, hash ? hash : dummy_hash) && hash;
		if (key[0]) {
			struct slot *s = &cache[cache_next++ % CACHE_SLOTS];

			memcpy(s->key, key, sizeof(s->key));
			s->ok = ok;
		}
	}
	pthread_mutex_unlock(&lock);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return ok;
}

unsigned long auth_refused(void)
{
	unsigned long r;

	pthread_mutex_lock(&lock);
	r = refused;
	pthread_mutex_unlock(&lock);
	return r;
}

void auth_count_refused(void)
{
	pthread_mutex_lock(&lock);
	refused++;
	pthread_mutex_unlock(&lock);
}
