// SPDX-License-Identifier: MIT
/*
 * noplab scan against binutils.  Fixtures are compiled at test time by
 * tests/fixtures/scan/build.sh with the kernel's ftrace flags and variations
 * (-mnop-mcount, IBT, patchable entries before and after the label,
 * -falign-functions, .entry.text, ld -r modules, linked executables, i386).
 * For every fixture the expected functions, entry classes, call sites,
 * __mcount_loc cross-check, gaps, alignment and straddles are computed from
 * objdump -dr / readelf output (test_scan_oracle.c) and compared with what
 * nl_scan() finds.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nltest.h"
#include "noplab/elf.h"
#include "noplab/scan.h"
#include "test_scan_oracle.h"

struct fx_dir {
	char *dir;
};

static int build_fixtures(void **state)
{
	struct fx_dir *fx = calloc(1, sizeof(*fx));
	char cmd[2048];
	const char *src = getenv("NOPLAB_SRC");

	fx->dir = nltest_tmpdir("scan");
	if (!src || !fx->dir)
		return -1;
	snprintf(cmd, sizeof(cmd), "sh '%s/tests/fixtures/scan/build.sh' '%s' >/dev/null 2>&1", src,
		 fx->dir);
	if (nltest_run(cmd, NULL) != 0) {
		fprintf(stderr, "fixture build failed: %s\n", cmd);
		return -1;
	}
	*state = fx;
	return 0;
}

static int remove_fixtures(void **state)
{
	struct fx_dir *fx = *state;
	if (!fx)
		return 0;
	nltest_rmtree(fx->dir);
	free(fx);
	return 0;
}

static char *fixture(void **state, const char *name)
{
	const struct fx_dir *fx = *state;
	char *p = malloc(strlen(fx->dir) + strlen(name) + 2);

	sprintf(p, "%s/%s", fx->dir, name);
	return p;
}

/* The scan's address for an objdump address in section sec. */
static uint64_t our_addr(const struct nl_elf *elf, const struct oracle *o, int sec, uint64_t a)
{
	return elf->sections[sec].addr + (a - o->secs[sec].addr);
}

static uint64_t align_of(const struct oracle *o, int sec, uint64_t a)
{
	uint64_t off = o->rel ? a - o->secs[sec].addr : a;
	uint64_t al = off ? off & (~off + 1) : 4096;

	if (al > 4096)
		al = 4096;
	if (o->rel && al > (o->secs[sec].align ? o->secs[sec].align : 1))
		al = o->secs[sec].align ? o->secs[sec].align : 1;
	return al;
}

static unsigned straddles(const struct oracle *o, int sec, uint64_t a, unsigned len)
{
	unsigned bits = 0;
	uint64_t known = o->rel ? o->secs[sec].align : 64;

	for (unsigned b = 0; b < 3; b++) {
		uint64_t B = 16ull << b;

		if (B <= known && a / B != (a + len - 1) / B)
			bits |= 1u << b;
	}
	return bits;
}

/* ---- the fixture table ---- */

struct scan_row {
	int line;
	const char *file;
	/* what the build flags promise, checked on top of the oracle */
	enum nl_entry_class main_class;	/* the class of the instrumented functions */
	unsigned min_main;		/* at least this many functions have it */
	bool records;			/* __mcount_loc expected */
	bool code_gap;			/* an overridden __weak body left a code gap */
};

