// SPDX-License-Identifier: GPL-2.0
/*
 * The stats file: creation, read, lseek, mmap (vCPU files), release.
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
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pagemap.h>
#include <linux/seq_file.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <kvm_statsfd/compat.h>
#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/fault.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/layout.h>

/*
 * An open stats file has no state of its own: its private_data is the VM
 * state (struct ks_vm) or the vCPU state (struct ks_vcpu) it reads, and its
 * file_operations say which.  Both live until KVM destroys the VM, which
 * the file's VM reference holds off.  A read gathers what it needs here.
 */
struct ks_reader {
	const struct ks_kind *kind;
	struct ks_vm *vm;
	struct ks_vcpu *kv;		/* vCPU files, else NULL */
	const u8 *native_base;		/* the struct kvm or kvm_vcpu */
};

static const struct file_operations ks_vm_stats_fops, ks_vcpu_stats_fops;

atomic_long_t ks_nr_files;

static void ks_reader_of(const struct file *file, struct ks_reader *r)
{
	if (file->f_op == &ks_vcpu_stats_fops) {
		r->kv = file->private_data;
		r->vm = r->kv->vm;
		r->kind = &ks_kinds[KS_KIND_VCPU];
		r->native_base = (const u8 *)r->kv->vcpu;
	} else {
		r->kv = NULL;
		r->vm = file->private_data;
		r->kind = &ks_kinds[KS_KIND_VM];
		r->native_base = (const u8 *)r->vm->kvm;
	}
}

/* Words of the data block copied per round through the stack. */
#define KS_BOUNCE_WORDS	64

/*
 * Where word @w of the data block is kept, for every word but a VM file's
 * own (computed from its vCPUs): in KVM's stats struct, at one of the
 * counters KVM's debugfs table names (kernels without binary stats), or
 * in the vCPU's own counters.
 */
static __always_inline const u64 *
ks_word_ptr(const struct ks_reader *sf, const struct ks_kind *k,
	    u32 native_words, u32 w)
{
	if (w < native_words)
		return (const u64 *)(sf->native_base +
				     (k->native_word_off ? k->native_word_off[w] :
				      k->native_struct_off + w * sizeof(u64)));
	return READ_ONCE(sf->kv->c) + (w - native_words);
}

/* Words [@first, @first + @n) of the data block into @buf. */
static void ks_data_fill(struct ks_reader *sf, u32 first, u32 n, u64 *buf)
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
	/* Pointers, not indexes: every access is then base + constant. */
	for (; n >= 8; n -= 8, src += 8, dst += 8) {
		unsafe_put_user(READ_ONCE(src[0]), dst, efault);
		unsafe_put_user(READ_ONCE(src[1]), dst + 1, efault);
		unsafe_put_user(READ_ONCE(src[2]), dst + 2, efault);
		unsafe_put_user(READ_ONCE(src[3]), dst + 3, efault);
		unsafe_put_user(READ_ONCE(src[4]), dst + 4, efault);
		unsafe_put_user(READ_ONCE(src[5]), dst + 5, efault);
		unsafe_put_user(READ_ONCE(src[6]), dst + 6, efault);
		unsafe_put_user(READ_ONCE(src[7]), dst + 7, efault);
	}
	for (; n; n--, src++, dst++)
		unsafe_put_user(READ_ONCE(*src), dst, efault);
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
static int ks_put_words(const struct ks_reader *sf, u64 __user *dst,
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
	    !ks_put_run(dst + i, READ_ONCE(sf->kv->c) + (first + i - native_words),
			n - i))
		goto efault;
	user_access_end();
	return 0;
efault:
	user_access_end();
	return -EFAULT;
}

/*
 * @n bytes from byte @skip of @buf to @ubuf: whole words one by one, as
 * ks_put_run() does (under -icount a rep movsb costs a step per byte),
 * anything else with copy_to_user().
 */
static int ks_copy_out(char __user *ubuf, const u64 *buf, u32 skip, size_t n)
{
	if (skip || n % sizeof(u64))
		return copy_to_user(ubuf, (const u8 *)buf + skip, n) ? -EFAULT : 0;
	if (!user_access_begin(ubuf, n))
		return -EFAULT;
	if (!ks_put_run((u64 __user *)ubuf, buf, n / sizeof(u64))) {
		user_access_end();
		return -EFAULT;
	}
	user_access_end();
	return 0;
}

