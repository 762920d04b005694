// SPDX-License-Identifier: MIT
/*
 * Hostile compressed modules through the ELF model (nl_elf_open_mem): the
 * decompression cap for each format (xz, zstd, gzip) at and around the exact
 * size, decompression bombs that must stop at the cap quickly, truncated,
 * corrupt, empty and concatenated streams.  The streams are made here with
 * the real libraries from a fixture compiled at test time; the loader must
 * answer -NL_E_LIMIT or -NL_E_FORMAT with a message, or the exact image,
 * never anything in between.
 */
#include <errno.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include <zstd.h>

#include "nltest.h"
#include "noplab/elf.h"

enum fmt { XZ, ZSTD, GZIP, NR_FMT };
static const char *const fmt_name[NR_FMT] = { "xz", "zstd", "gzip" };

struct buf {
	uint8_t *p;
	size_t len;
};

static struct buf compress_xz(const uint8_t *in, size_t len)
{
	struct buf b = { malloc(lzma_stream_buffer_bound(len)), 0 };
	size_t pos = 0;

	assert_non_null(b.p);
	assert_int_equal(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, in, len, b.p, &pos,
						 lzma_stream_buffer_bound(len)), LZMA_OK);
	b.len = pos;
	return b;
}

/* With the content checksum, as the zstd tool (and kmod's modules) write it by default. */
static struct buf compress_zstd(const uint8_t *in, size_t len)
{
	struct buf b = { malloc(ZSTD_compressBound(len)), 0 };
	ZSTD_CCtx *c = ZSTD_createCCtx();

	assert_non_null(b.p);
	assert_non_null(c);
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)));
	b.len = ZSTD_compress2(c, b.p, ZSTD_compressBound(len), in, len);
	assert_false(ZSTD_isError(b.len));
	ZSTD_freeCCtx(c);
	return b;
}

static struct buf compress_gzip(const uint8_t *in, size_t len)
{
	z_stream z;
	struct buf b;

	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
	b.p = malloc(deflateBound(&z, len));
	assert_non_null(b.p);
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = b.p;
	z.avail_out = (uInt)deflateBound(&z, len);
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	b.len = z.total_out;
	deflateEnd(&z);
	return b;
}

static struct buf compress_as(enum fmt f, const uint8_t *in, size_t len)
{
	switch (f) {
	case XZ: return compress_xz(in, len);
	case ZSTD: return compress_zstd(in, len);
	default: return compress_gzip(in, len);
	}
}

struct fixture {
	char *dir;
	uint8_t *elf;
	size_t len;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char cmd[1024], path[600];
	FILE *f;

	if (!fx || !(fx->dir = nltest_tmpdir("hostile")))
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "printf 'int a(int x){return x+1;}\\nint b(int x){return a(x)*3;}\\n' > '%s/m.c' && "
		 "gcc -O2 -pg -mfentry -mrecord-mcount -c '%s/m.c' -o '%s/m.ko'",
		 fx->dir, fx->dir, fx->dir);
	if (nltest_run(cmd, NULL) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/m.ko", fx->dir);
	f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	fx->len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	fx->elf = malloc(fx->len);
	if (!fx->elf || fread(fx->elf, 1, fx->len, f) != fx->len) {
		fclose(f);
		return -1;
	}
	fclose(f);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	if (!fx)
		return 0;
	nltest_rmtree(fx->dir);
	free(fx->elf);
	free(fx);
	return 0;
}

/* Open with a cap; returns the error, checks the message/ image invariants either way. */
static int open_capped(const struct buf *b, uint64_t cap, const struct fixture *fx, enum fmt f)
{
	struct nl_elf_opts eo = { .max_decompressed = cap };
	struct nl_elf *elf = NULL;
	struct nl_diag d;
	int err;

	nl_diag_init(&d);
	err = nl_elf_open_mem("test.ko", b->p, b->len, &eo, &elf, &d);
	if (err) {
		assert_null(elf);
		if (!d.msg[0])
			fail_msg("%s: error %d without a message", fmt_name[f], err);
		return err;
	}
	assert_non_null(elf);
	assert_non_null(elf->compression);
	assert_string_equal(elf->compression, fmt_name[f]);
	if (fx && elf->file_size != fx->len)
		fail_msg("%s: %llu bytes out, want %zu", fmt_name[f],
			 (unsigned long long)elf->file_size, fx->len);
	nl_elf_close(elf);
	return 0;
}