static const struct scan_row rows[] = {
	{ SRC_LINE, "base.o", NL_ENTRY_CALL_FENTRY, 8, true, false },
	{ SRC_LINE, "nop.o", NL_ENTRY_NOP5, 8, true, false },
	{ SRC_LINE, "ibt.o", NL_ENTRY_ENDBR_CALL_FENTRY, 8, true, false },
	{ SRC_LINE, "ibtnop.o", NL_ENTRY_ENDBR_NOP5, 8, true, false },
	{ SRC_LINE, "patch.o", NL_ENTRY_PATCHABLE, 9, true, false },
	{ SRC_LINE, "ibtpatch.o", NL_ENTRY_ENDBR_PATCHABLE, 9, true, false },
	{ SRC_LINE, "patchonly.o", NL_ENTRY_PATCHABLE, 9, false, false },
	{ SRC_LINE, "align64.o", NL_ENTRY_CALL_FENTRY, 8, true, false },
	{ SRC_LINE, "fsect.o", NL_ENTRY_CALL_FENTRY, 8, true, false },
	{ SRC_LINE, "mod.ko", NL_ENTRY_CALL_FENTRY, 7, true, true },
	{ SRC_LINE, "base.exe", NL_ENTRY_CALL_FENTRY, 7, true, true },
	{ SRC_LINE, "ibt.exe", NL_ENTRY_ENDBR_CALL_FENTRY, 7, true, true },
	{ SRC_LINE, "align64.exe", NL_ENTRY_CALL_FENTRY, 7, true, true },
	{ SRC_LINE, "patch.exe", NL_ENTRY_PATCHABLE, 8, true, false },
	{ SRC_LINE, "deco.o", NL_ENTRY_CALL_FENTRY, 4, false, false },
	{ SRC_LINE, "deco.exe", NL_ENTRY_CALL_FENTRY, 4, false, false },
	{ SRC_LINE, "m32.o", NL_ENTRY_ENDBR_CALL_FENTRY, 8, true, false },
	{ SRC_LINE, "m32.exe", NL_ENTRY_ENDBR_CALL_FENTRY, 7, true, true },
	{ SRC_LINE, "m32mcount.o", NL_ENTRY_OTHER, 9, false, false },
	{ SRC_LINE, "m32mcount.exe", NL_ENTRY_OTHER, 9, false, true },
	{ SRC_LINE, "dyn.pie", NL_ENTRY_CALL_FENTRY, 2, true, false },
	{ SRC_LINE, "dyn.plt", NL_ENTRY_CALL_FENTRY, 2, true, false },
	{ SRC_LINE, "dyn.mcount", NL_ENTRY_OTHER, 2, false, false },
};

struct or_counts {
	uint64_t classes[NL_NR_ENTRY_CLASSES];
	uint64_t calls, nop5, patchable, at_entry, after_endbr, in_body, outside;
	uint64_t ge16, ge32, ge64, lt16, b16, b32, b64;
	uint64_t rec_at_entry, rec_in_body, rec_outside, rec_missing;
};

static bool listed(const struct oracle *o, int sec, uint64_t a)
{
	for (size_t i = 0; i < o->nr_mcount; i++)
		if (o->mcount[i].sec == sec && o->mcount[i].addr == a)
			return true;
	return false;
}

