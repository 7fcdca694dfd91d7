// SPDX-License-Identifier: GPL-2.0
/*
 * The stats file: creation, read, lseek, release.
 *
 * A read may start at any offset and have any length; it walks the file's
 * blocks (header, id, descriptors, native data, own data) and copies each
 * part from where it lives: the kind's shared immutable blocks, the VM or
 * vCPU's stats_id, the kernel's live stats struct, the vCPU's counters, or
 * per-VM aggregates computed on the fly.  Values are copied with no lock
 * and no snapshot, like upstream.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kvm_host.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <kvm_statsfd/compat.h>
#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/layout.h>

struct ks_stats_file {
	const struct ks_kind *kind;
	struct kvm *kvm;		/* referenced */
	struct ks_vm *vm;		/* lives until kvm is destroyed */
	struct ks_vcpu *kv;		/* vCPU files */
	const u8 *native_base;		/* the struct kvm or kvm_vcpu */
	char id[KVM_STATS_NAME_SIZE];
};

static struct kmem_cache *ks_file_cache;
atomic_long_t ks_nr_files;

/* Words of the data block copied per round through the stack. */
#define KS_BOUNCE_WORDS	64

/*
 * Words [@first, @first + @n) of the file's data block past what
 * ks_read_range() copies straight: native words gathered from their
 * places (kernels without binary stats), then the own block (a vCPU's
 * counters, or the VM's aggregated from its vCPUs).  Every u64 is loaded
 * whole, so a reader never sees half of an update of ours.
 */
static void ks_data_fill(struct ks_stats_file *sf, u32 first, u32 n, u64 *buf)
{
	const struct ks_kind *k = sf->kind;
	u32 native_words = k->native_size / sizeof(u64);
	const u64 *own;
	u32 i;

	for (i = 0; i < n && first + i < native_words; i++)
		buf[i] = k->native_word_off ?
			READ_ONCE(*(const u64 *)(sf->native_base +
						 k->native_word_off[first + i])) : 0;
	if (i == n)
		return;
	first += i - native_words;
	buf += i;
	n -= i;
	if (!sf->kv) {
		ks_vm_own_fill(sf->vm, first, n, buf);
		return;
	}
	own = (const u64 *)&sf->kv->c;
	for (i = 0; i < n; i++)
		buf[i] = READ_ONCE(own[ks_own_word_src(first + i)]);
}

