// SPDX-License-Identifier: GPL-2.0
/*
 * kvm_statsfd: a collectd read plugin for the KVM binary statistics of
 * every VM on the host, through libkvmstats as installed (pkg-config
 * libkvmstats): an agent that is not ours, on the library as anyone's
 * agent would use it (Documentation/collectd.rst).
 *
 * Each interval: the host's VMs (incremental discovery: a process known
 * to hold no KVM fd is not looked into again for a while), their stats
 * fds opened, every stat dispatched, the fds closed.  Identifiers:
 *
 *   HOST/kvm_statsfd-VM/derive-NAME         cumulative stats
 *   HOST/kvm_statsfd-VM/gauge-NAME          instant and peak stats
 *   HOST/kvm_statsfd-VM/derive-NAME-BUCKET  histogram buckets counted so
 *                                           far (exit reasons and
 *                                           userspace exits by name)
 *
 * VM is QEMU's -name guest (else pidPID), after OWNER. when its owner is
 * not root, with what collectd's identifiers cannot hold turned into '_';
 * with PerVCPU true, each vCPU too, as VM_vcpuN.  Values are raw, in the
 * stat's own unit (Documentation/exit-reasons.rst lists the module's).
 *
 *   LoadPlugin kvm_statsfd
 *   <Plugin kvm_statsfd>
 *     PerVCPU false
 *   </Plugin>
 *
 * Needs root, or CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH, as the exporter does.
 */
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "collectd.h"
#include "plugin.h"
#include "utils/common/common.h"

#include <kvmstats/kvmstats.h>

#define PLUGIN		"kvm_statsfd"
/* How long a process found without KVM fds is not looked into again. */
#define RECHECK_MS	60000

static bool per_vcpu;
static struct kvmstats_scan *scan;

static int kvs_config(oconfig_item_t *ci)
{
	int i;

	for (i = 0; i < ci->children_num; i++) {
		oconfig_item_t *c = &ci->children[i];

		if (!strcasecmp(c->key, "PerVCPU")) {
			if (cf_util_get_boolean(c, &per_vcpu))
				return -1;
		} else {
			ERROR(PLUGIN ": unknown option '%s' (PerVCPU is known)",
			      c->key);
			return -1;
		}
	}
	return 0;
}

static int kvs_init(void)
{
	if (!scan)
		scan = kvmstats_scan_new(RECHECK_MS);
	if (!scan) {
		ERROR(PLUGIN ": out of memory");
		return -1;
	}
	return 0;
}

static int kvs_shutdown(void)
{
	kvmstats_scan_free(scan);
	scan = NULL;
	return 0;
}

/* What collectd keeps of a name part: letters, digits, '_' and '.'. */
static void sanitize(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.'))
			*s = '_';
}

/* Truncated to what collectd keeps (DATA_MAX_NAME_LEN), on purpose. */
static void vm_instance(const struct kvmstats_vm *vm, char *buf, size_t len)
{
	char pwbuf[1024], full[2 * DATA_MAX_NAME_LEN + 32];
	struct passwd pw, *p = NULL;
	const char *name = vm->guest && *vm->guest ? vm->guest : NULL;

	if (vm->uid == 0)
		full[0] = '\0';
	else if (!getpwuid_r(vm->uid, &pw, pwbuf, sizeof(pwbuf), &p) && p)
		snprintf(full, sizeof(full), "%.*s.", DATA_MAX_NAME_LEN, p->pw_name);
	else
		snprintf(full, sizeof(full), "%u.", (unsigned int)vm->uid);
	if (name)
		snprintf(full + strlen(full), sizeof(full) - strlen(full), "%.*s",
			 DATA_MAX_NAME_LEN, name);
	else
		snprintf(full + strlen(full), sizeof(full) - strlen(full), "pid%d",
			 (int)vm->pid);
	sstrncpy(buf, full, len);
	sanitize(buf);
}