static void check_row(void **state, const struct scan_row *row)
{
	char *path = fixture(state, row->file);
	struct oracle o;
	struct nl_elf *elf;
	struct nl_scan_result *r;
	struct nl_diag d;
	struct or_counts c;
	const struct nl_scan_summary *s;
	unsigned main_seen = 0;

	oracle_load(path, &o);
	nl_diag_init(&d);
	if (nl_elf_open(path, NULL, &elf, &d))
		row_fail(row, "%s: open: %s", row->file, d.msg);
	if (nl_scan(elf, NULL, &r, &d))
		row_fail(row, "%s: scan: %s", row->file, d.msg);
	s = &r->summary;
	memset(&c, 0, sizeof(c));

	/* functions: the same starts, the same names */
	if (r->nr_funcs != o.nr_funcs)
		row_fail(row, "%s: %zu functions, objdump/readelf %zu", row->file, r->nr_funcs,
			 o.nr_funcs);
	for (size_t i = 0; i < o.nr_funcs; i++) {
		const struct or_func *f = &o.funcs[i];
		const struct nl_func *g = &r->funcs[i];
		const struct nl_scan_func *x = &r->fx[i];
		struct or_entry e;

		if (g->addr != our_addr(elf, &o, f->sec, f->addr) || (int)g->sec->idx != f->sec)
			row_fail(row, "%s: function %zu is %s at 0x%llx, oracle %s at 0x%llx", row->file,
				 i, g->sym->name, (unsigned long long)g->addr, f->name,
				 (unsigned long long)f->addr);
		oracle_classify(&o, f, &e);
		if ((int)x->cls != e.cls)
			row_fail(row, "%s: %s: class %s, objdump says %s", row->file, f->name,
				 nl_entry_class_name(x->cls), nl_entry_class_name((enum nl_entry_class)e.cls));
		c.classes[e.cls]++;
		main_seen += e.cls == (int)row->main_class;
		if (e.site_kind) {
			if ((int)x->site != e.site_kind ||
			    g->addr + x->site_off != our_addr(elf, &o, f->sec, e.site) ||
			    x->site_len != e.site_len)
				row_fail(row, "%s: %s: site kind %d +%u len %u, objdump kind %d at 0x%llx len %u",
					 row->file, f->name, x->site, x->site_off, x->site_len,
					 e.site_kind, (unsigned long long)e.site, e.site_len);
			unsigned bits = straddles(&o, f->sec, e.site, e.site_len);

			if (x->straddles != bits)
				row_fail(row, "%s: %s: straddles %#x, expected %#x", row->file, f->name,
					 x->straddles, bits);
			c.b16 += bits & 1;
			c.b32 += (bits >> 1) & 1;
			c.b64 += (bits >> 2) & 1;
			if (e.site_kind == NL_SITE_PATCHABLE)
				c.patchable++;
			else if (o.has_mcount && !listed(&o, f->sec, e.site))
				c.rec_missing++;
			if (e.site_kind == NL_SITE_NOP5)
				c.nop5++;
			if (e.endbr)
				c.after_endbr++;
			else
				c.at_entry++;
		}
		uint64_t al = align_of(&o, f->sec, f->addr);

		if (x->align != al)
			row_fail(row, "%s: %s: alignment %llu, expected %llu", row->file, f->name,
				 (unsigned long long)x->align, (unsigned long long)al);
		c.ge16 += al >= 16;
		c.ge32 += al >= 32;
		c.ge64 += al >= 64;
		c.lt16 += al < 16;

		/* the gap to the next sized function: padding + code + its decoration */
		if (i + 1 < o.nr_funcs && f->sized && o.funcs[i + 1].sized &&
		    o.funcs[i + 1].sec == f->sec && o.funcs[i + 1].addr > f->addr + f->size) {
			uint64_t gap = o.funcs[i + 1].addr - (f->addr + f->size);
			uint64_t deco = r->fx[i + 1].deco_len;
			bool code = false;

			if (x->gap_pad + x->gap_code + deco != gap)
				row_fail(row, "%s: gap after %s: %llu padding + %llu code + %llu decoration, readelf %llu",
					 row->file, f->name, (unsigned long long)x->gap_pad,
					 (unsigned long long)x->gap_code, (unsigned long long)deco,
					 (unsigned long long)gap);
			for (size_t k = 0; k < o.nr_insns; k++) {
				const struct or_insn *in = &o.insns[k];

				if (in->sec != f->sec || in->addr < f->addr + f->size ||
				    in->addr >= o.funcs[i + 1].addr - deco)
					continue;
				if (!oracle_is_nop(in) && in->bytes[0] != 0xcc &&
				    !(in->bytes[0] == 0xeb || in->bytes[0] == 0xe9))
					code = true;
			}
			if (code != (x->gap_code > 0))
				row_fail(row, "%s: gap after %s: code %llu bytes, objdump %s code",
					 row->file, f->name, (unsigned long long)x->gap_code,
					 code ? "shows" : "shows no");
		}
	}

	/* every call to the hook, wherever it is */
	for (size_t k = 0; k < o.nr_insns; k++) {
		const struct or_insn *in = &o.insns[k];
		long fi;

		if (!oracle_hook_call(&o, in))
			continue;
		c.calls++;
		fi = oracle_func_containing(&o, in->sec, in->addr);
		if (fi < 0) {
			c.outside++;
			continue;
		}
		struct or_entry e;

		oracle_classify(&o, &o.funcs[fi], &e);
		if (!(e.site_kind == NL_SITE_CALL && e.site == in->addr))
			c.in_body++;
	}
	/* records, resolved by readelf and classified against objdump's sites */
	for (size_t i = 0; i < o.nr_mcount; i++) {
		long fi = o.mcount[i].sec >= 0
				  ? oracle_func_containing(&o, o.mcount[i].sec, o.mcount[i].addr) : -1;
		struct or_entry e;

		if (fi < 0) {
			c.rec_outside++;
			continue;
		}
		oracle_classify(&o, &o.funcs[fi], &e);
		if (e.site_kind && e.site == o.mcount[i].addr)
			c.rec_at_entry++;
		else
			c.rec_in_body++;
	}

	for (int k = 0; k < NL_NR_ENTRY_CLASSES; k++)
		if (s->entry_classes[k] != c.classes[k])
			row_fail(row, "%s: %s: %llu, objdump %llu", row->file, nl_entry_class_name(k),
				 (unsigned long long)s->entry_classes[k],
				 (unsigned long long)c.classes[k]);
	if (main_seen < row->min_main)
		row_fail(row, "%s: only %u functions of class %s", row->file, main_seen,
			 nl_entry_class_name(row->main_class));
	if (s->sites.calls != c.calls || s->sites.nop5 != c.nop5 ||
	    s->sites.patchable != c.patchable || s->sites.in_body != c.in_body ||
	    s->sites.outside_functions != c.outside || s->sites.after_endbr != c.after_endbr ||
	    s->sites.at_entry != c.at_entry)
		row_fail(row, "%s: sites calls %llu nop5 %llu patchable %llu entry %llu/%llu body %llu outside %llu; "
			 "objdump %llu %llu %llu %llu/%llu %llu %llu", row->file,
			 (unsigned long long)s->sites.calls, (unsigned long long)s->sites.nop5,
			 (unsigned long long)s->sites.patchable, (unsigned long long)s->sites.at_entry,
			 (unsigned long long)s->sites.after_endbr, (unsigned long long)s->sites.in_body,
			 (unsigned long long)s->sites.outside_functions, (unsigned long long)c.calls,
			 (unsigned long long)c.nop5, (unsigned long long)c.patchable,
			 (unsigned long long)c.at_entry, (unsigned long long)c.after_endbr,
			 (unsigned long long)c.in_body, (unsigned long long)c.outside);
	if (s->sites.total != s->sites.calls + s->sites.nop5 + s->sites.patchable)
		row_fail(row, "%s: site total %llu is not the sum of its kinds", row->file,
			 (unsigned long long)s->sites.total);
	if (s->mcount_loc.present != o.has_mcount || s->mcount_loc.present != row->records)
		row_fail(row, "%s: __mcount_loc present %d, readelf %d, expected %d", row->file,
			 s->mcount_loc.present, o.has_mcount, row->records);
	if (s->mcount_loc.entries != o.mcount_entries || s->mcount_loc.zero != o.mcount_zero ||
	    s->mcount_loc.at_entry != c.rec_at_entry || s->mcount_loc.in_body != c.rec_in_body ||
	    s->mcount_loc.outside_functions != c.rec_outside ||
	    (o.has_mcount && s->mcount_loc.missing != c.rec_missing))
		row_fail(row, "%s: __mcount_loc %llu entries %llu zero %llu entry %llu body %llu outside %llu missing; "
			 "readelf %zu %zu %llu %llu %llu %llu", row->file,
			 (unsigned long long)s->mcount_loc.entries, (unsigned long long)s->mcount_loc.zero,
			 (unsigned long long)s->mcount_loc.at_entry,
			 (unsigned long long)s->mcount_loc.in_body,
			 (unsigned long long)s->mcount_loc.outside_functions,
			 (unsigned long long)s->mcount_loc.missing, o.mcount_entries, o.mcount_zero,
			 (unsigned long long)c.rec_at_entry, (unsigned long long)c.rec_in_body,
			 (unsigned long long)c.rec_outside, (unsigned long long)c.rec_missing);
	if (s->alignment.ge16 != c.ge16 || s->alignment.ge32 != c.ge32 ||
	    s->alignment.ge64 != c.ge64 || s->alignment.lt16 != c.lt16)
		row_fail(row, "%s: alignment %llu/%llu/%llu/%llu, readelf %llu/%llu/%llu/%llu", row->file,
			 (unsigned long long)s->alignment.ge16, (unsigned long long)s->alignment.ge32,
			 (unsigned long long)s->alignment.ge64, (unsigned long long)s->alignment.lt16,
			 (unsigned long long)c.ge16, (unsigned long long)c.ge32,
			 (unsigned long long)c.ge64, (unsigned long long)c.lt16);
	if (!o.rel && (s->straddles.b16 != c.b16 || s->straddles.b32 != c.b32 ||
		       s->straddles.b64 != c.b64))
		row_fail(row, "%s: straddles %llu/%llu/%llu, objdump %llu/%llu/%llu", row->file,
			 (unsigned long long)s->straddles.b16, (unsigned long long)s->straddles.b32,
			 (unsigned long long)s->straddles.b64, (unsigned long long)c.b16,
			 (unsigned long long)c.b32, (unsigned long long)c.b64);
	if (row->code_gap != (s->padding.code_gaps > 0))
		row_fail(row, "%s: %llu code gaps, expected %s", row->file,
			 (unsigned long long)s->padding.code_gaps, row->code_gap ? "some" : "none");
	if (s->functions != r->nr_funcs)
		row_fail(row, "%s: summary counts %llu functions of %zu", row->file,
			 (unsigned long long)s->functions, r->nr_funcs);

	nl_scan_free(r);
	nl_elf_close(elf);
	oracle_free(&o);
	free(path);
}

