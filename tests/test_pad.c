// SPDX-License-Identifier: MIT
/* Padding runs: splitting gaps, and composing padding like each producer. */
#include <errno.h>
#include <string.h>

#include "nltest.h"
#include "noplab/nops.h"

struct split_row {
	int line;
	const char *bytes;
	const char *pieces;	/* kinds in order: N nop, I int3, J jmp, Z zero, C code */
	unsigned nop, int3, jmp, zero, code;
};

static const struct split_row split_rows[] = {
	{ SRC_LINE, "90 90 90", "NNN", 3, 0, 0, 0, 0 },
	{ SRC_LINE, "66 66 2e 0f 1f 84 00 00 00 00 00 0f 1f 40 00", "NN", 15, 0, 0, 0, 0 },
	{ SRC_LINE, "cc cc cc cc", "I", 0, 4, 0, 0, 0 },
	{ SRC_LINE, "0f 1f 00 cc cc", "NI", 3, 2, 0, 0, 0 },
	{ SRC_LINE, "eb 03 cc cc cc", "J", 0, 0, 5, 0, 0 },
	{ SRC_LINE, "e9 03 00 00 00 cc cc cc", "J", 0, 0, 8, 0, 0 },
	{ SRC_LINE, "90 eb 02 90 90", "NJ", 1, 0, 4, 0, 0 },
	{ SRC_LINE, "eb 05 cc cc cc", "C", 0, 0, 0, 0, 5 },	/* jumps past the gap: code */
	{ SRC_LINE, "00 00 00 90", "ZN", 1, 0, 0, 3, 0 },
	{ SRC_LINE, "90 55 48 89 e5", "NC", 1, 0, 0, 0, 4 },
	{ SRC_LINE, "f3 90 90", "C", 0, 0, 0, 0, 3 },
};

static void test_split(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(split_rows) / sizeof(split_rows[0]); i++) {
		const struct split_row *r = &split_rows[i];
		uint8_t b[64];
		size_t n = nltest_hex(r->bytes, b, sizeof(b));
		struct nl_pad_piece pieces[16];
		struct nl_pad_split s;
		char kinds[17] = "";

		nl_pad_split(b, n, NL_MODE_64, pieces, 16, &s);
		for (unsigned k = 0; k < s.nr_pieces && k < 16; k++)
			kinds[k] = "NIJZC"[pieces[k].kind];
		kinds[s.nr_pieces < 16 ? s.nr_pieces : 16] = '\0';
		if (strcmp(kinds, r->pieces))
			row_fail(r, "%s: pieces %s, want %s", r->bytes, kinds, r->pieces);
		if (s.nop_bytes != r->nop || s.int3_bytes != r->int3 || s.jmp_bytes != r->jmp ||
		    s.zero_bytes != r->zero || s.code_bytes != r->code)
			row_fail(r, "%s: byte counts nop %llu int3 %llu jmp %llu zero %llu code %llu", r->bytes,
				 (unsigned long long)s.nop_bytes, (unsigned long long)s.int3_bytes,
				 (unsigned long long)s.jmp_bytes, (unsigned long long)s.zero_bytes,
				 (unsigned long long)s.code_bytes);
	}
}

/* More pieces than the caller's array: all are counted, none written past it. */
static void test_split_caps_pieces(void **state)
{
	uint8_t b[40];
	struct nl_pad_piece pieces[4];
	struct nl_pad_split s;

	(void)state;
	memset(b, 0x90, sizeof(b));
	nl_pad_split(b, sizeof(b), NL_MODE_64, pieces, 4, &s);
	assert_int_equal(s.nr_pieces, 40);
	assert_int_equal(s.nr_nops, 40);
	assert_int_equal(s.nop_bytes, 40);
}

struct compose_row {
	int line;
	enum nl_nop_family fam;
	int mode;
	size_t len;
	const char *bytes;	/* expected prefix of the output */
	int insns;
};

