// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the web configuration file (web_config.h) with libyaml's
 * document API: the file is small, read once at start and on SIGHUP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "web_config.h"

/* A PEM file a TLS library parses: far below this. */
#define MAX_PEM		(1 << 20)

struct ctx {
	const char *path;
	yaml_document_t *doc;
	char *err;
	size_t errlen;
};

static int fail(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	int used = 0;
	va_list ap;

	if (n)
		used = snprintf(c->err, c->errlen, "%s:%zu: ", c->path,
				n->start_mark.line + 1);
	else
		used = snprintf(c->err, c->errlen, "%s: ", c->path);
	if (used < 0 || (size_t)used >= c->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(c->err + used, c->errlen - used, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ?
		(const char *)n->data.scalar.value : NULL;
}

/* A YAML null: "~", "null", or nothing, unquoted. */
static int is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);

	return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		(!*s || !strcmp(s, "~") || !strcmp(s, "null") ||
		 !strcmp(s, "Null") || !strcmp(s, "NULL"));
}

static yaml_node_t *node(struct ctx *c, int index)
{
	return yaml_document_get_node(c->doc, index);
}

/* The whole of a PEM file, NUL-terminated, as libmicrohttpd takes it. */
static char *read_pem(struct ctx *c, const yaml_node_t *n, const char *file)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	f = fopen(file, "re");
	if (!f) {
		fail(c, n, "cannot read '%s': %s", file, strerror(errno));
		return NULL;
	}
	buf = malloc(MAX_PEM + 1);
	if (buf)
		len = fread(buf, 1, MAX_PEM + 1, f);
	if (!buf || ferror(f) || len > MAX_PEM || !len ||
	    !memmem(buf, len, "-----BEGIN ", 11)) {
		fail(c, n, "'%s': %s", file, !buf ? strerror(ENOMEM) :
		     ferror(f) ? "read error" : len > MAX_PEM ? "larger than 1 MiB" :
		     "not a PEM file");
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
}

static int parse_tls(struct ctx *c, struct web_config *wc, yaml_node_t *map)
{
	yaml_node_pair_t *p;
	yaml_node_t *cert = NULL, *key = NULL;

	if (is_null(map))
		return 0;
	if (map->type != YAML_MAPPING_NODE)
		return fail(c, map, "tls_server_config: a mapping is expected");
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
		const char *name = scalar(k);

		if (!name)
			return fail(c, k, "tls_server_config: keys are names");
		if (!scalar(v) || !*scalar(v))
			return fail(c, v, "tls_server_config: %s: a file name is expected",
				    name);
		if (!strcmp(name, "cert_file"))
			cert = v;
		else if (!strcmp(name, "key_file"))
			key = v;
		else
			return fail(c, k, "tls_server_config: '%s' is not supported (cert_file and key_file are; client certificates, cipher and version choices are not)",
				    name);
	}
	if (!cert || !key)
		return fail(c, map, "tls_server_config: cert_file and key_file are both needed");
	wc->cert_file = strdup(scalar(cert));
	wc->key_file = strdup(scalar(key));
	if (!wc->cert_file || !wc->key_file)
		return fail(c, map, "%s", strerror(ENOMEM));
	wc->cert_pem = read_pem(c, cert, wc->cert_file);
	if (!wc->cert_pem)
		return -1;
	wc->key_pem = read_pem(c, key, wc->key_file);
	return wc->key_pem ? 0 : -1;
}

static int is_bcrypt(const char *h)
{
	return (!strncmp(h, "$2a$", 4) || !strncmp(h, "$2b$", 4) ||
		!strncmp(h, "$2y$", 4)) && strlen(h) == 60;
}