static void test_fixtures_vs_objdump(void **state)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check_row(state, &rows[i]);
}

/* ---- decorations: gcc 12 cannot make them, deco.S does ---- */

struct deco_row {
	int line;
	const char *func;
	enum nl_deco_kind deco;
	unsigned deco_len;
	bool poison;
	const char *first_deco_insn;	/* objdump's first instruction of the decoration */
};

static const struct deco_row deco_rows[] = {
	{ SRC_LINE, "d_pfx", NL_DECO_PFX, 16, false, "nop" },
	{ SRC_LINE, "d_cfi", NL_DECO_CFI, 16, false, "mov" },
	{ SRC_LINE, "d_cfi_bytes", NL_DECO_CFI, 16, false, "mov" },
	{ SRC_LINE, "d_poison_osp", NL_DECO_NONE, 0, true, NULL },
	{ SRC_LINE, "d_poison_d6", NL_DECO_NONE, 0, true, NULL },
	{ SRC_LINE, "d_straddle16", NL_DECO_NONE, 0, false, NULL },
};

static void check_deco(void **state, const char *file)
{
	char *path = fixture(state, file);
	struct oracle o;
	struct nl_elf *elf;
	struct nl_scan_result *r;
	struct nl_diag d;

	oracle_load(path, &o);
	nl_diag_init(&d);
	assert_int_equal(nl_elf_open(path, NULL, &elf, &d), 0);
	assert_int_equal(nl_scan(elf, NULL, &r, &d), 0);
	for (size_t k = 0; k < sizeof(deco_rows) / sizeof(deco_rows[0]); k++) {
		const struct deco_row *row = &deco_rows[k];
		size_t i;

		for (i = 0; i < r->nr_funcs && strcmp(r->funcs[i].sym->name, row->func); i++)
			;
		if (i == r->nr_funcs)
			row_fail(row, "%s: %s not in the function list", file, row->func);
		const struct nl_scan_func *x = &r->fx[i];

		if (x->deco != row->deco || x->deco_len != row->deco_len ||
		    x->endbr_poison != row->poison)
			row_fail(row, "%s: %s: decoration %d/%u poison %d", file, row->func, x->deco,
				 x->deco_len, x->endbr_poison);
		if (!row->first_deco_insn)
			continue;
		/* objdump agrees on what lies in the decoration */
		long fi = oracle_func_at(&o, (int)r->funcs[i].sec->idx,
					 r->funcs[i].addr - r->funcs[i].sec->addr +
						 o.secs[r->funcs[i].sec->idx].addr);
		uint64_t at = o.funcs[fi].addr - x->deco_len;
		bool found = false;

		assert_true(fi >= 0);
		for (size_t n = 0; n < o.nr_insns; n++)
			if (o.insns[n].sec == o.funcs[fi].sec && o.insns[n].addr == at) {
				found = !strncmp(o.insns[n].mnem, row->first_deco_insn,
						 strlen(row->first_deco_insn));
				break;
			}
		if (!found)
			row_fail(row, "%s: %s: objdump shows no %s at the decoration start", file,
				 row->func, row->first_deco_insn);
	}
	assert_int_equal(r->summary.decorations.pfx, 1);
	assert_int_equal(r->summary.decorations.cfi, 2);
	assert_int_equal(r->summary.endbr_poison, 2);
	nl_scan_free(r);
	nl_elf_close(elf);
	oracle_free(&o);
	free(path);
}

