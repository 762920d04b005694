// SPDX-License-Identifier: MIT
/*
 * What `perf stat` prints (today's text, the 2.6.3x text, -x, CSV), as
 * `noplab diff` reads it from a file pasted out of a mail, then compared
 * with itself so the statistics see whatever numbers the parser let through.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_diff.h"
#include "noplab/perfstat.h"
#include "noplab/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = (char *)fz_dup(data, size);
	struct nl_results r;
	struct nl_diag d;

	if (!text)
		return 0;
	nl_diag_init(&d);
	nl_perfstat_detect(text, size);
	nl_results_init(&r);
	if (!nl_perfstat_parse(text, size, &r, &d)) {
		FZ_ASSERT(r.nr <= r.cap);
		for (size_t i = 0; i < r.nr; i++)
			FZ_ASSERT(memchr(r.series[i].name, 0, sizeof(r.series[i].name)));
		if (!r.runs)
			nl_results_assume_runs(&r, 5);
		fz_diff_self(&r);
	}
	nl_results_free(&r);
	free(text);
	return 0;
}
