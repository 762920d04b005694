// SPDX-License-Identifier: MIT
/*
 * perf stat output, read back: today's text, the 2.6.3x text and -x, CSV.
 * The parser keys on what perf prints around the numbers ("( +-",
 * "seconds time elapsed", "(83.33%)", "(scaled from"), never on columns:
 * perf has changed its column widths several times.
 *
 * The printed numbers are rounded, so every series also records half a unit
 * of the last printed digit of its mean and of its "+-": diff warns when
 * that rounding is large next to the error it reports.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "noplab/perfstat.h"

#define MAX_LINE 4096

/*
 * A number as perf prints it: optional sign, digits with optional ","
 * thousands separators (only when grouping), optional fraction.  Returns the
 * characters consumed (0 when there is no number) and the digits after the
 * point in *decimals.
 */
static size_t scan_number(const char *s, bool grouping, double *v, int *decimals)
{
	char digits[128];
	size_t i = 0, o = 0;
	bool any = false;

	*decimals = 0;
	if (s[i] == '-' || s[i] == '+')
		digits[o++] = s[i++];
	while (o + 2 < sizeof(digits)) {
		if (isdigit((unsigned char)s[i])) {
			digits[o++] = s[i++];
			any = true;
		} else if (grouping && s[i] == ',' && any && isdigit((unsigned char)s[i + 1]) &&
			   isdigit((unsigned char)s[i + 2]) && isdigit((unsigned char)s[i + 3]) &&
			   !isdigit((unsigned char)s[i + 4])) {
			i++;	/* a thousands separator: exactly three digits follow */
		} else {
			break;
		}
	}
	if (s[i] == '.' && isdigit((unsigned char)s[i + 1])) {
		digits[o++] = s[i++];
		while (isdigit((unsigned char)s[i]) && o + 1 < sizeof(digits)) {
			digits[o++] = s[i++];
			(*decimals)++;
			any = true;
		}
	}
	if (!any)
		return 0;
	digits[o] = '\0';
	*v = strtod(digits, NULL);
	return i;
}

static double half_unit(int decimals)
{
	return 0.5 * pow(10.0, -decimals);
}

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static void set_counted(struct nl_series *s, double mean, int mean_dec, size_t n, bool has_noise,
			double sem_pct, int sem_dec)
{
	s->state = NL_SERIES_COUNTED;
	s->mean_resolution = half_unit(mean_dec);
	if (has_noise) {
		s->sem_pct_printed = sem_pct;
		s->sem_pct_resolution = half_unit(sem_dec);
		nl_series_set_summary(s, mean, sem_pct, n);
		s->has_sem = n >= 2;
	} else {
		/*
		 * perf prints no "+-" for one run, and for several runs whose
		 * relative error is exactly zero (identical counts, or a zero mean).
		 */
		nl_series_set_summary(s, mean, 0.0, n);
		s->has_sem = n >= 2;
	}
}

/* "(83.33%)" at or after p, not "( +- ...)": the share of time on the PMU. */
static bool find_running(const char *p, double *pct)
{
	for (const char *q = strchr(p, '('); q; q = strchr(q + 1, '(')) {
		const char *t = skip_space(q + 1);
		double v;
		int dec;
		size_t n = scan_number(t, false, &v, &dec);

		if (n && t[n] == '%' && *skip_space(t + n + 1) == ')') {
			*pct = v;
			return true;
		}
	}
	return false;
}

/* Normalise a 2.6.3x name: "task-clock-msecs" is task-clock in msec. */
static void set_name(struct nl_series *s, const char *name, const char *unit, bool *old)
{
	size_t len = strlen(name);

	if (len > 6 && !strcmp(name + len - 6, "-msecs")) {
		snprintf(s->name, sizeof(s->name), "%.*s", (int)(len - 6), name);
		snprintf(s->unit, sizeof(s->unit), "msec");
		*old = true;
		return;
	}
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->unit, sizeof(s->unit), "%s", unit);
}

struct text_state {
	bool header, old, elapsed;
	size_t counters;
	size_t last;		/* the series a continuation line belongs to, or SIZE_MAX */
};

static void parse_header(const char *line, struct nl_results *r, struct text_state *st)
{
	const char *q1 = strchr(line, '\''), *q2 = strrchr(line, '\'');
	const char *runs;

	st->header = true;
	r->runs = 1;
	if (q1 && q2 > q1)
		snprintf(r->command, sizeof(r->command), "%.*s", (int)(q2 - q1 - 1), q1 + 1);
	runs = strstr(q2 ? q2 : line, "(");
	if (runs) {
		char *end;
		unsigned long n = strtoul(runs + 1, &end, 10);

		/* a count no measurement reaches is a damaged header: keep the default */
		if (end != runs + 1 && !strncmp(end, " runs)", 6) && n >= 1 && n <= 1000000000ul)
			r->runs = n;
	}
}