/* The cap at, just below and well above the exact decompressed size. */
static void test_cap_boundaries(void **state)
{
	const struct fixture *fx = *state;
	static const struct {
		int line;
		long delta;	/* cap = image size + delta; LONG_MIN: the default cap */
		int want;
	} rows[] = {
		{ SRC_LINE, 0, 0 },		/* exactly the image: fits */
		{ SRC_LINE, 1, 0 },
		{ SRC_LINE, 4096, 0 },
		{ SRC_LINE, -1, -NL_E_LIMIT },
		{ SRC_LINE, -100, -NL_E_LIMIT },
		{ SRC_LINE, 1L << 40, 0 },	/* a huge cap is no promise to allocate it */
	};

	for (int f = 0; f < NR_FMT; f++) {
		struct buf b = compress_as(f, fx->elf, fx->len);

		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			uint64_t cap = (uint64_t)((long)fx->len + rows[i].delta);
			int err = open_capped(&b, cap, fx, f);

			if (err != rows[i].want)
				row_fail(&rows[i], "%s, cap %llu for %zu bytes: got %d (%s), want %d",
					 fmt_name[f], (unsigned long long)cap, fx->len, err,
					 nl_strerror(err), rows[i].want);
		}
		assert_int_equal(open_capped(&b, 0, fx, f), 0);	/* the default cap */
		free(b.p);
	}
}

