// SPDX-License-Identifier: GPL-2.0
#include "tap.h"

int tap_pass, tap_fail;

int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", tap_pass + tap_fail + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (cond)
		tap_pass++;
	else
		tap_fail++;
	fflush(stdout);
	return cond;
}

void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

int tap_done(void)
{
	printf("1..%d\n", tap_pass + tap_fail);
	printf("%d passed, %d failed\n", tap_pass, tap_fail);
	fflush(stdout);
	return tap_fail ? 1 : 0;
}