static int parse_elapsed(const char *line, struct nl_results *r, struct text_state *st,
			 struct nl_diag *d)
{
	const char *p = skip_space(line), *noise;
	double mean, sem = NAN, pct = NAN;
	int mdec, sdec = 0, pdec = 0;
	struct nl_series *s;
	size_t n = scan_number(p, true, &mean, &mdec);

	if (!n)
		return 0;	/* not a line we understand; perf prints nothing else like it */
	p = skip_space(p + n);
	if (!strncmp(p, "+-", 2)) {
		size_t k = scan_number(skip_space(p + 2), true, &sem, &sdec);

		if (!k)
			return nl_fail(d, -NL_E_FORMAT, "elapsed time: no number after '+-'");
	}
	noise = strstr(p, "( +-");
	if (noise && !scan_number(skip_space(noise + 4), false, &pct, &pdec))
		return nl_fail(d, -NL_E_FORMAT, "elapsed time: no number in '( +-'");
	s = nl_results_add(r, "elapsed");
	if (!s)
		return -ENOMEM;
	snprintf(s->unit, sizeof(s->unit), "seconds");
	snprintf(s->source, sizeof(s->source), "wall");
	if (!isnan(sem) && mean != 0) {
		/* today's format: the absolute SEM has more digits than the percentage */
		set_counted(s, mean, mdec, r->runs, true, 100.0 * sem / fabs(mean), 0);
		s->sem_pct_printed = isnan(pct) ? 100.0 * sem / fabs(mean) : pct;
		s->sem_pct_resolution = 100.0 * half_unit(sdec) / fabs(mean);
	} else {
		if (!isnan(pct))
			st->old = true;
		set_counted(s, mean, mdec, r->runs, !isnan(pct), isnan(pct) ? 0 : pct, pdec);
	}
	st->elapsed = true;
	return 0;
}

/*
 * The noise "( +- x% )" and the multiplexing note, "(83.33%)" today or
 * "(scaled from 81.00%)" in 2.6.3x, found in text for series s.  perf
 * prints them at the end of the last metric line, which for instructions can
 * be a continuation line of its own.
 */
static int annotate(struct nl_series *s, const char *text, size_t runs, struct text_state *st,
		    struct nl_diag *d)
{
	const char *noise = strstr(text, "( +-"), *scaled = strstr(text, "(scaled from");
	const char *tail = text;
	double pct, running;
	int pdec;

	if (noise) {
		if (!scan_number(skip_space(noise + 4), false, &pct, &pdec))
			return nl_fail(d, -NL_E_FORMAT, "no number in '( +-': %.60s", text);
		if (pdec == 3)
			st->old = true;	/* 2.6.3x printed "%7.3f%%", today "%6.2f%%" */
		if (s->state == NL_SERIES_COUNTED) {
			s->sem_pct_printed = pct;
			s->sem_pct_resolution = half_unit(pdec);
			nl_series_set_summary(s, s->sum.mean, pct, runs);
			s->has_sem = runs >= 2;
		}
		/* the multiplexing note comes after the noise */
		tail = strchr(noise + 1, ')');
		if (!tail)
			return 0;
	}
	if (scaled) {
		st->old = true;
		if (scan_number(skip_space(scaled + 12), false, &running, &pdec)) {
			s->running_pct = running;
			s->scaled = true;
		}
	} else if (find_running(tail, &running)) {
		s->running_pct = running;
		s->scaled = running < 100.0;
	}
	return 0;
}

static int parse_counter_line(const char *line, struct nl_results *r, struct text_state *st,
			      struct nl_diag *d)
{
	const char *p = skip_space(line), *hash;
	enum nl_series_state state = NL_SERIES_COUNTED;
	char tok[3][128];
	size_t ntok = 0;
	double mean = 0;
	int mdec = 0;
	struct nl_series *s;

