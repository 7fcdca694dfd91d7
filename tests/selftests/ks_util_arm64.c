// SPDX-License-Identifier: GPL-2.0
/*
 * The selftests' arm64 side (ks_util.h): guest code at EL1 with the MMU
 * off, where a store to KS_MMIO_ADDR (no memslot) exits to userspace
 * (KVM_EXIT_MMIO), a read of ID_AA64PFR0_EL1 traps to KVM, which answers
 * it itself (HCR_EL2.TID3, ESR class SYS64), and the stop is an HVC of a
 * function that the VM's SMCCC filter forwards to userspace
 * (KVM_EXIT_HYPERCALL); the vCPU's start; the exit classes.
 *
 * The fixed code is assembled; the generators below, which size loops at
 * run time, write instruction words.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include "ks_util.h"
#include "kvm_statsfd/uapi.h"

/*
 * The SMCCC filter (Linux 6.4, asm/kvm.h), which Debian 12's arm64 libc
 * headers (6.1) do not have yet.
 */
#ifndef KVM_ARM_VM_SMCCC_CTRL
#define KVM_ARM_VM_SMCCC_CTRL		0
#define KVM_ARM_VM_SMCCC_FILTER		0
#define KVM_SMCCC_FILTER_FWD_TO_USER	2
struct kvm_smccc_filter {
	__u32 base;
	__u32 nr_functions;
	__u8 action;
	__u8 pad[15];
};
#endif

/*
 * The stop's function: a fast SMC64 call of the SiP range, which KVM does
 * not reserve for itself (its own vendor range would be refused).
 */
#define KS_STOP_FUNC	0xc2000000U

/* Exception classes (ESR_ELx.EC) of the guest code's exits. */
#define EC_HVC64	0x16
#define EC_SYS64	0x18
#define EC_DABT_LOW	0x24

/* The words of the generated code. */
#define I_MOVZ_X6_MMIO	0xd2a00046U	/* movz x6, #(KS_MMIO_ADDR >> 16), lsl #16 */
#define I_STRB_W0_X6	0x390000c0U	/* strb w0, [x6]: the MMIO write */
#define I_MOVZ_X0_STOP	0xd2b84000U	/* movz x0, #(KS_STOP_FUNC >> 16), lsl #16 */
#define I_HVC		0xd4000002U	/* hvc #0 */
#define I_MRS_X1_PFR0	0xd5380401U	/* mrs x1, id_aa64pfr0_el1: traps */
#define I_SUBS_X5_1	0xf10004a5U	/* subs x5, x5, #1 */

/* movz x5, #imm16: the loop counter. */
static uint32_t movz_x5(unsigned int imm)
{
	return 0xd2800005U | (imm & 0xffff) << 5;
}

/* b.ne and b to @words instructions back (or forward, if positive). */
static uint32_t b_ne(int words)
{
	return 0x54000001U | ((uint32_t)words & 0x7ffff) << 5;
}

static uint32_t b(int words)
{
	return 0x14000000U | ((uint32_t)words & 0x3ffffff);
}

/*
 * The fixed pieces, assembled.  Global labels, so that a -static build
 * reads them right; their lengths are assembled beside them.
 */
asm(".pushsection .rodata.ks_code, \"a\"\n"
	".p2align 3\n"
	".global ks_code_out_hlt_len, ks_code_cpuid_forever_len\n"
	".global ks_code_cpuid_n_out_hlt_len, ks_code_out_forever_len\n"
	".global ks_code_out_store_hlt_len\n"
	"ks_code_out_hlt_len:		.quad 2f - ks_code_out_hlt\n"
	"ks_code_cpuid_forever_len:	.quad 4f - ks_code_cpuid_forever\n"
	"ks_code_cpuid_n_out_hlt_len:	.quad 7f - ks_code_cpuid_n_out_hlt\n"
	"ks_code_out_forever_len:	.quad 9f - ks_code_out_forever\n"
	"ks_code_out_store_hlt_len:	.quad 11f - ks_code_out_store_hlt\n"
	".global ks_code_out_hlt, ks_code_cpuid_forever\n"
	".global ks_code_cpuid_n_out_hlt, ks_code_out_forever\n"
	".global ks_code_out_store_hlt\n"
	"ks_code_out_hlt:\n"
	"	movz x6, #0x2, lsl #16\n"	/* KS_MMIO_ADDR */
	"	movz x0, #0x42\n"
	"	strb w0, [x6]\n"		/* the exit to userspace */
	"1:	movz x0, #0xc200, lsl #16\n"	/* KS_STOP_FUNC: x0 set each time */
	"	hvc #0\n"			/* the stop */
	"	b 1b\n"
	"2:\n"
	"ks_code_cpuid_forever:\n"
	"3:	mrs x1, id_aa64pfr0_el1\n"
	"	b 3b\n"
	"4:\n"
	"ks_code_cpuid_n_out_hlt:\n"
	"5:	mrs x1, id_aa64pfr0_el1\n"	/* x5 times: ks_vcpu_setup() */
	"	subs x5, x5, #1\n"
	"	b.ne 5b\n"
	"	movz x6, #0x2, lsl #16\n"
	"	strb w0, [x6]\n"
	"6:	movz x0, #0xc200, lsl #16\n"
	"	hvc #0\n"
	"	b 6b\n"
	"7:\n"
	"ks_code_out_forever:\n"
	"	movz x6, #0x2, lsl #16\n"
	"8:	strb w0, [x6]\n"
	"	b 8b\n"
	"9:\n"
	"ks_code_out_store_hlt:\n"
	"	movz x6, #0x2, lsl #16\n"
	"	strb w0, [x6]\n"
	"	movz x7, #0x8000\n"		/* KS_DATA_ADDR: guest memory */
	"	strb w0, [x7]\n"
	"10:	movz x0, #0xc200, lsl #16\n"
	"	hvc #0\n"
	"	b 10b\n"
	"11:\n"
	".popsection\n");

