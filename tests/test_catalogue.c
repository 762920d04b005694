// SPDX-License-Identifier: MIT
/* The catalogue as data: required entries, their bytes and attributes, and its invariants. */
#include <stdio.h>
#include <string.h>

#include "nltest.h"
#include "noplab/nops.h"

struct entry_row {
	int line;
	const char *name;
	const char *bytes;
	unsigned insns, max_prefixes;
	bool nop64, nop32;
	const char *canonical;
};

static const struct entry_row rows[] = {
	{ SRC_LINE, "p6:1", "90", 1, 0, true, true, "nop1" },
	{ SRC_LINE, "p6:5", "0f 1f 44 00 00", 1, 0, true, true, "nopl5" },
	{ SRC_LINE, "p6:8", "0f 1f 84 00 00 00 00 00", 1, 0, true, true, "nopl8" },
	{ SRC_LINE, "p6:atomic5", "0f 1f 44 00 00", 1, 0, true, true, "nopl5" },
	{ SRC_LINE, "k8:3", "66 66 90", 1, 2, true, true, "nop3" },
	{ SRC_LINE, "k8:5", "66 66 90 66 90", 2, 2, true, true, "nop3+nop2" },
	{ SRC_LINE, "k8:8", "66 66 66 90 66 66 66 90", 2, 3, true, true, "nop4+nop4" },
	{ SRC_LINE, "k8:atomic5", "66 66 66 66 90", 1, 4, true, true, "nop5" },
	{ SRC_LINE, "k7:2", "8b c0", 1, 0, false, true, "mov2_eax" },
	{ SRC_LINE, "k7:5", "8d 44 20 00 90", 2, 0, false, true, "lea4_eax+nop1" },
	{ SRC_LINE, "k7:7", "8d 04 05 00 00 00 00", 1, 0, false, true, "lea7_eax" },
	{ SRC_LINE, "k7:atomic5", "3e 8d 44 20 00", 1, 1, false, true, "ds_lea5_eax" },
	{ SRC_LINE, "generic:3", "8d 76 00", 1, 0, false, true, "lea3_esi" },
	{ SRC_LINE, "generic:5", "90 8d 74 26 00", 2, 0, false, true, "nop1+lea4_esi" },
	{ SRC_LINE, "generic:8", "90 8d b4 26 00 00 00 00", 2, 0, false, true, "nop1+lea7_esi" },
	{ SRC_LINE, "generic:atomic5", "3e 8d 74 26 00", 1, 1, false, true, "ds_lea5_esi" },
	{ SRC_LINE, "x86_nops:5", "0f 1f 44 00 00", 1, 0, true, true, "nopl5" },
	{ SRC_LINE, "x86_nops:9", "2e 0f 1f 84 00 00 00 00 00", 1, 1, true, true, "cs_nopl9" },
	{ SRC_LINE, "x86_nops:11", "66 66 2e 0f 1f 84 00 00 00 00 00", 1, 3, true, true, "cs_nopw11" },
	{ SRC_LINE, "x86_nops:5/32", "3e 8d 74 26 00", 1, 1, false, true, "ds_lea5_esi" },
	{ SRC_LINE, "x86_nops:8/32", "3e 8d b4 26 00 00 00 00", 1, 1, false, true, "ds_lea8_esi" },
	{ SRC_LINE, "sdm:9", "66 0f 1f 84 00 00 00 00 00", 1, 1, true, true, "nopw9" },
	{ SRC_LINE, "gas:10", "66 2e 0f 1f 84 00 00 00 00 00", 1, 2, true, true, "cs_nopw10" },
	{ SRC_LINE, "gas:13", "66 66 2e 0f 1f 84 00 00 00 00 00 66 90", 2, 3, true, true, "cs_nopw11+nop2" },
	{ SRC_LINE, "llvm:15", "66 66 66 66 66 66 2e 0f 1f 84 00 00 00 00 00", 1, 7, true, true, "cs_nopw15" },
	{ SRC_LINE, "single:5", "90 90 90 90 90", 5, 0, true, true, "nop1x5" },
	{ SRC_LINE, "jmp:5", "eb 03 cc cc cc", 1, 0, true, true, "jmp2+int3x3" },
	{ SRC_LINE, "int3:3", "cc cc cc", 3, 0, false, false, "int3x3" },
	{ SRC_LINE, "ibt_poison:osp", "66 0f 1f 00", 1, 1, true, true, "nopw4" },
};

static void test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct entry_row *r = &rows[i];
		const struct nl_nop *e = nl_nop_find(r->name);
		uint8_t want[32];
		size_t n = nltest_hex(r->bytes, want, sizeof(want));

		if (!e)
			row_fail(r, "%s missing from the catalogue", r->name);
		if (e->len != n || memcmp(e->bytes, want, n))
			row_fail(r, "%s bytes differ", r->name);
		if (e->nr_insns != r->insns)
			row_fail(r, "%s: %u instructions, want %u", r->name, e->nr_insns, r->insns);
		if (e->max_prefixes != r->max_prefixes)
			row_fail(r, "%s: %u prefixes, want %u", r->name, e->max_prefixes, r->max_prefixes);
		if (e->nop64 != r->nop64 || e->nop32 != r->nop32)
			row_fail(r, "%s: validity differs", r->name);
		if (strcmp(e->canonical, r->canonical))
			row_fail(r, "%s: canonical %s, want %s", r->name, e->canonical, r->canonical);
	}
}

