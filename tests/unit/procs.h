/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Child processes for the discovery tests: each holds fds and no KVM fd,
 * as most of a host's processes do.
 */
#ifndef UNIT_PROCS_H
#define UNIT_PROCS_H

#include <sys/types.h>

/*
 * A child holding @nfds fds (of /dev/null) until procs_reap(), returned
 * once it holds them all; -1 on failure.
 */
pid_t procs_spawn(unsigned int nfds);
/* Kill and wait for a child of procs_spawn(); nothing for pid <= 0. */
void procs_reap(pid_t pid);

#endif
