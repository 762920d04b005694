// SPDX-License-Identifier: MIT
/*
 * noplab scan on real Debian kernel modules, checked against objdump's view
 * of the same files.  The current cloud kernel image package is fetched
 * with apt-get download (tests/fixtures/scan/debian_modules.sh) and cached
 * in the build directory.  Without a Debian archive the test fails; set
 * NOPLAB_OFFLINE=1 to skip it explicitly.
 */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nltest.h"
#include "noplab/elf.h"
#include "noplab/scan.h"
#include "test_scan_oracle.h"

struct mods {
	char dir[1024];
};

static int fetch(void **state)
{
	const char *src = getenv("NOPLAB_SRC");
	char bin[1024], cmd[4096], *out = NULL;
	struct mods *m = calloc(1, sizeof(*m));

	if (!src || !m)
		return -1;
	/* the cache lives next to the build's cli/, so a rebuild keeps it */
	snprintf(bin, sizeof(bin), "%s", nltest_noplab());
	snprintf(cmd, sizeof(cmd), "sh '%s/tests/fixtures/scan/debian_modules.sh' '%s/../scan-cache'",
		 src, dirname(bin));
	if (nltest_run(cmd, &out) != 0 || !out || !out[0]) {
		fprintf(stderr, "test_scan_module: %s failed\n", cmd);
		free(out);
		free(m);
		return getenv("NOPLAB_OFFLINE") ? 0 : -1;
	}
	out[strcspn(out, "\n")] = '\0';
	snprintf(m->dir, sizeof(m->dir), "%s", out);
	free(out);
	*state = m;
	return 0;
}

static int release(void **state)
{
	free(*state);
	return 0;
}

static const char *mod(void **state, const char *name, char *buf, size_t size)
{
	const struct mods *m = *state;

	if (!m)
		skip();	/* NOPLAB_OFFLINE=1 and no archive */
	snprintf(buf, size, "%s/%s", m->dir, name);
	return buf;
}

static struct nl_scan_result *scan(const char *path, struct nl_elf **elf)
{
	struct nl_scan_result *r;
	struct nl_diag d;

	nl_diag_init(&d);
	if (nl_elf_open(path, NULL, elf, &d))
		fail_msg("%s: %s", path, d.msg);
	if (nl_scan(*elf, NULL, &r, &d))
		fail_msg("%s: %s", path, d.msg);
	return r;
}

