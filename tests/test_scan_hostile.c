// SPDX-License-Identifier: MIT
/*
 * Hostile input for scan and layout, the fixes of the issue 7 findings:
 *   F4  layout's per-function JCC figures over nested extents: the same counts
 *       as summing the bins, in time that does not grow with the nesting;
 *   S1  decompression bounds: declared sizes refused up front, the ratio bound,
 *       an explicit cap replacing it, xz's decoder memory bounded;
 *   F7  warnings that name the file they concern (scan with several files, layout);
 *       and --max-decompressed on both commands.
 * F5 and F6 (functions outside their section, unknown relocation types) are
 * rows of the malformed table in test_elf.c.
 */
#include <elf.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nltest.h"
#include "nltest_compress.h"
#include "noplab/elf.h"
#include "noplab/layout.h"

static double cpu_now(void)
{
	struct timespec ts;

	/* CPU time of the process, every thread: the machine may be shared */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- F4: JCC counts over nested extents ---- */

enum shape {
	NESTED,		/* function i runs from its start to the end of .text */
	DISJOINT,	/* 16 bytes each */
	MIXED,		/* pseudo-random ends: nested, disjoint and overlapping */
};

struct jcc_row {
	int line;
	size_t n;
	enum shape shape;
	double max_cpu;	/* 0: compare every function with the bins; else time it, spot-check */
};

static const struct jcc_row jcc_rows[] = {
	{ SRC_LINE, 1, NESTED, 0 },
	{ SRC_LINE, 200, NESTED, 0 },
	{ SRC_LINE, 200, DISJOINT, 0 },
	{ SRC_LINE, 400, MIXED, 0 },
	/* quadratic, this was ~30 s of CPU under ASan; linear, well under a second */
	{ SRC_LINE, 30000, NESTED, 4.0 },
};

/* The reference: every bin of the range added up, as the first version did. */
static void naive_jcc_in(const struct nl_layout *lay, uint64_t start, uint64_t end,
			 struct nl_jcc_counts *out)
{
	memset(out, 0, sizeof(*out));
	if (!lay->jcc_done || end <= start)
		return;
	size_t b0 = 0, b1 = 0;

	while (b0 < lay->nr_cuts && lay->cuts[b0] <= start)
		b0++;
	while (b1 < lay->nr_cuts && lay->cuts[b1] <= end - 1)
		b1++;
	for (size_t b = b0; b <= b1 && b < lay->jcc.nr_bins; b++)
		nl_jcc_counts_add(out, &lay->jcc.bins[b]);
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void check_range(const struct jcc_row *r, const struct nl_layout *lay, uint64_t start,
			uint64_t end, const struct nl_jcc_counts *got, const char *what)
{
	struct nl_jcc_counts want;

	naive_jcc_in(lay, start, end, &want);
	if (memcmp(got, &want, sizeof(want)))
		row_fail(r, "%s [%#llx, %#llx): %llu units %llu affected, bins say %llu %llu", what,
			 (unsigned long long)start, (unsigned long long)end,
			 (unsigned long long)got->units, (unsigned long long)got->affected,
			 (unsigned long long)want.units, (unsigned long long)want.affected);
}

static void test_jcc_nested_extents(void **state)
{
	/* call the next instruction (a branch unit), ret, a 10-byte NOP: 16 bytes */
	static const uint8_t fn[16] = { 0xe8, 0, 0, 0, 0, 0xc3, 0x66, 0x0f,
					0x1f, 0x84, 0, 0, 0, 0, 0, 0x90 };
	const uint64_t base = 0x400000;

	(void)state;
	for (size_t ri = 0; ri < sizeof(jcc_rows) / sizeof(jcc_rows[0]); ri++) {
		const struct jcc_row *r = &jcc_rows[ri];
		uint64_t size = 16 * r->n, x = 0x9e3779b97f4a7c15ull;
		uint8_t *text = malloc(size);
		char *names = malloc(r->n * 16);
		struct nl_layout_sec sec = { .name = ".text", .addr = base, .size = size,
					     .align = 16, .data = text, .exec = true };
		struct nl_layout_opts o = { .jcc = true, .threads = 2 };
		struct nl_layout_input in;
		struct nl_layout *lay;
		double t;

		assert_non_null(text);
		assert_non_null(names);
		for (size_t i = 0; i < r->n; i++)
			memcpy(text + 16 * i, fn, 16);
		nl_layout_input_init(&in, "nested", NL_MODE_64);
		assert_int_equal(nl_layout_add_sec(&in, &sec), 0);
		for (size_t i = 0; i < r->n; i++) {
			struct nl_layout_sym s = { .name = names + 16 * i, .addr = base + 16 * i,
						   .sec = 0, .kind = NL_LSYM_CODE, .global = true };

			snprintf(names + 16 * i, 16, "f%zu", i);
			if (r->shape == NESTED)
				s.size = size - 16 * i;
			else if (r->shape == DISJOINT)
				s.size = 16;
			else
				s.size = 16 * (1 + xorshift(&x) % (r->n - i));
			assert_true(nl_layout_add_sym(&in, &s) >= 0);
		}
		assert_int_equal(nl_layout_prepare(&in, NULL), 0);
		t = cpu_now();
		assert_int_equal(nl_layout_analyze(&in, &o, &lay, NULL), 0);
		t = cpu_now() - t;
		if (lay->nr_funcs != r->n || lay->jcc.total.units != 2 * r->n)
			row_fail(r, "%zu functions, %llu branch units; want %zu, %zu",
				 lay->nr_funcs, (unsigned long long)lay->jcc.total.units, r->n,
				 2 * r->n);
		if (r->max_cpu && t > r->max_cpu)
			row_fail(r, "%zu nested functions: %.2f s of CPU, bound %.1f s", r->n, t,
				 r->max_cpu);
		/* every function (or a sample of the big ones) as the bins add up */
		size_t step = r->max_cpu ? r->n / 97 + 1 : 1;

		for (size_t i = 0; i < lay->nr_funcs; i += step) {
			const struct nl_layout_func *f = &lay->funcs[i];

			assert_true(f->jcc_known);
			check_range(r, lay, f->addr, f->addr + f->size, &f->jcc, f->name);
		}
		for (size_t i = 0; i < lay->nr_regions; i++) {
			const struct nl_region *g = &lay->regions[i];

			if (g->jcc_known)
				check_range(r, lay, g->start, g->end, &g->jcc, g->name);
		}
		/* any range: before the first cut, past the last, empty, reversed */
		for (int q = 0; q < (r->max_cpu ? 50 : 2000); q++) {
			uint64_t a = base - 64 + xorshift(&x) % (size + 128);
			uint64_t b = base - 64 + xorshift(&x) % (size + 128);
			struct nl_jcc_counts got;

			if (q == 0)
				a = 0, b = UINT64_MAX;
			nl_layout_jcc_in(lay, a, b, &got);
			check_range(r, lay, a, b, &got, "range");
		}
		nl_layout_free(lay);
		nl_layout_input_release(&in);
		free(names);
		free(text);
	}
}

/* ---- S1: decompression bounds ---- */

struct fixture {
	char *dir;
	struct nltest_buf elf;	/* a small object compiled at test time */
};

/*
 * Rewrite the dictionary size in the first block header of a one-block xz
 * stream (the decoder allocates it before any output), with its CRC.
 */
static void xz_set_dict(struct nltest_buf *b, uint32_t dict)
{
	lzma_filter filters[LZMA_FILTERS_MAX + 1];
	lzma_block block;
	lzma_stream_flags sf;
	uint8_t *h = b->p + LZMA_STREAM_HEADER_SIZE;

	assert_int_equal(lzma_stream_header_decode(&sf, b->p), LZMA_OK);
	memset(&block, 0, sizeof(block));
	block.version = 0;
	block.check = sf.check;
	block.filters = filters;
	block.header_size = lzma_block_header_size_decode(h[0]);
	assert_int_equal(lzma_block_header_decode(&block, NULL, h), LZMA_OK);
	assert_int_equal(filters[0].id, LZMA_FILTER_LZMA2);
	((lzma_options_lzma *)filters[0].options)->dict_size = dict;
	assert_int_equal(lzma_block_header_encode(&block, h), LZMA_OK);
	for (size_t i = 0; filters[i].id != LZMA_VLI_UNKNOWN; i++)
		free(filters[i].options);
}

enum trailer {
	T_NONE,
	T_CLAIM_96M,	/* four more bytes: a gzip ISIZE of 96 MiB that is not the trailer */
};

struct bound_row {
	int line;
	enum nltest_fmt fmt;
	unsigned zeros_mib;	/* zeros after the object: it still opens once inflated */
	unsigned random_kib;	/* then incompressible bytes */
	bool no_size;		/* zstd: no content size in the frame header */
	uint32_t xz_dict;	/* xz: rewrite the dictionary size */
	enum trailer trailer;
	uint64_t cap;		/* nl_elf_opts.max_decompressed; 0: the default bounds */
	int want;
	const char *word;	/* in the message */
	double max_cpu;
};

static const struct bound_row bound_rows[] = {
	/* past 64 MiB and 64x: the declared size refuses it before any output */
	{ SRC_LINE, NLTEST_XZ, 96, 0, false, 0, T_NONE, 0, -NL_E_LIMIT, "the index declares 96", 0.5 },
	{ SRC_LINE, NLTEST_ZSTD, 96, 0, false, 0, T_NONE, 0, -NL_E_LIMIT, "frame header declares 96", 0.5 },
	{ SRC_LINE, NLTEST_ZSTD, 96, 0, false, 0, T_NONE, 8u << 20, -NL_E_LIMIT, "exceeds the 8 MiB cap", 0.5 },
	/* no declared size: the ratio bound stops the output at 64 MiB */
	{ SRC_LINE, NLTEST_ZSTD, 96, 0, true, 0, T_NONE, 0, -NL_E_LIMIT, "decompression bomb", 3.0 },
	{ SRC_LINE, NLTEST_GZIP, 96, 0, false, 0, T_NONE, 0, -NL_E_LIMIT, "decompression bomb", 3.0 },
	/* under the 64 MiB floor, any ratio is fine */
	{ SRC_LINE, NLTEST_XZ, 32, 0, false, 0, T_NONE, 0, 0, NULL, 0 },
	{ SRC_LINE, NLTEST_GZIP, 32, 0, false, 0, T_NONE, 0, 0, NULL, 0 },
	{ SRC_LINE, NLTEST_ZSTD, 32, 0, true, 0, T_NONE, 0, 0, NULL, 0 },
	/* an explicit cap replaces the ratio bound: how an odd genuine input gets through */
	{ SRC_LINE, NLTEST_ZSTD, 96, 0, false, 0, T_NONE, 128u << 20, 0, NULL, 0 },
	{ SRC_LINE, NLTEST_GZIP, 96, 0, false, 0, T_NONE, 128u << 20, 0, NULL, 0 },
	/* gzip's ISIZE is a hint: trailing bytes that claim 96 MiB refuse nothing */
	{ SRC_LINE, NLTEST_GZIP, 1, 256, false, 0, T_CLAIM_96M, 0, 0, NULL, 0 },
	{ SRC_LINE, NLTEST_GZIP, 1, 0, false, 0, T_CLAIM_96M, 0, 0, NULL, 0 },
	/* a dictionary the decoder would allocate first: over the 256 MiB decoder cap */
	{ SRC_LINE, NLTEST_XZ, 0, 0, false, 768u << 20, T_NONE, 0, -NL_E_LIMIT, "decoder memory", 0.5 },
	{ SRC_LINE, NLTEST_XZ, 0, 0, false, 64u << 20, T_NONE, 0, 0, NULL, 0 },	/* xz -9's */
};

static void test_decompression_bounds(void **state)
{
	const struct fixture *fx = *state;

	for (size_t ri = 0; ri < sizeof(bound_rows) / sizeof(bound_rows[0]); ri++) {
		const struct bound_row *r = &bound_rows[ri];
		size_t rnd = (size_t)r->random_kib << 10;
		size_t len = fx->elf.len + ((size_t)r->zeros_mib << 20) + rnd;
		uint8_t *raw = calloc(1, len);
		uint64_t x = 0x2545f4914f6cdd1dull;
		struct nl_elf_opts eo = { .max_decompressed = r->cap };
		struct nl_elf *elf = NULL;
		struct nl_diag d;
		struct nltest_buf b;
		double t;
		int err;

		assert_non_null(raw);
		memcpy(raw, fx->elf.p, fx->elf.len);
		for (size_t i = len - rnd; i < len; i++)
			raw[i] = (uint8_t)(xorshift(&x) >> 24);
		b = nltest_compress(r->fmt, raw, len, r->no_size);
		if (r->xz_dict)
			xz_set_dict(&b, r->xz_dict);
		if (r->trailer == T_CLAIM_96M) {
			uint8_t *np = realloc(b.p, b.len + 4);

			assert_non_null(np);
			b.p = np;
			memcpy(b.p + b.len, "\x00\x00\x00\x06", 4);
			b.len += 4;
		}
		nl_diag_init(&d);
		t = cpu_now();
		err = nl_elf_open_mem("bound.ko", b.p, b.len, &eo, &elf, &d);
		t = cpu_now() - t;
		const char *f = nltest_fmt_name[r->fmt];

		if (err != r->want)
			row_fail(r, "%s, %zu -> %zu bytes: got %d (%s), want %d", f, len, b.len,
				 err, d.msg, r->want);
		if (r->word && !strstr(d.msg, r->word))
			row_fail(r, "%s: message '%s' lacks '%s'", f, d.msg, r->word);
		if (err == -NL_E_LIMIT && !strstr(d.msg, "cap"))
			row_fail(r, "%s: message '%s' does not name the cap", f, d.msg);
		if (r->max_cpu && t > r->max_cpu)
			row_fail(r, "%s: %.2f s of CPU to refuse, bound %.1f s", f, t, r->max_cpu);
		if (!err && elf->file_size != len)
			row_fail(r, "%s: %llu bytes out, want %zu", f,
				 (unsigned long long)elf->file_size, len);
		nl_elf_close(elf);
		free(b.p);
		free(raw);
	}
}

/* ---- F7 and --max-decompressed: the command line ---- */

static int write_file(const char *dir, const char *name, const void *p, size_t len)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f)
		return -1;
	if (fwrite(p, 1, len, f) != len) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

static int read_file(const char *dir, const char *name, struct nltest_buf *b)
{
	char path[1024];
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b->p = malloc((size_t)n + 1);
	b->len = (size_t)n;
	if (!b->p || fread(b->p, 1, b->len, f) != b->len) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

/* A copy of an ELF64 file whose first relocation table against .dynsym has entry size 0. */
static int break_dynrelocs(struct nltest_buf *so)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)so->p;
	Elf64_Shdr *sh = (Elf64_Shdr *)(so->p + eh->e_shoff);

	for (unsigned i = 1; i < eh->e_shnum; i++)
		if ((sh[i].sh_type == SHT_RELA || sh[i].sh_type == SHT_REL) &&
		    sh[sh[i].sh_link].sh_type == SHT_DYNSYM) {
			sh[i].sh_entsize = 0;
			return 0;
		}
	return -1;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char cmd[4096];
	struct nltest_buf so, xz;

	if (!fx || !(fx->dir = nltest_tmpdir("scan-hostile")))
		return -1;
	/*
	 * m.o: a small traced object; good.so / bad.so: a shared object calling
	 * __fentry__ through the PLT, bad.so with a broken .rela.plt (a warning:
	 * the scan goes on); badjcc.o: a function holding a byte no x86-64
	 * instruction starts with (a warning from layout --jcc).
	 */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && printf 'int a(int x){return x+1;}\\nint b(int x){return a(x)*3;}\\n' > m.c && "
		 "gcc -O2 -pg -mfentry -mrecord-mcount -c m.c -o m.o && "
		 "gcc -O2 -fPIC -shared -nostdlib -pg -mfentry m.c -o good.so && "
		 "printf '.text\\n.globl f\\n.type f,@function\\nf: .byte 0x06\\nret\\n.size f,2\\n' > bad.s && "
		 "as bad.s -o badjcc.o",
		 fx->dir);
	if (nltest_run(cmd, NULL) != 0 || read_file(fx->dir, "m.o", &fx->elf) ||
	    read_file(fx->dir, "good.so", &so))
		return -1;
	if (break_dynrelocs(&so) || write_file(fx->dir, "bad.so", so.p, so.len))
		return -1;
	free(so.p);
	xz = nltest_compress(NLTEST_XZ, fx->elf.p, fx->elf.len, false);
	if (write_file(fx->dir, "m.ko.xz", xz.p, xz.len))
		return -1;
	free(xz.p);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	if (!fx)
		return 0;
	nltest_rmtree(fx->dir);
	free(fx->elf.p);
	free(fx);
	return 0;
}