static void dispatch(const char *inst, const char *type, const char *tinst,
		     value_t v)
{
	value_list_t vl = VALUE_LIST_INIT;

	vl.values = &v;
	vl.values_len = 1;
	sstrncpy(vl.plugin, PLUGIN, sizeof(vl.plugin));
	sstrncpy(vl.plugin_instance, inst, sizeof(vl.plugin_instance));
	sstrncpy(vl.type, type, sizeof(vl.type));
	sstrncpy(vl.type_instance, tinst, sizeof(vl.type_instance));
	plugin_dispatch_values(&vl);
}

/* A bucket's name: an exit reason's or a KVM_EXIT_*, else its index. */
static void bucket_name(const struct kvmstats_desc *d, unsigned int i,
			char *buf, size_t len)
{
	char what[64];

	if (kvmstats_exit_reason_name(d, i, what, sizeof(what)) < 0 &&
	    kvmstats_userspace_exit_name(d, i, what, sizeof(what)) < 0)
		snprintf(what, sizeof(what), "%u", i);
	snprintf(buf, len, "%s-%s", d->name, what);
	sanitize(buf + strlen(d->name) + 1);
}

static void dispatch_stats(const char *inst, const struct kvmstats *st)
{
	unsigned int i, b, n = kvmstats_num_desc(st);
	char tinst[DATA_MAX_NAME_LEN];

	for (i = 0; i < n; i++) {
		const struct kvmstats_desc *d = kvmstats_desc_at(st, i);
		int cumulative = d->type == KVM_STATS_TYPE_CUMULATIVE;
		value_t v;

		if (!kvmstats_is_hist(d) && d->size == 1) {
			if (cumulative)
				v.derive = (derive_t)kvmstats_value(st, d, 0);
			else
				v.gauge = (gauge_t)kvmstats_value(st, d, 0);
			dispatch(inst, cumulative ? "derive" : "gauge", d->name, v);
			continue;
		}
		/* Buckets and arrays: those counted so far, by name. */
		for (b = 0; b < d->size; b++) {
			uint64_t raw = kvmstats_value(st, d, b);

			if (!raw)
				continue;
			bucket_name(d, b, tinst, sizeof(tinst));
			v.derive = (derive_t)raw;
			dispatch(inst, "derive", tinst, v);
		}
	}
}

static int kvs_read(user_data_t *ud)
{
	char inst[DATA_MAX_NAME_LEN], vinst[DATA_MAX_NAME_LEN + 16];
	struct kvmstats_vm *vms;
	unsigned int denied = 0;
	static unsigned int denied_said;
	int i, j, n;

	(void)ud;
	n = kvmstats_discover_again(scan, &vms, &denied);
	if (n < 0) {
		ERROR(PLUGIN ": scanning /proc: %s", strerror(-n));
		return -1;
	}
	/* Said when it changes: every interval would flood the log. */
	if (denied != denied_said)
		WARNING(PLUGIN ": the fds of %u processes cannot be read (needs root, or CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH): their VMs, if any, are not collected",
			denied);
	denied_said = denied;
	for (i = 0; i < n; i++) {
		struct kvmstats_vm *vm = &vms[i];

		if (kvmstats_vm_open(vm, per_vcpu ? -1 : KVMSTATS_VM_ONLY) &&
		    !vm->vm_open)
			WARNING(PLUGIN ": pid %d: %s", (int)vm->pid, vm->err);
		vm_instance(vm, inst, sizeof(inst));
		if (vm->vm_open)
			dispatch_stats(inst, vm->vm);
		for (j = 0; per_vcpu && j < vm->nr_vcpus; j++) {
			if (!vm->vcpus[j].open)
				continue;
			snprintf(vinst, sizeof(vinst), "%s_vcpu%d", inst,
				 vm->vcpus[j].id);
			dispatch_stats(vinst, vm->vcpus[j].st);
		}
	}
	kvmstats_vms_free(vms, n);
	return 0;
}

void module_register(void)
{
	plugin_register_complex_config(PLUGIN, kvs_config);
	plugin_register_init(PLUGIN, kvs_init);
	plugin_register_complex_read(NULL, PLUGIN, kvs_read, 0, NULL);
	plugin_register_shutdown(PLUGIN, kvs_shutdown);
}
