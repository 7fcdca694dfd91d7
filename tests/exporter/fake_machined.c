// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in for systemd-machined on a private bus, for the exporter's
 * identity test (test_render.c): it owns org.freedesktop.machine1 and
 * answers GetMachineByPID() and the Machine properties the exporter reads
 * (Name, Class, Service, Id), from its arguments.
 *
 *   fake_machined [--hang] PID:NAME:CLASS:SERVICE:ID32HEX...
 *
 * The bus is $DBUS_SYSTEM_BUS_ADDRESS.  --hang: take the name, answer
 * nothing (a machined that hangs).  Prints "ready" once the name is owned.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#define MAX_MACHINES	8

struct machine {
	unsigned int pid;
	char name[64], class[16], service[32];
	unsigned char id[16];
	char path[128];
};

static struct machine machines[MAX_MACHINES];
static int nr;

static int get_by_pid(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
	unsigned int pid;
	int i, r;

	(void)userdata;
	r = sd_bus_message_read(m, "u", &pid);
	if (r < 0)
		return r;
	for (i = 0; i < nr; i++)
		if (machines[i].pid == pid)
			return sd_bus_reply_method_return(m, "o", machines[i].path);
	return sd_bus_error_setf(err, "org.freedesktop.machine1.NoMachineForPID",
				 "PID %u does not belong to any known machine", pid);
}

static struct machine *of_path(const char *path)
{
	int i;

	for (i = 0; i < nr; i++)
		if (!strcmp(machines[i].path, path))
			return &machines[i];
	return NULL;
}

static int prop(sd_bus *bus, const char *path, const char *iface,
		const char *property, sd_bus_message *reply, void *userdata,
		sd_bus_error *err)
{
	struct machine *mc = of_path(path);

	(void)bus;
	(void)iface;
	(void)userdata;
	if (!mc)
		return sd_bus_error_setf(err, SD_BUS_ERROR_UNKNOWN_OBJECT, "%s", path);
	if (!strcmp(property, "Id"))
		return sd_bus_message_append_array(reply, 'y', mc->id, 16);
	return sd_bus_message_append(reply, "s",
				     !strcmp(property, "Name") ? mc->name :
				     !strcmp(property, "Class") ? mc->class :
				     mc->service);
}

static const sd_bus_vtable manager_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_METHOD("GetMachineByPID", "u", "o", get_by_pid, 0),
	SD_BUS_VTABLE_END
};

static const sd_bus_vtable machine_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Name", "s", prop, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Class", "s", prop, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Service", "s", prop, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Id", "ay", prop, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_VTABLE_END
};

static int parse(const char *arg, struct machine *mc)
{
	char hex[33];
	int i;

	if (sscanf(arg, "%u:%63[^:]:%15[^:]:%31[^:]:%32s", &mc->pid, mc->name,
		   mc->class, mc->service, hex) != 5 || strlen(hex) != 32)
		return -1;
	for (i = 0; i < 16; i++)
		if (sscanf(hex + 2 * i, "%2hhx", &mc->id[i]) != 1)
			return -1;
	snprintf(mc->path, sizeof(mc->path), "/org/freedesktop/machine1/machine/m%d",
		 (int)(mc - machines));
	return 0;
}

int main(int argc, char **argv)
{
	int hang = argc > 1 && !strcmp(argv[1], "--hang");
	sd_bus *bus = NULL;
	int i, r;

	for (i = 1 + hang; i < argc && nr < MAX_MACHINES; i++)
		if (parse(argv[i], &machines[nr++])) {
			fprintf(stderr, "fake_machined: bad machine '%s'\n", argv[i]);
			return 2;
		}
	r = sd_bus_open_system(&bus);
	if (r < 0) {
		fprintf(stderr, "fake_machined: system bus: %s\n", strerror(-r));
		return 1;
	}
	if (!hang) {
		r = sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/machine1",
					     "org.freedesktop.machine1.Manager",
					     manager_vtable, NULL);
		if (r >= 0)
			r = sd_bus_add_fallback_vtable(bus, NULL,
						       "/org/freedesktop/machine1/machine",
						       "org.freedesktop.machine1.Machine",
						       machine_vtable, NULL, NULL);
		if (r < 0) {
			fprintf(stderr, "fake_machined: vtable: %s\n", strerror(-r));
			return 1;
		}
	}
	r = sd_bus_request_name(bus, "org.freedesktop.machine1", 0);
	if (r < 0) {
		fprintf(stderr, "fake_machined: name: %s\n", strerror(-r));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		if (hang) {
			pause();
			continue;
		}
		r = sd_bus_process(bus, NULL);
		if (r < 0)
			return 1;
		if (!r && sd_bus_wait(bus, UINT64_MAX) < 0)
			return 1;
	}
}
