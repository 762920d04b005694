// SPDX-License-Identifier: MIT
/*
 * Region arithmetic, generic delimiter discovery, nesting, empty ranges and
 * every per-region figure, on hand-built inputs (tests/test_layout_models.h).
 * The same figures on real gcc/ld output are checked in test_layout.c.
 */
#include <stdlib.h>
#include <string.h>

#include "test_layout_models.h"

struct align_row {
	int line;
	uint64_t addr, align;
};

static const struct align_row align_rows[] = {
	{ SRC_LINE, 1, 1 },
	{ SRC_LINE, 0x10, 0x10 },
	{ SRC_LINE, 0x1a87, 1 },
	{ SRC_LINE, 0x1000, 0x1000 },
	{ SRC_LINE, 0x200000, 0x200000 },
	{ SRC_LINE, K(0x10), 0x10 },
	{ SRC_LINE, K(0), 0x1000000 },		/* 0xffffffff81000000: 16 MiB */
	{ SRC_LINE, 0x80000000ull, NL_ALIGN_CAP },
	{ SRC_LINE, 0, NL_ALIGN_CAP },
};

static void test_align_of(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(align_rows) / sizeof(align_rows[0]); i++) {
		const struct align_row *r = &align_rows[i];
		uint64_t a = nl_align_of(r->addr);

		if (a != r->align)
			row_fail(r, "align_of(%#llx) = %#llx", (unsigned long long)r->addr,
				 (unsigned long long)a);
	}
}

struct units_row {
	int line;
	uint64_t start, end, unit, want;
};

static const struct units_row units_rows[] = {
	{ SRC_LINE, 0, 0, 64, 0 },
	{ SRC_LINE, 100, 100, 64, 0 },		/* empty: touches nothing */
	{ SRC_LINE, 0, 1, 64, 1 },
	{ SRC_LINE, 0, 64, 64, 1 },
	{ SRC_LINE, 0, 65, 64, 2 },
	{ SRC_LINE, 63, 65, 64, 2 },
	{ SRC_LINE, 0x1fff, 0x2001, 4096, 2 },
	{ SRC_LINE, K(0x10), K(0x1a87), 64, 107 },
	{ SRC_LINE, K(0x10), K(0x1a87), 4096, 2 },
	{ SRC_LINE, K(0x10), K(0x1a87), 2u << 20, 1 },
	{ SRC_LINE, K(0x1ffff0), K(0x200010), 2u << 20, 2 },
};

static void test_units_touched(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(units_rows) / sizeof(units_rows[0]); i++) {
		const struct units_row *r = &units_rows[i];
		uint64_t n = nl_units_touched(r->start, r->end, r->unit);

		if (n != r->want)
			row_fail(r, "%llu units, want %llu", (unsigned long long)n,
				 (unsigned long long)r->want);
	}
}

struct key_row {
	int line;
	const char *name, *key;
};

static const struct key_row key_rows[] = {
	{ SRC_LINE, ".entry.text", "entry_text" },
	{ SRC_LINE, "entry_text", "entry_text" },
	{ SRC_LINE, ".text.unlikely", "text_unlikely" },
	{ SRC_LINE, ".text..__x86.rethunk_untrain", "text____x86_rethunk_untrain" },
};

static void test_region_key(void **state)
{
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(key_rows) / sizeof(key_rows[0]); i++) {
		const struct key_row *r = &key_rows[i];

		if (strcmp(nl_region_key(r->name, buf, sizeof(buf)), r->key))
			row_fail(r, "key of %s: %s", r->name, buf);
	}
}

/* ---- the 6.18 kallsyms model ---- */

struct region_row {
	int line;
	const char *name;
	enum nl_region_kind kind;
	uint64_t start, end;
	const char *parent;	/* NULL: none */
	bool empty;
	uint64_t align_start, align_end, lines, pages_4k, pages_2m;
	size_t nr_funcs;
	const char *first_line;	/* first foreign name in the first line, "" for none */
	const char *last_line;
};