	if (!strncmp(p, "<not supported>", 15)) {
		state = NL_SERIES_NOT_SUPPORTED;
		p += 15;
	} else if (!strncmp(p, "<not counted>", 13)) {
		state = NL_SERIES_NOT_COUNTED;
		p += 13;
	} else {
		size_t n = scan_number(p, true, &mean, &mdec);

		/* a warning or a line we do not know ("12,34 x" is not a number either) */
		if (!n || (p[n] != ' ' && p[n] != '\t'))
			return 0;
		p += n;
	}
	/* [unit] event, up to the metric, the noise or the multiplexing note */
	for (;;) {
		size_t len;

		p = skip_space(p);
		if (!*p || *p == '#' || *p == '(' || *p == '\n')
			break;
		len = strcspn(p, " \t\n");
		if (ntok < 3)
			snprintf(tok[ntok++], sizeof(tok[0]), "%.*s", (int)len, p);
		p += len;
	}
	if (!ntok)
		return nl_fail(d, -NL_E_FORMAT, "a counter line without an event name: %.60s", line);

	s = nl_results_add(r, "");
	if (!s)
		return -ENOMEM;
	st->last = r->nr - 1;
	set_name(s, tok[ntok - 1], ntok > 1 ? tok[0] : "", &st->old);
	s->state = state;
	hash = strchr(p, '#');
	if (hash) {
		const char *m = skip_space(hash + 1);
		size_t len = strcspn(m, "(\n");

		while (len && isspace((unsigned char)m[len - 1]))
			len--;
		snprintf(s->metric, sizeof(s->metric), "%.*s", (int)len, m);
	}
	if (state == NL_SERIES_COUNTED)
		/* no "+-" means one run, or several with exactly no spread: perf omits 0 */
		set_counted(s, mean, mdec, r->runs, false, 0, 0);
	st->counters++;
	return annotate(s, p, r->runs, st, d);
}

static int parse_text(const char *text, size_t len, struct nl_results *r, struct nl_diag *d)
{
	struct text_state st = { .last = SIZE_MAX };
	size_t pos = 0, lineno = 0;

	r->runs = 0;
	while (pos < len) {
		size_t n = 0;
		char line[MAX_LINE];
		const char *p;
		int ret = 0;

		while (pos + n < len && text[pos + n] != '\n')
			n++;
		lineno++;
		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1),
			 text + pos);
		pos += n + 1;
		p = skip_space(line);
		if (!*p)
			continue;
		if (*p == '#') {
			/* "# started on ...", or a metric continuation line of the last counter */
			if (st.last < r->nr)
				ret = annotate(&r->series[st.last], p, r->runs, &st, d);
			if (ret)
				return ret;
			continue;
		}
		if (strstr(p, "Performance counter stats for")) {
			parse_header(p, r, &st);
		} else if (strstr(p, "seconds time elapsed")) {
			ret = parse_elapsed(p, r, &st, d);
		} else if (strstr(p, "seconds user") || strstr(p, "seconds sys")) {
			continue;
		} else {
			if (!st.header && !r->runs)
				r->runs = 1;	/* no header: perf prints one for every run count */
			ret = parse_counter_line(p, r, &st, d);
		}
		if (ret) {
			if (d && d->msg[0] && ret == -NL_E_FORMAT) {
				char msg[sizeof(d->msg)];

				snprintf(msg, sizeof(msg), "%s", d->msg);
				nl_fail(d, ret, "line %zu: %s", lineno, msg);
			}
			return ret;
		}
	}
	if (!st.counters && !st.elapsed)
		return nl_fail(d, -NL_E_FORMAT, "no perf stat counters or elapsed time found");
	snprintf(r->format, sizeof(r->format), "%s", st.old ? "perf-stat-2.6" : "perf-stat");
	return 0;
}

/* ---- CSV ------------------------------------------------------------------------- */

#define CSV_FIELDS 16

static size_t split_csv(char *line, char sep, char **f)
{
	size_t n = 0;

	f[n++] = line;
	for (char *p = line; *p && n < CSV_FIELDS; p++) {
		if (*p == sep) {
			*p = '\0';
			f[n++] = p + 1;
		}
	}
	return n;
}

static bool full_number(const char *s, double *v, int *dec)
{
	size_t n = scan_number(s, false, v, dec);

	return n && s[n] == '\0';
}

static bool csv_value_field(const char *s)
{
	double v;
	int dec;

	return !strcmp(s, "<not supported>") || !strcmp(s, "<not counted>") ||
	       full_number(s, &v, &dec);
}

/* A CSV line: value, unit, event and at least run time and pct-running. */
static bool csv_line(const char *line, char sep)
{
	char buf[MAX_LINE], *f[CSV_FIELDS];
	size_t n;

	snprintf(buf, sizeof(buf), "%s", line);
	buf[strcspn(buf, "\r\n")] = '\0';
	n = split_csv(buf, sep, f);
	return n >= 5 && csv_value_field(f[0]) && f[2][0];
}

