// SPDX-License-Identifier: MIT
#include <lzma.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include <cmocka.h>

#include "nltest_compress.h"

const char *const nltest_fmt_name[NLTEST_NR_FMT] = { "xz", "zstd", "gzip" };

static struct nltest_buf compress_xz(const uint8_t *in, size_t len)
{
	size_t cap = lzma_stream_buffer_bound(len), pos = 0;
	struct nltest_buf b = { malloc(cap), 0 };

	assert_non_null(b.p);
	assert_int_equal(
		lzma_easy_buffer_encode(0, LZMA_CHECK_CRC64, NULL, in, len, b.p, &pos, cap),
		LZMA_OK);
	b.len = pos;
	return b;
}

static struct nltest_buf compress_zstd(const uint8_t *in, size_t len, bool no_size)
{
	struct nltest_buf b = { malloc(ZSTD_compressBound(len)), 0 };
	ZSTD_CCtx *c = ZSTD_createCCtx();

	assert_non_null(b.p);
	assert_non_null(c);
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)));
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, !no_size)));
	b.len = ZSTD_compress2(c, b.p, ZSTD_compressBound(len), in, len);
	assert_false(ZSTD_isError(b.len));
	ZSTD_freeCCtx(c);
	return b;
}

static struct nltest_buf compress_gzip(const uint8_t *in, size_t len)
{
	struct nltest_buf b;
	z_stream z;
	size_t cap;

	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
	cap = deflateBound(&z, len) + 16;
	b.p = malloc(cap);
	assert_non_null(b.p);
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = b.p;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	b.len = z.total_out;
	deflateEnd(&z);
	return b;
}

struct nltest_buf nltest_compress(enum nltest_fmt f, const uint8_t *in, size_t len,
				  bool zstd_no_size)
{
	switch (f) {
	case NLTEST_XZ: return compress_xz(in, len);
	case NLTEST_ZSTD: return compress_zstd(in, len, zstd_no_size);
	default: return compress_gzip(in, len);
	}
}
