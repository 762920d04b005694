// SPDX-License-Identifier: MIT
/*
 * Saved measurements as series, and the comparison behind `noplab diff`:
 * match the series two inputs share, run Welch's test on each, and say
 * where a verdict rests on weak ground.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "noplab/perfstat.h"
#include "noplab/results.h"

/* Inputs larger than this are not perf stat output or noplab results. */
#define NL_RESULTS_MAX_BYTES (64u << 20)

void nl_results_init(struct nl_results *r)
{
	memset(r, 0, sizeof(*r));
}

void nl_results_free(struct nl_results *r)
{
	for (size_t i = 0; i < r->nr; i++)
		free(r->series[i].runs);
	free(r->series);
	memset(r, 0, sizeof(*r));
}

struct nl_series *nl_results_add(struct nl_results *r, const char *name)
{
	struct nl_series *s;

	if (r->nr == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		struct nl_series *p = realloc(r->series, cap * sizeof(*p));

		if (!p)
			return NULL;
		r->series = p;
		r->cap = cap;
	}
	s = &r->series[r->nr++];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->state = NL_SERIES_COUNTED;
	s->running_pct = 100.0;
	s->sem_pct_printed = NAN;
	return s;
}

int nl_series_set_runs(struct nl_series *s, const double *v, size_t n)
{
	double *copy;
	int ret;

	if (!n)
		return -EINVAL;
	copy = malloc(n * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, v, n * sizeof(*copy));
	ret = nl_summarize(copy, n, &s->sum);
	if (ret) {
		free(copy);
		return ret;
	}
	free(s->runs);
	s->runs = copy;
	s->n = n;
	s->has_sem = n >= 2;
	s->state = NL_SERIES_COUNTED;
	return 0;
}

int nl_series_set_summary(struct nl_series *s, double mean, double sem_pct, size_t n)
{
	if (n) {
		int ret = nl_summary_from_sem_pct(mean, sem_pct, n, &s->sum);

		if (ret)
			return ret;
	} else {
		/* the run count comes later (nl_results_assume_runs); the SEM is known now */
		if (!isfinite(mean) || !isfinite(sem_pct) || sem_pct < 0)
			return -EINVAL;
		memset(&s->sum, 0, sizeof(s->sum));
		s->sum.mean = mean;
		s->sum.sem_pct = sem_pct;
		s->sum.sem = fabs(mean) * sem_pct / 100.0;
		s->sum.sd = s->sum.median = s->sum.min = s->sum.max = NAN;
		s->sum.ci95_lo = s->sum.ci95_hi = NAN;
	}
	s->n = n;
	s->has_sem = n >= 2;
	return 0;
}

int nl_results_assume_runs(struct nl_results *r, size_t n)
{
	if (!n)
		return -EINVAL;
	for (size_t i = 0; i < r->nr; i++) {
		struct nl_series *s = &r->series[i];
		bool had_sem = s->has_sem || s->sum.sem_pct > 0 || !isnan(s->sem_pct_printed);
		int ret;

		if (s->state != NL_SERIES_COUNTED || s->runs || s->n)
			continue;
		ret = nl_series_set_summary(s, s->sum.mean, s->sum.sem_pct, n);
		if (ret)
			return ret;
		s->has_sem = had_sem && n >= 2;
	}
	r->runs = n;
	return 0;
}

/* Lower case, perf modifiers (":u", ":uk") dropped, 2.6.3x spellings folded. */
static void fold_name(const char *in, char *out, size_t size)
{
	size_t n = 0, colon;

	for (; in[n] && n + 1 < size; n++)
		out[n] = (char)tolower((unsigned char)in[n]);
	out[n] = '\0';
	colon = strcspn(out, ":");
	if (out[colon] && out[colon + 1] && strspn(out + colon + 1, "ukhgpi") == strlen(out + colon + 1))
		out[colon] = '\0';
	n = strlen(out);
	if (n > 6 && !strcmp(out + n - 6, "-msecs"))
		out[n - 6] = '\0';
}

const struct nl_series *nl_results_find(const struct nl_results *r, const char *name)
{
	char want[sizeof(r->series[0].name)], have[sizeof(want)];

	for (size_t i = 0; i < r->nr; i++)
		if (!strcmp(r->series[i].name, name))
			return &r->series[i];
	fold_name(name, want, sizeof(want));
	for (size_t i = 0; i < r->nr; i++) {
		fold_name(r->series[i].name, have, sizeof(have));
		if (!strcmp(have, want))
			return &r->series[i];
	}
	return NULL;
}

int nl_results_parse(const char *text, size_t len, struct nl_results *r, struct nl_diag *d)
{
	size_t i = 0;

	nl_results_init(r);
	while (i < len && isspace((unsigned char)text[i]))
		i++;
	if (i < len && text[i] == '{')
		return nl_results_read_json(text, len, r, d);
	if (nl_perfstat_detect(text, len))
		return nl_perfstat_parse(text, len, r, d);
	return nl_fail(d, -NL_E_FORMAT,
		       "neither noplab JSON nor perf stat output (text or -x, CSV)");
}