static void put(unsigned char *buf, size_t *n, uint32_t insn)
{
	memcpy(buf + *n, &insn, 4);	/* arm64 Linux is little-endian */
	*n += 4;
}

size_t ks_code_cpuid_segments(unsigned char *buf, size_t len,
			      const unsigned int *counts, int nr_seg)
{
	size_t n = 0;
	int i;

	if (len < 4)
		return 0;
	put(buf, &n, I_MOVZ_X6_MMIO);
	for (i = 0; i < nr_seg; i++) {
		if (counts[i] > 0xffff || n + 6 * 4 > len)
			return 0;
		if (counts[i]) {
			put(buf, &n, movz_x5(counts[i]));
			put(buf, &n, I_MRS_X1_PFR0);
			put(buf, &n, I_SUBS_X5_1);
			put(buf, &n, b_ne(-2));
		}
		put(buf, &n, I_STRB_W0_X6);
	}
	if (n + 3 * 4 > len)
		return 0;
	put(buf, &n, I_MOVZ_X0_STOP);
	put(buf, &n, I_HVC);
	put(buf, &n, b(-2));
	return n;
}

size_t ks_code_cpuid_out_loop(unsigned char *c, unsigned int n)
{
	size_t len = 0;

	put(c, &len, I_MOVZ_X6_MMIO);
	put(c, &len, movz_x5(n));	/* 1: */
	put(c, &len, I_MRS_X1_PFR0);	/* 2: */
	put(c, &len, I_SUBS_X5_1);
	put(c, &len, b_ne(-2));		/* b.ne 2b */
	put(c, &len, I_STRB_W0_X6);
	put(c, &len, b(-5));		/* b 1b */
	return len;
}

size_t ks_code_outs(unsigned char *c, unsigned int n)
{
	size_t len = 0;

	put(c, &len, I_MOVZ_X6_MMIO);
	put(c, &len, movz_x5(n));
	put(c, &len, I_STRB_W0_X6);	/* 1: */
	put(c, &len, I_SUBS_X5_1);
	put(c, &len, b_ne(-2));		/* b.ne 1b */
	put(c, &len, I_MOVZ_X0_STOP);	/* 2: */
	put(c, &len, I_HVC);
	put(c, &len, b(-2));		/* b 2b */
	return len;
}

/*
 * Forward the stop's HVC to userspace.  The filter must be in place before
 * any vCPU runs (KVM refuses it after, -EBUSY).
 */
int ks_arch_vm_init(struct ks_vm *vm)
{
	struct kvm_smccc_filter filter = {
		.base = KS_STOP_FUNC,
		.nr_functions = 1,
		.action = KVM_SMCCC_FILTER_FWD_TO_USER,
	};
	struct kvm_device_attr attr = {
		.group = KVM_ARM_VM_SMCCC_CTRL,
		.attr = KVM_ARM_VM_SMCCC_FILTER,
		.addr = (uintptr_t)&filter,
	};

	if (ioctl(vm->fd, KVM_SET_DEVICE_ATTR, &attr) < 0)
		return -errno;
	return 0;
}

#define CORE_REG(x) (KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | \
		     (offsetof(struct kvm_regs, x) / sizeof(__u32)))

static int set_core_reg(int vcpu_fd, __u64 id, __u64 val)
{
	struct kvm_one_reg reg = { .id = id, .addr = (uintptr_t)&val };

	return ioctl(vcpu_fd, KVM_SET_ONE_REG, &reg) < 0 ? -errno : 0;
}

/*
 * The vCPU as KVM_ARM_VCPU_INIT resets it (EL1h, MMU and caches off) with
 * PSCI 0.2, its PC at KS_GUEST_CODE_ADDR, x5 = @count.
 */