static const struct region_row kallsyms_rows[] = {
	{ SRC_LINE, "text", NL_REGION_RANGE, K(0), K(0x1276f48), NULL, false, 0x1000000, 8,
	  0x1276f48 / 64 + 1, 0x1277, 10, 14, "", "" },
	{ SRC_LINE, "entry_text", NL_REGION_RANGE, K(0x10), K(0x1a87), "text", false, 16, 1, 107,
	  2, 1, 5, "srso_alias_untrain_ret", "" },
	{ SRC_LINE, "irqentry_text", NL_REGION_RANGE, K(0x300), K(0xf70), "entry_text", false,
	  0x100, 0x10, (0xf6f - 0x300) / 64 + 1, 1, 1, 1, "", "common_interrupt_return" },
	{ SRC_LINE, "split_text", NL_REGION_RANGE, K(0x200000), K(0x200000), "unlikely_text", true,
	  2u << 20, 2u << 20, 0, 0, 0, 0, "", "" },
	{ SRC_LINE, "unlikely_text", NL_REGION_RANGE, K(0x200000), K(0x248000), "text", false,
	  2u << 20, 0x8000, 0x48000 / 64, 0x48, 1, 1, "", "" },
	{ SRC_LINE, "hot_text", NL_REGION_RANGE, K(0x248000), K(0x250000), "text", false, 0x8000,
	  0x10000, 0x8000 / 64, 8, 1, 1, "", "" },
	{ SRC_LINE, "cpuidle_text", NL_REGION_RANGE, K(0x1261960), K(0x1262705), "noinstr_text",
	  false, 0x20, 1, (0x1262704 / 64) - (0x1261960 / 64) + 1, 2, 1, 1, "noinstr_func", "" },
	{ SRC_LINE, "lock_text", NL_REGION_RANGE, K(0x126e530), K(0x126ffb1), "text", false, 0x10,
	  1, (0x126ffb0 / 64) - (0x126e530 / 64) + 1, 2, 1, 1, "schedule", "" },
};

static void check_regions(const struct nl_layout *lay, const struct region_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct region_row *r = &rows[i];
		const struct nl_region *g = nl_layout_find_region(lay, r->name);

		if (!g)
			row_fail(r, "no region %s", r->name);
		if (g->kind != r->kind || g->start != r->start || g->end != r->end)
			row_fail(r, "%s: kind %d %#llx-%#llx", r->name, g->kind,
				 (unsigned long long)g->start, (unsigned long long)g->end);
		if (g->size != r->end - r->start || g->empty != r->empty)
			row_fail(r, "%s: size %llu empty %d", r->name, (unsigned long long)g->size,
				 g->empty);
		if (r->parent ? g->parent < 0 || strcmp(lay->regions[g->parent].name, r->parent)
			      : g->parent >= 0)
			row_fail(r, "%s: parent %s", r->name,
				 g->parent < 0 ? "none" : lay->regions[g->parent].name);
		if (g->align_start != r->align_start || g->align_end != r->align_end)
			row_fail(r, "%s: align %#llx/%#llx", r->name,
				 (unsigned long long)g->align_start, (unsigned long long)g->align_end);
		if (g->lines != r->lines || g->pages_4k != r->pages_4k || g->pages_2m != r->pages_2m)
			row_fail(r, "%s: %llu lines %llu 4K %llu 2M", r->name,
				 (unsigned long long)g->lines, (unsigned long long)g->pages_4k,
				 (unsigned long long)g->pages_2m);
		if (g->nr_funcs != r->nr_funcs)
			row_fail(r, "%s: %zu functions", r->name, g->nr_funcs);
		if (r->first_line[0] ? !g->first_line.nr_names ||
					       strcmp(g->first_line.names[0], r->first_line)
				     : g->first_line.nr_names != 0)
			row_fail(r, "%s: first line shared with %s", r->name,
				 g->first_line.nr_names ? g->first_line.names[0] : "nothing");
		if (r->last_line[0] ? !g->last_line.nr_names ||
					      strcmp(g->last_line.names[0], r->last_line)
				    : g->last_line.nr_names != 0)
			row_fail(r, "%s: last line shared with %s", r->name,
				 g->last_line.nr_names ? g->last_line.names[0] : "nothing");
	}
}

