// SPDX-License-Identifier: MIT
/*
 * Statistics against independently computed reference values:
 *  - summaries of fixed arrays, worked by hand;
 *  - Student t quantiles from printed tables;
 *  - Welch's test on the worked examples of the Wikipedia "Welch's t-test"
 *    article (published t, df, p to 2-3 digits) and on R's t.test() output
 *    for a pair of samples (t, df, p and the 95% interval to 5+ digits);
 *  - Borislav Petkov's ideal_nops kernel-build timings (perf stat -r 5:
 *    439.809 +- 0.156 s vs 440.266 +- 0.195 s), rebuilt from mean, SEM and n
 *    as diff does from perf stat text: t ~ 1.83, df ~ 7.6, p ~ 0.11.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "nltest.h"
#include "noplab/stats.h"

#define N_MAX 24
#define ARR(...) { __VA_ARGS__ }, sizeof((double[]){ __VA_ARGS__ }) / sizeof(double)

static void near(double got, double want, double tol, int line, const char *what)
{
	if (!(fabs(got - want) <= tol))
		fail_msg("row at line %d: %s = %.10g, want %.10g +- %g", line, what, got, want, tol);
}

/* ---- summaries ------------------------------------------------------------ */

struct sum_row {
	int line;
	double x[N_MAX];
	size_t n;
	double mean, sd, median, min, max, sem_pct, ci_lo, ci_hi;
};

static const struct sum_row sums[] = {
	/* sd = sqrt(32/7); t(0.975, 7) = 2.364624 */
	{ SRC_LINE, ARR(2, 4, 4, 4, 5, 5, 7, 9), 5.0, 2.1380899, 4.5, 2, 9,
	  100 * 2.1380899 / sqrt(8) / 5, 5 - 2.364624 * 2.1380899 / sqrt(8),
	  5 + 2.364624 * 2.1380899 / sqrt(8) },
	/* sd = sqrt(2.5), sem = sqrt(0.5); t(0.975, 4) = 2.776445 */
	{ SRC_LINE, ARR(5, 1, 4, 2, 3), 3.0, 1.5811388, 3, 1, 5, 23.570226, 1.0367568, 4.9632432 },
	/* unsorted, even count: median is the mean of the middle two */
	{ SRC_LINE, ARR(4, 1, 3, 2), 2.5, 1.2909944, 2.5, 1, 4, 25.819889, 0.4457397, 4.5542603 },
	/* one run: no spread, a zero-width interval */
	{ SRC_LINE, ARR(42), 42, 0, 42, 42, 42, 0, 42, 42 },
	/* counts near 1e12: a one-pass sum of squares would lose the unit spread */
	{ SRC_LINE, ARR(1e12 + 1, 1e12 + 2, 1e12 + 3), 1e12 + 2, 1.0, 1e12 + 2, 1e12 + 1, 1e12 + 3,
	  100 * (1 / sqrt(3)) / (1e12 + 2), 1e12 + 2 - 4.302653 / sqrt(3),
	  1e12 + 2 + 4.302653 / sqrt(3) },
	/* a negative mean: the relative error is of |mean| */
	{ SRC_LINE, ARR(-10, -12), -11, 1.4142136, -11, -12, -10, 100.0 / 11, -11 - 12.706205,
	  -11 + 12.706205 },
	/* identical runs */
	{ SRC_LINE, ARR(7, 7, 7), 7, 0, 7, 7, 7, 0, 7, 7 },
};

static void test_summarize(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(sums) / sizeof(sums[0]); i++) {
		const struct sum_row *r = &sums[i];
		struct nl_summary s;
		double tol = 1e-6 * (1 + fabs(r->mean) * 1e-6);

		if (nl_summarize(r->x, r->n, &s))
			row_fail(r, "nl_summarize failed");
		if (s.n != r->n)
			row_fail(r, "n = %zu", s.n);
		near(s.mean, r->mean, tol, r->line, "mean");
		near(s.sd, r->sd, 1e-6, r->line, "sd");
		near(s.sem, r->sd / sqrt((double)r->n), 1e-6, r->line, "sem");
		near(s.median, r->median, tol, r->line, "median");
		near(s.min, r->min, 0, r->line, "min");
		near(s.max, r->max, 0, r->line, "max");
		near(s.sem_pct, r->sem_pct, 1e-5 * (1 + r->sem_pct), r->line, "sem_pct");
		near(s.ci95_lo, r->ci_lo, 1e-5 + tol, r->line, "ci95_lo");
		near(s.ci95_hi, r->ci_hi, 1e-5 + tol, r->line, "ci95_hi");
	}
}

struct bad_row {
	int line;
	double x[4];
	size_t n;
};

