// SPDX-License-Identifier: MIT
/* The table recognizer, one instruction per row. */
#include <string.h>

#include "nltest.h"
#include "noplab/nops.h"

enum { M64 = NL_MODE_64, M32 = NL_MODE_32 };
enum { CAT = NL_NOPK_CATALOGUE, OTH = NL_NOPK_OTHER, NOT = NL_NOPK_NONE, WRONG = NL_NOPK_WRONG_MODE };

struct rec_row {
	int line;
	const char *bytes;
	int mode;
	int kind;
	unsigned len;		/* expected length; 0 = don't care (not a NOP) */
	const char *name;	/* canonical/form name, or NULL */
	const char *families;	/* or NULL */
	const char *why;	/* substring of the reason for NOT/WRONG, or NULL */
};

static const struct rec_row rows[] = {
	/* catalogue NOPs and the families that contain them */
	{ SRC_LINE, "90", M64, CAT, 1, "nop1", "p6,k8,k7,generic,x86_nops,sdm,gas,single", NULL },
	{ SRC_LINE, "0f 1f 44 00 00", M64, CAT, 5, "nopl5", "p6,x86_nops,sdm,gas", NULL },
	{ SRC_LINE, "0f 1f 44 00 00", M32, CAT, 5, "nopl5", "p6,x86_nops,sdm,gas", NULL },
	{ SRC_LINE, "66 66 66 66 90", M64, CAT, 5, "nop5", "k8", NULL },
	{ SRC_LINE, "66 66 90 66 90", M64, CAT, 3, "nop3", "k8", NULL },
	{ SRC_LINE, "66 2e 0f 1f 84 00 00 00 00 00", M64, CAT, 10, "cs_nopw10", "x86_nops,gas,llvm", NULL },
	{ SRC_LINE, "66 66 66 66 66 66 2e 0f 1f 84 00 00 00 00 00", M64, CAT, 15, "cs_nopw15", "llvm", NULL },
	{ SRC_LINE, "2e 0f 1f 84 00 00 00 00 00", M64, CAT, 9, "cs_nopl9", "x86_nops", NULL },
	{ SRC_LINE, "66 0f 1f 84 00 00 00 00 00", M64, CAT, 9, "nopw9", "sdm,gas", NULL },
	{ SRC_LINE, "0f 1f 40 d6", M64, CAT, 4, "nopl4_d6", "ibt_poison", NULL },
	{ SRC_LINE, "66 0f 1f 00", M64, CAT, 4, "nopw4", "ibt_poison", NULL },
	/* 32-bit lea/mov forms: NOPs in 32-bit code, not in 64-bit code */
	{ SRC_LINE, "8d 76 00", M32, CAT, 3, "lea3_esi", "generic,x86_nops", NULL },
	{ SRC_LINE, "8d 76 00", M64, WRONG, 3, "lea3_esi", "generic,x86_nops", "upper half" },
	{ SRC_LINE, "89 f6", M64, WRONG, 2, "mov2_esi", "generic,x86_nops", "32-bit" },
	{ SRC_LINE, "8b c0", M32, CAT, 2, "mov2_eax", "k7", NULL },
	{ SRC_LINE, "8d 04 05 00 00 00 00", M32, CAT, 7, "lea7_eax", "k7", NULL },
	{ SRC_LINE, "3e 8d 74 26 00", M32, CAT, 5, "ds_lea5_esi", "generic,x86_nops", NULL },
	{ SRC_LINE, "3e 8d 74 26 00", M64, WRONG, 5, "ds_lea5_esi", NULL, NULL },
	{ SRC_LINE, "8d b4 26 00 00 00 00", M64, WRONG, 7, "lea7_esi", NULL, NULL },
	/* 64-bit operands make the same forms real NOPs outside the catalogue */
	{ SRC_LINE, "48 8d 76 00", M64, OTH, 4, NULL, NULL, NULL },
	{ SRC_LINE, "48 89 f6", M64, OTH, 3, NULL, NULL, NULL },
	{ SRC_LINE, "8d 76 01", M32, NOT, 0, NULL, NULL, "lea" },
	{ SRC_LINE, "8d 77 00", M32, NOT, 0, NULL, NULL, "lea" },
	{ SRC_LINE, "89 f7", M32, NOT, 0, NULL, NULL, "mov" },
	/* NOPs outside the catalogue */
	{ SRC_LINE, "0f 1f c0", M64, OTH, 3, "nopl3r", NULL, NULL },
	{ SRC_LINE, "0f 1e fa", M64, OTH, 3, "hintnop3", NULL, NULL },
	{ SRC_LINE, "0f 19 c0", M64, OTH, 3, "hintnop3", NULL, NULL },
	{ SRC_LINE, "0f 18 e0", M64, OTH, 3, "hintnop3", NULL, NULL },
	{ SRC_LINE, "0f 1f 48 00", M64, OTH, 4, "hintnop4", NULL, NULL },
	{ SRC_LINE, "2e 90", M64, OTH, 2, "cs_nop2", NULL, NULL },
	{ SRC_LINE, "3e 0f 1f 44 00 00", M64, OTH, 6, "ds_nopl6", NULL, NULL },
	{ SRC_LINE, "48 90", M64, OTH, 2, NULL, NULL, NULL },
	{ SRC_LINE, "0f 1f 05 00 00 00 00", M64, OTH, 7, NULL, NULL, NULL },
	{ SRC_LINE, "67 0f 1f 00", M32, OTH, 4, NULL, NULL, NULL },
	{ SRC_LINE, "67 0f 1f 06 00 00", M32, OTH, 6, NULL, NULL, NULL },
	{ SRC_LINE, "66 66 66 66 66 66 66 66 66 66 66 66 66 66 90", M64, OTH, 15, NULL, NULL, NULL },
	/* not NOPs */
	{ SRC_LINE, "f3 90", M64, NOT, 0, NULL, NULL, "PAUSE" },
	{ SRC_LINE, "41 90", M64, NOT, 0, NULL, NULL, "xchg" },
	{ SRC_LINE, "f0 90", M64, NOT, 0, NULL, NULL, "lock" },
	{ SRC_LINE, "f3 0f 1e fa", M64, NOT, 4, NULL, NULL, "endbr64" },
	{ SRC_LINE, "f3 0f 1e fb", M32, NOT, 4, NULL, NULL, "endbr32" },
	{ SRC_LINE, "f3 48 0f 1e c8", M64, NOT, 0, NULL, NULL, "rdssp" },
	{ SRC_LINE, "0f 18 00", M64, NOT, 0, NULL, NULL, "prefetch" },
	{ SRC_LINE, "0f 0d 00", M64, NOT, 0, NULL, NULL, "prefetch" },
	{ SRC_LINE, "0f 1a 00", M64, NOT, 0, NULL, NULL, "MPX" },
	{ SRC_LINE, "cc", M64, NOT, 0, NULL, NULL, "int3" },
	{ SRC_LINE, "e8 00 00 00 00", M64, NOT, 0, NULL, NULL, "call" },
	{ SRC_LINE, "c3", M64, NOT, 0, NULL, NULL, "ret" },
	{ SRC_LINE, "40", M32, NOT, 0, NULL, NULL, NULL },	/* inc %eax in 32-bit mode */
	{ SRC_LINE, "0f 1f 44 00", M64, NOT, 0, NULL, NULL, "truncated" },
	{ SRC_LINE, "0f", M64, NOT, 0, NULL, NULL, "truncated" },
	{ SRC_LINE, "66 66 66 66 66 66 66 66 66 66 66 66 66 66 66 90", M64, NOT, 0, NULL, NULL, NULL },
	{ SRC_LINE, "66 66 66 66 66 66 66 2e 0f 1f 84 00 00 00 00 00", M64, NOT, 0, NULL, NULL, "15" },
};

