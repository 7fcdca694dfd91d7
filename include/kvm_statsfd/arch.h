/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs per architecture in the state and stats the module's parts
 * share: the exit classes and the direction counters of the exit path, the
 * names under which they are served, and how the exit path adds to a
 * counter.  One header per architecture (arch_x86.h, arch_arm64.h), each
 * paired with its src/probes_<arch>.c.
 */
#ifndef _KVM_STATSFD_ARCH_H
#define _KVM_STATSFD_ARCH_H

#if defined(CONFIG_X86)
#include <kvm_statsfd/arch_x86.h>
#elif defined(CONFIG_ARM64)
#include <kvm_statsfd/arch_arm64.h>
#else
#error "kvm_statsfd: this architecture is not supported"
#endif

#endif /* _KVM_STATSFD_ARCH_H */