static void test_decorations(void **state)
{
	check_deco(state, "deco.o");
	check_deco(state, "deco.exe");
}

/* The jump over int3 fill is padding, keyed by the jump */
static void test_jump_padding(void **state)
{
	char *path = fixture(state, "deco.exe");
	struct nl_elf *elf;
	struct nl_scan_result *r;
	struct nl_diag d;
	bool seen = false;

	nl_diag_init(&d);
	assert_int_equal(nl_elf_open(path, NULL, &elf, &d), 0);
	assert_int_equal(nl_scan(elf, NULL, &r, &d), 0);
	assert_int_equal(r->summary.padding.jmp_bytes, 42);
	for (size_t i = 0; i < r->summary.padding.seqs.nr; i++) {
		const struct nl_seq *q = &r->summary.padding.seqs.v[i];

		if (q->kind == NL_PAD_JMP) {
			assert_int_equal(q->len, 2);
			assert_int_equal(q->bytes[0], 0xeb);
			assert_int_equal(q->total_bytes, 42);
			seen = true;
		}
	}
	assert_true(seen);
	nl_scan_free(r);
	nl_elf_close(elf);
	free(path);
}

/* More threads never change a figure (the byte scan is split too in linked files) */
static void test_threads_agree(void **state)
{
	static const char *const files[] = { "mod.ko", "base.exe", "ibt.exe", "dyn.pie" };

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char *path = fixture(state, files[f]);
		struct nl_elf *elf;
		struct nl_scan_result *one, *four;
		struct nl_scan_opts o1 = { .threads = 1 }, o4 = { .threads = 4 };
		struct nl_diag d;

		nl_diag_init(&d);
		assert_int_equal(nl_elf_open(path, NULL, &elf, &d), 0);
		assert_int_equal(nl_scan(elf, &o1, &one, &d), 0);
		assert_int_equal(nl_scan(elf, &o4, &four, &d), 0);
		assert_int_equal(four->threads, 4);
		assert_int_equal(one->nr_funcs, four->nr_funcs);
		assert_int_equal(one->nr_sites, four->nr_sites);
		assert_memory_equal(one->fx, four->fx, one->nr_funcs * sizeof(*one->fx));
		assert_memory_equal(one->sites, four->sites, one->nr_sites * sizeof(*one->sites));
		assert_int_equal(one->summary.padding.bytes, four->summary.padding.bytes);
		assert_int_equal(one->summary.padding.seqs.nr, four->summary.padding.seqs.nr);
		assert_int_equal(one->summary.sites.total, four->summary.sites.total);
		assert_int_equal(one->summary.mcount_loc.at_entry, four->summary.mcount_loc.at_entry);
		assert_int_equal(one->nr_sections, four->nr_sections);
		nl_scan_free(one);
		nl_scan_free(four);
		nl_elf_close(elf);
		free(path);
	}
}