struct cli_row {
	int line;
	const char *args;	/* '@' stands for the fixture directory */
	int status;
	const char *err;	/* a stderr line starts with it ('@' again); NULL: stderr empty */
	const char *not;	/* and no line contains this */
	const char *word;	/* stderr contains this too */
};

static const struct cli_row cli_rows[] = {
	/* several files: the warning says which one (the good one says nothing) */
	{ SRC_LINE, "scan @/good.so @/bad.so", 0,
	  "noplab scan: @/bad.so: warning: dynamic relocations skipped", "good.so" },
	{ SRC_LINE, "scan @/bad.so @/good.so", 0,
	  "noplab scan: @/bad.so: warning: dynamic relocations skipped", "good.so" },
	{ SRC_LINE, "scan @/good.so", 0, NULL, NULL },
	{ SRC_LINE, "layout --jcc @/badjcc.o", 0, "noplab layout: @/badjcc.o: warning: jcc: ", NULL },
	/* --max-decompressed: lower, raise, bad values */
	{ SRC_LINE, "scan --max-decompressed 1K @/m.ko.xz", 3,
	  "noplab scan: @/m.ko.xz: xz: the index declares", NULL, "exceeds the 1 KiB cap\n" },
	{ SRC_LINE, "layout --max-decompressed 1024 @/m.ko.xz", 3,
	  "noplab layout: @/m.ko.xz: xz: the index declares", NULL, "exceeds the 1 KiB cap\n" },
	{ SRC_LINE, "scan --max-decompressed 64M @/m.ko.xz", 0, NULL, NULL },
	{ SRC_LINE, "scan --max-decompressed=2GiB @/m.ko.xz", 0, NULL, NULL },
	{ SRC_LINE, "layout --max-decompressed 1g @/m.ko.xz", 0, NULL, NULL },
	{ SRC_LINE, "scan --max-decompressed 0 @/m.ko.xz", 2, "noplab scan: bad --max-decompressed", NULL },
	{ SRC_LINE, "scan --max-decompressed 12Q @/m.ko.xz", 2, "noplab scan: bad --max-decompressed", NULL },
	{ SRC_LINE, "scan --max-decompressed 99999999999T @/m.ko.xz", 2, "noplab scan: bad", NULL },
	{ SRC_LINE, "layout --max-decompressed=-1 @/m.ko.xz", 2, "noplab layout: bad --max-decompressed", NULL },
	/* --max-records: m.o has 7 symbols (with the null one) and a few relocations */
	{ SRC_LINE, "scan --max-records 6 @/m.o", 3, "noplab scan: @/m.o: section ", NULL,
	  "7 symbols, more than the cap of 6 records (--max-records)\n" },
	{ SRC_LINE, "layout --max-records 7 @/m.o", 3, "noplab layout: @/m.o: ", NULL,
	  "relocations and 7 symbols: more than the cap of 7 records" },
	{ SRC_LINE, "scan --max-records 7 @/m.ko.xz", 3, "noplab scan: @/m.ko.xz: ", NULL,
	  "relocations and 7 symbols: more than the cap of 7 records" },
	{ SRC_LINE, "scan --max-records 1K @/m.o", 0, NULL, NULL },
	{ SRC_LINE, "layout --max-records=64 @/m.o", 0, NULL, NULL },
	{ SRC_LINE, "scan --max-records 0 @/m.o", 2, "noplab scan: bad --max-records", NULL },
	{ SRC_LINE, "layout --max-records x @/m.o", 2, "noplab layout: bad --max-records", NULL },
};

