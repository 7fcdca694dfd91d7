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
 * Where word @w of the data block is kept, for every word but a VM file's
 * own (computed from its vCPUs): in KVM's stats struct, at one of the
 * counters KVM's debugfs table names (kernels without binary stats), or
 * in the vCPU's own counters.
 */
static __always_inline const u64 *
ks_word_ptr(const struct ks_stats_file *sf, const struct ks_kind *k,
	    u32 native_words, u32 w)
{
	if (w < native_words)
		return (const u64 *)(sf->native_base +
				     (k->native_word_off ? k->native_word_off[w] :
				      k->native_struct_off + w * sizeof(u64)));
	return sf->kv->c + (w - native_words);
}

/* Words [@first, @first + @n) of the data block into @buf. */
static void ks_data_fill(struct ks_stats_file *sf, u32 first, u32 n, u64 *buf)
{
	const struct ks_kind *k = sf->kind;
	u32 native_words = k->native_size / sizeof(u64);
	u32 i;

	for (i = 0; i < n && (sf->kv || first + i < native_words); i++)
		buf[i] = READ_ONCE(*ks_word_ptr(sf, k, native_words, first + i));
	if (i < n)
		ks_vm_own_fill(sf->vm, first + i - native_words, n - i, buf + i);
}

/*
 * @n words from @src to @dst, inside user_access_begin(): each u64 loaded
 * whole and stored once, eight a round (a load and a store each, little
 * loop overhead).  False if userspace faulted.
 */
static __always_inline bool ks_put_run(u64 __user *dst, const u64 *src,
				       u32 n)
{
	u32 i = 0;

	for (; i + 8 <= n; i += 8) {
		unsafe_put_user(READ_ONCE(src[i]), dst + i, efault);
		unsafe_put_user(READ_ONCE(src[i + 1]), dst + i + 1, efault);
		unsafe_put_user(READ_ONCE(src[i + 2]), dst + i + 2, efault);
		unsafe_put_user(READ_ONCE(src[i + 3]), dst + i + 3, efault);
		unsafe_put_user(READ_ONCE(src[i + 4]), dst + i + 4, efault);
		unsafe_put_user(READ_ONCE(src[i + 5]), dst + i + 5, efault);
		unsafe_put_user(READ_ONCE(src[i + 6]), dst + i + 6, efault);
		unsafe_put_user(READ_ONCE(src[i + 7]), dst + i + 7, efault);
	}
	for (; i < n; i++)
		unsafe_put_user(READ_ONCE(src[i]), dst + i, efault);
	return true;
efault:
	return false;
}

/*
 * Whole words [@first, @first + @n), every one kept somewhere (not a VM
 * file's own), straight to @dst: each u64 is loaded whole and stored once,
 * with no copy through the stack, so a reader never sees half of an
 * update and pays about what KVM's one copy_to_user costs.
 */
static int ks_put_words(const struct ks_stats_file *sf, u64 __user *dst,
			u32 first, u32 n)
{
	const struct ks_kind *k = sf->kind;
	u32 native_words = k->native_size / sizeof(u64);
	const u64 *src;
	u32 i = 0, end;

	if (!user_access_begin(dst, (size_t)n * sizeof(u64)))
		return -EFAULT;
	/* One tight loop per kind of place, this runs for every word read. */
	end = min(n, native_words > first ? native_words - first : 0);
	if (!k->native_word_off) {
		src = (const u64 *)(sf->native_base + k->native_struct_off) + first;
		if (!ks_put_run(dst, src, end))
			goto efault;
		i = end;
	}
	for (; i < end; i++)
		unsafe_put_user(READ_ONCE(*ks_word_ptr(sf, k, native_words,
						       first + i)),
				dst + i, efault);
	if (i < n &&
	    !ks_put_run(dst + i, sf->kv->c + (first + i - native_words), n - i))
		goto efault;
	user_access_end();
	return 0;
efault:
	user_access_end();
	return -EFAULT;
}

/* Copy @len bytes of the data block, from its byte @off, to @ubuf. */
static int ks_read_data(struct ks_stats_file *sf, char __user *ubuf, u64 off,
			size_t len)
{
	u32 native_words = sf->kind->native_size / sizeof(u64);
	u64 buf[KS_BOUNCE_WORDS];

	while (len) {
		u32 w = off / sizeof(u64), skip = off % sizeof(u64);
		size_t n;

		if (!skip && len >= sizeof(u64) &&
		    (sf->kv || w < native_words)) {
			n = len / sizeof(u64);
			if (!sf->kv)
				n = min_t(size_t, n, native_words - w);
			if (ks_put_words(sf, (u64 __user *)ubuf, w, n))
				return -EFAULT;
			n *= sizeof(u64);
		} else {
			/* Part of a word, or a VM's aggregates: via the stack. */
			n = min_t(size_t, len, skip || len < sizeof(u64) ?
					       sizeof(u64) - skip : sizeof(buf));
			ks_data_fill(sf, w, DIV_ROUND_UP(skip + n, sizeof(u64)),
				     buf);
			if (copy_to_user(ubuf, (u8 *)buf + skip, n))
				return -EFAULT;
		}
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

	while (len && pos < h->data_offset) {
		const void *src;
		u64 start, end;
		size_t n;

		if (pos < h->id_offset) {
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
