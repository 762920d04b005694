// SPDX-License-Identifier: MIT
/* arch_init_ideal_nops() (v2.6.38..v5.12) and the fixed tables after it. */
#include <string.h>

#include "nltest.h"
#include "noplab/nops.h"

struct sel_row {
	int line;
	enum nl_vendor vendor;
	unsigned family, model;
	bool nopl, k8, k7;
	int mode;
	enum nl_nop_family want;
	const char *ftrace;	/* the ftrace NOP the kernel would patch in */
};

#define I NL_VENDOR_INTEL
#define A NL_VENDOR_AMD

static const struct sel_row rows[] = {
	/* Sandy Bridge Xeon E5, the CPU of the 2021 measurement: the decoder quirk range */
	{ SRC_LINE, I, 6, 0x2d, true, false, false, 64, NL_FAM_K8, "k8:atomic5" },
	{ SRC_LINE, I, 6, 0x2a, true, false, false, 64, NL_FAM_K8, "k8:atomic5" },
	{ SRC_LINE, I, 6, 0x0f, true, false, false, 64, NL_FAM_K8, "k8:atomic5" },	/* Core 2 */
	{ SRC_LINE, I, 6, 0x2f, true, false, false, 64, NL_FAM_K8, "k8:atomic5" },
	{ SRC_LINE, I, 6, 0x30, true, false, false, 64, NL_FAM_P6, "p6:atomic5" },
	{ SRC_LINE, I, 6, 0x3a, true, false, false, 64, NL_FAM_P6, "p6:atomic5" },	/* Ivy Bridge */
	{ SRC_LINE, I, 6, 0x0e, true, false, false, 64, NL_FAM_P6, "p6:atomic5" },
	/* Atom exclusions */
	{ SRC_LINE, I, 6, 0x1c, true, false, false, 64, NL_FAM_P6, "p6:atomic5" },
	{ SRC_LINE, I, 6, 0x26, true, false, false, 64, NL_FAM_P6, "p6:atomic5" },
	{ SRC_LINE, I, 6, 0x27, true, false, false, 64, NL_FAM_P6, "p6:atomic5" },
	{ SRC_LINE, I, 6, 0x1c, false, false, false, 32, NL_FAM_GENERIC, "generic:atomic5" },
	{ SRC_LINE, I, 6, 0x1c, false, false, false, 64, NL_FAM_K8, "k8:atomic5" },
	{ SRC_LINE, I, 15, 0x04, true, false, false, 64, NL_FAM_P6, "p6:atomic5" },	/* P4 */
	/* AMD */
	{ SRC_LINE, A, 0x0f, 0x2b, true, true, false, 64, NL_FAM_K8, "k8:atomic5" },
	{ SRC_LINE, A, 0x0f, 0x2b, true, true, false, 32, NL_FAM_K8, "k8:atomic5" },
	{ SRC_LINE, A, 0x06, 0x08, false, false, true, 32, NL_FAM_K7, "k7:atomic5" },
	{ SRC_LINE, A, 0x10, 0x02, true, false, false, 64, NL_FAM_P6, "p6:atomic5" },
	{ SRC_LINE, A, 0x17, 0x31, true, false, false, 64, NL_FAM_P6, "p6:atomic5" },
	{ SRC_LINE, A, 0x1a, 0x02, true, false, false, 64, NL_FAM_P6, "p6:atomic5" },
	{ SRC_LINE, A, 0x1a, 0x02, true, false, false, 32, NL_FAM_P6, "p6:atomic5" },
	/* Hygon and the rest */
	{ SRC_LINE, NL_VENDOR_HYGON, 0x18, 0x00, true, false, false, 64, NL_FAM_P6, "p6:atomic5" },
	{ SRC_LINE, NL_VENDOR_CENTAUR, 6, 0x0f, true, false, false, 64, NL_FAM_K8, "k8:atomic5" },
	{ SRC_LINE, NL_VENDOR_OTHER, 5, 0x04, false, false, false, 32, NL_FAM_GENERIC, "generic:atomic5" },
};

static void test_ideal_nops(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct sel_row *r = &rows[i];
		struct nl_cpu_sig sig = { r->vendor, r->family, r->model, r->nopl, r->k8, r->k7 };
		struct nl_nop_choice ch;

		nl_kernel_ideal_nops(&sig, (enum nl_mode)r->mode, &ch);
		if (ch.family != r->want)
			row_fail(r, "%s family 0x%x model 0x%x: %s, want %s", nl_vendor_name(r->vendor),
				 r->family, r->model, nl_nop_family_name(ch.family),
				 nl_nop_family_name(r->want));
		if (!ch.ftrace_nop || strcmp(ch.ftrace_nop->name, r->ftrace))
			row_fail(r, "ftrace NOP %s, want %s", ch.ftrace_nop ? ch.ftrace_nop->name : "none",
				 r->ftrace);
		assert_non_null(ch.reason);
	}
}

static void test_fixed_nops(void **state)
{
	struct nl_nop_choice ch;
	const uint8_t nopl5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	const uint8_t lea5[] = { 0x3e, 0x8d, 0x74, 0x26, 0x00 };

	(void)state;
	nl_kernel_fixed_nops(NL_MODE_64, &ch);
	assert_int_equal(ch.family, NL_FAM_X86_NOPS);
	assert_memory_equal(ch.ftrace_nop->bytes, nopl5, 5);
	nl_kernel_fixed_nops(NL_MODE_32, &ch);
	assert_memory_equal(ch.ftrace_nop->bytes, lea5, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ideal_nops),
		cmocka_unit_test(test_fixed_nops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