static const struct bad_row bads[] = {
	{ SRC_LINE, { 1 }, 0 },
	{ SRC_LINE, { 1, NAN, 3 }, 3 },
	{ SRC_LINE, { 1, 2, INFINITY }, 3 },
	{ SRC_LINE, { -INFINITY }, 1 },
};

static void test_summarize_rejects(void **state)
{
	struct nl_summary s;

	(void)state;
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++)
		if (nl_summarize(bads[i].x, bads[i].n, &s) != -EINVAL)
			row_fail(&bads[i], "accepted");
	assert_int_equal(nl_summarize(NULL, 3, &s), -EINVAL);
}

/* ---- the t distribution ---------------------------------------------------- */

struct t_row {
	int line;
	double df, q975;	/* from a printed t table, 6 significant digits */
};

static const struct t_row tq[] = {
	{ SRC_LINE, 1, 12.7062 },
	{ SRC_LINE, 2, 4.30265 },
	{ SRC_LINE, 4, 2.77645 },
	{ SRC_LINE, 9, 2.26216 },
	{ SRC_LINE, 30, 2.04227 },
	{ SRC_LINE, 7.6322, 2.33 },	/* fractional df: between t(7)=2.365 and t(8)=2.306 */
	{ SRC_LINE, 1e9, 1.95996 },	/* the normal limit */
};

static void test_t_distribution(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(tq) / sizeof(tq[0]); i++) {
		const struct t_row *r = &tq[i];
		double q = nl_t_quantile_975(r->df);
		double tol = r->line == tq[5].line ? 0.01 : 5e-5 * r->q975;

		near(q, r->q975, tol, r->line, "t quantile");
		/* the quantile and the CDF must invert each other */
		near(nl_t_two_sided_p(q, r->df), 0.05, 1e-9, r->line, "p at the quantile");
		near(nl_t_two_sided_p(-q, r->df), 0.05, 1e-9, r->line, "p at minus the quantile");
	}
	assert_true(nl_t_two_sided_p(0, 5) == 1.0);
	assert_true(nl_t_two_sided_p(INFINITY, 5) == 0.0);
	assert_true(isnan(nl_t_two_sided_p(NAN, 5)));
	assert_true(isnan(nl_t_two_sided_p(1, 0)));
	assert_true(isnan(nl_t_quantile_975(0)));
	assert_true(isnan(nl_t_quantile_975(-1)));
}

/* ---- Welch from per-run values ---------------------------------------------- */

struct welch_row {
	int line;
	double a[N_MAX];
	size_t na;
	double b[N_MAX];
	size_t nb;
	double t, t_tol, df, df_tol, p, p_tol;
	double ci_lo, ci_hi, ci_tol;	/* of b - a in absolute units; NAN if not published */
	enum nl_verdict verdict;
};

static const struct welch_row welch[] = {
	/* Wikipedia "Welch's t-test", example 1: t = -2.46, df = 25.0, p = 0.021 (a, b swapped) */
	{ SRC_LINE,
	  ARR(27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4),
	  ARR(27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4),
	  2.46, 0.005, 25.0, 0.05, 0.021, 0.0005, NAN, NAN, 0, NL_VERDICT_HIGHER },
	/* example 2: t = -1.57, df = 9.9, p = 0.149 */
	{ SRC_LINE, ARR(17.2, 20.9, 22.6, 18.1, 21.7, 21.4, 23.5, 24.2, 14.7, 21.8),
	  ARR(21.5, 22.8, 21.0, 23.0, 21.6, 23.6, 22.5, 20.7, 23.4, 21.8, 20.7, 21.7, 21.5, 22.5, 23.6,
	      21.5, 22.5, 23.5, 21.5, 21.8),
	  1.57, 0.005, 9.9, 0.05, 0.149, 0.0005, NAN, NAN, 0, NL_VERDICT_NONE },
	/*
	 * R: t.test(ts1, ts2) -> t = -1.8325, df = 17.9, p-value = 0.08356,
	 * 95 percent confidence interval -2.1469104 0.1469104 (of x - y).
	 */
	{ SRC_LINE, ARR(11, 9, 10, 11, 10, 12, 9, 11, 12, 9), ARR(11, 13, 10, 13, 12, 9, 11, 12, 12, 11),
	  1.8325, 0.00005, 17.9, 0.05, 0.08356, 0.000005, -0.1469104, 2.1469104, 1e-6,
	  NL_VERDICT_NONE },
	/* the same samples the other way round: the sign flips, nothing else */
	{ SRC_LINE, ARR(11, 13, 10, 13, 12, 9, 11, 12, 12, 11), ARR(11, 9, 10, 11, 10, 12, 9, 11, 12, 9),
	  -1.8325, 0.00005, 17.9, 0.05, 0.08356, 0.000005, -2.1469104, 0.1469104, 1e-6,
	  NL_VERDICT_NONE },
};

