// SPDX-License-Identifier: GPL-2.0
/*
 * The selftests' x86 side (ks_util.h): real-mode guest code, where a port
 * write exits to userspace (KVM_EXIT_IO), CPUID is an exit KVM handles
 * itself and HLT, with no in-kernel irqchip, is KVM_EXIT_HLT; the vCPU's
 * start; SVM's and VMX's exit codes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include <asm/svm.h>
#include <asm/vmx.h>

#include "ks_util.h"
#include "kvm_statsfd/uapi.h"

const unsigned char ks_code_out_hlt[] = {
	0xb0, 0x42,		/* mov al, 0x42 */
	0xe6, 0x10,		/* out 0x10, al */
	0xf4,			/* hlt */
};
const size_t ks_code_out_hlt_len = sizeof(ks_code_out_hlt);

const unsigned char ks_code_out_forever[] = {
	0xe6, 0x10,		/* 1: out 0x10, al */
	0xeb, 0xfc,		/*    jmp 1b */
};
const size_t ks_code_out_forever_len = sizeof(ks_code_out_forever);

const unsigned char ks_code_out_store_hlt[] = {
	0xe6, 0x10,		/* out 0x10, al */
	0xa2, KS_DATA_ADDR & 0xff, KS_DATA_ADDR >> 8,	/* mov [KS_DATA_ADDR], al */
	0xf4,			/* hlt */
};
const size_t ks_code_out_store_hlt_len = sizeof(ks_code_out_store_hlt);

size_t ks_code_outs(unsigned char *buf, unsigned int n)
{
	static const unsigned char c[] = {
		0xb9, 0, 0,		/* mov cx, n */
		0xe6, 0x10,		/* 1: out 0x10, al */
		0xe2, 0xfc,		/*    loop 1b */
		0xf4,			/* hlt */
	};

	memcpy(buf, c, sizeof(c));
	buf[1] = n & 0xff;
	buf[2] = n >> 8;
	return sizeof(c);
}

const unsigned char ks_code_cpuid_n_out_hlt[] = {
	0x66, 0x31, 0xc0,	/* 0: xor eax, eax */
	0x0f, 0xa2,		/* 3: cpuid */
	0x4e,			/* 5: dec si */
	0x75, 0xf8,		/* 6: jnz 0 */
	0xb0, 0x42,		/* 8: mov al, 0x42 */
	0xe6, 0x10,		/* 10: out 0x10, al */
	0xf4,			/* 12: hlt */
};
const size_t ks_code_cpuid_n_out_hlt_len = sizeof(ks_code_cpuid_n_out_hlt);

const unsigned char ks_code_known_work[] = {
	0xb9, KS_WORK_OUT, 0x00,	/* mov cx, KS_WORK_OUT */
	0xe6, 0x10,			/* 1: out 0x10, al */
	0xe2, 0xfc,			/*    loop 1b */
	0xb9, KS_WORK_IN, 0x00,		/* mov cx, KS_WORK_IN */
	0xe4, 0x11,			/* 2: in al, 0x11 */
	0xe2, 0xfc,			/*    loop 2b */
	0xbe, KS_WORK_MSR, 0x00,	/* mov si, KS_WORK_MSR */
	0x66, 0xb9, 0x1b, 0, 0, 0,	/* 3: mov ecx, 0x1b (APIC_BASE) */
	0x0f, 0x32,			/*    rdmsr */
	0x4e,				/*    dec si */
	0x75, 0xf6,			/*    jnz 3b */
	0xb8, 0x00, 0x20,		/* mov ax, 0x2000 */
	0x8e, 0xd8,			/* mov ds, ax: ds:0 is unbacked */
	0xa2, 0x00, 0x00,		/* mov [0], al: MMIO write */
	0xa0, 0x00, 0x00,		/* mov al, [0]: MMIO read */
	0xf4,				/* hlt */
};
const size_t ks_code_known_work_len = sizeof(ks_code_known_work);

/* The vCPU starts at KS_GUEST_CODE_ADDR in real mode, CS base 0. */
int ks_vcpu_setup(int vm_fd, int vcpu_fd, uint64_t count)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	if (ioctl(vcpu_fd, KVM_GET_SREGS, &sregs) < 0)
		return -errno;
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(vcpu_fd, KVM_SET_SREGS, &sregs) < 0)
		return -errno;
	memset(&regs, 0, sizeof(regs));
	regs.rip = KS_GUEST_CODE_ADDR;
	regs.rflags = 0x2;
	regs.rsi = count;
	if (ioctl(vcpu_fd, KVM_SET_REGS, &regs) < 0)
		return -errno;
	return 0;
}

int ks_vcpu_restart(int vcpu_fd)
{
	struct kvm_regs regs = { .rip = KS_GUEST_CODE_ADDR, .rflags = 0x2 };

	return ioctl(vcpu_fd, KVM_SET_REGS, &regs) < 0 ? -errno : 0;
}

