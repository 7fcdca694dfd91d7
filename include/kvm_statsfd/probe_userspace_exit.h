/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kvm_userspace_exit probe, the same on every architecture.  Not a
 * header of declarations: src/probes_<arch>.c each include it once, after
 * their own ks_exit_handled() (its clock and its idle class differ), so
 * that the probe is compiled with that one inlined, as before.
 */
#ifndef _KVM_STATSFD_PROBE_USERSPACE_EXIT_H
#define _KVM_STATSFD_PROBE_USERSPACE_EXIT_H

/*
 * Fires on return from KVM_RUN, after vcpu_put(): no vCPU is passed or
 * running.  ks_vcpu_of_current() finds the vCPU this thread exited the
 * guest with in this KVM_RUN; a KVM_RUN that never did is not counted.
 * Not on the exit path: the groups are static branches here.
 */
static void ks_probe_kvm_userspace_exit(void *data, u32 reason, int err)
{
	struct ks_vcpu *kv = ks_vcpu_of_current();
	u32 i;

	if (unlikely(!kv))
		return;
	WRITE_ONCE(kv->in_run, false);
	if (ks_lat_timed(KS_SET_LOAD) && kv->exit_ts)
		ks_exit_handled(KS_SET_LOAD, kv, ks_clock());
	/* Also after a failed entry (VMX): no kvm_exit, the guest is out. */
	if (ks_group_active(KS_GRP_GUEST_TIME))
		WRITE_ONCE(kv->guest->in_guest, 0);
	if (!ks_group_active(KS_GRP_USERSPACE))
		return;
	/*
	 * -EINTR is a signal (KVM_EXIT_INTR).  On any other error exit_reason
	 * is not this return's: an older exit's, or KVM_EXIT_UNKNOWN.
	 */
	if (err == -EINTR)
		i = KVM_EXIT_INTR;
	else if (err < 0 || reason >= KS_USER_EXIT_OTHER)
		i = KS_USER_EXIT_OTHER;
	else
		i = reason;
	ks_inc(&kv->user->exits[i]);
}

#endif /* _KVM_STATSFD_PROBE_USERSPACE_EXIT_H */