static double now(void)
{
	struct timespec ts;

	/* CPU time of this process: the machine may be shared */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A bomb: 32 MiB of zeros behind a real ELF header compresses to a few KiB
 * (zstd, xz) or 32 KiB (gzip).  With a 1 MiB cap the loader must stop after
 * about a megabyte of output: well under a second of CPU even under ASan,
 * where inflating all 32 MiB takes a few.
 */
static void test_bombs_stop_at_cap(void **state)
{
	const struct fixture *fx = *state;
	size_t len = 32u << 20;
	uint8_t *zeros = calloc(1, len);

	assert_non_null(zeros);
	memcpy(zeros, fx->elf, 64);
	for (int f = 0; f < NR_FMT; f++) {
		struct buf b = compress_as(f, zeros, len);
		struct nl_elf_opts eo = { .max_decompressed = 1u << 20 };
		struct nl_elf *elf = NULL;
		struct nl_diag d;
		double t = now();
		int err;

		nl_diag_init(&d);
		err = nl_elf_open_mem("bomb.ko", b.p, b.len, &eo, &elf, &d);
		t = now() - t;
		if (err != -NL_E_LIMIT)
			fail_msg("%s bomb (%zu bytes): got %d (%s), want -NL_E_LIMIT", fmt_name[f],
				 b.len, err, d.msg);
		assert_null(elf);
		if (!strstr(d.msg, "cap"))
			fail_msg("%s bomb: message '%s' does not mention the cap", fmt_name[f], d.msg);
		if (t > 1.0)
			fail_msg("%s bomb: %.2f s of CPU to refuse (the output is capped at 1 MiB)",
				 fmt_name[f], t);
		free(b.p);
	}
	free(zeros);
}

/* Cut every stream at 16 points: an error with a message, or (never) a short image. */
static void test_truncated_streams(void **state)
{
	const struct fixture *fx = *state;

	for (int f = 0; f < NR_FMT; f++) {
		struct buf b = compress_as(f, fx->elf, fx->len);

		for (int k = 0; k < 16; k++) {
			struct buf cut = { b.p, b.len * (size_t)k / 16 };
			int err;

			if (cut.len < 6)
				continue;	/* too short to carry the magic: not a compressed input */
			err = open_capped(&cut, 0, fx, f);
			if (err != -NL_E_FORMAT)
				fail_msg("%s cut at %zu of %zu: got %d (%s), want -NL_E_FORMAT",
					 fmt_name[f], cut.len, b.len, err, nl_strerror(err));
		}
		free(b.p);
	}
}

/* Same sections, same bytes: the decompressed image is the fixture. */
static void assert_same_image(const struct nl_elf *a, const struct nl_elf *b, const char *what)
{
	if (a->nr_sections != b->nr_sections || a->file_size != b->file_size)
		fail_msg("%s: %zu sections, %llu bytes; want %zu, %llu", what, a->nr_sections,
			 (unsigned long long)a->file_size, b->nr_sections,
			 (unsigned long long)b->file_size);
	for (size_t i = 0; i < a->nr_sections; i++) {
		const struct nl_section *x = &a->sections[i], *y = &b->sections[i];

		if (x->size != y->size || (x->size && memcmp(x->data, y->data, x->size)))
			fail_msg("%s: section %zu (%s) differs", what, i, x->name);
	}
}

/*
 * Flip each byte of the stream in turn (after the magic): an error with a
 * message, or, where the flip hit a field the checksums do not cover (gzip's
 * mtime), exactly the fixture.  Never a crash, never a different image.
 */
static void test_corrupt_streams(void **state)
{
	const struct fixture *fx = *state;
	struct nl_elf *plain = NULL;
	struct nl_diag pd;

	nl_diag_init(&pd);
	assert_int_equal(nl_elf_open_mem("plain.ko", fx->elf, fx->len, NULL, &plain, &pd), 0);
	for (int f = 0; f < NR_FMT; f++) {
		struct buf b = compress_as(f, fx->elf, fx->len);
		size_t bad = 0;

		for (size_t i = 6; i < b.len; i++) {
			struct nl_elf_opts eo = { .max_decompressed = 1u << 20 };
			struct nl_elf *elf = NULL;
			struct nl_diag d;
			int err;

			b.p[i] ^= 0xa5;
			nl_diag_init(&d);
			err = nl_elf_open_mem("flip.ko", b.p, b.len, &eo, &elf, &d);
			b.p[i] ^= 0xa5;
			if (err) {
				if (!d.msg[0])
					fail_msg("%s flip at %zu: error without a message", fmt_name[f], i);
				bad++;
				continue;
			}
			{
				char what[64];

				snprintf(what, sizeof(what), "%s flip at %zu accepted", fmt_name[f], i);
				assert_same_image(elf, plain, what);
			}
			nl_elf_close(elf);
		}
		if (!bad)
			fail_msg("%s: no corruption was noticed in %zu flips", fmt_name[f], b.len - 6);
		free(b.p);
	}
	nl_elf_close(plain);
}

/* Empty payloads, magic only, and two streams back to back. */
static void test_odd_streams(void **state)
{
	const struct fixture *fx = *state;

	for (int f = 0; f < NR_FMT; f++) {
		struct buf empty = compress_as(f, (const uint8_t *)"", 0);
		struct buf one = compress_as(f, fx->elf, fx->len);
		struct buf two = { malloc(one.len * 2), one.len * 2 };
		int err;

		assert_non_null(two.p);
		err = open_capped(&empty, 0, NULL, f);
		if (err != -NL_E_FORMAT)
			fail_msg("%s empty payload: got %d, want -NL_E_FORMAT", fmt_name[f], err);
		memcpy(two.p, one.p, one.len);
		memcpy(two.p + one.len, one.p, one.len);
		/* concatenated streams: the first image (xz and zstd read both; the ELF is the first) */
		err = open_capped(&two, 1u << 20, NULL, f);
		if (err && err != -NL_E_FORMAT)
			fail_msg("%s two streams: got %d (%s)", fmt_name[f], err, nl_strerror(err));
		free(empty.p);
		free(one.p);
		free(two.p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cap_boundaries),
		cmocka_unit_test(test_bombs_stop_at_cap),
		cmocka_unit_test(test_truncated_streams),
		cmocka_unit_test(test_corrupt_streams),
		cmocka_unit_test(test_odd_streams),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