/* Every table the kernel, the SDM and the assemblers define is complete. */
static void test_families_complete(void **state)
{
	static const struct {
		const char *prefix, *suffix;
		unsigned from, to;
	} want[] = {
		{ "p6:", "", 1, 8 },	     { "k8:", "", 1, 8 },	   { "k7:", "", 1, 8 },
		{ "generic:", "", 1, 8 },    { "x86_nops:", "", 1, 11 },   { "x86_nops:", "/32", 1, 8 },
		{ "sdm:", "", 1, 9 },	     { "gas:", "", 1, 15 },	   { "single:", "", 1, 16 },
		{ "jmp:", "", 2, 16 },	     { "int3:", "", 1, 16 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		for (unsigned len = want[i].from; len <= want[i].to; len++) {
			char name[32];
			const struct nl_nop *e;

			snprintf(name, sizeof(name), "%s%u%s", want[i].prefix, len, want[i].suffix);
			e = nl_nop_find(name);
			if (!e)
				fail_msg("%s missing", name);
			assert_int_equal(e->len, len);
		}
	}
	assert_non_null(nl_nop_find("p6:atomic5"));
	assert_non_null(nl_nop_find("k8:atomic5"));
	assert_non_null(nl_nop_find("k7:atomic5"));
	assert_non_null(nl_nop_find("generic:atomic5"));
	assert_non_null(nl_nop_find("llvm:10"));
	assert_non_null(nl_nop_find("llvm:15"));
	assert_null(nl_nop_find("p6:9"));
	assert_null(nl_nop_find("nonsense"));
}

/* One byte string, one canonical name, and the other way round. */
static void test_canonical_bijection(void **state)
{
	size_t nr;
	const struct nl_nop *c = nl_nop_catalogue(&nr);

	(void)state;
	assert_true(nr > 100);
	for (size_t i = 0; i < nr; i++) {
		assert_true(c[i].len >= 1 && c[i].len <= NL_NOP_MAX_BYTES);
		assert_non_null(c[i].source);
		assert_true(strlen(c[i].source) > 10);
		for (size_t j = i + 1; j < nr; j++) {
			bool same_bytes = c[i].len == c[j].len && !memcmp(c[i].bytes, c[j].bytes, c[i].len);
			bool same_name = !strcmp(c[i].canonical, c[j].canonical);

			if (!strcmp(c[i].name, c[j].name))
				fail_msg("duplicate entry name %s", c[i].name);
			if (same_bytes != same_name)
				fail_msg("%s (%s) and %s (%s): bytes %s but canonical names %s", c[i].name,
					 c[i].canonical, c[j].name, c[j].canonical,
					 same_bytes ? "equal" : "differ", same_name ? "equal" : "differ");
		}
	}
}

/* The example from the issue: 0f 1f 44 00 00 belongs to p6, sdm, x86_nops and gas. */
static void test_families_of(void **state)
{
	const uint8_t nopl5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	char buf[128];
	uint32_t mask = nl_nop_families_of(nopl5, sizeof(nopl5));

	(void)state;
	assert_string_equal(nl_nop_families_str(mask, buf, sizeof(buf)), "p6,x86_nops,sdm,gas");
	assert_int_equal(nl_nop_family_by_name("x86_nops"), NL_FAM_X86_NOPS);
	assert_int_equal(nl_nop_family_by_name("k9"), -1);
	assert_string_equal(nl_nop_family_name(NL_FAM_IBT_POISON), "ibt_poison");
}

/* nr_insns and max_prefixes agree with the recognizer's split in 32-bit mode, where all are NOPs. */
static void test_counts_match_recognizer(void **state)
{
	size_t nr;
	const struct nl_nop *c = nl_nop_catalogue(&nr);

	(void)state;
	for (size_t i = 0; i < nr; i++) {
		const struct nl_nop *e = &c[i];
		unsigned insns = 0, maxp = 0;

		if (e->flags & (NL_NOPF_JUMP | NL_NOPF_FILL))
			continue;
		for (size_t off = 0; off < e->len;) {
			struct nl_nop_id id;

			if (!nl_nop_is_nop(nl_nop_recognize(e->bytes + off, e->len - off, NL_MODE_32, &id)))
				fail_msg("%s: no NOP at offset %zu in 32-bit mode (%s)", e->name, off,
					 id.why ? id.why : "?");
			insns++;
			if (id.nr_prefixes > maxp)
				maxp = id.nr_prefixes;
			off += id.len;
		}
		if (insns != e->nr_insns || maxp != e->max_prefixes)
			fail_msg("%s: recognizer sees %u insns / %u prefixes, catalogue %u / %u", e->name,
				 insns, maxp, e->nr_insns, e->max_prefixes);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_families_complete),
		cmocka_unit_test(test_canonical_bijection),
		cmocka_unit_test(test_families_of),
		cmocka_unit_test(test_counts_match_recognizer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
