// SPDX-License-Identifier: GPL-2.0
/*
 * Which VM a VMM process runs, as operators name it
 * (Documentation/exporter.rst, "Identity").
 *
 * systemd-machined knows the virtual machines of a host that registered
 * with it, libvirt's among them: its GetMachineByPID() is the supported
 * way to ask which machine a process belongs to (libvirt's files under
 * /run/libvirt are its own, not an interface), and only root (through
 * polkit) may register one, so its answer is believed.  A machine libvirt
 * registered (Service "libvirt-qemu", named "qemu-ID-DOMAIN") is named by
 * its domain, with its UUID; any other machine of class "vm" by its
 * machine name.  Anything else only has its own command line, which its
 * owner chooses freely, so its name is qualified by the owner:
 * "alice/web1".  Owners' names and libvirt's domain names cannot contain
 * '/', so no process can take a name that belongs to a libvirt domain or
 * to another user's VM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#include "identity.h"

#define MACHINED	"org.freedesktop.machine1"
/* machined answers in microseconds; a hung one must not stall a scrape. */
#define CALL_TIMEOUT_US	(2 * 1000 * 1000)
/* After the system bus could not be reached, when to try again. */
#define RETRY_S		60

static sd_bus *bus;
static time_t bus_failed;
/* Lookups that failed, and the cause last logged ("" once one works). */
static unsigned long lookup_errors;
static char logged_cause[128];

unsigned long identity_machined_errors(void)
{
	return lookup_errors;
}

/*
 * A lookup of @pid that failed for another reason than machined not
 * knowing the pid, or not running: counted, and logged when its cause
 * (@err's name, else @r) differs from the last one logged, so that a
 * lasting failure is logged once, not at every new VMM.
 */
static void lookup_failed(pid_t pid, const char *what, int r,
			  const sd_bus_error *err)
{
	char cause[sizeof(logged_cause)];
	int set = err && sd_bus_error_is_set(err);

	lookup_errors++;
	snprintf(cause, sizeof(cause), "%s: %s", what,
		 set ? err->name : strerror(-r));
	if (!strcmp(cause, logged_cause))
		return;
	snprintf(logged_cause, sizeof(logged_cause), "%s", cause);
	fprintf(stderr,
		"kvm-statsfd-exporter: error: systemd-machined could not be asked which VM pid %d runs (%s%s%s): VMs are named from their command line until it can (kvm_exporter_machined_errors_total)\n",
		(int)pid, cause, set && err->message ? ": " : "",
		set && err->message ? err->message : "");
}

/* A lookup that worked: a failure after it is logged again. */
static void lookup_worked(void)
{
	if (logged_cause[0])
		fputs("kvm-statsfd-exporter: systemd-machined answers again\n", stderr);
	logged_cause[0] = '\0';
}

/* machined not running (or not installed) is no failure: nothing to ask. */
static int no_machined(const sd_bus_error *err)
{
	return sd_bus_error_has_name(err, SD_BUS_ERROR_SERVICE_UNKNOWN) ||
	       sd_bus_error_has_name(err, SD_BUS_ERROR_NAME_HAS_NO_OWNER);
}

/*
 * The system bus, connected on first use; NULL while it cannot be (a
 * failure counted once per attempt, one a minute at most).
 */
static sd_bus *system_bus(pid_t pid)
{
	time_t now = time(NULL);
	int r;

	if (bus)
		return bus;
	if (bus_failed && now - bus_failed < RETRY_S)
		return NULL;
	r = sd_bus_open_system(&bus);
	if (r < 0) {
		bus = NULL;
		bus_failed = now;
		lookup_failed(pid, "the system bus", r, NULL);
		return NULL;
	}
	sd_bus_set_method_call_timeout(bus, CALL_TIMEOUT_US);
	bus_failed = 0;
	return bus;
}

void identity_close(void)
{
	bus = sd_bus_flush_close_unref(bus);
	bus_failed = 0;
}

/* What identity_machined() wants of a machine. */
struct machine {
	char name[256];
	char class[16];
	char service[64];
	char uuid[37];
};

