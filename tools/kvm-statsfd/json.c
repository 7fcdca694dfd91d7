// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <string.h>

#include "json.h"
#include "kvmstats.h"

void json_init(struct json *j, FILE *f, int pretty)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty = pretty;
}

static void newline(struct json *j)
{
	int i;

	if (!j->pretty)
		return;
	fputc('\n', j->f);
	for (i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/* Comma and indentation before any value or key. */
static void before_item(struct json *j)
{
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	if (j->depth > 0) {
		if (j->has_items[j->depth - 1])
			fputc(',', j->f);
		j->has_items[j->depth - 1] = 1;
		newline(j);
	}
}

static void open_level(struct json *j, char c)
{
	before_item(j);
	fputc(c, j->f);
	/* Deeper nesting is a programming error; keep output balanced. */
	if (j->depth < JSON_MAX_DEPTH)
		j->has_items[j->depth] = 0;
	j->depth++;
}

static void close_level(struct json *j, char c)
{
	int had = j->depth <= JSON_MAX_DEPTH && j->depth > 0 &&
		  j->has_items[j->depth - 1];

	j->depth--;
	if (had)
		newline(j);
	fputc(c, j->f);
}

void json_obj_begin(struct json *j) { open_level(j, '{'); }
void json_obj_end(struct json *j) { close_level(j, '}'); }
void json_arr_begin(struct json *j) { open_level(j, '['); }
void json_arr_end(struct json *j) { close_level(j, ']'); }

/*
 * Process names and command lines are arbitrary bytes; invalid UTF-8 is
 * replaced by U+FFFD so the document always parses.
 */
void json_write_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	fputc('"', f);
	while (*p) {
		switch (*p) {
		case '"':  fputs("\\\"", f); p++; continue;
		case '\\': fputs("\\\\", f); p++; continue;
		case '\n': fputs("\\n", f); p++; continue;
		case '\r': fputs("\\r", f); p++; continue;
		case '\t': fputs("\\t", f); p++; continue;
		case '\b': fputs("\\b", f); p++; continue;
		case '\f': fputs("\\f", f); p++; continue;
		}
		if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p);
			p++;
			continue;
		}
		n = kvmstats_utf8_len(p);
		if (!n) {
			fputs("\\ufffd", f);
			p++;
			continue;
		}
		fwrite(p, 1, n, f);
		p += n;
	}
	fputc('"', f);
}

void json_key(struct json *j, const char *key)
{
	before_item(j);
	json_write_string(j->f, key);
	fputs(j->pretty ? ": " : ":", j->f);
	j->after_key = 1;
}

void json_str(struct json *j, const char *s)
{
	if (!s) {
		json_null(j);
		return;
	}
	before_item(j);
	json_write_string(j->f, s);
}

void json_u64(struct json *j, uint64_t v)
{
	before_item(j);
	fprintf(j->f, "%" PRIu64, v);
}

void json_i64(struct json *j, int64_t v)
{
	before_item(j);
	fprintf(j->f, "%" PRId64, v);
}

void json_null(struct json *j)
{
	before_item(j);
	fputs("null", j->f);
}

void json_finish(struct json *j)
{
	fputc('\n', j->f);
}