static void test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct rec_row *r = &rows[i];
		uint8_t b[32];
		size_t n = nltest_hex(r->bytes, b, sizeof(b));
		struct nl_nop_id id;
		char fam[128];

		nl_nop_recognize(b, n, (enum nl_mode)r->mode, &id);
		if ((int)id.kind != r->kind)
			row_fail(r, "%s: kind %d, want %d (%s)", r->bytes, id.kind, r->kind,
				 id.why ? id.why : "");
		if (r->len && id.len != r->len)
			row_fail(r, "%s: length %u, want %u", r->bytes, id.len, r->len);
		if (r->name && strcmp(id.name, r->name))
			row_fail(r, "%s: name %s, want %s", r->bytes, id.name, r->name);
		if (r->families && strcmp(nl_nop_families_str(id.families, fam, sizeof(fam)), r->families))
			row_fail(r, "%s: families %s, want %s", r->bytes, fam, r->families);
		if (r->why && (!id.why || !strstr(id.why, r->why)))
			row_fail(r, "%s: reason '%s' lacks '%s'", r->bytes, id.why ? id.why : "", r->why);
	}
}

/* The recognizer never reads past what it is given: feed every prefix of every row. */
static void test_never_overreads(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint8_t b[32];
		size_t n = nltest_hex(rows[i].bytes, b, sizeof(b));

		for (size_t k = 0; k <= n; k++) {
			uint8_t *copy = test_malloc(k ? k : 1);
			struct nl_nop_id id;

			memcpy(copy, b, k);
			nl_nop_recognize(copy, k, NL_MODE_64, &id);
			assert_true(id.len <= k);
			test_free(copy);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_never_overreads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