/* ---- System.map instead of .symtab ---- */

static void test_symbols_file(void **state)
{
	char *exe = fixture(state, "base.exe"), *stripped = fixture(state, "base.stripped");
	char *map = fixture(state, "base.map"), cmd[4096];
	struct nl_elf *full, *bare;
	struct nl_elf_opts eo = { .symbol_file = map };
	struct nl_scan_result *a, *b;
	struct nl_diag d;

	snprintf(cmd, sizeof(cmd), "objcopy --strip-all '%s' '%s' && nm -n '%s' > '%s'", exe,
		 stripped, exe, map);
	assert_int_equal(nltest_run(cmd, NULL), 0);
	nl_diag_init(&d);
	assert_int_equal(nl_elf_open(exe, NULL, &full, &d), 0);
	assert_int_equal(nl_elf_open(stripped, NULL, &bare, &d), 0);
	assert_int_equal(bare->nr_symbols, 0);
	nl_elf_close(bare);
	assert_int_equal(nl_elf_open(stripped, &eo, &bare, &d), 0);
	assert_true(bare->nr_symbols > 0);
	assert_int_equal(nl_scan(full, NULL, &a, &d), 0);
	assert_int_equal(nl_scan(bare, NULL, &b, &d), 0);
	/* the same functions and sites; sizes now come from the next symbol */
	assert_int_equal(a->nr_funcs, b->nr_funcs);
	assert_int_equal(b->summary.size_inferred, b->nr_funcs);
	assert_int_equal(a->summary.sites.calls, b->summary.sites.calls);
	assert_int_equal(a->summary.mcount_loc.entries, b->summary.mcount_loc.entries);
	for (int k = 0; k < NL_NR_ENTRY_CLASSES; k++)
		assert_int_equal(a->summary.entry_classes[k], b->summary.entry_classes[k]);
	/* trimming the inferred ends finds most of the padding again */
	assert_true(b->summary.padding.nops > 0);
	nl_scan_free(a);
	nl_scan_free(b);
	nl_elf_close(full);
	nl_elf_close(bare);
	free(exe);
	free(stripped);
	free(map);
}

