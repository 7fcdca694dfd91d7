/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The VM of qemu_query_stats_test.sh on arm64: a raw image for QEMU's
 * "-machine virt -kernel", which loads it at RAM + 0x80000 and enters it
 * at EL1 with the MMU off through its own few boot instructions; the VM's
 * other vCPUs stay powered off (PSCI).  It makes exits of three classes a
 * known number of times, then powers the VM off, so that the test polls
 * for QEMU's "shutdown" state instead of sleeping and finds exact counts:
 *
 *   KS_LOOPS x  a write to the PL011's data register: a data abort
 *               (DABT_LOW) that KVM hands to QEMU (KVM_EXIT_MMIO)
 *               a read of ID_AA64PFR0_EL1, which KVM traps (HCR_EL2.TID3)
 *               and answers itself (SYS64)
 *               PSCI_VERSION by HVC, answered by KVM (HVC64)
 *   once        PSCI SYSTEM_OFF by HVC: KVM_EXIT_SYSTEM_EVENT, and QEMU,
 *               started with -no-shutdown, stops the VM
 *
 * KVM's SMCCC handler writes x0-x3 on every HVC: the loop's state is in
 * x19 and x20.  Position independent, no data, no stack.  KS_LOOPS is the
 * test's KS_GUEST_LOOPS.
 */
#define KS_LOOPS	100
#define PL011_DR	0x09000000	/* the virt machine's UART */
#define PSCI_VERSION	0x84000000
#define PSCI_SYSTEM_OFF	0x84000008

	.text
	.global _start
_start:
	mov	x19, #KS_LOOPS
	mov	x20, #PL011_DR
1:	strb	w19, [x20]
	mrs	x1, id_aa64pfr0_el1
	mov	x0, #PSCI_VERSION
	hvc	#0
	subs	x19, x19, #1
	b.ne	1b
	mov	x0, #(PSCI_SYSTEM_OFF & 0xffff0000)
	movk	x0, #(PSCI_SYSTEM_OFF & 0xffff)
	hvc	#0
2:	b	2b