/* Copy @len bytes of the data block, from its byte @off, to @ubuf. */
static int ks_read_data(struct ks_stats_file *sf, char __user *ubuf, u64 off,
			size_t len)
{
	u64 buf[KS_BOUNCE_WORDS];

	while (len) {
		u32 skip = off % sizeof(u64);
		size_t n = min_t(size_t, len, sizeof(buf) - skip);

		ks_data_fill(sf, off / sizeof(u64),
			     DIV_ROUND_UP(skip + n, sizeof(u64)), buf);
		if (copy_to_user(ubuf, (u8 *)buf + skip, n))
			return -EFAULT;
		ubuf += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* Copy [@pos, @pos + @len) of the file to @ubuf; all of it lies inside. */
static int ks_read_range(struct ks_stats_file *sf, char __user *ubuf,
			 u64 pos, size_t len)
{
	const struct ks_kind *k = sf->kind;
	const struct kvm_stats_header *h = &k->header;
	/* KVM's own stats struct is copied as KVM copies it. */
	u64 direct_end = h->data_offset +
			 (k->native_word_off ? 0 : k->native_size);

	while (len && pos < direct_end) {
		const void *src;
		u64 start, end;
		size_t n;

		if (pos >= h->data_offset) {
			start = h->data_offset;
			end = direct_end;
			src = sf->native_base + k->native_struct_off;
		} else if (pos < h->id_offset) {
			start = 0;
			end = sizeof(*h);
			src = h;
		} else if (pos < h->desc_offset) {
			start = h->id_offset;
			end = start + h->name_size;
			src = sf->id;
		} else {
			start = h->desc_offset;
			end = start + k->descs_size;
			src = k->descs;
		}
		/* The blocks follow each other with no padding (layout.c). */
		n = min_t(u64, len, end - pos);
		if (copy_to_user(ubuf, (const u8 *)src + (pos - start), n))
			return -EFAULT;
		ubuf += n;
		pos += n;
		len -= n;
	}
	return len ? ks_read_data(sf, ubuf, pos - h->data_offset, len) : 0;
}

static ssize_t ks_stats_read(struct file *file, char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	struct ks_stats_file *sf = file->private_data;
	u64 size = sf->kind->file_size;
	loff_t pos = *ppos;

	if (pos < 0)
		return -EINVAL;
	if (pos >= size || !len)
		return 0;
	len = min_t(u64, len, size - pos);
	if (ks_read_range(sf, ubuf, pos, len))
		return -EFAULT;
	*ppos = pos + len;
	return len;
}

static loff_t ks_stats_llseek(struct file *file, loff_t offset, int whence)
{
	struct ks_stats_file *sf = file->private_data;

	return fixed_size_llseek(file, offset, whence, sf->kind->file_size);
}

static int ks_stats_release(struct inode *inode, struct file *file)
{
	struct ks_stats_file *sf = file->private_data;

	kvm_put_kvm(sf->kvm);
	kmem_cache_free(ks_file_cache, sf);
	atomic_long_dec(&ks_nr_files);
	return 0;
}

static const struct file_operations ks_stats_fops = {
	.owner = THIS_MODULE,
	.read = ks_stats_read,
	.llseek = ks_stats_llseek,
	.release = ks_stats_release,
};

static int ks_stats_fd_install(struct ks_stats_file *sf, const char *name)
{
	struct file *file;
	int fd;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	file = anon_inode_getfile(name, &ks_stats_fops, sf, O_RDONLY);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		return PTR_ERR(file);
	}
	/* Pseudo files are not seekable unless said so (5.10 checks). */
	file->f_mode |= FMODE_PREAD | FMODE_LSEEK;
	fd_install(fd, file);
	return fd;
}

static struct ks_stats_file *ks_stats_file_alloc(struct kvm *kvm)
{
	struct ks_stats_file *sf;

	sf = kmem_cache_zalloc(ks_file_cache, GFP_KERNEL_ACCOUNT);
	if (!sf)
		return NULL;
	sf->kvm = kvm;
	sf->vm = ks_vm_get(kvm, GFP_KERNEL_ACCOUNT);
	if (!sf->vm) {
		kmem_cache_free(ks_file_cache, sf);
		return NULL;
	}
	atomic_long_inc(&ks_nr_files);
	return sf;
}

/* Undo ks_stats_file_alloc() for a file that was never installed. */
static void ks_stats_file_free(struct ks_stats_file *sf)
{
	kmem_cache_free(ks_file_cache, sf);
	atomic_long_dec(&ks_nr_files);
}

/*
 * The stats fd holds a VM reference from before it is installed until it
 * is released, so it keeps working after the VM and vCPU fds are closed.
 */
static int ks_stats_fd_create(struct ks_stats_file *sf, const char *name)
{
	int fd;

	kvm_get_kvm(sf->kvm);
	fd = ks_stats_fd_install(sf, name);
	if (fd < 0) {
		kvm_put_kvm(sf->kvm);
		ks_stats_file_free(sf);
	}
	return fd;
}

int ks_stats_fd_create_vm(struct kvm *kvm)
{
	struct ks_stats_file *sf = ks_stats_file_alloc(kvm);

	if (!sf)
		return -ENOMEM;
	sf->kind = &ks_kinds[KS_KIND_VM];
	sf->native_base = (const u8 *)kvm;
	ks_kvm_stats_id(kvm, sf->id);
	return ks_stats_fd_create(sf, sf->kind->anon_name);
}

int ks_stats_fd_create_vcpu(struct kvm_vcpu *vcpu)
{
	struct ks_stats_file *sf = ks_stats_file_alloc(vcpu->kvm);
	char name[32];

	if (!sf)
		return -ENOMEM;
	sf->kv = ks_vm_vcpu_get(sf->vm, vcpu, GFP_KERNEL_ACCOUNT);
	if (!sf->kv) {
		ks_stats_file_free(sf);
		return -ENOMEM;
	}
	sf->kind = &ks_kinds[KS_KIND_VCPU];
	sf->native_base = (const u8 *)vcpu;
	ks_vcpu_stats_id(vcpu, sf->id);
	snprintf(name, sizeof(name), "%s:%d", sf->kind->anon_name,
		 vcpu->vcpu_id);
	return ks_stats_fd_create(sf, name);
}

unsigned int ks_stats_file_size(void)
{
	return kmem_cache_size(ks_file_cache);
}

int ks_stats_fd_init(void)
{
	/* The id is copied to userspace from here: a usercopy region. */
	ks_file_cache = KMEM_CACHE_USERCOPY(ks_stats_file, SLAB_ACCOUNT, id);
	return ks_file_cache ? 0 : -ENOMEM;
}

void ks_stats_fd_exit(void)
{
	kmem_cache_destroy(ks_file_cache);
}