int nl_results_load(const char *path, struct nl_results *r, struct nl_diag *d)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	char *buf;
	size_t len;
	int ret;

	nl_results_init(r);
	if (!f)
		return nl_fail_errno(d, -errno, "cannot open");
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fclose(f);
		return nl_fail(d, -EISDIR, "not a regular file");
	}
	if ((unsigned long long)st.st_size > NL_RESULTS_MAX_BYTES) {
		fclose(f);
		return nl_fail(d, -NL_E_LIMIT, "%lld bytes: too large for results",
			       (long long)st.st_size);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	len = fread(buf, 1, (size_t)st.st_size, f);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return nl_fail(d, -EIO, "read error");
	}
	fclose(f);
	buf[len] = '\0';
	ret = nl_results_parse(buf, len, r, d);
	free(buf);
	if (ret)
		nl_results_free(r);
	return ret;
}

/* ---- comparison --------------------------------------------------------------- */

static void warn(struct nl_diff_row *row, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warn(struct nl_diff_row *row, const char *fmt, ...)
{
	va_list ap;

	if (row->nr_warnings >= NL_DIFF_WARN_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(row->warnings[row->nr_warnings++], sizeof(row->warnings[0]), fmt, ap);
	va_end(ap);
}

static const char *state_words(enum nl_series_state st)
{
	return st == NL_SERIES_NOT_SUPPORTED ? "not supported" : "not counted";
}

/* Warnings about one side; also the summary to test with (a hidden +- made explicit). */
static void check_side(struct nl_diff_row *row, const char *side, const struct nl_series *s,
		       const struct nl_diff_opts *o, struct nl_summary *use)
{
	*use = s->sum;
	if (s->running_pct < 100.0)
		warn(row, "%s: %s, counted %.2f%% of the time", side,
		     s->scaled ? "multiplexed and scaled" : "multiplexed", s->running_pct);
	else if (s->scaled)
		warn(row, "%s: values scaled from multiplexed counts", side);
	if (!s->n)
		warn(row, "%s: the run count is unknown (perf stat -x, does not print it; give --runs)",
		     side);
	else if (s->n < o->min_runs)
		warn(row, "%s: only %zu run%s", side, s->n, s->n == 1 ? "" : "s");
	if (s->has_sem && s->sum.sem_pct > o->max_sem_pct)
		warn(row, "%s: relative error %.2f%% is above %.0f%%", side, s->sum.sem_pct,
		     o->max_sem_pct);
	if (!s->runs && s->has_sem && s->sem_pct_resolution > 0) {
		if (s->sum.sem_pct == 0 || s->sem_pct_printed == 0) {
			/* "+- 0.00%": the error is below what was printed, not zero */
			double bound = s->sem_pct_resolution;

			if (!isnan(s->sem_pct_printed))
				bound += s->sem_pct_printed;

			warn(row, "%s: printed +- is 0 at this precision; tested as %.3g%%", side, bound);
			if (s->n) {
				nl_summary_from_sem_pct(s->sum.mean, bound, s->n, use);
			}
		} else if (s->sem_pct_resolution > 0.1 * s->sum.sem_pct) {
			warn(row, "%s: printed +- %.*f%% is rounded: the error is known only to +-%.0f%% of itself",
			     side, s->sem_pct_resolution < 0.001 ? 3 : 2, s->sem_pct_printed,
			     100.0 * s->sem_pct_resolution / s->sum.sem_pct);
		}
	}
	if (!s->runs && s->mean_resolution > 0 && s->sum.mean != 0 && s->n >= 2) {
		double res_pct = 100.0 * s->mean_resolution / fabs(s->sum.mean);

		if (res_pct > 0.1 * (s->sum.sem_pct > 0 ? s->sum.sem_pct : 0.01))
			warn(row, "%s: the printed mean is rounded to +-%.2g%% of itself", side,
			     res_pct);
	}
}

int nl_results_diff(const struct nl_results *a, const struct nl_results *b,
		    const struct nl_diff_opts *o, struct nl_diff_row **rows, size_t *nr,
		    struct nl_diag *d)
{
	struct nl_diff_row *out = calloc(a->nr ? a->nr : 1, sizeof(*out));
	size_t n = 0;

	*rows = NULL;
	*nr = 0;
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < a->nr; i++) {
		const struct nl_series *sa = &a->series[i], *sb = nl_results_find(b, sa->name);
		struct nl_diff_row *row = &out[n];
		struct nl_summary ua, ub;

		bool taken = false;

		if (!sb)
			continue;
		/* "cycles" and "cycles:u" in a both fold to b's cycles: pair it once */
		for (size_t j = 0; j < n; j++)
			taken |= out[j].b == sb;
		if (taken)
			continue;
		row->a = sa;
		row->b = sb;
		n++;
		if (sa->state != NL_SERIES_COUNTED || sb->state != NL_SERIES_COUNTED) {
			if (sa->state != NL_SERIES_COUNTED)
				warn(row, "A: %s", state_words(sa->state));
			if (sb->state != NL_SERIES_COUNTED)
				warn(row, "B: %s", state_words(sb->state));
			continue;
		}
		check_side(row, "A", sa, o, &ua);
		check_side(row, "B", sb, o, &ub);
		if (sa->n < 2 || sb->n < 2 || !sa->has_sem || !sb->has_sem) {
			warn(row, "no test: Welch's test needs a spread and at least 2 runs on each side");
			continue;
		}
		if (nl_compare(&ua, &ub, o->threshold_pct, &row->cmp)) {
			warn(row, "no test: the summaries cannot be compared");
			continue;
		}
		row->compared = true;
	}
	if (!n) {
		free(out);
		return nl_fail(d, -NL_E_FORMAT, "the two inputs share no event");
	}
	*rows = out;
	*nr = n;
	return 0;
}
