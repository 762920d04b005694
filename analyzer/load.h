/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_ANALYZER_LOAD_H
#define NOPLAB_ANALYZER_LOAD_H

/*
 * File bytes for the ELF model: an mmap of the file, or a heap buffer holding
 * a decompressed module.  Internal to analyzer/: load.c is the only file that
 * includes liblzma, libzstd and zlib.
 */

#include <stddef.h>
#include <stdint.h>

#include "noplab/diag.h"

#define NL_LOAD_DEFAULT_CAP (1ull << 30)

enum nl_compression { NL_COMP_NONE, NL_COMP_XZ, NL_COMP_ZSTD, NL_COMP_GZIP };

struct nl_blob {
	const uint8_t *data;
	size_t size;
	enum nl_compression comp;	/* what the input was before decompression */
	void *map;			/* mmap'd region, or NULL */
	size_t map_size;
	void *heap;			/* malloc'd buffer, or NULL */
};

/* Recognise a compressed image by its magic. */
enum nl_compression nl_compression_of(const uint8_t *p, size_t size);
const char *nl_compression_name(enum nl_compression c);

/*
 * mmap path (read-only, private); decompress it into memory when it starts
 * with an xz, zstd or gzip magic, refusing more than cap bytes.  cap 0: the
 * default bounds, 1 GiB and, past 64 MiB, 64 times the compressed size.
 */
int nl_load_file(const char *path, uint64_t cap, struct nl_blob *b, struct nl_diag *d);

/* Decompress buf into a heap blob when it is compressed; else point at buf. */
int nl_load_mem(const uint8_t *buf, size_t size, uint64_t cap, struct nl_blob *b,
		struct nl_diag *d);

void nl_blob_release(struct nl_blob *b);

/*
 * Fault in a large fresh allocation with one call instead of a page fault
 * per 4 KiB page (each costs microseconds in a VM).  A hint: errors are ignored.
 */
void nl_prefault(void *p, size_t size);

#endif
