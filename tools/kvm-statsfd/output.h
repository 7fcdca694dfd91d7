/* SPDX-License-Identifier: GPL-2.0 */
/* Rendering one stats file, human or JSON; no discovery, so unit-testable. */
#ifndef KVMSTATSFD_OUTPUT_H
#define KVMSTATSFD_OUTPUT_H

#include <stdio.h>

#include "json.h"
#include "kvmstats.h"

#define KVMSTATSFD_SCHEMA	"kvm-statsfd/1"

/*
 * s made safe for a terminal: control characters (C0, DEL, C1) and
 * invalid UTF-8 as \xNN, backslash as \\.  Process names, -name values
 * and names from a stats file are anyone's choice and could otherwise
 * move root's cursor or retitle the terminal.  Returns buf.
 */
const char *term_safe(const char *s, char *buf, size_t len);

/* The "schema" and "timestamp" (RFC 3339, UTC) members every document has. */
void out_json_head(struct json *j);

/* "[1.02 us, 2.05 us)" style bounds of bucket i into buf. */
void out_bucket_label(const struct kvmstats_desc *d, unsigned int i,
		      char *buf, size_t len);
void out_stat_human(FILE *f, const struct kvmstats *s,
		    const struct kvmstats_desc *d, const char *indent);
void out_stats_human(FILE *f, const struct kvmstats *s, const char *indent);
/* "id" and "stats" members into an open object; NULL s gives nulls. */
void out_stats_fields(struct json *j, const struct kvmstats *s);
/* The "stats object": {"id": ..., "stats": [...]}. */
void out_stats_json(struct json *j, const struct kvmstats *s);

#endif
