// SPDX-License-Identifier: GPL-2.0
/*
 * as-unit UNIT -- PROGRAM [ARG...]: run PROGRAM with the credentials a
 * systemd service file gives it, for a guest that has no systemd.
 *
 * The exporter's shipped unit (tools/exporter/kvm-statsfd-exporter.service)
 * runs it as a system user with only the capabilities it names.  Whether
 * those capabilities are enough to read other users' VMs is a property of
 * the kernel (who may list /proc/PID/fd, borrow an fd, open the module's
 * device), so the exporter's guest test runs the real binary under the real
 * unit's lines, read from the file, not under a copy of them:
 *
 *   User=NAME, Group=NAME         NAME's uid and gid from the guest's
 *                                 passwd and group files, else (a guest
 *                                 with no such account: systemd-sysusers
 *                                 makes it on a host) UNIT_ID for both,
 *                                 an id of the system range that no other
 *                                 process of the guest has; no
 *                                 supplementary groups either way
 *   CapabilityBoundingSet=CAPS    every other capability dropped from the
 *                                 bounding set
 *   AmbientCapabilities=CAPS      CAPS in the inheritable and ambient sets,
 *                                 so that PROGRAM (no file capabilities)
 *                                 holds them after exec, as under systemd
 *   NoNewPrivileges=yes           PR_SET_NO_NEW_PRIVS
 *
 * Any other line of the unit is not emulated (the sandboxing of namespaces
 * and the device cgroup needs systemd: the Debian host lane checks those).
 * Needs root.  Exits 125 when it cannot set up the credentials, else execs.
 */

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

/* The uid and gid of a User= or Group= the guest has no account for. */
#define UNIT_ID 989
#define FAIL 125

struct unit {
	char user[64];
	char group[64];
	bool no_new_privs;
	bool have_bounding;
	char bounding[512];
	char ambient[512];
};

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "as-unit: %s%s%s\n", what, detail ? ": " : "",
		detail ? detail : "");
	exit(FAIL);
}

/* systemd's booleans as the unit files use them. */
static bool yes(const char *v)
{
	return !strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1") ||
	       !strcmp(v, "on");
}

/* Appends a capability list (systemd: space-separated, repeatable lines). */
static void add_list(char *dst, size_t size, const char *v, const char *key)
{
	size_t n = strlen(dst);

	if (n + strlen(v) + 2 > size)
		die("list too long", key);
	snprintf(dst + n, size - n, "%s%s", n ? " " : "", v);
}

static void read_unit(const char *path, struct unit *u)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	bool service = false;

	if (!f)
		die(strerror(errno), path);
	memset(u, 0, sizeof(*u));
	while (fgets(line, sizeof(line), f)) {
		char *eq, *v;

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '[') {
			service = !strcmp(line, "[Service]");
			continue;
		}
		eq = strchr(line, '=');
		if (!service || line[0] == '#' || !eq)
			continue;
		*eq = '\0';
		v = eq + 1;
		if (!strcmp(line, "DynamicUser")) {
			if (yes(v))
				die("DynamicUser= is not emulated (User= is)", path);
		} else if (!strcmp(line, "User")) {
			snprintf(u->user, sizeof(u->user), "%s", v);
		} else if (!strcmp(line, "Group")) {
			snprintf(u->group, sizeof(u->group), "%s", v);
		} else if (!strcmp(line, "NoNewPrivileges")) {
			u->no_new_privs = yes(v);
		} else if (!strcmp(line, "CapabilityBoundingSet")) {
			if (v[0] == '~')
				die("inverted CapabilityBoundingSet= is not emulated", v);
			u->have_bounding = true;
			add_list(u->bounding, sizeof(u->bounding), v, line);
		} else if (!strcmp(line, "AmbientCapabilities")) {
			add_list(u->ambient, sizeof(u->ambient), v, line);
		}
	}
	fclose(f);
	/* A unit without User= runs as root: nothing to prove then. */
	if (!u->user[0])
		die("the unit has no User=", path);
	if (!strcmp(u->user, "root") || !strcmp(u->user, "0") ||
	    !strcmp(u->group, "root") || !strcmp(u->group, "0"))
		die("the unit runs as root", path);
}