int ks_vcpu_setup(int vm_fd, int vcpu_fd, uint64_t count)
{
	struct kvm_vcpu_init init;

	if (ioctl(vm_fd, KVM_ARM_PREFERRED_TARGET, &init) < 0)
		return -errno;
	init.features[0] |= 1U << KVM_ARM_VCPU_PSCI_0_2;
	if (ioctl(vcpu_fd, KVM_ARM_VCPU_INIT, &init) < 0)
		return -errno;
	if (set_core_reg(vcpu_fd, CORE_REG(regs.regs[5]), count))
		return -errno;
	return ks_vcpu_restart(vcpu_fd);
}

int ks_vcpu_restart(int vcpu_fd)
{
	return set_core_reg(vcpu_fd, CORE_REG(regs.pc), KS_GUEST_CODE_ADDR);
}

/*
 * KVM_RUN, bounded.  A guest that takes an exception (an undefined
 * instruction, an abort) has no vector for it here, loops at EL1 in its
 * own vector table, and KVM_RUN would never return: a test would hang
 * until the harness's timeout.  So every run is bounded by a timer of the
 * calling thread; when it fires, the vCPU's state goes to stderr (where
 * it was, and the exception it took) and the run fails with -EINTR.
 * KS_RUN_BOUND_S is far above any run of the tests' guest code, which
 * exits within milliseconds or is stopped by the test's own signal.
 */
#define KS_RUN_BOUND_S	60
#define KS_RUN_SIGNAL	(SIGRTMIN + 1)

static void ks_run_bound_hit(int sig)
{
	(void)sig;
}

static __thread timer_t ks_run_timer;
static __thread int ks_run_timer_made;

static int ks_run_timer_make(void)
{
	struct sigaction sa = { .sa_handler = ks_run_bound_hit };
	struct sigevent ev = {
		.sigev_notify = SIGEV_THREAD_ID,
		.sigev_signo = KS_RUN_SIGNAL,
	};

	if (ks_run_timer_made)
		return 0;
	/* No SA_RESTART: the run must come back with EINTR. */
	if (sigaction(KS_RUN_SIGNAL, &sa, NULL))
		return -errno;
	ev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_MONOTONIC, &ev, &ks_run_timer))
		return -errno;
	ks_run_timer_made = 1;
	return 0;
}

static __u64 one_reg(int fd, __u64 id)
{
	__u64 v = 0;
	struct kvm_one_reg reg = { .id = id, .addr = (uintptr_t)&v };

	ioctl(fd, KVM_GET_ONE_REG, &reg);
	return v;
}

#define SYS_REG(op0, op1, crn, crm, op2) (KVM_REG_ARM64 | KVM_REG_SIZE_U64 | \
	KVM_REG_ARM64_SYSREG | ((__u64)(op0) << 14) | ((__u64)(op1) << 11) | \
	((__u64)(crn) << 7) | ((__u64)(crm) << 3) | (op2))

int ks_vcpu_run(struct ks_vcpu *vcpu)
{
	struct itimerspec on = { .it_value.tv_sec = KS_RUN_BOUND_S };
	struct itimerspec off = { 0 };
	int ret = 0, bounded = !ks_run_timer_make();

	if (bounded && timer_settime(ks_run_timer, 0, &on, NULL))
		bounded = 0;
	if (ioctl(vcpu->fd, KVM_RUN, 0) < 0)
		ret = -errno;
	if (bounded) {
		timer_gettime(ks_run_timer, &on);
		timer_settime(ks_run_timer, 0, &off, NULL);
	}
	if (ret == -EINTR && bounded && !on.it_value.tv_sec &&
	    !on.it_value.tv_nsec)
		fprintf(stderr, "# KVM_RUN still in the guest after %d s: pc %#llx, esr_el1 %#llx, elr_el1 %#llx, far_el1 %#llx\n",
			KS_RUN_BOUND_S,
			(unsigned long long)one_reg(vcpu->fd, CORE_REG(regs.pc)),
			(unsigned long long)one_reg(vcpu->fd, SYS_REG(3, 0, 5, 2, 0)),
			(unsigned long long)one_reg(vcpu->fd, CORE_REG(elr_el1)),
			(unsigned long long)one_reg(vcpu->fd, SYS_REG(3, 0, 6, 0, 0)));
	return ret ? ret : (int)vcpu->run->exit_reason;
}

void ks_host_exit_codes(struct ks_exit_codes *c)
{
	memset(c, 0, sizeof(*c));
	c->stat = KVM_STATSFD_EXIT_STAT_ARM64;
	c->buckets = KVM_STATSFD_ARM64_EC_BUCKETS;
	c->cpuid = EC_SYS64;
	c->io = EC_DABT_LOW;
	c->hlt = EC_HVC64;
	c->other = 0;
	c->total = KVM_STATSFD_EXIT_KINDS_ARM64;
	c->total_buckets = KVM_STATSFD_ARM64_KINDS;
}