/* xfs.ko: thousands of functions and __fentry__ calls, every one in __mcount_loc */
static void test_large_module(void **state)
{
	char path[1200];
	struct oracle o;
	struct nl_elf *elf;
	struct nl_scan_result *r;
	uint64_t classes[NL_NR_ENTRY_CLASSES] = { 0 }, calls = 0, at_entry = 0, rec_at_entry = 0;
	uint64_t gap_or = 0, gap_ours = 0, ge16 = 0;

	mod(state, "xfs.ko", path, sizeof(path));
	oracle_load(path, &o);
	r = scan(path, &elf);
	const struct nl_scan_summary *s = &r->summary;

	assert_true(o.nr_funcs > 1000);
	assert_int_equal(r->nr_funcs, o.nr_funcs);
	for (size_t i = 0; i < o.nr_funcs; i++) {
		const struct or_func *f = &o.funcs[i];
		struct or_entry e;

		oracle_classify(&o, f, &e);
		classes[e.cls]++;
		if ((int)r->fx[i].cls != e.cls)
			fail_msg("%s: class %s, objdump %s", f->name, nl_entry_class_name(r->fx[i].cls),
				 nl_entry_class_name((enum nl_entry_class)e.cls));
		uint64_t off = f->addr, al = off ? off & (~off + 1) : 4096;

		if (al > o.secs[f->sec].align)
			al = o.secs[f->sec].align;
		ge16 += al >= 16;
		if (i + 1 < o.nr_funcs && o.funcs[i + 1].sec == f->sec && f->sized &&
		    o.funcs[i + 1].sized && o.funcs[i + 1].addr > f->addr + f->size) {
			gap_or += o.funcs[i + 1].addr - (f->addr + f->size);
			gap_ours += r->fx[i].gap_pad + r->fx[i].gap_code + r->fx[i + 1].deco_len;
		}
	}
	for (size_t k = 0; k < o.nr_insns; k++) {
		const struct or_insn *in = &o.insns[k];

		if (!oracle_hook_call(&o, in))
			continue;
		calls++;
		long fi = oracle_func_at(&o, in->sec, in->addr);

		at_entry += fi >= 0;
	}
	for (size_t i = 0; i < o.nr_mcount; i++)
		rec_at_entry += oracle_func_at(&o, o.mcount[i].sec, o.mcount[i].addr) >= 0;

	for (int k = 0; k < NL_NR_ENTRY_CLASSES; k++)
		assert_int_equal(s->entry_classes[k], classes[k]);
	assert_true(calls > 1000);
	assert_int_equal(s->sites.calls, calls);
	assert_int_equal(s->sites.at_entry, at_entry);
	assert_string_equal(r->ftrace_target, "__fentry__");
	assert_true(s->mcount_loc.present);
	assert_int_equal(s->mcount_loc.entries, o.mcount_entries);
	assert_int_equal(s->mcount_loc.at_entry, rec_at_entry);
	assert_int_equal(s->mcount_loc.missing, 0);
	assert_int_equal(s->mcount_loc.outside_functions, 0);
	assert_int_equal(s->alignment.ge16, ge16);
	assert_int_equal(gap_ours, gap_or);
	assert_true(s->padding.bytes > 0);

	/* the same module compressed as distributions ship them */
	static const char *const z[][2] = { { "xz -kfc", "xz" }, { "zstd -qfc", "zst" },
					    { "gzip -kfc", "gz" } };

	for (size_t i = 0; i < 3; i++) {
		char cpath[1300], cmd[3000];
		struct nl_elf *ce;
		struct nl_scan_result *cr;

		snprintf(cpath, sizeof(cpath), "%s.%s", path, z[i][1]);
		snprintf(cmd, sizeof(cmd), "%s '%s' > '%s'", z[i][0], path, cpath);
		assert_int_equal(nltest_run(cmd, NULL), 0);
		cr = scan(cpath, &ce);
		assert_non_null(ce->compression);
		assert_int_equal(cr->summary.functions, s->functions);
		assert_int_equal(cr->summary.sites.total, s->sites.total);
		assert_int_equal(cr->summary.padding.bytes, s->padding.bytes);
		nl_scan_free(cr);
		nl_elf_close(ce);
		remove(cpath);
	}
	nl_scan_free(r);
	nl_elf_close(elf);
	oracle_free(&o);
}

/* crc7.ko: one function, no ftrace site, no __mcount_loc */
static void test_tiny_module(void **state)
{
	char path[1200];
	struct oracle o;
	struct nl_elf *elf;
	struct nl_scan_result *r;
	uint64_t calls = 0;

	mod(state, "crc7.ko", path, sizeof(path));
	oracle_load(path, &o);
	r = scan(path, &elf);
	for (size_t k = 0; k < o.nr_insns; k++)
		calls += oracle_hook_call(&o, &o.insns[k]);
	assert_int_equal(calls, 0);
	assert_int_equal(r->nr_funcs, o.nr_funcs);
	assert_int_equal(r->summary.sites.total, 0);
	assert_int_equal(r->summary.entry_classes[NL_ENTRY_OTHER], o.nr_funcs);
	assert_int_equal(r->summary.mcount_loc.present, o.has_mcount);
	assert_false(r->summary.mcount_loc.present);
	nl_scan_free(r);
	nl_elf_close(elf);
	oracle_free(&o);
}

/* The report a user reads: both modules, thousands separators, a total */
static void test_cli_report(void **state)
{
	char xfs[1200], crc[1200], cmd[3000], *out = NULL, want[64];
	struct nl_elf *elf;
	struct nl_scan_result *r;

	mod(state, "xfs.ko", xfs, sizeof(xfs));
	mod(state, "crc7.ko", crc, sizeof(crc));
	r = scan(xfs, &elf);
	snprintf(cmd, sizeof(cmd), "%s scan '%s' '%s'", nltest_noplab(), xfs, crc);
	assert_int_equal(nltest_run(cmd, &out), 0);
	/* e.g. "2,645": the count with a thousands separator */
	unsigned long long n = r->summary.sites.calls;

	snprintf(want, sizeof(want), "%llu,%03llu", n / 1000, n % 1000);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "total: 2 files"));
	free(out);
	nl_scan_free(r);
	nl_elf_close(elf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_large_module),
		cmocka_unit_test(test_tiny_module),
		cmocka_unit_test(test_cli_report),
	};
	return cmocka_run_group_tests(tests, fetch, release);
}