/* s with every '@' replaced by dir */
static void expand(const char *s, const char *dir, char *out, size_t size)
{
	size_t o = 0;

	for (; *s && o + 1 < size; s++) {
		if (*s == '@')
			o += (size_t)snprintf(out + o, size - o, "%s", dir);
		else
			out[o++] = *s;
		if (o >= size)
			o = size - 1;
	}
	out[o] = '\0';
}

static bool has_line_starting(const char *text, const char *prefix)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, prefix, strlen(prefix)))
			return true;
	return false;
}

static void test_cli(void **state)
{
	const struct fixture *fx = *state;

	for (size_t ri = 0; ri < sizeof(cli_rows) / sizeof(cli_rows[0]); ri++) {
		const struct cli_row *r = &cli_rows[ri];
		char args[2048], cmd[4096], want[2048], *out = NULL;
		int st;

		expand(r->args, fx->dir, args, sizeof(args));
		snprintf(cmd, sizeof(cmd), "%s %s 2>&1 >/dev/null", nltest_noplab(), args);
		st = nltest_run(cmd, &out);
		if (st != r->status)
			row_fail(r, "noplab %s: status %d, want %d; stderr:\n%s", args, st,
				 r->status, out ? out : "");
		if (r->err) {
			expand(r->err, fx->dir, want, sizeof(want));
			if (!out || !has_line_starting(out, want))
				row_fail(r, "noplab %s: no line starting '%s' in:\n%s", args, want,
					 out ? out : "");
		} else if (out && out[0]) {
			row_fail(r, "noplab %s: unexpected stderr:\n%s", args, out);
		}
		if (r->not && out && strstr(out, r->not))
			row_fail(r, "noplab %s: '%s' in:\n%s", args, r->not, out);
		if (r->word && (!out || !strstr(out, r->word)))
			row_fail(r, "noplab %s: no '%s' in:\n%s", args, r->word, out ? out : "");
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jcc_nested_extents),
		cmocka_unit_test(test_decompression_bounds),
		cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
