/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_RESULTS_H
#define NOPLAB_RESULTS_H

/*
 * Saved measurements, whatever produced them: `noplab stat`, `noplab bench`,
 * or the text/CSV that `perf stat` prints.  Every input becomes the same
 * list of series (one measured quantity over runs), so `noplab diff`
 * compares them with one piece of code.
 *
 * A series knows its per-run values when the input kept them (noplab JSON)
 * and otherwise only a summary rebuilt from the printed mean, "+- x%" and
 * run count (perf's "+-" is the standard error of the mean).  It also keeps
 * what makes a comparison weak: multiplexing, and how much the printed
 * rounding hides.
 */

#include <stdbool.h>
#include <stddef.h>

#include "noplab/diag.h"
#include "noplab/stats.h"

enum nl_series_state {
	NL_SERIES_COUNTED,
	NL_SERIES_NOT_COUNTED,		/* perf "<not counted>": enabled but never ran */
	NL_SERIES_NOT_SUPPORTED,	/* perf "<not supported>", or not measurable here */
};

struct nl_series {
	char name[128];			/* "cycles", "elapsed", "calls/p6:5/cycles_per_call" */
	char unit[24];			/* "msec", "seconds", "" for plain counts */
	char source[8];			/* "hw", "sw", "tsc", "sim", "wall", or "" when unknown */
	enum nl_series_state state;
	size_t n;			/* runs behind the summary (0 when unknown) */
	double *runs;			/* n per-run values, or NULL when only a summary exists */
	struct nl_summary sum;		/* valid when state == NL_SERIES_COUNTED */
	bool has_sem;			/* a spread is known (runs, or a printed +-) */
	double running_pct;		/* least share of enabled time on the PMU; 100 = always on */
	bool scaled;			/* the values are extrapolated from multiplexed counts */
	double sem_pct_printed;		/* the "+- x%" as printed, or NAN */
	double sem_pct_resolution;	/* half a unit of its last printed digit, 0 when exact */
	double mean_resolution;		/* half a unit of the printed mean's last digit, 0 when exact */
	char metric[64];		/* a derived metric as printed ("0.579 CPUs utilized"), or "" */
};

struct nl_results {
	/* "noplab-stat", "noplab-bench", "perf-stat", "perf-stat-2.6", "perf-stat-csv" */
	char format[24];
	char command[512];	/* what was measured, when the input says */
	size_t runs;		/* repetitions; 0 when the input does not say (perf stat -x,) */
	size_t nr, cap;
	struct nl_series *series;
};

void nl_results_init(struct nl_results *r);
void nl_results_free(struct nl_results *r);

/* Append a series named name (state COUNTED, nothing measured yet); NULL when out of memory. */
struct nl_series *nl_results_add(struct nl_results *r, const char *name);

/* Give a series its per-run values (copied) and summarise them. */
int nl_series_set_runs(struct nl_series *s, const double *v, size_t n);

/* Give a series a summary from a printed mean, "+- x%" and run count. */
int nl_series_set_summary(struct nl_series *s, double mean, double sem_pct, size_t n);

/*
 * The series named name: exact match first, then case-insensitively with
 * perf's modifier suffix (":u", ":k" ...) and the 2.6.3x spellings
 * ("task-clock-msecs", "CPU-migrations") folded.
 */
const struct nl_series *nl_results_find(const struct nl_results *r, const char *name);

/*
 * Inputs that do not say how many runs they summarise (perf stat -x,) get n
 * from the user; series with a spread are summarised again with it.
 */
int nl_results_assume_runs(struct nl_results *r, size_t n);

/* Load any supported input, detected from its contents. */
int nl_results_load(const char *path, struct nl_results *r, struct nl_diag *d);
int nl_results_parse(const char *text, size_t len, struct nl_results *r, struct nl_diag *d);

/* noplab's own JSON (`noplab stat -o`, `noplab bench -o`). */
int nl_results_read_json(const char *text, size_t len, struct nl_results *r, struct nl_diag *d);

/* ---- comparison (noplab diff) ----------------------------------------------- */

#define NL_DIFF_WARN_MAX 8

struct nl_diff_row {
	const struct nl_series *a, *b;
	bool compared;			/* both counted, with a spread and n >= 2 */
	struct nl_compare cmp;		/* when compared */
	size_t nr_warnings;
	char warnings[NL_DIFF_WARN_MAX][192];
};

struct nl_diff_opts {
	double threshold_pct;		/* practical threshold, default 0.5 */
	double max_sem_pct;		/* warn above this relative error, default 5 */
	size_t min_runs;		/* warn below this many runs, default 3 */
};

/*
 * One row per series present in both inputs, in a's order.  *rows is
 * malloc'd; free it with free().  Series with no counterpart are skipped.
 */
int nl_results_diff(const struct nl_results *a, const struct nl_results *b,
		    const struct nl_diff_opts *o, struct nl_diff_row **rows, size_t *nr,
		    struct nl_diag *d);

#endif
