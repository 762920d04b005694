// SPDX-License-Identifier: MIT
/*
 * /proc/kcore reader.  Only the ELF header and program headers are parsed,
 * with pread: the file claims a size of the whole kernel address space, so
 * nothing may map or read it whole.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "noplab/kcore.h"


struct nl_kcore {
	int fd;
	Elf64_Phdr *load;
	size_t nr_load;
};

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t r = pread(fd, p, len, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!r)
			return -EIO;
		p += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

int nl_kcore_open(const char *path, struct nl_kcore **out, struct nl_diag *d)
{
	struct nl_kcore *kc;
	Elf64_Ehdr eh;
	Elf64_Phdr *ph;
	int fd, ret;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return nl_fail_errno(d, -errno, "%s", path);
	ret = pread_all(fd, &eh, sizeof(eh), 0);
	if (ret) {
		close(fd);
		return ret == -EIO ? nl_fail(d, -NL_E_FORMAT, "%s: shorter than an ELF header", path)
				   : nl_fail_errno(d, ret, "%s", path);
	}
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_CORE) {
		close(fd);
		return nl_fail(d, -NL_E_FORMAT, "%s: not a little-endian ELF64 core file", path);
	}
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum || eh.e_phnum == PN_XNUM) {
		close(fd);
		return nl_fail(d, -NL_E_FORMAT, "%s: bad program header table (%u x %u bytes)",
			       path, eh.e_phnum, eh.e_phentsize);
	}
	ph = calloc(eh.e_phnum, sizeof(*ph));
	kc = calloc(1, sizeof(*kc));
	if (!ph || !kc) {
		free(ph);
		free(kc);
		close(fd);
		return nl_fail_errno(d, -ENOMEM, "%s", path);
	}
	ret = pread_all(fd, ph, eh.e_phnum * sizeof(*ph), eh.e_phoff);
	if (ret) {
		free(ph);
		free(kc);
		close(fd);
		return nl_fail(d, -NL_E_FORMAT, "%s: program headers past the end", path);
	}
	for (size_t i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_filesz)
			ph[kc->nr_load++] = ph[i];
	kc->fd = fd;
	kc->load = ph;
	if (!kc->nr_load) {
		nl_kcore_close(kc);
		return nl_fail(d, -NL_E_FORMAT, "%s: no PT_LOAD segment", path);
	}
	*out = kc;
	return 0;
}

static const Elf64_Phdr *segment_at(const struct nl_kcore *kc, uint64_t addr)
{
	for (size_t i = 0; i < kc->nr_load; i++)
		if (addr >= kc->load[i].p_vaddr && addr - kc->load[i].p_vaddr < kc->load[i].p_filesz)
			return &kc->load[i];
	return NULL;
}

int nl_kcore_covers(const struct nl_kcore *kc, uint64_t addr, uint64_t len, struct nl_diag *d)
{
	while (len) {
		const Elf64_Phdr *seg = segment_at(kc, addr);

		if (!seg)
			return nl_fail(d, -EFAULT, "kcore: %#" PRIx64 " is in no PT_LOAD segment", addr);
		uint64_t n = seg->p_vaddr + seg->p_filesz - addr;

		if (n >= len)
			break;
		addr += n;
		len -= n;
	}
	return 0;
}

int nl_kcore_read(struct nl_kcore *kc, uint64_t addr, void *buf, size_t len, struct nl_diag *d)
{
	uint8_t *p = buf;

	while (len) {
		const Elf64_Phdr *seg = segment_at(kc, addr);

		if (!seg)
			return nl_fail(d, -EFAULT, "kcore: %#" PRIx64 " is in no PT_LOAD segment", addr);
		uint64_t n = seg->p_vaddr + seg->p_filesz - addr;

		if (n > len)
			n = len;
		int ret = pread_all(kc->fd, p, n, seg->p_offset + (addr - seg->p_vaddr));

		if (ret)
			return nl_fail_errno(d, ret, "kcore: reading %#" PRIx64 "+%#" PRIx64, addr, n);
		p += n;
		addr += n;
		len -= n;
	}
	return 0;
}

size_t nl_kcore_segments(const struct nl_kcore *kc)
{
	return kc->nr_load;
}

void nl_kcore_close(struct nl_kcore *kc)
{
	if (!kc)
		return;
	close(kc->fd);
	free(kc->load);
	free(kc);
}