/* The 16-byte machine Id as a UUID string; "" for the all-zero one. */
static void format_uuid(const unsigned char *u, char *uuid, size_t len)
{
	uuid[0] = '\0';
	if (u[0] | u[6] | u[8] | u[15])
		snprintf(uuid, len,
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
			 u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* One string property's value (variant "s") into @buf. */
static int read_string(sd_bus_message *m, char *buf, size_t len)
{
	const char *v;
	int r = sd_bus_message_read(m, "v", "s", &v);

	if (r >= 0)
		snprintf(buf, len, "%s", v);
	return r;
}

/*
 * The properties of machine @path, in one call (Properties.GetAll): a
 * scrape that meets many new VMMs asks once per machine, not once per
 * property.  0, or a negative errno.
 */
static int machine_properties(sd_bus *b, const char *path, struct machine *mc)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const unsigned char *u;
	const char *key;
	size_t n;
	int r;

	memset(mc, 0, sizeof(*mc));
	r = sd_bus_call_method(b, MACHINED, path,
			       "org.freedesktop.DBus.Properties", "GetAll", &err,
			       &reply, "s", MACHINED ".Machine");
	if (r < 0)
		goto out;
	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	while (r >= 0 &&
	       (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		r = sd_bus_message_read(reply, "s", &key);
		if (r < 0)
			break;
		if (!strcmp(key, "Name")) {
			r = read_string(reply, mc->name, sizeof(mc->name));
		} else if (!strcmp(key, "Class")) {
			r = read_string(reply, mc->class, sizeof(mc->class));
		} else if (!strcmp(key, "Service")) {
			r = read_string(reply, mc->service, sizeof(mc->service));
		} else if (!strcmp(key, "Id")) {
			r = sd_bus_message_enter_container(reply, 'v', "ay");
			if (r >= 0)
				r = sd_bus_message_read_array(reply, 'y',
							      (const void **)&u, &n);
			if (r >= 0 && n == 16)
				format_uuid(u, mc->uuid, sizeof(mc->uuid));
			if (r >= 0)
				r = sd_bus_message_exit_container(reply);
		} else {
			r = sd_bus_message_skip(reply, "v");
		}
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
	}
out:
	sd_bus_message_unref(reply);
	sd_bus_error_free(&err);
	return r < 0 ? r : 0;
}

/* libvirt's machine name "qemu-ID-DOMAIN": DOMAIN, or NULL. */
static const char *libvirt_domain(const char *machine)
{
	const char *p;

	if (strncmp(machine, "qemu-", 5))
		return NULL;
	p = machine + 5;
	if (*p < '0' || *p > '9')
		return NULL;
	p += strspn(p, "0123456789");
	return *p == '-' && p[1] ? p + 1 : NULL;
}

int identity_machined(pid_t pid, struct vm_identity *id)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	sd_bus *b = system_bus(pid);
	const char *path, *dom;
	struct machine mc;
	int found = 0, r;

	if (!b)
		return 0;
	r = sd_bus_call_method(b, MACHINED, "/org/freedesktop/machine1",
			       MACHINED ".Manager", "GetMachineByPID", &err,
			       &reply, "u", (uint32_t)pid);
	if (r < 0) {
		/* No machine for this pid is an answer; a lost bus is not. */
		if (sd_bus_error_has_name(&err, MACHINED ".NoMachineForPID")) {
			lookup_worked();
			goto out;
		}
		if (!no_machined(&err))
			lookup_failed(pid, "GetMachineByPID", r, &err);
		if (!sd_bus_is_open(b))
			identity_close();
		goto out;
	}
	r = sd_bus_message_read(reply, "o", &path);
	if (r >= 0)
		r = machine_properties(b, path, &mc);
	if (r < 0) {
		lookup_failed(pid, "the machine's properties", r, NULL);
		goto out;
	}
	lookup_worked();
	if (!mc.name[0] || strcmp(mc.class, "vm"))
		goto out;
	dom = !strcmp(mc.service, "libvirt-qemu") ? libvirt_domain(mc.name) : NULL;
	snprintf(id->vm, sizeof(id->vm), "%s", dom ? dom : mc.name);
	snprintf(id->uuid, sizeof(id->uuid), "%s", mc.uuid);
	id->source = dom ? "libvirt" : "machined";
	found = 1;
out:
	sd_bus_message_unref(reply);
	sd_bus_error_free(&err);
	return found;
}

void identity_of(int use_machined, pid_t pid, uid_t uid, const char *guest,
		 const char *uuid, struct vm_identity *id)
{
	char owner[64], pwbuf[1024];
	struct passwd pw, *res = NULL;

	memset(id, 0, sizeof(*id));
	if (use_machined && identity_machined(pid, id)) {
		/* libvirt gives its QEMU the domain's UUID as -uuid too. */
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
