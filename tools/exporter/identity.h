/* SPDX-License-Identifier: GPL-2.0 */
/* The "vm" label of a VMM process: see identity.c. */
#ifndef KVM_EXPORTER_IDENTITY_H
#define KVM_EXPORTER_IDENTITY_H

#include <sys/types.h>

#define LIBVIRT_QEMU_RUN_DIR	"/run/libvirt/qemu"

struct vm_identity {
	char vm[320];		/* "domain" or "owner/name" */
	char uuid[40];		/* "" if none */
	const char *source;	/* "libvirt" or "qemu" */
};

/* 1 and *id filled if dir has a valid DOMAIN.pid naming pid, else 0. */
int identity_libvirt(const char *dir, pid_t pid, struct vm_identity *id);

/*
 * The identity of VMM pid, owned by uid, with -name guest and -uuid uuid
 * from its command line (either may be NULL); libvirt_dir NULL: not
 * looked at.
 */
void identity_of(const char *libvirt_dir, pid_t pid, uid_t uid,
		 const char *guest, const char *uuid, struct vm_identity *id);

#endif