static const struct compose_row compose_rows[] = {
	{ SRC_LINE, NL_FAM_GAS, 64, 5, "0f 1f 44 00 00", 1 },
	{ SRC_LINE, NL_FAM_GAS, 64, 13, "66 66 2e 0f 1f 84 00 00 00 00 00 66 90", 2 },
	{ SRC_LINE, NL_FAM_GAS, 64, 127, "eb 7d 66 66 2e 0f 1f 84", 13 },
	{ SRC_LINE, NL_FAM_GAS, 64, 511, "e9 fa 01 00 00 66 66 2e", 47 },
	{ SRC_LINE, NL_FAM_X86_NOPS, 64, 11, "66 66 2e 0f 1f 84 00 00 00 00 00", 1 },
	{ SRC_LINE, NL_FAM_X86_NOPS, 64, 12, "eb 0a cc cc cc cc cc cc cc cc cc cc", 11 },
	{ SRC_LINE, NL_FAM_X86_NOPS, 32, 5, "3e 8d 74 26 00", 1 },
	{ SRC_LINE, NL_FAM_X86_NOPS, 32, 9, "eb 07 cc", 8 },
	{ SRC_LINE, NL_FAM_K8, 64, 13, "66 66 66 90 66 66 66 90 66 66 90 66 90", 4 },
	{ SRC_LINE, NL_FAM_P6, 64, 10, "0f 1f 84 00 00 00 00 00 66 90", 2 },
	{ SRC_LINE, NL_FAM_SDM, 64, 10, "66 0f 1f 84 00 00 00 00 00 90", 2 },
	{ SRC_LINE, NL_FAM_LLVM, 64, 13, "66 2e 0f 1f 84 00 00 00 00 00 0f 1f 00", 2 },
	{ SRC_LINE, NL_FAM_SINGLE, 64, 4, "90 90 90 90", 4 },
	{ SRC_LINE, NL_FAM_INT3, 64, 2, "cc cc", 2 },
	{ SRC_LINE, NL_FAM_JMP, 64, 5, "eb 03 cc cc cc", 4 },
	{ SRC_LINE, NL_FAM_JMP, 64, 200, "e9 c3 00 00 00 cc", 196 },
};

static void test_compose(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(compose_rows) / sizeof(compose_rows[0]); i++) {
		const struct compose_row *r = &compose_rows[i];
		uint8_t want[64], got[600];
		size_t n = nltest_hex(r->bytes, want, sizeof(want));
		int insns = nl_nop_compose(r->fam, (enum nl_mode)r->mode, r->len, got, sizeof(got));

		if (insns != r->insns)
			row_fail(r, "%s %zu: %d instructions, want %d", nl_nop_family_name(r->fam), r->len,
				 insns, r->insns);
		if (memcmp(got, want, n))
			row_fail(r, "%s %zu: bytes differ", nl_nop_family_name(r->fam), r->len);
	}
}

/* Whatever a producer writes, the splitter reads back as padding, byte for byte. */
static void test_compose_split_roundtrip(void **state)
{
	static const enum nl_nop_family fams[] = { NL_FAM_GAS, NL_FAM_X86_NOPS, NL_FAM_K8, NL_FAM_P6,
						   NL_FAM_SDM, NL_FAM_LLVM, NL_FAM_SINGLE, NL_FAM_JMP,
						   NL_FAM_INT3 };
	(void)state;
	for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
		for (size_t len = 1; len <= 300; len++) {
			uint8_t buf[300];
			struct nl_pad_split s;

			assert_true(nl_nop_compose(fams[f], NL_MODE_64, len, buf, sizeof(buf)) > 0);
			nl_pad_split(buf, len, NL_MODE_64, NULL, 0, &s);
			if (s.code_bytes || s.nop_bytes + s.int3_bytes + s.jmp_bytes != len)
				fail_msg("%s %zu: split finds %llu code bytes", nl_nop_family_name(fams[f]),
					 len, (unsigned long long)s.code_bytes);
		}
	}
}

static void test_compose_errors(void **state)
{
	uint8_t buf[8];

	(void)state;
	assert_int_equal(nl_nop_compose(NL_FAM_GAS, NL_MODE_64, 9, buf, sizeof(buf)), -ENOSPC);
	assert_int_equal(nl_nop_compose(NL_FAM_IBT_POISON, NL_MODE_64, 4, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(nl_nop_compose(NL_FAM_GAS, NL_MODE_64, 0, buf, sizeof(buf)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_split_caps_pieces),
		cmocka_unit_test(test_compose),
		cmocka_unit_test(test_compose_split_roundtrip),
		cmocka_unit_test(test_compose_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
