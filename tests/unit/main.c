// SPDX-License-Identifier: GPL-2.0
/* Host-only unit tests of libkvmstats and the kvm-statsfd helpers. */
#include "tap.h"
#include "tests.h"

int main(void)
{
	test_parse();
	test_fd();
	test_tool();
	test_fuzz();	/* last: the slow one */
	return tap_done();
}
