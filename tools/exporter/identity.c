// SPDX-License-Identifier: GPL-2.0
/*
 * Which VM a VMM process runs, as operators name it
 * (Documentation/exporter.rst, "Identity").
 *
 * libvirt writes /run/libvirt/qemu/DOMAIN.pid (the QEMU pid) and
 * DOMAIN.xml (the definition, with <uuid>) as root: a process listed
 * there is that domain.  Anything else only has its own command line,
 * which its owner chooses freely, so its name is qualified by the owner:
 * "alice/web1".  Owners' names and libvirt's domain names cannot contain
 * '/', so no process can take a name that belongs to a libvirt domain or
 * to another user's VM.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "identity.h"

static ssize_t read_file(int dirfd, const char *name, char *buf, size_t len,
			 struct stat *st)
{
	ssize_t n;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		return -1;
	}
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* Process start time in seconds since the epoch, or -1. */
static double start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ticks;
	double btime = -1;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	/* comm may hold anything: fields start after its last ')'. */
	p = p ? strrchr(buf, ')') : NULL;
	if (!p)
		return -1;
	for (i = 0; i < 20 && p; i++)	/* to field 22, starttime */
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &ticks) != 1)
		return -1;
	f = fopen("/proc/stat", "re");
	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "btime %lf", &btime) == 1)
			break;
	fclose(f);
	if (btime < 0)
		return -1;
	return btime + (double)ticks / (double)sysconf(_SC_CLK_TCK);
}

/* "<uuid>...</uuid>" of a libvirt domain XML, first one (the domain's). */
static void xml_uuid(int dirfd, const char *dom, char *uuid, size_t len)
{
	char name[300], *buf, *a, *b;
	struct stat st;

	uuid[0] = '\0';
	snprintf(name, sizeof(name), "%s.xml", dom);
	buf = malloc(65536);
	if (!buf)
		return;
	if (read_file(dirfd, name, buf, 65536, &st) <= 0 || st.st_uid != 0)
		goto out;
	a = strstr(buf, "<uuid>");
	b = a ? strstr(a, "</uuid>") : NULL;
	if (b && b - a - 6 < (long)len &&
	    b - a - 6 == (long)strspn(a + 6, "0123456789abcdefABCDEF-"))
		snprintf(uuid, len, "%.*s", (int)(b - a - 6), a + 6);
out:
	free(buf);
}

int identity_libvirt(const char *dir, pid_t pid, struct vm_identity *id)
{
	char buf[32], dom[256];
	struct dirent *de;
	struct stat st;
	double started;
	size_t n;
	DIR *d;
	int found = 0;

	d = opendir(dir);
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		n = strlen(de->d_name);
		if (n <= 4 || n - 4 >= sizeof(dom) ||
		    strcmp(de->d_name + n - 4, ".pid"))
			continue;
		if (read_file(dirfd(d), de->d_name, buf, sizeof(buf), &st) <= 0 ||
		    atoi(buf) != pid)
			continue;
		/* Only root's files, which nobody else can write. */
		if (st.st_uid != 0 || (st.st_mode & 022))
			continue;
		/*
		 * A pid file left behind by a domain that died names a pid
		 * anyone's process may get next: the process must be older
		 * than the file libvirt wrote after starting it.
		 */
		started = start_time(pid);
		if (started < 0 || started > (double)st.st_mtime + 1.0)
			continue;
		memcpy(dom, de->d_name, n - 4);
		dom[n - 4] = '\0';
		snprintf(id->vm, sizeof(id->vm), "%s", dom);
		xml_uuid(dirfd(d), dom, id->uuid, sizeof(id->uuid));
		id->source = "libvirt";
		found = 1;
	}
	closedir(d);
	return found;
}

void identity_of(const char *libvirt_dir, pid_t pid, uid_t uid,
		 const char *guest, const char *uuid, struct vm_identity *id)
{
	char owner[64], pwbuf[1024];
	struct passwd pw, *res = NULL;

	memset(id, 0, sizeof(*id));
	if (libvirt_dir && identity_libvirt(libvirt_dir, pid, id)) {
		/*
		 * The XML is root's alone (0600); libvirt gave its QEMU the
		 * same -uuid, and this process is libvirt's: believe it.
		 */
		if (!id->uuid[0] && uuid)
			snprintf(id->uuid, sizeof(id->uuid), "%s", uuid);
		return;
	}
	/* root is root even where there is no passwd file (a test guest). */
	if (uid == 0)
		snprintf(owner, sizeof(owner), "root");
	else if (!getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &res) && res &&
		 res->pw_name[0] && !strchr(res->pw_name, '/'))
		snprintf(owner, sizeof(owner), "%s", res->pw_name);
	else
		snprintf(owner, sizeof(owner), "uid%u", (unsigned int)uid);
	if (guest && guest[0])
		snprintf(id->vm, sizeof(id->vm), "%s/%s", owner, guest);
	else
		snprintf(id->vm, sizeof(id->vm), "%s/pid-%d", owner, (int)pid);
	snprintf(id->uuid, sizeof(id->uuid), "%s", uuid ? uuid : "");
	id->source = "qemu";
}