/* Copy @len bytes of the data block, from its byte @off, to @ubuf. */
static int ks_read_data(struct ks_reader *sf, char __user *ubuf, u64 off,
			size_t len)
{
	u32 native_words = sf->kind->native_size / sizeof(u64);
	u32 vcpu_end = native_words + ks_own_counters_size() / sizeof(u64);
	u64 buf[KS_BOUNCE_WORDS];
	struct ks_vcpu *sole;

	/*
	 * vCPUs made since the VM file was opened: count them from now on
	 * (on a failure, from a later read).
	 */
	if (!sf->kv && unlikely(ks_vm_vcpus_missing(sf->vm)))
		ks_vm_vcpus_get(sf->vm, GFP_KERNEL_ACCOUNT);
	while (len) {
		u32 w = off / sizeof(u64), skip = off % sizeof(u64);
		bool whole = !skip && len >= sizeof(u64);
		size_t n;

		sole = NULL;
		if (whole && !sf->kv && w >= native_words && w < vcpu_end)
			sole = ks_vm_sole_vcpu(sf->vm);
		if (whole && (sf->kv || w < native_words)) {
			n = len / sizeof(u64);
			if (!sf->kv)
				n = min_t(size_t, n, native_words - w);
			if (ks_put_words(sf, (u64 __user *)ubuf, w, n))
				return -EFAULT;
			n *= sizeof(u64);
		} else if (sole) {
			/*
			 * A VM with one vCPU state: its sums and peaks are
			 * that vCPU's words, copied as a vCPU file's are.
			 */
			n = min_t(size_t, len / sizeof(u64), vcpu_end - w) *
			    sizeof(u64);
			if (ks_copy_out(ubuf, READ_ONCE(sole->c) +
					(w - native_words), 0, n))
				return -EFAULT;
		} else {
			/* Part of a word, or a VM's aggregates: via the stack. */
			n = min_t(size_t, len, skip || len < sizeof(u64) ?
					       sizeof(u64) - skip : sizeof(buf));
			ks_data_fill(sf, w, DIV_ROUND_UP(skip + n, sizeof(u64)),
				     buf);
			if (ks_copy_out(ubuf, buf, skip, n))
				return -EFAULT;
		}
		ubuf += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* Copy [@pos, @pos + @len) of the file to @ubuf; all of it lies inside. */
static int ks_read_range(struct ks_reader *sf, char __user *ubuf,
			 u64 pos, size_t len)
{
	const struct ks_kind *k = sf->kind;
	const struct kvm_stats_header *h = &k->header;
	char id[KVM_STATS_NAME_SIZE];

	while (len && pos < h->data_offset) {
		const void *src;
		u64 start, end;
		size_t n;

		if (pos < h->id_offset) {
			start = 0;
			end = sizeof(*h);
			src = h;
		} else if (pos < h->desc_offset) {
			/* Made when read: KVM's id never changes. */
			if (sf->kv)
				ks_vcpu_stats_id(sf->kv->vcpu, id);
			else
				ks_kvm_stats_id(sf->vm->kvm, id);
			start = h->id_offset;
			end = start + h->name_size;
			src = id;
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
	struct ks_reader sf;
	loff_t pos = *ppos;
	int idx, ret;
	u64 size;

	ks_reader_of(file, &sf);
	size = sf.kind->file_size;
	if (pos < 0)
		return -EINVAL;
	if (pos >= size || !len)
		return 0;
	len = min_t(u64, len, size - pos);
	/*
	 * A counters block that moves meanwhile is freed after the SRCU
	 * section, as is a destroyed VM's state with a move pending, on every
	 * VM of the host: no reader may hold it for as long as its buffer
	 * takes to fault in (userfaultfd, FUSE).  So the copy runs with page
	 * faults off, and a buffer that is not there is faulted in outside
	 * the section before the whole read is tried again.
	 */
	for (;;) {
		idx = srcu_read_lock(&ks_read_srcu);
		pagefault_disable();
		ret = ks_read_range(&sf, ubuf, pos, len);
		pagefault_enable();
		srcu_read_unlock(&ks_read_srcu, idx);
		if (!ret)
			break;
		if (fault_in_writeable(ubuf, len))
			return -EFAULT;
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	*ppos = pos + len;
	return len;
}

static loff_t ks_vm_stats_llseek(struct file *file, loff_t offset, int whence)
{
	return fixed_size_llseek(file, offset, whence,
				 ks_kinds[KS_KIND_VM].file_size);
}

static loff_t ks_vcpu_stats_llseek(struct file *file, loff_t offset,
				   int whence)
{
	return fixed_size_llseek(file, offset, whence,
				 ks_kinds[KS_KIND_VCPU].file_size);
}

/*
 * The vendor module (kvm_amd, kvm_intel) that KVM's VMs run on: kvm.ko
 * sets /dev/kvm's owner to it as it loads (NULL, nothing to pin, where KVM
 * is built into the kernel).  A stats file holds its VM, and
 * the VM's destruction runs the vendor's code, but KVM pins the vendor
 * module only through /dev/kvm and the VM's and vCPUs' own files (6.12 no
 * longer by the VM itself), which may all be closed before a stats file
 * is: so each stats file pins it too, from its making, during an ioctl on
 * a VM or vCPU file (which pins it then), to its release.  While any is
 * open the vendor module cannot go, so the owner read at release is the
 * one read at making.
 */
static struct module *ks_vendor_module(void)
{
	return READ_ONCE(ks_kvm.chardev_ops->owner);
}

/* The file's VM, and then the vendor module its destruction may need. */
static void ks_stats_file_put_vm(struct kvm *kvm)
{
	struct module *vendor = ks_vendor_module();

	kvm_put_kvm(kvm);
	module_put(vendor);
}

static int ks_vm_stats_release(struct inode *inode, struct file *file)
{
	struct ks_vm *vm = file->private_data;

	atomic_long_dec(&ks_nr_files);
	ks_stats_file_put_vm(vm->kvm);
	return 0;
}

static int ks_vcpu_stats_release(struct inode *inode, struct file *file)
{
	struct ks_vcpu *kv = file->private_data;

	atomic_long_dec(&ks_nr_files);
	/* Not kv->kvm, which is NULL while the counters move. */
	ks_stats_file_put_vm(kv->vm->kvm);
	return 0;
}

/*
 * Every page of a mapping is inserted when it is made, so a fault means
 * one was dropped (MADV_DONTNEED).  Nothing is put back: SIGBUS, as a
 * page of zeros would read as counters reset.
 */
static vm_fault_t ks_vcpu_stats_fault(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

static const struct vm_operations_struct ks_vcpu_stats_vm_ops = {
	.fault = ks_vcpu_stats_fault,
};

/*
 * A vCPU file's own data block, the counters block itself, mapped
 * read-only: a reader then reads the module's stats with no system call.
 * The mapping is the chunk of the VM's counters arena that holds the
 * block (counters.c: counters of this VM's vCPUs and nothing else), into
 * which the VM's first mapping moves its vCPUs' blocks; the block starts
 * kvm_stats_mmap_page_offset bytes into it (fdinfo).  All its pages are
 * inserted here, each with a reference of its own.
 *
 * The VMA keeps its file, as a driver's mapping does, so that mm treats
 * it as a file's: /proc/<pid>/maps names it, anonymous-only advice
 * (MADV_WIPEONFORK) is refused, and no mm path that drops vm_file finds
 * it gone.  So the mapping holds what an open stats fd holds, the VM and
 * the module, until it is unmapped.  fork() copies it, page table entries
 * included (VM_MIXEDMAP, which vm_insert_page() sets): a VMM's helper
 * process reads the same counters.  Offset 0 only, no more than the
 * chunk's pages, never writable or executable (now or by mprotect()),
 * never grown by mremap().
 */
static int ks_vcpu_stats_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct ks_vcpu *kv = file->private_data;
	struct page *page;
	unsigned int i;
	int ret;

	/* The served own block is the counters block (own_stats.c). */
	if (!ks_kinds[KS_KIND_VCPU].own_size)
		return -EINVAL;
	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EPERM;
	if (vma->vm_pgoff || vma_pages(vma) > ks_map_chunk_pages())
		return -EINVAL;
	page = ks_vcpu_map_prepare(kv);
	if (IS_ERR(page))
		return PTR_ERR(page);
	vm_flags_clear(vma, VM_MAYWRITE | VM_MAYEXEC);
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &ks_vcpu_stats_vm_ops;
	/* Each page inserted takes a reference on the (compound) page. */
	for (i = 0; i < vma_pages(vma); i++) {
		ret = vm_insert_page(vma, vma->vm_start + i * PAGE_SIZE,
				     page + i);
		if (ret)
			return ret;	/* the caller unmaps what was done */
	}
	return 0;
}

/*
 * Where the block lies, for readers that map it
 * (/proc/<pid>/fdinfo/<fd>): the block starts at byte
 * kvm_stats_mmap_page_offset of the mapping, and is byte
 * kvm_stats_mmap_offset of the data block on; the mapping serves
 * kvm_stats_mmap_size bytes of it (the module's own block, whole).
 */
static void ks_vcpu_stats_show_fdinfo(struct seq_file *m, struct file *file)
{
	const struct ks_kind *k = &ks_kinds[KS_KIND_VCPU];

	seq_printf(m, "kvm_stats_mmap_offset:\t%u\n", k->native_size);
	seq_printf(m, "kvm_stats_mmap_size:\t%u\n", k->own_size);
	seq_printf(m, "kvm_stats_mmap_page_offset:\t%lu\n",
		   ks_vcpu_map_offset(file->private_data));
}

static const struct file_operations ks_vm_stats_fops = {
	.owner = THIS_MODULE,
	.read = ks_stats_read,
	.llseek = ks_vm_stats_llseek,
	.release = ks_vm_stats_release,
};

static const struct file_operations ks_vcpu_stats_fops = {
	.owner = THIS_MODULE,
	.read = ks_stats_read,
	.llseek = ks_vcpu_stats_llseek,
	.mmap = ks_vcpu_stats_mmap,
	.show_fdinfo = ks_vcpu_stats_show_fdinfo,
	.release = ks_vcpu_stats_release,
};

/*
 * A stats file reading @priv.  The caller takes a reference on the VM for
 * it, once it has it, so that it keeps working after the VM and vCPU fds
 * are closed; its release drops that reference.  Nothing is allocated for
 * the file but the file itself.
 */
static struct file *ks_stats_file(const struct file_operations *fops,
				  void *priv, const char *name)
{
	struct file *file;

	atomic_long_inc(&ks_nr_files);
	file = ks_fault_ptr(anon_inode_getfile(name, fops, priv, O_RDONLY));
	if (IS_ERR(file)) {
		atomic_long_dec(&ks_nr_files);
		return file;
	}
	/* Pseudo files are not seekable unless said so (5.10 checks). */
	file->f_mode |= FMODE_PREAD | FMODE_LSEEK;
	__module_get(ks_vendor_module());
	return file;
}

struct file *ks_stats_file_vm(struct kvm *kvm, const char *name)
{
	struct ks_vm *vm = ks_vm_get(kvm, GFP_KERNEL_ACCOUNT);

	/* Its vCPUs count from now on, even where exits cannot allocate. */
	if (!vm || ks_vm_vcpus_get(vm, GFP_KERNEL_ACCOUNT))
		return ERR_PTR(-ENOMEM);
	return ks_stats_file(&ks_vm_stats_fops, vm, name);
}

struct file *ks_stats_file_vcpu(struct kvm_vcpu *vcpu, const char *name)
{
	struct ks_vm *vm = ks_vm_get(vcpu->kvm, GFP_KERNEL_ACCOUNT);
	struct ks_vcpu *kv;

	if (!vm)
		return ERR_PTR(-ENOMEM);
	kv = ks_vm_vcpu_get(vm, vcpu, GFP_KERNEL_ACCOUNT);
	if (!kv)
		return ERR_PTR(-ENOMEM);
	return ks_stats_file(&ks_vcpu_stats_fops, kv, name);
}

/* Install @file, made for @fd, as KVM installs its own stats files. */
static int ks_stats_fd_install(int fd, struct file *file, struct kvm *kvm)
{
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		return PTR_ERR(file);
	}
	kvm_get_kvm(kvm);
	fd_install(fd, file);
	return fd;
}

int ks_stats_fd_create_vm(struct kvm *kvm)
{
	int fd = ks_fault_int(get_unused_fd_flags(O_CLOEXEC));

	if (fd < 0)
		return fd;
	return ks_stats_fd_install(fd, ks_stats_file_vm(kvm,
					ks_kinds[KS_KIND_VM].anon_name), kvm);
}

/* "<prefix>:<id>" into @buf (@len bytes), with no printf machinery. */
static void ks_vcpu_anon_name(char *buf, size_t len, const char *prefix,
			      unsigned int id)
{
	char digits[10];
	size_t n, i = 0;

	do {
		digits[i++] = '0' + id % 10;
		id /= 10;
	} while (id && i < sizeof(digits));
	n = strscpy(buf, prefix, len - i - 1);
	buf[n++] = ':';
	while (i)
		buf[n++] = digits[--i];
	buf[n] = '\0';
}

int ks_stats_fd_create_vcpu(struct kvm_vcpu *vcpu)
{
	int fd = ks_fault_int(get_unused_fd_flags(O_CLOEXEC));
	char name[32];

	if (fd < 0)
		return fd;
	ks_vcpu_anon_name(name, sizeof(name), ks_kinds[KS_KIND_VCPU].anon_name,
			  vcpu->vcpu_id);
	return ks_stats_fd_install(fd, ks_stats_file_vcpu(vcpu, name),
				   vcpu->kvm);
}