int ks_vcpu_run(struct ks_vcpu *vcpu)
{
	if (ioctl(vcpu->fd, KVM_RUN, 0) < 0)
		return -errno;
	return vcpu->run->exit_reason;
}

/* Nothing to set up for the VM: no irqchip, so HLT exits to userspace. */
int ks_arch_vm_init(struct ks_vm *vm)
{
	return 0;
}

size_t ks_code_cpuid_segments(unsigned char *buf, size_t len,
			      const unsigned int *counts, int nr_seg)
{
	static const unsigned char loop[] = {
		0x66, 0x31, 0xc0,	/* xor eax, eax */
		0x0f, 0xa2,		/* cpuid */
		0x4e,			/* dec si */
		0x75, 0xf8,		/* jnz (back to xor) */
	};
	size_t n = 0;
	int i;

	for (i = 0; i < nr_seg; i++) {
		if (counts[i] > 0xffff || n + 3 + sizeof(loop) + 4 > len)
			return 0;
		if (counts[i]) {
			buf[n++] = 0xbe;	/* mov si, imm16 */
			buf[n++] = counts[i] & 0xff;
			buf[n++] = counts[i] >> 8;
			memcpy(buf + n, loop, sizeof(loop));
			n += sizeof(loop);
		}
		buf[n++] = 0xb0;	/* mov al, 0x42 */
		buf[n++] = 0x42;
		buf[n++] = 0xe6;	/* out 0x10, al */
		buf[n++] = 0x10;
	}
	if (n + 1 > len)
		return 0;
	buf[n++] = 0xf4;		/* hlt */
	return n;
}

const unsigned char ks_code_cpuid_forever[] = {
	0x66, 0x31, 0xc0,	/* xor eax, eax */
	0x0f, 0xa2,		/* cpuid */
	0xeb, 0xf9,		/* jmp (back to xor) */
};
const size_t ks_code_cpuid_forever_len = sizeof(ks_code_cpuid_forever);

/*
 * Which vendor module KVM runs with, as the kernel says (/proc/modules):
 * 1 for kvm_amd, 0 for kvm_intel, -1 when neither is loaded.
 */
static int ks_kvm_vendor_is_svm(void)
{
	FILE *f = fopen("/proc/modules", "r");
	char line[256];
	int svm = -1;

	if (!f)
		return -1;
	while (svm < 0 && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "kvm_amd ", 8))
			svm = 1;
		else if (!strncmp(line, "kvm_intel ", 10))
			svm = 0;
	}
	fclose(f);
	return svm;
}

void ks_host_exit_codes(struct ks_exit_codes *c)
{
	memset(c, 0, sizeof(*c));
	/* No KVM vendor module: no exit to count; SVM's names are as good. */
	c->svm = ks_kvm_vendor_is_svm() != 0;
	if (c->svm) {
		c->stat = KVM_STATSFD_EXIT_STAT_SVM;
		c->buckets = KVM_STATSFD_SVM_BUCKETS;
		c->cpuid = kvm_statsfd_svm_index(SVM_EXIT_CPUID);
		c->io = kvm_statsfd_svm_index(SVM_EXIT_IOIO);
		c->hlt = kvm_statsfd_svm_index(SVM_EXIT_HLT);
		c->other = KVM_STATSFD_SVM_OTHER;
	} else {
		c->stat = KVM_STATSFD_EXIT_STAT_VMX;
		c->buckets = KVM_STATSFD_VMX_BUCKETS;
		c->cpuid = kvm_statsfd_vmx_index(EXIT_REASON_CPUID);
		c->io = kvm_statsfd_vmx_index(EXIT_REASON_IO_INSTRUCTION);
		c->hlt = kvm_statsfd_vmx_index(EXIT_REASON_HLT);
		c->other = KVM_STATSFD_VMX_OTHER;
	}
	c->total = c->stat;
	c->total_buckets = c->buckets;
}

size_t ks_code_cpuid_out_loop(unsigned char *c, unsigned int n)
{
	static const unsigned char tmpl[] = {
		0xbe, 0, 0,		/* 0: mov si, n */
		0x66, 0x31, 0xc0,	/* 3: xor eax, eax */
		0x0f, 0xa2,		/* 6: cpuid */
		0x4e,			/* 8: dec si */
		0x75, 0xf8,		/* 9: jnz 3 */
		0xb0, 0x42,		/* 11: mov al, 0x42 */
		0xe6, 0x10,		/* 13: out 0x10, al */
		0xeb, 0xef,		/* 15: jmp 0 */
	};

	memcpy(c, tmpl, sizeof(tmpl));
	c[1] = n & 0xff;
	c[2] = n >> 8;
	return sizeof(tmpl);
}
