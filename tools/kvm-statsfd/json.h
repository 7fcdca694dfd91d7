/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal streaming JSON writer.  Output is always valid JSON as long as
 * begin/end calls are balanced: commas, escaping and UTF-8 repair are done
 * here so callers cannot get them wrong.
 */
#ifndef KVMSTATSFD_JSON_H
#define KVMSTATSFD_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH	16

struct json {
	FILE *f;
	int depth;
	int pretty;
	int after_key;			/* next value follows "key": */
	unsigned char has_items[JSON_MAX_DEPTH];
};

void json_init(struct json *j, FILE *f, int pretty);
void json_obj_begin(struct json *j);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_str(struct json *j, const char *s);	/* NULL -> null */
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
void json_null(struct json *j);
/* End of document: trailing newline. */
void json_finish(struct json *j);

/* Escape s into f as a JSON string literal (with quotes). */
void json_write_string(FILE *f, const char *s);

#endif
