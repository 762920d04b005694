/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_NLTEST_COMPRESS_H
#define NOPLAB_NLTEST_COMPRESS_H

/* Compressed modules made in the tests with the real libraries (liblzma, libzstd, zlib). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum nltest_fmt { NLTEST_XZ, NLTEST_ZSTD, NLTEST_GZIP, NLTEST_NR_FMT };
extern const char *const nltest_fmt_name[NLTEST_NR_FMT];	/* as elf->compression says */

struct nltest_buf {
	uint8_t *p;	/* malloc'd */
	size_t len;
};

/*
 * in, compressed as the format's tool would at its fastest level: xz with a
 * CRC64 check, zstd with its content checksum and, unless zstd_no_size (the
 * tool reading a pipe), the content size in the frame header; gzip with its
 * size trailer.  A library failure fails the test.
 */
struct nltest_buf nltest_compress(enum nltest_fmt f, const uint8_t *in, size_t len,
				  bool zstd_no_size);

#endif
