// SPDX-License-Identifier: GPL-2.0
/* Host-only unit tests of libkvmstats and the kvm-statsfd helpers. */
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "tests.h"

int main(int argc, char **argv)
{
	/* The tables of Documentation/exit-reasons.rst, from the library. */
	if (argc == 2 && !strcmp(argv[1], "--exit-reason-tables")) {
		print_exit_reason_table(stdout, 0);
		putchar('\n');
		print_exit_reason_table(stdout, 1);
		return 0;
	}
	test_parse();
	test_fd();
	test_tool();
	test_discover_again();
	test_fuzz();	/* last: the slow one */
	return tap_done();
}