static void test_kallsyms_regions(void **state)
{
	struct nl_layout_input in;
	struct nl_layout *lay;

	(void)state;
	kallsyms_618(&in);
	assert_int_equal(nl_layout_analyze(&in, NULL, &lay, NULL), 0);
	check_regions(lay, kallsyms_rows, sizeof(kallsyms_rows) / sizeof(kallsyms_rows[0]));
	/* data pairs are not text regions; unpaired __end_X is not a region either */
	assert_null(nl_layout_find_region(lay, "rodata"));
	assert_null(nl_layout_find_region(lay, "entry_SYSENTER_compat"));
	/* the names rules use: section spelling, and LOCK_TEXT's input section name */
	assert_ptr_equal(nl_layout_find_region(lay, ".entry.text"),
			 nl_layout_find_region(lay, "entry_text"));
	assert_ptr_equal(nl_layout_find_region(lay, "spinlock_text"),
			 nl_layout_find_region(lay, "lock_text"));
	assert_int_equal(lay->nr_regions, 10);	/* text entry irqentry split unlikely hot
						 * noinstr cpuidle sched lock */

	const struct nl_region *e = nl_layout_find_region(lay, "entry_text");

	assert_string_equal(e->start_sym, "__entry_text_start");
	assert_string_equal(e->end_sym, "__entry_text_end");
	/* functions: prefixes are not functions, the unpaired __end_ label is */
	const char *want[] = { "entry_SYSCALL_64", "irq_entries_start", "common_interrupt_return",
			       "__end_entry_SYSENTER_compat", "paravirt_ret0" };

	for (size_t i = 0; i < 5; i++)
		assert_string_equal(lay->funcs[e->func_first + i].name, want[i]);
	assert_int_equal(e->first_line.foreign_bytes, 0x10);
	assert_int_equal(e->first_page.nr_names, 1);
	assert_int_equal(e->last_page.nr_names, 0);
	/* no bytes: the distance to the next symbol is all that is known */
	assert_int_equal(e->fill_after.kind, NL_FILL_UNKNOWN);
	assert_int_equal(e->fill_after.from, K(0x1a87));
	assert_int_equal(e->fill_after.to, K(0x104104));
	assert_false(e->padding.known);
	/* a sized function named like a delimiter stays a function */
	assert_non_null(nl_layout_func_at(lay, K(0x250020)));
	assert_string_equal(nl_layout_func_at(lay, K(0x250020))->name, "__kvm_start");
	nl_layout_free(lay);
	nl_layout_input_release(&in);
}

/* ---- bytes: padding, fill, neighbours, JCC per region and function ---- */

