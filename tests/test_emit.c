// SPDX-License-Identifier: MIT
/*
 * --emit-elf checked by binutils, and --sim cachegrind checked by valgrind:
 * objdump must find every generated function at its address with the entry
 * sequence the catalogue names, and cachegrind must count exactly the
 * instructions the generator planned.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nltest.h"
#include "noplab/bench.h"
#include "noplab/codebuf.h"
#include "noplab/codegen.h"

struct emit_row {
	int line;
	const char *entry;
	enum nl_driver driver;
	bool endbr;
	const char *first_mnemonic;	/* objdump's first mnemonic after endbr64 */
};

static const struct emit_row rows[] = {
	{ SRC_LINE, "p6:5", NL_DRIVER_DIRECT, false, "nopl" },
	{ SRC_LINE, "k8:5", NL_DRIVER_INDIRECT, false, "data16" },
	{ SRC_LINE, "call", NL_DRIVER_DIRECT, true, "call" },
	{ SRC_LINE, "none", NL_DRIVER_DIRECT, false, "mov" },
	{ SRC_LINE, "generic:5", NL_DRIVER_DIRECT, false, "nop" },
	{ SRC_LINE, "x86_nops:11", NL_DRIVER_INDIRECT, true, "data16" },	/* data16 cs nopw */
};

static void gen(const char *entry, enum nl_driver drv, bool endbr, unsigned n,
		struct nl_image *img)
{
	struct nl_gen_spec s;

	nl_gen_spec_default(&s, NL_WL_CALLS);
	assert_int_equal(nl_entry_parse(entry, &s.entry, NULL), 0);
	s.nr_funcs = n;
	s.driver = drv;
	s.endbr = endbr;
	assert_int_equal(nl_gen(&s, img, NULL), 0);
}

/* objdump -d: "<addr> <name>:" headers, then the first instruction line of each. */
static void check_objdump(const struct emit_row *r, const char *path, const struct nl_image *img,
			  uint64_t addr, const char *prefix)
{
	char cmd[1024], *out = NULL, *save = NULL;
	size_t found = 0;
	const struct nl_gsym *cur = NULL;
	bool want_first = false, after_endbr = false;

	snprintf(cmd, sizeof(cmd), "objdump -d -w --no-show-raw-insn %s", path);
	if (nltest_run(cmd, &out) != 0)
		row_fail(r, "objdump failed on %s", path);
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a;
		char name[128], mnem[64];

		if (sscanf(line, "%llx <%127[^>]>:", &a, name) == 2) {
			cur = NULL;
			for (size_t i = 0; i < img->nr_syms; i++) {
				char full[160];

				snprintf(full, sizeof(full), "%s%s", prefix, img->syms[i].name);
				if (!strcmp(full, name))
					cur = &img->syms[i];
			}
			if (!cur)
				row_fail(r, "objdump shows an unknown symbol %s", name);
			if (a != addr + cur->off)
				row_fail(r, "%s at %#llx, generated at %#llx", name, a,
					 (unsigned long long)(addr + cur->off));
			found++;
			want_first = cur->kind == NL_SYM_FUNC;
			after_endbr = false;
			continue;
		}
		if (!want_first || sscanf(line, " %llx: %63s", &a, mnem) != 2)
			continue;
		if (!strcmp(mnem, "endbr64") && r->endbr && !after_endbr) {
			after_endbr = true;
			continue;
		}
		if (strcmp(mnem, r->first_mnemonic))
			row_fail(r, "%s starts with %s, want %s", cur->name, mnem, r->first_mnemonic);
		if (r->endbr != after_endbr)
			row_fail(r, "%s: endbr64 %s", cur->name, r->endbr ? "missing" : "unexpected");
		want_first = false;
	}
	free(out);
	if (found != img->nr_syms)
		row_fail(r, "objdump found %zu of %zu symbols", found, img->nr_syms);
}

static void test_objdump_round_trip(void **state)
{
	char *dir = nltest_tmpdir("emit");

	(void)state;
	assert_non_null(dir);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct emit_row *r = &rows[i];
		struct nl_image img;
		struct nl_codebuf cb;
		char path[600], cmd[1024], *out = NULL;

		gen(r->entry, r->driver, r->endbr, 12, &img);
		/* at the address the code really runs at */
		assert_int_equal(nl_codebuf_load(&cb, &img, NULL), 0);
		struct nl_elf_part part = { .img = &img, .addr = (uintptr_t)cb.base, .section = ".text" };
		struct nl_elf_emit em = { .parts = &part, .nr = 1 };

		snprintf(path, sizeof(path), "%s/calls-%zu.elf", dir, i);
		assert_int_equal(nl_emit_elf(path, &em, NULL), 0);
		check_objdump(r, path, &img, (uintptr_t)cb.base, "");

		/* readelf agrees on the type, and counts one STT_FUNC per generated symbol */
		snprintf(cmd, sizeof(cmd), "readelf -hs -W %s", path);
		assert_int_equal(nltest_run(cmd, &out), 0);
		if (!strstr(out, "EXEC (Executable file)") || !strstr(out, "Advanced Micro Devices X86-64"))
			row_fail(r, "readelf: not an x86-64 executable");
		size_t funcs = 0;

		for (char *p = strstr(out, " FUNC "); p; p = strstr(p + 1, " FUNC "))
			funcs++;
		if (funcs != img.nr_syms)
			row_fail(r, "readelf counts %zu FUNC symbols, want %zu", funcs, img.nr_syms);
		free(out);

		/* the bytes on disk are the bytes that ran */
		snprintf(cmd, sizeof(cmd), "objcopy -O binary -j .text %s %s.bin", path, path);
		assert_int_equal(nltest_run(cmd, NULL), 0);
		snprintf(cmd, sizeof(cmd), "%s.bin", path);
		FILE *f = fopen(cmd, "rb");
		uint8_t *buf = malloc(img.size + 1);

		assert_non_null(f);
		if (fread(buf, 1, img.size + 1, f) != img.size || memcmp(buf, cb.base, img.size))
			row_fail(r, "objcopy's .text differs from the executed buffer");
		fclose(f);
		free(buf);
		nl_codebuf_unmap(&cb);
		nl_image_free(&img);
	}
	nltest_rmtree(dir);
}