static void test_welch(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(welch) / sizeof(welch[0]); i++) {
		const struct welch_row *r = &welch[i];
		struct nl_summary a, b;
		struct nl_compare c;

		if (nl_summarize(r->a, r->na, &a) || nl_summarize(r->b, r->nb, &b))
			row_fail(r, "summarize failed");
		if (nl_compare(&a, &b, 0.5, &c))
			row_fail(r, "compare failed");
		near(c.t, r->t, r->t_tol, r->line, "t");
		near(c.df, r->df, r->df_tol, r->line, "df");
		near(c.p, r->p, r->p_tol, r->line, "p");
		near(c.diff, b.mean - a.mean, 1e-12, r->line, "diff");
		near(c.delta_pct, 100 * (b.mean - a.mean) / fabs(a.mean), 1e-9, r->line, "delta_pct");
		if (!isnan(r->ci_lo)) {
			near(c.ci95_lo * fabs(a.mean) / 100, r->ci_lo, r->ci_tol, r->line, "ci95_lo");
			near(c.ci95_hi * fabs(a.mean) / 100, r->ci_hi, r->ci_tol, r->line, "ci95_hi");
		}
		/* a 95% interval excludes zero exactly when p < 0.05 */
		if ((c.ci95_lo > 0 || c.ci95_hi < 0) != (c.p < 0.05))
			row_fail(r, "interval [%g, %g] disagrees with p = %g", c.ci95_lo, c.ci95_hi, c.p);
		if (c.verdict != r->verdict)
			row_fail(r, "verdict %s", nl_verdict_name(c.verdict));
	}
}

/* ---- Welch from what perf stat prints ---------------------------------------- */

struct sem_row {
	int line;
	double mean_a, sem_a;	/* absolute SEM as printed: "439.809 +- 0.156" */
	size_t na;
	double mean_b, sem_b;
	size_t nb;
	double t, df, p, tol_t, tol_df, tol_p;
	double sd_a, sd_b;	/* per-run SDs implied: sem * sqrt(n) */
	enum nl_verdict verdict;
	bool practical;		/* at a 0.5% threshold */
};

static const struct sem_row sem_rows[] = {
	/* Borislav, LKML 2021-03-12: t ~ 1.83, df ~ 7.6, p ~ 0.11, per-run SD ~ 0.35 and ~ 0.44 */
	{ SRC_LINE, 439.809, 0.156, 5, 440.266, 0.195, 5, 1.8300, 7.632, 0.1064, 0.0005, 0.001,
	  0.0005, 0.34882, 0.43603, NL_VERDICT_NONE, false },
	/* the same numbers with ten times the runs would be significant */
	{ SRC_LINE, 439.809, 0.156 / sqrt(10), 50, 440.266, 0.195 / sqrt(10), 50, 5.787, 93.495, 1e-7,
	  0.001, 0.001, 1e-7, 0.34882, 0.43603, NL_VERDICT_HIGHER, false },
	/* a 2% drop in 10 runs at 0.1% SEM each: significantly lower and practically large */
	{ SRC_LINE, 1000, 1, 10, 980, 1, 10, -14.142, 18.0, 1e-10, 0.001, 0.001, 1e-10, 3.16228,
	  3.16228, NL_VERDICT_LOWER, true },
};

static void test_welch_from_sem(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(sem_rows) / sizeof(sem_rows[0]); i++) {
		const struct sem_row *r = &sem_rows[i];
		struct nl_summary a, b;
		struct nl_compare c;

		if (nl_summary_from_sem_pct(r->mean_a, 100 * r->sem_a / r->mean_a, r->na, &a) ||
		    nl_summary_from_sem_pct(r->mean_b, 100 * r->sem_b / r->mean_b, r->nb, &b))
			row_fail(r, "from_sem_pct failed");
		near(a.sem, r->sem_a, 1e-12, r->line, "sem a");
		near(b.sem, r->sem_b, 1e-12, r->line, "sem b");
		near(a.sd, r->sd_a, 1e-5, r->line, "sd a");
		near(b.sd, r->sd_b, 1e-5, r->line, "sd b");
		if (!isnan(a.median) || !isnan(a.min) || !isnan(a.max))
			row_fail(r, "a summary from perf text cannot know median/min/max");
		if (nl_compare(&a, &b, 0.5, &c))
			row_fail(r, "compare failed");
		near(c.t, r->t, r->tol_t, r->line, "t");
		near(c.df, r->df, r->tol_df, r->line, "df");
		near(c.p, r->p, r->tol_p, r->line, "p");
		if (c.verdict != r->verdict)
			row_fail(r, "verdict %s", nl_verdict_name(c.verdict));
		if (c.practical != r->practical)
			row_fail(r, "practical %d (delta %g%%)", c.practical, c.delta_pct);
	}
}

