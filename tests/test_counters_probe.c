// SPDX-License-Identifier: MIT
/* The counter probe works with or without a hardware PMU, and says which. */
#include <errno.h>
#include <string.h>

#include "nltest.h"
#include "noplab/counters.h"

static void test_probe(void **state)
{
	struct nl_pmu_probe p;
	struct nl_diag d;

	(void)state;
	nl_diag_init(&d);
	assert_int_equal(nl_pmu_probe(&p, &d), 0);
	assert_true(p.pfm_ok);
	/* software events work on every Linux this project targets, PMU or not */
	assert_true(p.sw_usable);
	if (p.hw_usable) {
		assert_int_equal(p.hw_err, 0);
	} else {
		assert_true(p.hw_err < 0);
		assert_string_not_equal(nl_perf_open_hint(p.hw_err), "unexpected error");
	}
	/* without a kernel PMU there is nothing to count cycles with */
	if (!p.sysfs_pmu[0])
		assert_false(p.hw_usable);
}

struct hint_row {
	int line;
	int err;
	const char *needle;
};

static const struct hint_row hints[] = {
	{ SRC_LINE, -ENOENT, "no hardware PMU" },
	{ SRC_LINE, -EOPNOTSUPP, "no hardware PMU" },
	{ SRC_LINE, -EACCES, "perf_event_paranoid" },
	{ SRC_LINE, -EPERM, "CAP_PERFMON" },
	{ SRC_LINE, -EMFILE, "ulimit" },
	{ SRC_LINE, -EBUSY, "NMI watchdog" },
	{ SRC_LINE, -ENOSYS, "CONFIG_PERF_EVENTS" },
	{ SRC_LINE, 0, "available" },
};

static void test_hints(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
		if (!strstr(nl_perf_open_hint(hints[i].err), hints[i].needle))
			row_fail(&hints[i], "hint for %d lacks '%s'", hints[i].err, hints[i].needle);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_hints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