static int parse_users(struct ctx *c, struct web_config *wc, yaml_node_t *map)
{
	yaml_node_pair_t *p;
	size_t n;

	if (is_null(map))
		return 0;
	if (map->type != YAML_MAPPING_NODE)
		return fail(c, map, "basic_auth_users: a mapping of user names to bcrypt hashes is expected");
	n = map->data.mapping.pairs.top - map->data.mapping.pairs.start;
	wc->users = calloc(n ? n : 1, sizeof(*wc->users));
	if (!wc->users)
		return fail(c, map, "%s", strerror(ENOMEM));
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
		const char *name = scalar(k), *hash = scalar(v);

		/* A colon cannot be sent in the user part of basic auth. */
		if (!name || !*name || strchr(name, ':'))
			return fail(c, k, "basic_auth_users: '%s' is not a user name",
				    name ? name : "(not a scalar)");
		if (web_config_hash_of(wc, name))
			return fail(c, k, "basic_auth_users: '%s' twice", name);
		if (!hash || !is_bcrypt(hash))
			return fail(c, v, "basic_auth_users: %s: a bcrypt hash ($2a$, $2b$ or $2y$, 60 characters) is expected",
				    name);
		wc->users[wc->n_users].name = strdup(name);
		wc->users[wc->n_users].hash = strdup(hash);
		if (!wc->users[wc->n_users].name || !wc->users[wc->n_users].hash) {
			free(wc->users[wc->n_users].name);
			free(wc->users[wc->n_users].hash);
			return fail(c, k, "%s", strerror(ENOMEM));
		}
		wc->n_users++;
	}
	return 0;
}

static int parse_root(struct ctx *c, struct web_config *wc)
{
	yaml_node_t *root = yaml_document_get_root_node(c->doc);
	yaml_node_pair_t *p;
	int seen[2] = { 0, 0 };	/* tls_server_config, basic_auth_users */

	/* An empty file: no TLS, no authentication, as exporter-toolkit. */
	if (!root || is_null(root))
		return 0;
	if (root->type != YAML_MAPPING_NODE)
		return fail(c, root, "a mapping (tls_server_config, basic_auth_users) is expected");
	for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
		const char *name = scalar(k);
		int ret;

		if (name && (!strcmp(name, "tls_server_config") ||
			     !strcmp(name, "basic_auth_users")) &&
		    seen[name[0] == 'b'])
			return fail(c, k, "'%s' twice", name);
		if (name && !strcmp(name, "tls_server_config")) {
			seen[0] = 1;
			ret = parse_tls(c, wc, v);
		} else if (name && !strcmp(name, "basic_auth_users")) {
			seen[1] = 1;
			ret = parse_users(c, wc, v);
		} else {
			return fail(c, k, "'%s' is not supported (tls_server_config and basic_auth_users are)",
				    name ? name : "(not a scalar)");
		}
		if (ret)
			return ret;
	}
	return 0;
}

int web_config_load(const char *path, struct web_config *wc, char *err,
		    size_t errlen)
{
	struct ctx c = { .path = path, .err = err, .errlen = errlen };
	yaml_parser_t parser;
	yaml_document_t doc;
	FILE *f;
	int ret;

	memset(wc, 0, sizeof(*wc));
	f = fopen(path, "re");
	if (!f)
		return fail(&c, NULL, "%s", strerror(errno));
	if (!yaml_parser_initialize(&parser)) {
		fclose(f);
		return fail(&c, NULL, "%s", strerror(ENOMEM));
	}
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "%s:%zu: %s", path,
			 parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "not YAML");
		yaml_parser_delete(&parser);
		fclose(f);
		return -1;
	}
	c.doc = &doc;
	ret = parse_root(&c, wc);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	if (ret)
		web_config_free(wc);
	return ret;
}

void web_config_free(struct web_config *wc)
{
	size_t i;

	for (i = 0; i < wc->n_users; i++) {
		free(wc->users[i].name);
		/* Not a secret, but not left in freed memory either. */
		explicit_bzero(wc->users[i].hash, strlen(wc->users[i].hash));
		free(wc->users[i].hash);
	}
	free(wc->users);
	free(wc->cert_file);
	free(wc->key_file);
	free(wc->cert_pem);
	if (wc->key_pem) {
		explicit_bzero(wc->key_pem, strlen(wc->key_pem));
		free(wc->key_pem);
	}
	memset(wc, 0, sizeof(*wc));
}

const char *web_config_hash_of(const struct web_config *wc, const char *user)
{
	size_t i;

	for (i = 0; i < wc->n_users; i++)
		if (!strcmp(wc->users[i].name, user))
			return wc->users[i].hash;
	return NULL;
}