/* ---- edges ------------------------------------------------------------------ */

static void test_compare_edges(void **state)
{
	const double same[] = { 100, 100, 100 }, more[] = { 101, 101, 101 }, one[] = { 5 };
	const double spread[] = { 99, 100, 101, 100 }, zero[] = { 0, 0, 0 }, some[] = { 1, 2, 3 };
	struct nl_summary a, b, single, z, s;
	struct nl_compare c;

	(void)state;
	assert_int_equal(nl_summarize(same, 3, &a), 0);
	assert_int_equal(nl_summarize(more, 3, &b), 0);

	/* zero variance on both sides and equal: certainly no difference */
	assert_int_equal(nl_compare(&a, &a, 0.5, &c), 0);
	assert_true(c.t == 0.0 && c.p == 1.0);
	assert_int_equal(c.verdict, NL_VERDICT_NONE);
	assert_true(c.delta_pct == 0.0 && c.ci95_lo == 0.0 && c.ci95_hi == 0.0);

	/* zero variance both sides, different: an exact difference */
	assert_int_equal(nl_compare(&a, &b, 0.5, &c), 0);
	assert_true(isinf(c.t) && c.t > 0 && c.p == 0.0);
	assert_int_equal(c.verdict, NL_VERDICT_HIGHER);
	assert_true(c.practical);	/* 1% > 0.5% */
	assert_true(c.ci95_lo == 1.0 && c.ci95_hi == 1.0);
	assert_int_equal(nl_compare(&b, &a, 2.0, &c), 0);
	assert_int_equal(c.verdict, NL_VERDICT_LOWER);
	assert_false(c.practical);	/* 0.99% < 2% */

	/* one side without spread: df falls back to the other side's n - 1 */
	assert_int_equal(nl_summarize(spread, 4, &s), 0);
	assert_int_equal(nl_compare(&a, &s, 0.5, &c), 0);
	assert_true(fabs(c.df - 3.0) < 1e-12);
	assert_true(c.t == 0.0 && c.p == 1.0);

	/* one run cannot be compared */
	assert_int_equal(nl_summarize(one, 1, &single), 0);
	assert_int_equal(nl_compare(&single, &a, 0.5, &c), -EINVAL);
	assert_int_equal(nl_compare(&a, &single, 0.5, &c), -EINVAL);

	/* a zero baseline: no percentage, but t and p stand */
	assert_int_equal(nl_summarize(zero, 3, &z), 0);
	assert_int_equal(nl_summarize(some, 3, &s), 0);
	assert_int_equal(nl_compare(&z, &s, 0.5, &c), 0);
	assert_true(isnan(c.delta_pct) && isnan(c.ci95_lo) && isnan(c.ci95_hi));
	assert_false(c.practical);
	near(c.t, 2 / (1 / sqrt(3)), 1e-9, __LINE__, "t vs zero");

	/* a zero mean with spread has no relative error */
	{
		const double sym[] = { -1, 1 };

		assert_int_equal(nl_summarize(sym, 2, &s), 0);
		assert_true(isnan(s.sem_pct));
	}

	/* summaries from perf text: bad values are refused */
	assert_int_equal(nl_summary_from_sem_pct(1, -0.1, 5, &s), -EINVAL);
	assert_int_equal(nl_summary_from_sem_pct(NAN, 0.1, 5, &s), -EINVAL);
	assert_int_equal(nl_summary_from_sem_pct(1, INFINITY, 5, &s), -EINVAL);
	assert_int_equal(nl_summary_from_sem_pct(1, 0.1, 0, &s), -EINVAL);
	/* one run: perf prints no +-, so there is nothing but the value */
	assert_int_equal(nl_summary_from_sem_pct(12.5, 0, 1, &s), 0);
	assert_true(s.sd == 0 && s.sem == 0 && s.ci95_lo == 12.5 && s.ci95_hi == 12.5);
	/* the printed percentage is kept as printed */
	assert_int_equal(nl_summary_from_sem_pct(-200, 1.25, 4, &s), 0);
	assert_true(s.sem_pct == 1.25);
	near(s.sem, 2.5, 1e-12, __LINE__, "sem of a negative mean");
}

static void test_verdict_names(void **state)
{
	(void)state;
	assert_string_equal(nl_verdict_name(NL_VERDICT_HIGHER), "higher");
	assert_string_equal(nl_verdict_name(NL_VERDICT_LOWER), "lower");
	assert_string_equal(nl_verdict_name(NL_VERDICT_NONE), "no-significant-difference");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summarize),
		cmocka_unit_test(test_summarize_rejects),
		cmocka_unit_test(test_t_distribution),
		cmocka_unit_test(test_welch),
		cmocka_unit_test(test_welch_from_sem),
		cmocka_unit_test(test_compare_edges),
		cmocka_unit_test(test_verdict_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
