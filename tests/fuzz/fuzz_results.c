// SPDX-License-Identifier: MIT
/*
 * Saved results as `noplab diff` loads them: noplab's own JSON (stat and
 * bench documents) through the format detector, then a diff against itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = (char *)fz_dup(data, size);
	struct nl_results r;
	struct nl_diag d;

	if (!text)
		return 0;
	nl_diag_init(&d);
	nl_results_init(&r);
	if (!nl_results_read_json(text, size, &r, &d))
		fz_diff_self(&r);
	nl_results_free(&r);
	/* the detector that picks JSON, perf text or CSV (it resets r itself) */
	if (!nl_results_parse(text, size, &r, &d))
		nl_results_assume_runs(&r, 3);
	nl_results_free(&r);
	free(text);
	return 0;
}
