// SPDX-License-Identifier: GPL-2.0
/*
 * The arm64 exit-cost gate's helper (tests/bench/exit-cost-gate-arm64),
 * in the guest:
 *
 *   cost_arm64 insmod KO [PARAMS]
 *	load the probe driver KO.  It references KVM's tracepoints and
 *	kvm_running_vcpu, which the arm64 kernel builds in and does not
 *	export: each undefined symbol named here (ks_resolved()) is given
 *	its address from /proc/kallsyms (an absolute symbol, which the
 *	module loader leaves as it is) before init_module().  A name that
 *	kallsyms lacks or lists twice fails the load.
 *   cost_arm64 cost PATH N [N...]
 *	create a VM with two initialised vCPUs and have the probe driver
 *	drive N exits of PATH on the first (PATH-miss: alternating the
 *	two), once for each N in turn; print the driver's result line of
 *	each.  The driver takes the vCPU fds of the process that writes
 *	to it, and only if that process created the VM, as KVM's vCPU
 *	ioctls do: the writes are made here, not by a program this one
 *	runs (an exec()ed one has another mm);
 *   cost_arm64 foreign
 *	the same VM, and a forked child (a copy of the mm, not the VM's)
 *	asks the driver for one exit: exits 0 if the driver refused it
 *	with EIO.
 *
 * Test only; runs as root in the test guest.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/kvm.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The symbols the driver may take from kallsyms: KVM's, nothing else. */
static int ks_resolved(const char *name)
{
	static const char *const prefixes[] = {
		"__tracepoint_kvm_", "__traceiter_kvm_", "__SCK__tp_func_kvm_",
	};
	size_t i;

	if (!strcmp(name, "kvm_running_vcpu"))
		return 1;
	for (i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/* @name's address in /proc/kallsyms; 0 if absent or listed twice. */
static unsigned long long ksym_addr(const char *name)
{
	unsigned long long addr, found = 0;
	char line[512], sym[256], type;
	int n = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) != 3 ||
		    strchr(line, '['))	/* a module's */
			continue;
		if (!strcmp(sym, name)) {
			found = addr;
			n++;
		}
	}
	fclose(f);
	return n == 1 ? found : 0;
}

static int insmod(const char *path, const char *params)
{
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	struct stat st;
	char *img;
	int fd, i, bad = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		perror(path);
		return 1;
	}
	img = malloc(st.st_size);
	if (!img || read(fd, img, st.st_size) != st.st_size) {
		perror(path);
		return 1;
	}
	close(fd);
	eh = (Elf64_Ehdr *)img;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff + (size_t)eh->e_shnum * sizeof(*sh) > (size_t)st.st_size) {
		fprintf(stderr, "%s: not a 64-bit ELF file\n", path);
		return 1;
	}
	sh = (Elf64_Shdr *)(img + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		Elf64_Sym *sym = (Elf64_Sym *)(img + sh[i].sh_offset);
		const char *str;
		size_t j, n;

		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		str = img + sh[sh[i].sh_link].sh_offset;
		n = sh[i].sh_size / sizeof(*sym);
		for (j = 1; j < n; j++) {
			const char *name = str + sym[j].st_name;
			unsigned long long addr;

			if (sym[j].st_shndx != SHN_UNDEF || !ks_resolved(name))
				continue;
			addr = ksym_addr(name);
			if (!addr) {
				fprintf(stderr, "%s: %s: not once in /proc/kallsyms\n",
					path, name);
				bad = 1;
				continue;
			}
			sym[j].st_shndx = SHN_ABS;
			sym[j].st_value = addr;
			printf("# %s: %s = %#llx\n", path, name, addr);
		}
	}
	if (bad)
		return 1;
	if (syscall(SYS_init_module, img, (unsigned long)st.st_size, params)) {
		fprintf(stderr, "%s: init_module: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

#define KS_COST "/sys/kernel/debug/ks_probe_driver/probe_cost"

/* A VM and its two initialised vCPUs, in @fd. */
static int vm_two_vcpus(int fd[2])
{
	struct kvm_vcpu_init init;
	int kvm, vm, i;

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	vm = kvm < 0 ? -1 : ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0 || ioctl(vm, KVM_ARM_PREFERRED_TARGET, &init) < 0) {
		perror("cost_arm64: /dev/kvm");
		return -1;
	}
	for (i = 0; i < 2; i++) {
		fd[i] = ioctl(vm, KVM_CREATE_VCPU, i);
		if (fd[i] < 0 || ioctl(fd[i], KVM_ARM_VCPU_INIT, &init) < 0) {
			perror("cost_arm64: a vCPU");
			return -1;
		}
	}
	return 0;
}

/* The driver's request for @n exits of @path ("irq", "irq-miss", ...). */
static int request(const int fd[2], const char *path, unsigned long n)
{
	size_t len = strlen(path);
	char buf[64];
	int cost, ret, err;

	if (len > 5 && !strcmp(path + len - 5, "-miss"))
		ret = snprintf(buf, sizeof(buf), "%d %lu %.*s %d", fd[0], n,
			       (int)(len - 5), path, fd[1]);
	else
		ret = snprintf(buf, sizeof(buf), "%d %lu %s", fd[0], n, path);
	if (ret < 0 || (size_t)ret >= sizeof(buf)) {
		errno = EINVAL;
		return -1;
	}
	cost = open(KS_COST, O_WRONLY | O_CLOEXEC);
	if (cost < 0)
		return -1;
	ret = write(cost, buf, ret);
	err = errno;
	close(cost);
	errno = err;
	return ret < 0 ? -1 : 0;
}

static int cost(const char *path, char **counts)
{
	char line[256];
	int fd[2];

	if (vm_two_vcpus(fd))
		return 1;
	for (; *counts; counts++) {
		unsigned long n = strtoul(*counts, NULL, 10);
		FILE *f;

		if (request(fd, path, n)) {
			fprintf(stderr, "cost_arm64: %s %lu: %s\n", path, n,
				strerror(errno));
			return 1;
		}
		f = fopen(KS_COST, "re");
		if (!f || !fgets(line, sizeof(line), f)) {
			perror(KS_COST);
			return 1;
		}
		fclose(f);
		fputs(line, stdout);
	}
	return 0;
}

static int foreign(void)
{
	int fd[2], status;
	pid_t pid;

	if (vm_two_vcpus(fd))
		return 2;
	pid = fork();
	if (pid < 0)
		return 2;
	if (!pid) {
		if (!request(fd, "irq", 1))
			_exit(1);
		_exit(errno == EIO ? 0 : 2);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 2;
	if (WEXITSTATUS(status) == 1)
		fprintf(stderr, "cost_arm64: the driver took a vCPU of another process's VM\n");
	else if (WEXITSTATUS(status))
		fprintf(stderr, "cost_arm64: the driver failed otherwise than with EIO\n");
	return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "insmod"))
		return insmod(argv[2], argc > 3 ? argv[3] : "");
	if (argc >= 4 && !strcmp(argv[1], "cost"))
		return cost(argv[2], argv + 3);
	if (argc == 2 && !strcmp(argv[1], "foreign"))
		return foreign();
	fprintf(stderr, "usage: cost_arm64 insmod KO [PARAMS]\n"
		"       cost_arm64 cost PATH N [N...]\n"
		"       cost_arm64 foreign\n");
	return 2;
}
