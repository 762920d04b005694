/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_FUZZ_DIFF_H
#define NOPLAB_FUZZ_DIFF_H

/*
 * Parsed results compared with themselves, as `noplab diff A A` would: the
 * statistics then see whatever numbers a parser let through.
 */
#include "fuzz_common.h"
#include "noplab/results.h"

static inline void fz_diff_self(const struct nl_results *r)
{
	struct nl_diff_opts o = { .threshold_pct = 0.5, .max_sem_pct = 5, .min_runs = 3 };
	struct nl_diff_row *rows = NULL;
	struct nl_diag d;
	size_t nr = 0;

	nl_diag_init(&d);
	for (size_t i = 0; i < r->nr; i++)
		FZ_ASSERT(nl_results_find(r, r->series[i].name) != NULL);
	if (!nl_results_diff(r, r, &o, &rows, &nr, &d))
		free(rows);
}

#endif
