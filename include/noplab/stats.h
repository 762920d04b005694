/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_STATS_H
#define NOPLAB_STATS_H

/*
 * Statistics shared by bench, stat and diff.  perf stat's "( +- x% )" is the
 * standard error of the mean in percent of the mean; we print the same thing
 * under the same notation, and say so.
 */

#include <stdbool.h>
#include <stddef.h>

struct nl_summary {
	size_t n;
	double mean;
	double sd;		/* sample standard deviation (n-1) */
	double sem;		/* sd / sqrt(n) */
	double sem_pct;		/* 100 * sem / |mean| */
	double median, min, max;
	double ci95_lo, ci95_hi; /* mean +- t(0.975, n-1) * sem */
};

/* Summarise n values (n >= 1; sd/sem/ci are 0 for n == 1). Returns 0 or -EINVAL. */
int nl_summarize(const double *x, size_t n, struct nl_summary *s);

/* Summary rebuilt from what perf stat prints: mean, SEM in percent, run count. */
int nl_summary_from_sem_pct(double mean, double sem_pct, size_t n, struct nl_summary *s);

enum nl_verdict {
	NL_VERDICT_NONE,	/* no significant difference */
	NL_VERDICT_HIGHER,	/* b significantly higher than a */
	NL_VERDICT_LOWER,	/* b significantly lower than a */
};

struct nl_compare {
	double diff;		/* mean_b - mean_a */
	double delta_pct;	/* 100 * diff / |mean_a| */
	double ci95_lo, ci95_hi; /* 95% CI of the difference, in percent of mean_a */
	double t, df, p;	/* Welch's t-test, two-sided */
	enum nl_verdict verdict; /* at alpha = 0.05 */
	bool practical;		/* |delta_pct| exceeds the caller's threshold */
};

/* Welch's t-test of b against a, from two summaries (needs n >= 2 each). */
int nl_compare(const struct nl_summary *a, const struct nl_summary *b, double threshold_pct,
	       struct nl_compare *c);

const char *nl_verdict_name(enum nl_verdict v);	/* "higher", "lower", "no-significant-difference" */

/* Student's t: two-sided p for |t| with df degrees of freedom, and the 0.975 quantile. */
double nl_t_two_sided_p(double t, double df);
double nl_t_quantile_975(double df);

#endif
