/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tiny TAP producer.  The plan is printed at the end (valid TAP) so groups
 * need not count their checks up front; the very last line is always
 * "N passed, N failed" for the build system to grep.
 */
#ifndef UNIT_TAP_H
#define UNIT_TAP_H

#include <stdarg.h>
#include <stdio.h>

extern int tap_pass, tap_fail;

int tap_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tap_done(void);

#define ok(cond, ...) tap_ok(!!(cond), __VA_ARGS__)

#endif
