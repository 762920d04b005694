// SPDX-License-Identifier: MIT
/* The W^X code buffer (see codebuf.h for why never writable and executable at once). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "noplab/codebuf.h"

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (size_t)p : 4096;
}

#define HUGE (2u << 20)

int nl_codebuf_map_flags(struct nl_codebuf *cb, size_t size, unsigned flags, struct nl_diag *d)
{
	size_t pg = (flags & NL_CODEBUF_HUGE) ? HUGE : page_size();
	size_t span;
	uint8_t *p, *base;

	memset(cb, 0, sizeof(*cb));
	if (!size)
		return nl_fail(d, -EINVAL, "empty code buffer");
	size = (size + pg - 1) / pg * pg;
	/* over-allocate by one alignment unit, then trim to an aligned range */
	span = size + (pg > page_size() ? pg : 0);
	p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return nl_fail_errno(d, -errno, "mmap of %zu bytes for generated code", span);
	base = (uint8_t *)(((uintptr_t)p + pg - 1) / pg * pg);
	if (base > p)
		munmap(p, (size_t)(base - p));
	if (p + span > base + size)
		munmap(base + size, (size_t)(p + span - (base + size)));
	cb->base = base;
	cb->size = size;
	if (flags & NL_CODEBUF_HUGE) {
		/* a hint only: without THP the code still runs, on 4 KiB pages */
		cb->huge = madvise(base, size, MADV_HUGEPAGE) == 0;
	}
	return 0;
}

int nl_codebuf_map(struct nl_codebuf *cb, size_t size, struct nl_diag *d)
{
	return nl_codebuf_map_flags(cb, size, 0, d);
}

long nl_codebuf_huge_bytes(const struct nl_codebuf *cb)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[256];
	bool inside = false;
	long total = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, kb;

		/* a mapping header "lo-hi perms ..."; field lines never parse as two numbers */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			inside = lo < (uintptr_t)cb->base + cb->size && hi > (uintptr_t)cb->base;
			continue;
		}
		if (inside && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
			total += (long)kb * 1024;
	}
	fclose(f);
	return total;
}

int nl_codebuf_seal(struct nl_codebuf *cb, struct nl_diag *d)
{
	if (mprotect(cb->base, cb->size, PROT_READ | PROT_EXEC))
		return nl_fail_errno(d, -errno, "mprotect read-execute");
	cb->sealed = true;
	return 0;
}

int nl_codebuf_unseal(struct nl_codebuf *cb, struct nl_diag *d)
{
	if (mprotect(cb->base, cb->size, PROT_READ | PROT_WRITE))
		return nl_fail_errno(d, -errno, "mprotect read-write");
	cb->sealed = false;
	return 0;
}

void nl_codebuf_unmap(struct nl_codebuf *cb)
{
	if (cb->base)
		munmap(cb->base, cb->size);
	free(cb->table);
	memset(cb, 0, sizeof(*cb));
}

int nl_codebuf_load(struct nl_codebuf *cb, const struct nl_image *img, struct nl_diag *d)
{
	return nl_codebuf_load_flags(cb, img, 0, d);
}

int nl_codebuf_load_flags(struct nl_codebuf *cb, const struct nl_image *img, unsigned flags,
			  struct nl_diag *d)
{
	int err = nl_codebuf_map_flags(cb, img->size, flags, d);

	if (err)
		return err;
	memcpy(cb->base, img->code, img->size);
	if (img->nr_table) {
		cb->table = malloc(img->nr_table * sizeof(*cb->table));
		if (!cb->table) {
			nl_codebuf_unmap(cb);
			return nl_fail(d, -ENOMEM, "indirect call table");
		}
		for (size_t i = 0; i < img->nr_table; i++)
			cb->table[i] = cb->base + img->table[i];
	}
	err = nl_codebuf_seal(cb, d);
	if (err)
		nl_codebuf_unmap(cb);
	return err;
}