static void test_bytes_model(void **state)
{
	static uint8_t text[0x300];
	struct nl_layout_input in;
	struct nl_layout_opts o = { .jcc = true, .threads = 2 };
	struct nl_layout *lay;
	const struct nl_region *r;
	const struct nl_layout_func *f2;

	(void)state;
	bytes_model(&in, text);
	assert_int_equal(nl_layout_analyze(&in, &o, &lay, NULL), 0);
	r = nl_layout_find_region(lay, "hotsec");
	assert_non_null(r);
	assert_int_equal(r->kind, NL_REGION_RANGE);
	assert_int_equal(r->start, B(0x40));
	assert_int_equal(r->end, B(0x100));
	assert_int_equal(r->align_start, 64);
	assert_int_equal(r->align_end, 256);
	assert_int_equal(r->lines, 3);
	assert_int_equal(r->pages_4k, 1);
	assert_int_equal(r->nr_funcs, 3);
	assert_int_equal(r->first_line.nr_names, 0);
	assert_int_equal(r->last_line.nr_names, 0);
	/* a before it, g and __fentry__ after it, in its 4 KiB page */
	assert_int_equal(r->first_page.nr_names, 3);
	assert_string_equal(r->first_page.names[0], "a");
	assert_string_equal(r->first_page.names[1], "g");
	assert_string_equal(r->first_page.names[2], "__fentry__");
	assert_int_equal(r->first_page.foreign_bytes, 0x18 + 0x40 + 1);
	/* padding: 13 NOP bytes + the 16 x 90 of __pfx_f2, 18 zero, 36 int3 */
	assert_true(r->padding.known);
	assert_true(r->padding.bytes_known);
	assert_int_equal(r->padding.bytes, 29 + 18 + 36);
	assert_int_equal(r->padding.nop, 29);
	assert_int_equal(r->padding.zero, 18);
	assert_int_equal(r->padding.int3, 36);
	assert_int_equal(r->padding.prefix, 16);
	assert_int_equal(r->padding.other, 0);
	/* int3 from the end of a, and up to g (a 128-byte boundary) */
	assert_int_equal(r->fill_before.kind, NL_FILL_INT3);
	assert_int_equal(r->fill_before.from, B(0x18));
	assert_int_equal(r->fill_after.kind, NL_FILL_INT3);
	assert_int_equal(r->fill_after.to, B(0x180));
	assert_int_equal(r->fill_after.to_align, 128);
	/* JCC: je at 0x7e ends on 0x80, call at 0xbc crosses 0xc0 */
	assert_true(lay->jcc_done);
	assert_int_equal(lay->jcc.total.units, 10);
	assert_int_equal(lay->jcc.total.fused, 1);
	assert_int_equal(lay->jcc.total.affected, 2);
	assert_int_equal(r->jcc.units, 7);
	assert_int_equal(r->jcc.affected, 2);
	assert_int_equal(r->jcc.kind_affected[NL_JCC_JCC], 1);
	assert_int_equal(r->jcc.kind_affected[NL_JCC_CALL], 1);
	f2 = nl_layout_func_at(lay, B(0x80));
	assert_non_null(f2);
	assert_string_equal(f2->name, "f2");
	assert_int_equal(f2->jcc.units, 3);
	assert_int_equal(f2->jcc.affected, 1);

	uint64_t *sites;
	size_t ns;

	assert_int_equal(nl_layout_ftrace_sites(lay, &sites, &ns, NULL), 0);
	assert_int_equal(ns, 3);
	assert_int_equal(sites[0], B(0x44));	/* after ENDBR */
	assert_int_equal(sites[1], B(0x70));
	assert_int_equal(sites[2], B(0xbc));
	free(sites);
	nl_layout_free(lay);
	nl_layout_input_release(&in);
}

static void test_rel_model(void **state)
{
	struct nl_layout_input in;
	struct nl_layout *lay;
	const struct nl_region *e;

	(void)state;
	rel_model(&in);
	assert_int_equal(nl_layout_analyze(&in, NULL, &lay, NULL), 0);
	/* .text, .entry.text, .text.unlikely; .text.foo is foo's own section */
	assert_int_equal(lay->nr_regions, 3);
	assert_null(nl_layout_find_region(lay, ".text.foo"));
	e = nl_layout_find_region(lay, "entry_text");
	assert_non_null(e);
	assert_int_equal(e->kind, NL_REGION_SECTION);
	/* synthetic 0x40 is 64-aligned, but only sh_addralign (16) is promised */
	assert_int_equal(e->align_start, 16);
	assert_int_equal(e->align_end, 16);
	/* x sits right before it in the synthetic layout, but in another section */
	assert_int_equal(e->first_line.nr_names, 0);
	assert_int_equal(nl_layout_find_region(lay, ".text.unlikely")->align_start, 1);
	nl_layout_free(lay);
	nl_layout_input_release(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_align_of),
		cmocka_unit_test(test_units_touched),
		cmocka_unit_test(test_region_key),
		cmocka_unit_test(test_kallsyms_regions),
		cmocka_unit_test(test_bytes_model),
		cmocka_unit_test(test_rel_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
