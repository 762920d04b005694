/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_PERFSTAT_H
#define NOPLAB_PERFSTAT_H

/*
 * Reading what `perf stat` prints, in three dialects:
 *  - today's text ("2.74 msec task-clock  # 0.579 CPUs utilized  ( +-  2.93% )",
 *    multiplexing as "(83.33%)", "X +- Y seconds time elapsed");
 *  - the 2.6.3x text ("task-clock-msecs", "( +-   0.027% )",
 *    "(scaled from 81.00%)", "X  seconds time elapsed   ( +- p% )");
 *  - `perf stat -x,` CSV (value, unit, event, [variance%], run time, pct running, metric...).
 * Numbers may carry thousands separators; <not supported> and <not counted>
 * rows are kept as such.  CSV does not say how many runs it summarises, so
 * its results have runs == 0 (see nl_results_assume_runs()).
 */

#include <stdbool.h>
#include <stddef.h>

#include "noplab/diag.h"
#include "noplab/results.h"

/* Does text look like perf stat output (text or CSV)? */
bool nl_perfstat_detect(const char *text, size_t len);

int nl_perfstat_parse(const char *text, size_t len, struct nl_results *r, struct nl_diag *d);

#endif
