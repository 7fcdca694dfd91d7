/* SPDX-License-Identifier: GPL-2.0 */
/* The "vm" label of a VMM process: see identity.c. */
#ifndef KVM_EXPORTER_IDENTITY_H
#define KVM_EXPORTER_IDENTITY_H

#include <sys/types.h>

struct vm_identity {
	char vm[320];		/* "domain", "machine" or "owner/name" */
	char uuid[40];		/* "" if none */
	const char *source;	/* "libvirt", "machined" or "qemu" */
};

/*
 * 1 and *id filled if systemd-machined has pid in a machine of class
 * "vm", else 0 (no machined, no such machine).  The system bus is
 * connected on first use, and again a minute after it could not be.
 */
int identity_machined(pid_t pid, struct vm_identity *id);
/*
 * Lookups in machined that failed since the start: the system bus could
 * not be reached, machined refused or did not answer in time.  machined
 * not knowing the pid, or not running at all, is no failure.  The cause
 * is logged on standard error when it changes, not at every lookup.
 */
unsigned long identity_machined_errors(void);
/* Disconnect from the system bus (at exit, and for tests). */
void identity_close(void);

/*
 * The identity of VMM pid, owned by uid, with -name guest and -uuid uuid
 * from its command line (either may be NULL); machined is asked first
 * when use_machined.
 */
void identity_of(int use_machined, pid_t pid, uid_t uid, const char *guest,
		 const char *uuid, struct vm_identity *id);

#endif
