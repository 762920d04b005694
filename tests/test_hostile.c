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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nltest.h"
#include "nltest_compress.h"
#include "noplab/elf.h"

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
static int open_capped(const struct nltest_buf *b, uint64_t cap, const struct fixture *fx, enum nltest_fmt f)
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
			fail_msg("%s: error %d without a message", nltest_fmt_name[f], err);
		return err;
	}
	assert_non_null(elf);
	assert_non_null(elf->compression);
	assert_string_equal(elf->compression, nltest_fmt_name[f]);
	if (fx && elf->file_size != fx->len)
		fail_msg("%s: %llu bytes out, want %zu", nltest_fmt_name[f],
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

	for (int f = 0; f < NLTEST_NR_FMT; f++) {
		struct nltest_buf b = nltest_compress(f, fx->elf, fx->len, false);

		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			uint64_t cap = (uint64_t)((long)fx->len + rows[i].delta);
			int err = open_capped(&b, cap, fx, f);

			if (err != rows[i].want)
				row_fail(&rows[i], "%s, cap %llu for %zu bytes: got %d (%s), want %d",
					 nltest_fmt_name[f], (unsigned long long)cap, fx->len, err,
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
	for (int f = 0; f < NLTEST_NR_FMT; f++) {
		struct nltest_buf b = nltest_compress(f, zeros, len, false);
		struct nl_elf_opts eo = { .max_decompressed = 1u << 20 };
		struct nl_elf *elf = NULL;
		struct nl_diag d;
		double t = now();
		int err;

		nl_diag_init(&d);
		err = nl_elf_open_mem("bomb.ko", b.p, b.len, &eo, &elf, &d);
		t = now() - t;
		if (err != -NL_E_LIMIT)
			fail_msg("%s bomb (%zu bytes): got %d (%s), want -NL_E_LIMIT", nltest_fmt_name[f],
				 b.len, err, d.msg);
		assert_null(elf);
		if (!strstr(d.msg, "cap"))
			fail_msg("%s bomb: message '%s' does not mention the cap", nltest_fmt_name[f], d.msg);
		if (t > 1.0)
			fail_msg("%s bomb: %.2f s of CPU to refuse (the output is capped at 1 MiB)",
				 nltest_fmt_name[f], t);
		free(b.p);
	}
	free(zeros);
}

/* Cut every stream at 16 points: an error with a message, or (never) a short image. */
static void test_truncated_streams(void **state)
{
	const struct fixture *fx = *state;

	for (int f = 0; f < NLTEST_NR_FMT; f++) {
		struct nltest_buf b = nltest_compress(f, fx->elf, fx->len, false);

		for (int k = 0; k < 16; k++) {
			struct nltest_buf cut = { b.p, b.len * (size_t)k / 16 };
			int err;

			if (cut.len < 6)
				continue;	/* too short to carry the magic: not a compressed input */
			err = open_capped(&cut, 0, fx, f);
			if (err != -NL_E_FORMAT)
				fail_msg("%s cut at %zu of %zu: got %d (%s), want -NL_E_FORMAT",
					 nltest_fmt_name[f], cut.len, b.len, err, nl_strerror(err));
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
	for (int f = 0; f < NLTEST_NR_FMT; f++) {
		struct nltest_buf b = nltest_compress(f, fx->elf, fx->len, false);
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
					fail_msg("%s flip at %zu: error without a message", nltest_fmt_name[f], i);
				bad++;
				continue;
			}
			{
				char what[64];

				snprintf(what, sizeof(what), "%s flip at %zu accepted", nltest_fmt_name[f], i);
				assert_same_image(elf, plain, what);
			}
			nl_elf_close(elf);
		}
		if (!bad)
			fail_msg("%s: no corruption was noticed in %zu flips", nltest_fmt_name[f], b.len - 6);
		free(b.p);
	}
	nl_elf_close(plain);
}

/* Empty payloads, magic only, and two streams back to back. */
static void test_odd_streams(void **state)
{
	const struct fixture *fx = *state;

	for (int f = 0; f < NLTEST_NR_FMT; f++) {
		struct nltest_buf empty = nltest_compress(f, (const uint8_t *)"", 0, false);
		struct nltest_buf one = nltest_compress(f, fx->elf, fx->len, false);
		struct nltest_buf two = { malloc(one.len * 2), one.len * 2 };
		int err;

		assert_non_null(two.p);
		err = open_capped(&empty, 0, NULL, f);
		if (err != -NL_E_FORMAT)
			fail_msg("%s empty payload: got %d, want -NL_E_FORMAT", nltest_fmt_name[f], err);
		memcpy(two.p, one.p, one.len);
		memcpy(two.p + one.len, one.p, one.len);
		/* concatenated streams: the first image (xz and zstd read both; the ELF is the first) */
		err = open_capped(&two, 1u << 20, NULL, f);
		if (err && err != -NL_E_FORMAT)
			fail_msg("%s two streams: got %d (%s)", nltest_fmt_name[f], err, nl_strerror(err));
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