/*
 * @name's id in the passwd (@user) or group file, its primary group in
 * *@pgid for a user; -1 if the file has no @name.  The files are read
 * directly, not through NSS, which a static binary in a guest without
 * glibc's NSS modules would not have.
 */
static long id_of(const char *name, bool user, long *pgid)
{
	FILE *f = fopen(user ? "/etc/passwd" : "/etc/group", "r");
	struct passwd *pw;
	struct group *gr;
	long id = -1;

	while (f && id < 0) {
		if (user) {
			pw = fgetpwent(f);
			if (!pw)
				break;
			if (!strcmp(pw->pw_name, name)) {
				id = pw->pw_uid;
				*pgid = pw->pw_gid;
			}
		} else {
			gr = fgetgrent(f);
			if (!gr)
				break;
			if (!strcmp(gr->gr_name, name))
				id = gr->gr_gid;
		}
	}
	if (f)
		fclose(f);
	return id;
}

/*
 * The ids of the unit's User= and Group= (the user's group without
 * Group=): the guest's accounts, else UNIT_ID.
 */
static void unit_ids(const struct unit *u, uid_t *uid, gid_t *gid)
{
	long pgid = -1, ud = id_of(u->user, true, &pgid);
	long gd = u->group[0] ? id_of(u->group, false, NULL) : pgid;

	*uid = ud >= 0 ? ud : UNIT_ID;
	*gid = gd >= 0 ? gd : UNIT_ID;
	if (!*uid || !*gid)
		die("the unit's user or group is root's", u->user);
}

/*
 * Sets the vector @vec of @iab for each capability of the space-separated
 * @list; with @invert, for each capability that is not in it.
 */
static void set_caps(cap_iab_t iab, cap_iab_vector_t vec, const char *list,
		     bool invert)
{
	bool in[CAP_LAST_CAP + 64] = { false };
	char copy[512], *tok, *save = NULL;
	cap_value_t c, last = cap_max_bits();

	snprintf(copy, sizeof(copy), "%s", list);
	for (tok = strtok_r(copy, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		if (cap_from_name(tok, &c) || c < 0 || c >= last)
			die("unknown capability", tok);
		in[c] = true;
	}
	for (c = 0; c < last; c++)
		if (in[c] != invert && cap_iab_set_vector(iab, vec, c, CAP_SET))
			die("cap_iab_set_vector", strerror(errno));
}

int main(int argc, char **argv)
{
	const cap_value_t setpcap = CAP_SETPCAP;
	struct unit u;
	uid_t uid;
	gid_t gid;
	cap_iab_t iab;
	cap_t caps;

	if (argc < 4 || strcmp(argv[2], "--")) {
		fprintf(stderr, "usage: as-unit UNIT -- PROGRAM [ARG...]\n");
		return 2;
	}
	read_unit(argv[1], &u);
	unit_ids(&u, &uid, &gid);

	iab = cap_iab_init();
	if (!iab)
		die("cap_iab_init", strerror(errno));
	/* In libcap's IAB, a set bit of the bounding vector is a dropped one. */
	if (u.have_bounding)
		set_caps(iab, CAP_IAB_BOUND, u.bounding, true);
	set_caps(iab, CAP_IAB_INH, u.ambient, false);
	set_caps(iab, CAP_IAB_AMB, u.ambient, false);

	/*
	 * cap_setuid() keeps the permitted set across the change from root,
	 * which the inheritable and ambient sets are raised from; dropping
	 * from the bounding set then needs CAP_SETPCAP in the effective set.
	 */
	if (cap_setgroups(gid, 0, NULL))
		die("cap_setgroups", strerror(errno));
	if (cap_setuid(uid))
		die("cap_setuid", strerror(errno));
	caps = cap_get_proc();
	if (!caps || cap_set_flag(caps, CAP_EFFECTIVE, 1, &setpcap, CAP_SET) ||
	    cap_set_proc(caps))
		die("CAP_SETPCAP", strerror(errno));
	cap_free(caps);
	if (cap_iab_set_proc(iab))
		die("cap_iab_set_proc", strerror(errno));
	cap_free(iab);
	if (u.no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		die("PR_SET_NO_NEW_PRIVS", strerror(errno));

	execvp(argv[3], argv + 3);
	die(strerror(errno), argv[3]);
	return FAIL;
}