static int parse_csv(const char *text, size_t len, struct nl_results *r, struct nl_diag *d)
{
	size_t pos = 0, lineno = 0, rows = 0;
	bool variance_seen = false;

	while (pos < len) {
		size_t n = 0, nf, k;
		char line[MAX_LINE], *f[CSV_FIELDS];
		struct nl_series *s;
		double value = 0, v, var = NAN, pct = NAN;
		int dec = 0, vdec = 0, tmp;

		while (pos + n < len && text[pos + n] != '\n')
			n++;
		lineno++;
		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1),
			 text + pos);
		pos += n + 1;
		line[strcspn(line, "\r")] = '\0';
		if (!*skip_space(line) || *skip_space(line) == '#')
			continue;
		nf = split_csv(line, ',', f);
		if (nf < 5 || !csv_value_field(f[0]))
			return nl_fail(d, -NL_E_FORMAT, "line %zu: not a perf stat -x, row", lineno);
		s = nl_results_add(r, f[2]);
		if (!s)
			return -ENOMEM;
		snprintf(s->unit, sizeof(s->unit), "%s", f[1]);
		k = 3;
		/* with -r N a variance column (the relative SEM, with a % sign) follows the event */
		if (strchr(f[3], '%')) {
			size_t m = scan_number(f[3], false, &var, &vdec);

			if (!m || f[3][m] != '%')
				return nl_fail(d, -NL_E_FORMAT, "line %zu: variance '%s'", lineno, f[3]);
			variance_seen = true;
			k++;
		}
		if (k + 1 < nf && full_number(f[k + 1], &v, &tmp))
			pct = v;
		if (!isnan(pct) && pct < 100.0) {
			s->running_pct = pct;
			s->scaled = true;
		}
		if (k + 2 < nf && f[k + 2][0])
			snprintf(s->metric, sizeof(s->metric), "%s%s%s", f[k + 2],
				 k + 3 < nf && f[k + 3][0] ? " " : "", k + 3 < nf ? f[k + 3] : "");
		if (!strcmp(f[0], "<not supported>")) {
			s->state = NL_SERIES_NOT_SUPPORTED;
		} else if (!strcmp(f[0], "<not counted>")) {
			s->state = NL_SERIES_NOT_COUNTED;
		} else {
			full_number(f[0], &value, &dec);
			s->mean_resolution = half_unit(dec);
			/* n is filled in later: -x, does not print the run count */
			nl_series_set_summary(s, value, isnan(var) ? 0.0 : var, 0);
			if (!isnan(var)) {
				s->sem_pct_printed = var;
				s->sem_pct_resolution = half_unit(vdec);
				s->has_sem = true;
			}
		}
		rows++;
	}
	if (!rows)
		return nl_fail(d, -NL_E_FORMAT, "no perf stat -x, rows");
	r->runs = variance_seen ? 0 : 1;
	if (r->runs)
		nl_results_assume_runs(r, 1);
	snprintf(r->format, sizeof(r->format), "perf-stat-csv");
	return 0;
}

/* The first line that is not blank or a "# ..." comment. */
static const char *first_line(const char *text, size_t len, char *buf, size_t size)
{
	size_t pos = 0;

	while (pos < len) {
		size_t n = 0;
		const char *p;

		while (pos + n < len && text[pos + n] != '\n')
			n++;
		snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), text + pos);
		pos += n + 1;
		p = skip_space(buf);
		if (*p && *p != '#')
			return p;
	}
	return NULL;
}

bool nl_perfstat_detect(const char *text, size_t len)
{
	char buf[MAX_LINE];
	const char *first = first_line(text, len, buf, sizeof(buf));

	if (!first)
		return false;
	if (csv_line(first, ','))
		return true;
	/* memmem: the text need not be NUL-terminated */
	return memmem(text, len, "Performance counter stats for", 29) ||
	       memmem(text, len, "seconds time elapsed", 20);
}

int nl_perfstat_parse(const char *text, size_t len, struct nl_results *r, struct nl_diag *d)
{
	char buf[MAX_LINE];
	const char *first = first_line(text, len, buf, sizeof(buf));

	if (!first)
		return nl_fail(d, -NL_E_FORMAT, "empty input");
	if (csv_line(first, ','))
		return parse_csv(text, len, r, d);
	return parse_text(text, len, r, d);
}
