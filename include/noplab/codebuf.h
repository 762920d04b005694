/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_CODEBUF_H
#define NOPLAB_CODEBUF_H

/*
 * The W^X code buffer: anonymous memory that is read-write while code is
 * written into it and read-execute afterwards, never both at once.  Hardened
 * kernels (SELinux execmem, PaX MPROTECT) refuse writable+executable
 * mappings, and a benchmark that needs them teaches bad habits.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "noplab/codegen.h"
#include "noplab/diag.h"

struct nl_codebuf {
	uint8_t *base;		/* page-aligned (2 MiB-aligned with NL_CODEBUF_HUGE) */
	size_t size;		/* mapped bytes, a multiple of the page size */
	bool sealed;		/* read-execute; otherwise read-write */
	bool huge;		/* asked for transparent huge pages */
	void **table;		/* the indirect driver's table, absolute addresses (heap) */
};

enum nl_codebuf_flags {
	/*
	 * 2 MiB-aligned and madvise(MADV_HUGEPAGE): the code then sits in
	 * physically contiguous memory, so which L2 sets it occupies no longer
	 * depends on which 4 KiB frames the kernel happened to hand out; that
	 * choice otherwise changes results from one run to the next.  The
	 * kernel text is mapped with large pages too.  A hint: the kernel may
	 * still use 4 KiB pages (nl_codebuf_huge_bytes() says what it did).
	 */
	NL_CODEBUF_HUGE = 1 << 0,
};

/* Map size bytes read-write (not executable).  Returns 0 or -errno. */
int nl_codebuf_map(struct nl_codebuf *cb, size_t size, struct nl_diag *d);
int nl_codebuf_map_flags(struct nl_codebuf *cb, size_t size, unsigned flags, struct nl_diag *d);
/* Bytes of the buffer the kernel backs with huge pages (from /proc/self/smaps), or -errno. */
long nl_codebuf_huge_bytes(const struct nl_codebuf *cb);
/* Make the mapping read-execute (it stops being writable first). */
int nl_codebuf_seal(struct nl_codebuf *cb, struct nl_diag *d);
/* Back to read-write (not executable), to rewrite it. */
int nl_codebuf_unseal(struct nl_codebuf *cb, struct nl_diag *d);
void nl_codebuf_unmap(struct nl_codebuf *cb);

/* map + copy the image + build the table + seal. */
int nl_codebuf_load(struct nl_codebuf *cb, const struct nl_image *img, struct nl_diag *d);
int nl_codebuf_load_flags(struct nl_codebuf *cb, const struct nl_image *img, unsigned flags,
			  struct nl_diag *d);

typedef uint64_t (*nl_driver_fn)(uint64_t iters, void *const *table);

static inline nl_driver_fn nl_codebuf_driver(const struct nl_codebuf *cb,
					     const struct nl_image *img)
{
	/* POSIX guarantees data and function pointers convert; ISO C does not care here */
	return (nl_driver_fn)(uintptr_t)(cb->base + img->driver_off);
}

typedef uint32_t (*nl_func_fn)(void);

static inline nl_func_fn nl_codebuf_func(const struct nl_codebuf *cb, const struct nl_gsym *s)
{
	return (nl_func_fn)(uintptr_t)(cb->base + s->off);
}

#endif