/* Several variants in one file: one section each, symbols prefixed. */
static void test_multi_part_prefixed(void **state)
{
	char *dir = nltest_tmpdir("emit3");
	struct nl_image a;
	struct nl_elf_part parts[2] = {
		{ .img = &a, .addr = 0x7f0000200000, .section = ".text.calls-8.p6:5",
		  .prefix = "calls-8.p6:5." },
		{ .img = &a, .addr = 0x7f0000400000, .section = ".text.calls-8.again",
		  .prefix = "calls-8.again." },
	};
	struct nl_elf_emit em = { .parts = parts, .nr = 2 };
	char path[600], cmd[1024], *out = NULL;

	(void)state;
	gen("p6:5", NL_DRIVER_DIRECT, false, 8, &a);
	snprintf(path, sizeof(path), "%s/two.elf", dir);
	assert_int_equal(nl_emit_elf(path, &em, NULL), 0);
	snprintf(cmd, sizeof(cmd), "objdump -d -w -j .text.calls-8.again %s", path);
	assert_int_equal(nltest_run(cmd, &out), 0);
	assert_non_null(strstr(out, "00007f0000401000 <calls-8.again.fn_00000>:"));
	assert_non_null(strstr(out, "<calls-8.again.driver>:"));
	assert_null(strstr(out, "<calls-8.p6:5.fn_00000>:"));
	free(out);
	nl_image_free(&a);
	nltest_rmtree(dir);
}

struct sim_row {
	int line;
	const char *entry;
	unsigned funcs;
	enum nl_driver driver;
	unsigned insns_per_call;	/* driver call + entry + mov + ret + add */
	double min_misses_per_call, max_misses_per_call;
};

static const struct sim_row sim_rows[] = {
	/* 256 x 64 B = 16 KiB: fits a 32 KiB 8-way L1i, nothing misses once warm */
	{ SRC_LINE, "p6:5", 256, NL_DRIVER_DIRECT, 5, 0.0, 0.01 },
	{ SRC_LINE, "k8:5", 256, NL_DRIVER_INDIRECT, 6, 0.0, 0.01 },
	{ SRC_LINE, "call", 256, NL_DRIVER_DIRECT, 6, 0.0, 0.01 },	/* + call stub, its ret */
	/* 1024 x 64 B = 64 KiB: every function line is evicted before its next call */
	{ SRC_LINE, "p6:5", 1024, NL_DRIVER_DIRECT, 5, 1.0, 1.2 },
	{ SRC_LINE, "single:5", 1024, NL_DRIVER_INDIRECT, 9, 1.0, 1.2 },
};

static void test_cachegrind(void **state)
{
	char *dir = nltest_tmpdir("sim");

	(void)state;
	if (nltest_run("valgrind --version >/dev/null 2>&1", NULL) != 0)
		fail_msg("valgrind is missing: scripts/setup.sh installs it");
	for (size_t i = 0; i < sizeof(sim_rows) / sizeof(sim_rows[0]); i++) {
		const struct sim_row *r = &sim_rows[i];
		struct nl_sim_opts o = { .l1i_size = 32768, .l1i_ways = 8, .l1i_line = 64,
					 .iters = 4, .tmpdir = dir };
		struct nl_sim_result res;
		struct nl_diag d;
		struct nl_image img;

		nl_diag_init(&d);
		gen(r->entry, r->driver, false, r->funcs, &img);
		if (nl_sim_cachegrind(&img, &o, &res, &d))
			row_fail(r, "cachegrind: %s", d.msg);
		/* exact: the driver's dec + jnz, and the indirect loop's own 4 per call */
		double want = (double)r->funcs * (r->insns_per_call + (r->driver ? 3 : 0)) +
			      2 + (r->driver ? 1 : 0);

		if (res.insns_per_iter != want)
			row_fail(r, "cachegrind counts %.1f instructions per pass, want %.1f",
				 res.insns_per_iter, want);
		double mpc = res.i1_misses_per_iter / r->funcs;

		if (mpc < r->min_misses_per_call || mpc > r->max_misses_per_call)
			row_fail(r, "%.3f L1i misses per call, want %.2f..%.2f", mpc,
				 r->min_misses_per_call, r->max_misses_per_call);
		if (!strstr(res.i1_desc, "32768 B, 64 B, 8-way"))
			row_fail(r, "cachegrind simulated '%s'", res.i1_desc);
		nl_image_free(&img);
	}
	nltest_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_objdump_round_trip),
		cmocka_unit_test(test_multi_part_prefixed),
		cmocka_unit_test(test_cachegrind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
