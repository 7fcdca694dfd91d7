/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The binary stats file as this module serves it, one layout per kind of
 * file (VM, vCPU), built once at load time and shared by every fd:
 *
 *   0                  header (struct kvm_stats_header)
 *   24                 id string, name_size bytes (upstream readers expect
 *                      it right after the header)
 *   desc_offset        descriptors: the kernel's native ones, unchanged and
 *                      in their order, then the module's own
 *   data_offset        data: the native block (the kernel's stats struct,
 *                      byte for byte), then the module's own block
 */
#ifndef _KVM_STATSFD_LAYOUT_H
#define _KVM_STATSFD_LAYOUT_H

#include <linux/bits.h>
#include <linux/jump_label.h>
#include <linux/kvm.h>
#include <linux/types.h>

#include <kvm_statsfd/compat.h>

/* The first 16 bytes of every descriptor; the name follows. */
struct ks_desc_head {
	u32 flags;
	s16 exponent;
	u16 size;
	u32 offset;
	u32 bucket_size;
};

/* Bytes of a descriptor: its head and a name of KVM_STATS_NAME_SIZE. */
#define KS_DESC_SIZE	(sizeof(struct ks_desc_head) + KVM_STATS_NAME_SIZE)

/* How a per-vCPU stat becomes a per-VM one, at read time. */
enum ks_aggregate {
	KS_AGG_SUM,
	KS_AGG_MAX,
	KS_AGG_NR_VCPUS,	/* VM only: the number of vCPUs */
};

/*
 * Groups of the module's own stats, chosen at load (the stats= parameter):
 * a disabled group is not served and costs the exit path nothing.
 */
enum ks_group {
	KS_GRP_EXIT_REASONS,
	KS_GRP_LATENCY,		/* exit latency: histogram, total, peak */
	KS_GRP_CLASS_LATENCY,	/* the same per exit class */
	KS_GRP_USERSPACE,	/* userspace_exits by KVM_EXIT_* */
	KS_GRP_IO_MSR,		/* I/O and MSR exits by direction, MMIO */
	KS_GRP_GUEST_TIME,	/* guest_ns, in_guest */
	KS_NR_GROUPS,
	KS_GRP_ALWAYS = KS_NR_GROUPS,	/* served whatever the load asks */
};

/*
 * The groups a load with no stats= parameter serves, as the parameter
 * names them and as a mask (the exit path has probes compiled for it):
 * the one place that says what the default is.
 */
#define KS_DEFAULT_STATS	"exit_reasons,io_msr,guest_time"
#define KS_DEFAULT_GROUPS	(BIT(KS_GRP_EXIT_REASONS) | BIT(KS_GRP_IO_MSR) | \
				 BIT(KS_GRP_GUEST_TIME))

/* One static key per group, and one for "some group reads the clock". */
extern struct static_key_true ks_group_on[KS_NR_GROUPS];
DECLARE_STATIC_KEY_TRUE(ks_clock_on);
#define ks_group_active(g)	static_branch_likely(&ks_group_on[g])

/* Parse the stats= list, turn the disabled groups' keys off. */
int ks_groups_init(const char *list);
bool ks_group_enabled(enum ks_group g);

/* One of the module's own stats. */
struct ks_stat_def {
	const char *name;
	u32 flags;		/* KVM_STATS_TYPE_* | KVM_STATS_UNIT_* | KVM_STATS_BASE_* */
	s16 exponent;
	u16 size;		/* number of u64 values */
	u32 offset;		/* byte offset in its group's block */
	u32 served;		/* byte offset in the served own block */
	u32 bucket_size;	/* LINEAR_HIST only */
	enum ks_aggregate agg;
	bool vm_only;		/* past the vCPU block, in VM files only */
	u8 group;		/* enum ks_group */
};

enum ks_kind_id {
	KS_KIND_VM,
	KS_KIND_VCPU,
	KS_NR_KINDS,
};

struct ks_kind {
	const char *anon_name;
	struct kvm_stats_header header;
	u8 *descs;		/* header.num_desc descriptors, immutable */
	u32 descs_size;
	u32 nr_native;		/* the first nr_native of them are KVM's */
	u32 native_size;	/* bytes of the native block */
	/* Where the native words are (struct ks_native). */
	const u32 *native_word_off;
	u32 native_struct_off;
	u32 own_size;		/* bytes of the module's own block */
	u64 file_size;
};

extern struct ks_kind ks_kinds[KS_NR_KINDS];

/* Native stats (superset mode) or only the module's own. */
extern bool ks_superset;

/* The module's own stats, valid after ks_layout_init(). */
extern const struct ks_stat_def *ks_own_defs;
extern unsigned int ks_nr_own_defs;

/*
 * This host's exit-reason histogram (probes_<arch>.c): its buckets and its
 * name; the exit_reasons group may serve more after it (arch.h).
 */
unsigned int ks_exit_buckets(void);
const char *ks_exit_stat_name(void);

/* Bytes of a vCPU's counters block, which is also its served own block. */
u32 ks_own_counters_size(void);
/* Served word @word: how a VM file computes it from its vCPUs' word. */
enum ks_aggregate ks_own_word_agg(u32 word);
/* The served words that are not sums, in order; *@count of them. */
const u32 *ks_own_special_words(u32 *count);

/* Fill in the host-dependent parts of the own stats table. */
int ks_own_stats_init(void);
void ks_own_stats_exit(void);

int ks_layout_init(void);
void ks_layout_exit(void);

#endif /* _KVM_STATSFD_LAYOUT_H */
