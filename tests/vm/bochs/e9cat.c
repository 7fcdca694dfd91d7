// SPDX-License-Identifier: GPL-2.0
/*
 * e9cat: copy standard input to I/O port 0xE9, byte by byte.
 *
 * Bochs copies what a guest writes to port 0xE9 to the host (its
 * port_e9_hack), which is far cheaper than its emulated UART (50-70 ms of
 * host time per line).  The Bochs test lane's init pipes the test report
 * and dmesg through this; run-guest-bochs.sh takes it back out on the host.
 * Statically linked, for the busybox initramfs.  Needs CAP_SYS_RAWIO.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/io.h>
#include <unistd.h>

#define E9_PORT	0xe9

int main(void)
{
	unsigned char buf[4096];
	ssize_t n, i;

	if (ioperm(E9_PORT, 1, 1)) {
		perror("e9cat: ioperm");
		return 1;
	}
	for (;;) {
		n = read(0, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0;
		for (i = 0; i < n; i++)
			outb(buf[i], E9_PORT);
	}
}