/* ---- the command line: JSON schema, several files, exit statuses ---- */

static json_t *run_json(const char *args, int want)
{
	char cmd[4096], *out = NULL;
	json_error_t err;
	json_t *doc;

	snprintf(cmd, sizeof(cmd), "%s scan %s", nltest_noplab(), args);
	assert_int_equal(nltest_run(cmd, &out), want);
	doc = json_loads(out, JSON_DISABLE_EOF_CHECK, &err);
	if (!doc)
		fail_msg("scan %s: bad JSON: %s", args, err.text);
	free(out);
	return doc;
}

static void need(json_t *o, const char *path)
{
	char buf[256], *save = NULL;
	json_t *cur = o;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save)) {
		cur = json_object_get(cur, k);
		if (!cur)
			fail_msg("JSON lacks %s (at %s)", path, k);
	}
}

static void test_cli_json(void **state)
{
	static const char *const keys[] = {
		"summary.functions", "summary.entry_classes.call_fentry",
		"summary.entry_classes.nop5", "summary.entry_classes.endbr+call_fentry",
		"summary.entry_classes.endbr+nop5", "summary.entry_classes.endbr",
		"summary.entry_classes.patchable", "summary.entry_classes.other",
		"summary.ftrace_sites.total", "summary.ftrace_sites.at_entry",
		"summary.ftrace_sites.after_endbr", "summary.ftrace_sites.outside_functions",
		"summary.mcount_loc.entries", "summary.mcount_loc.zero",
		"summary.mcount_loc.at_entry", "summary.mcount_loc.outside_functions",
		"summary.mcount_loc.missing", "summary.padding.gaps", "summary.padding.bytes",
		"summary.padding.code_gaps", "summary.padding.sequences", "summary.alignment.ge16",
		"summary.alignment.ge32", "summary.alignment.ge64", "summary.alignment.lt16",
		"summary.straddles.b16", "summary.straddles.b32", "summary.straddles.b64",
	};
	char *exe = fixture(state, "base.exe"), *ko = fixture(state, "mod.ko.xz"), args[2048];
	json_t *doc, *funcs, *seq;

	snprintf(args, sizeof(args), "--json --functions '%s'", exe);
	doc = run_json(args, 0);
	assert_string_equal(json_string_value(json_object_get(doc, "command")), "scan");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		need(doc, keys[i]);
	funcs = json_object_get(doc, "functions");
	assert_true(json_array_size(funcs) ==
		    (size_t)json_integer_value(json_object_get(json_object_get(doc, "summary"),
								 "functions")));
	/* addresses are "0x..." strings, byte sequences hex with spaces */
	const char *addr = json_string_value(json_object_get(json_array_get(funcs, 0), "addr"));

	assert_non_null(addr);
	assert_memory_equal(addr, "0x", 2);
	seq = json_array_get(json_object_get(json_object_get(json_object_get(doc, "summary"),
							     "padding"), "sequences"), 0);
	assert_non_null(json_string_value(json_object_get(seq, "bytes")));
	assert_true(json_integer_value(json_object_get(seq, "count")) > 0);
	json_decref(doc);

	/* without records the missing count is not measured: null, never 0 */
	char *po = fixture(state, "patchonly.o");

	snprintf(args, sizeof(args), "--json '%s'", po);
	doc = run_json(args, 0);
	assert_true(json_is_null(json_object_get(
		json_object_get(json_object_get(doc, "summary"), "mcount_loc"), "missing")));
	json_decref(doc);
	free(po);

	/* several files: one document each, then the total */
	char cmd[4096], *out = NULL;

	snprintf(cmd, sizeof(cmd), "%s scan --json '%s' '%s'", nltest_noplab(), exe, ko);
	assert_int_equal(nltest_run(cmd, &out), 0);
	json_int_t sum = 0, total = -1;
	size_t docs = 0, flags = JSON_DISABLE_EOF_CHECK;
	const char *p = out;

	for (;;) {
		json_error_t err;

		while (*p == '\n' || *p == ' ')
			p++;
		if (!*p)
			break;
		doc = json_loads(p, flags, &err);
		assert_non_null(doc);
		p += err.position;
		docs++;
		json_int_t n = json_integer_value(
			json_object_get(json_object_get(doc, "summary"), "functions"));

		if (json_is_true(json_object_get(doc, "total")))
			total = n;
		else
			sum += n;
		json_decref(doc);
	}
	free(out);
	assert_int_equal(docs, 3);
	assert_int_equal(total, sum);
	free(exe);
	free(ko);
}

