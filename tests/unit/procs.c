// SPDX-License-Identifier: GPL-2.0
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procs.h"

pid_t procs_spawn(unsigned int nfds)
{
	unsigned int i;
	int go[2], fd;
	char c = 0;
	pid_t pid;

	if (pipe(go))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(go[0]);
		fd = open("/dev/null", O_RDONLY);
		for (i = 1; fd >= 0 && i < nfds; i++)
			if (dup(fd) < 0)
				break;
		/* Ready: the parent's next look sees every fd. */
		if (write(go[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(go[1]);
	if (pid > 0 && read(go[0], &c, 1) != 1) {
		procs_reap(pid);
		pid = -1;
	}
	close(go[0]);
	return pid;
}

void procs_reap(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
