// SPDX-License-Identifier: MIT
/*
 * Statistics shared by bench, stat and diff: summaries, Welch's t-test and
 * the Student t distribution.  GSL supplies the t CDF and quantile because
 * they are numerically delicate; everything around them is plain arithmetic.
 *
 * GSL's default error handler aborts the process, and turning it off is a
 * process-wide setting we do not want to own.  So every call into GSL here
 * gets arguments it accepts without complaint: finite t, 0 < df, and df
 * capped where the t distribution is the normal one to double precision
 * anyway (the incomplete beta function stops converging for huge df).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "noplab/stats.h"

/* Beyond this many degrees of freedom, t and the standard normal agree to ~1e-7. */
#define NL_DF_NORMAL 1e7

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

double nl_t_two_sided_p(double t, double df)
{
	double p;

	if (isnan(t) || isnan(df) || df <= 0)
		return NAN;
	if (isinf(t))
		return 0.0;
	t = fabs(t);
	if (df > NL_DF_NORMAL)
		p = 2.0 * gsl_cdf_ugaussian_Q(t);
	else
		p = 2.0 * gsl_cdf_tdist_Q(t, df);
	return p > 1.0 ? 1.0 : p;
}

double nl_t_quantile_975(double df)
{
	if (isnan(df) || df <= 0)
		return NAN;
	if (df > NL_DF_NORMAL)
		return gsl_cdf_ugaussian_Pinv(0.975);
	return gsl_cdf_tdist_Pinv(0.975, df);
}

/* Fill sem_pct and the 95% interval from n, mean and sd. */
static void finish_summary(struct nl_summary *s)
{
	s->sem = s->n > 1 ? s->sd / sqrt((double)s->n) : 0.0;
	/*
	 * A relative error of a zero mean is undefined; with no spread at all
	 * it is still honestly 0 (perf prints 0.00% for identical runs).
	 */
	if (s->sem == 0.0)
		s->sem_pct = 0.0;
	else if (s->mean == 0.0)
		s->sem_pct = NAN;
	else
		s->sem_pct = 100.0 * s->sem / fabs(s->mean);
	if (s->n > 1) {
		double h = nl_t_quantile_975((double)(s->n - 1)) * s->sem;

		s->ci95_lo = s->mean - h;
		s->ci95_hi = s->mean + h;
	} else {
		s->ci95_lo = s->ci95_hi = s->mean;
	}
}

int nl_summarize(const double *x, size_t n, struct nl_summary *s)
{
	double sum = 0.0, m2 = 0.0, *sorted;

	if (!x || !s || n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return -EINVAL;
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, x, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_double);

	memset(s, 0, sizeof(*s));
	s->n = n;
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	s->mean = sum / (double)n;
	/* two passes: the naive sum of squares loses everything on counts near 1e12 */
	for (size_t i = 0; i < n; i++)
		m2 += (x[i] - s->mean) * (x[i] - s->mean);
	s->sd = n > 1 ? sqrt(m2 / (double)(n - 1)) : 0.0;
	s->min = sorted[0];
	s->max = sorted[n - 1];
	s->median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
	free(sorted);
	finish_summary(s);
	return 0;
}

int nl_summary_from_sem_pct(double mean, double sem_pct, size_t n, struct nl_summary *s)
{
	if (!s || n == 0 || !isfinite(mean) || !isfinite(sem_pct) || sem_pct < 0)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->n = n;
	s->mean = mean;
	/* perf stat's "+- x%" is 100 * SEM / mean, so the per-run SD is SEM * sqrt(n) */
	s->sd = n > 1 ? fabs(mean) * sem_pct / 100.0 * sqrt((double)n) : 0.0;
	/* what perf printed is all we know: no median or extremes */
	s->median = s->min = s->max = NAN;
	finish_summary(s);
	/* keep the caller's percentage exactly, not a round trip through sd */
	if (n > 1 && s->sem != 0.0)
		s->sem_pct = sem_pct;
	return 0;
}

static bool summary_ok(const struct nl_summary *s)
{
	return s && s->n >= 2 && isfinite(s->mean) && isfinite(s->sem) && s->sem >= 0;
}

int nl_compare(const struct nl_summary *a, const struct nl_summary *b, double threshold_pct,
	       struct nl_compare *c)
{
	double va, vb, se, h;

	if (!c || !summary_ok(a) || !summary_ok(b) || isnan(threshold_pct))
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->diff = b->mean - a->mean;
	va = a->sem * a->sem;
	vb = b->sem * b->sem;
	se = sqrt(va + vb);

	if (se == 0.0) {
		/*
		 * No spread on either side (deterministic counts such as
		 * instructions of a fixed loop): any difference is exact, and
		 * no difference is certainly none.  df is then the pooled one.
		 */
		c->df = (double)(a->n + b->n - 2);
		c->t = c->diff == 0.0 ? 0.0 : copysign(INFINITY, c->diff);
		c->p = c->diff == 0.0 ? 1.0 : 0.0;
		h = 0.0;
	} else {
		/* Welch-Satterthwaite */
		c->df = (va + vb) * (va + vb) /
			(va * va / (double)(a->n - 1) + vb * vb / (double)(b->n - 1));
		c->t = c->diff / se;
		c->p = nl_t_two_sided_p(c->t, c->df);
		h = nl_t_quantile_975(c->df) * se;
	}
	if (c->p < 0.05)
		c->verdict = c->diff > 0 ? NL_VERDICT_HIGHER : NL_VERDICT_LOWER;
	else
		c->verdict = NL_VERDICT_NONE;

	if (a->mean == 0.0) {
		/* a relative difference to nothing is undefined; t and p still stand */
		c->delta_pct = c->ci95_lo = c->ci95_hi = NAN;
		c->practical = false;
	} else {
		double scale = 100.0 / fabs(a->mean);

		c->delta_pct = c->diff * scale;
		c->ci95_lo = (c->diff - h) * scale;
		c->ci95_hi = (c->diff + h) * scale;
		c->practical = fabs(c->delta_pct) > threshold_pct;
	}
	return 0;
}

const char *nl_verdict_name(enum nl_verdict v)
{
	switch (v) {
	case NL_VERDICT_HIGHER:
		return "higher";
	case NL_VERDICT_LOWER:
		return "lower";
	case NL_VERDICT_NONE:
		break;
	}
	return "no-significant-difference";
}