static void test_cli_text_and_errors(void **state)
{
	char *exe = fixture(state, "base.exe"), cmd[4096], *out = NULL;

	snprintf(cmd, sizeof(cmd), "%s scan '%s'", nltest_noplab(), exe);
	assert_int_equal(nltest_run(cmd, &out), 0);
	assert_non_null(strstr(out, "Entry classes"));
	assert_non_null(strstr(out, "call_fentry"));
	assert_non_null(strstr(out, "__mcount_loc"));
	assert_non_null(strstr(out, "Padding between functions"));
	free(out);

	/* a missing file: status 3, one line naming it; the other file is still reported */
	snprintf(cmd, sizeof(cmd), "%s scan /nonexistent/x.ko '%s' 2>&1 >/dev/null", nltest_noplab(),
		 exe);
	assert_int_equal(nltest_run(cmd, &out), 3);
	assert_non_null(strstr(out, "noplab scan: /nonexistent/x.ko: "));
	assert_int_equal(strchr(out, '\n') - out + 1, (long)strlen(out));
	free(out);
	snprintf(cmd, sizeof(cmd), "%s scan 2>/dev/null", nltest_noplab());
	assert_int_equal(nltest_run(cmd, NULL), 2);
	snprintf(cmd, sizeof(cmd), "%s scan --bogus x 2>/dev/null", nltest_noplab());
	assert_int_equal(nltest_run(cmd, NULL), 2);
	free(exe);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures_vs_objdump),
		cmocka_unit_test(test_decorations),
		cmocka_unit_test(test_jump_padding),
		cmocka_unit_test(test_threads_agree),
		cmocka_unit_test(test_symbols_file),
		cmocka_unit_test(test_cli_json),
		cmocka_unit_test(test_cli_text_and_errors),
	};
	return cmocka_run_group_tests(tests, build_fixtures, remove_fixtures);
}
