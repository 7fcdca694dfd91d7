/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KVM_STATSFD_VERSION_H
#define _KVM_STATSFD_VERSION_H

#define KVM_STATSFD_VERSION "0.1.0"

#endif /* _KVM_STATSFD_VERSION_H */
