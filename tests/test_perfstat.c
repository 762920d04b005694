// SPDX-License-Identifier: MIT
/*
 * Reading perf stat output: real `perf stat -r 5 -- true` (text and -x,)
 * produced at test time and checked against the numbers scanned from the
 * same text independently, plus hand-written samples of today's and the
 * 2.6.3x format covering every annotation (tests/fixtures/perfstat/).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nltest.h"
#include "noplab/perfstat.h"
#include "noplab/results.h"

#define NO_CHECK NAN

static char *fixture(const char *name)
{
	const char *src = getenv("NOPLAB_SRC");
	char *path = malloc(4096);

	snprintf(path, 4096, "%s/tests/fixtures/perfstat/%s", src ? src : ".", name);
	return path;
}

/* ---- hand-written samples ------------------------------------------------------ */

struct series_row {
	int line;
	const char *file, *name;
	enum nl_series_state state;
	double mean;
	size_t n;
	double sem_pct;		/* NO_CHECK to skip */
	bool has_sem;
	double running_pct;
	bool scaled;
	const char *unit, *metric;
	double mean_res, sem_res;	/* NO_CHECK to skip */
};

#define A "modern-kbuild-a.txt"
#define OLD "v2.6.32-style.txt"
#define CSV "csv-repeat.csv"
#define CSV1 "csv-single.csv"
#define NS NL_SERIES_NOT_SUPPORTED
#define NC NL_SERIES_NOT_COUNTED
#define OK NL_SERIES_COUNTED

static const struct series_row rows[] = {
	/* today's format */
	{ SRC_LINE, A, "task-clock", OK, 3497112.61, 5, 0.03, true, 100, false, "msec",
	  "7.951 CPUs utilized", 0.005, 0.005 },
	{ SRC_LINE, A, "context-switches", OK, 1031234, 5, 0.12, true, 100, false, "", "0.295 K/sec",
	  0.5, 0.005 },
	/* "( +-  0.00% )": below the printed precision, not zero: diff makes that explicit */
	{ SRC_LINE, A, "page-faults", OK, 71934583, 5, 0.0, true, 100, false, "", "0.021 M/sec", 0.5,
	  0.005 },
	{ SRC_LINE, A, "cycles", OK, 9818330412004, 5, 0.03, true, 83.33, true, "", "2.808 GHz", 0.5,
	  0.005 },
	{ SRC_LINE, A, "stalled-cycles-backend", OK, 5111342910112, 5, 0.07, true, 66.67, true, "",
	  "52.06% backend cycles idle", NO_CHECK, NO_CHECK },
	/* noise and multiplexing on the metric continuation line */
	{ SRC_LINE, A, "instructions", OK, 6521337024113, 5, 0.01, true, 83.33, true, "",
	  "0.66  insn per cycle", NO_CHECK, NO_CHECK },
	{ SRC_LINE, A, "branch-misses", OK, 57123456789, 5, 0.02, true, 83.33, true, "",
	  "4.02% of all branches", NO_CHECK, NO_CHECK },
	{ SRC_LINE, A, "L1-icache-load-misses", NS, 0, 0, NO_CHECK, false, 100, false, "", "", NO_CHECK,
	  NO_CHECK },
	{ SRC_LINE, A, "LLC-loads", NC, 0, 0, NO_CHECK, false, 0, true, "", "", NO_CHECK, NO_CHECK },
	/* the absolute +- has more digits than the percentage: 100 * 0.156 / 439.809 */
	{ SRC_LINE, A, "elapsed", OK, 439.809, 5, 100 * 0.156 / 439.809, true, 100, false, "seconds",
	  "", 0.0005, 100 * 0.0005 / 439.809 },

	/* 2.6.3x */
	{ SRC_LINE, OLD, "task-clock", OK, 3497112.614121, 5, 0.027, true, 100, false, "msec",
	  "7.951 CPUs", 0.0000005, 0.0005 },
	{ SRC_LINE, OLD, "CPU-migrations", OK, 113210, 5, 0.412, true, 100, false, "",
	  "0.000 M/sec", 0.5, 0.0005 },
	{ SRC_LINE, OLD, "cycles", OK, 9818330412004, 5, 0.027, true, 81.00, true, "",
	  "2807.552 M/sec", NO_CHECK, NO_CHECK },
	{ SRC_LINE, OLD, "cache-references", OK, 12345678901, 5, 27.165, true, 19.00, true, "",
	  "3.530 M/sec", NO_CHECK, 0.0005 },
	{ SRC_LINE, OLD, "cache-misses", NC, 0, 0, NO_CHECK, false, 100, false, "", "", NO_CHECK,
	  NO_CHECK },
	{ SRC_LINE, OLD, "elapsed", OK, 439.809015223, 5, 0.035, true, 100, false, "seconds", "",
	  0.0000000005, 0.0005 },

	/* -x, CSV: no run count until the user gives one */
	{ SRC_LINE, CSV, "task-clock", OK, 3497112.61, 0, 0.03, true, 100, false, "msec",
	  "7.951 CPUs utilized", 0.005, 0.005 },
	{ SRC_LINE, CSV, "cycles", OK, 9818330412004, 0, 0.03, true, 83.33, true, "", "2.808 GHz", 0.5,
	  0.005 },
	{ SRC_LINE, CSV, "L1-icache-load-misses", NS, 0, 0, NO_CHECK, false, 100, false, "", "",
	  NO_CHECK, NO_CHECK },
	{ SRC_LINE, CSV, "LLC-loads", NC, 0, 0, NO_CHECK, false, 0, true, "", "", NO_CHECK, NO_CHECK },
	{ SRC_LINE, CSV1, "task-clock", OK, 1.84, 1, 0, false, 100, false, "msec", "0.566 CPUs utilized",
	  0.005, NO_CHECK },
	{ SRC_LINE, CSV1, "page-faults", OK, 48, 1, 0, false, 100, false, "", "26.136 K/sec", 0.5,
	  NO_CHECK },
	{ SRC_LINE, CSV1, "cycles", NS, 0, 0, NO_CHECK, false, 100, false, "", "", NO_CHECK, NO_CHECK },
};

struct file_row {
	int line;
	const char *file, *format, *command;
	size_t runs, nr_series;
};

static const struct file_row files[] = {
	{ SRC_LINE, A, "perf-stat", "make -s -j9 bzImage", 5, 13 },
	{ SRC_LINE, "modern-kbuild-b.txt", "perf-stat", "make -s -j9 bzImage", 5, 13 },
	{ SRC_LINE, OLD, "perf-stat-2.6", "make -j9", 5, 9 },
	{ SRC_LINE, CSV, "perf-stat-csv", "", 0, 5 },
	{ SRC_LINE, CSV1, "perf-stat-csv", "", 1, 4 },
};

static bool close_to(double got, double want, double rel)
{
	return fabs(got - want) <= rel * fabs(want) + 1e-12;
}

static void test_fixture_files(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const struct file_row *f = &files[i];
		char *path = fixture(f->file);
		struct nl_results r;
		struct nl_diag d;

		nl_diag_init(&d);
		if (nl_results_load(path, &r, &d))
			row_fail(f, "%s: %s", f->file, d.msg);
		if (strcmp(r.format, f->format) || strcmp(r.command, f->command) || r.runs != f->runs ||
		    r.nr != f->nr_series)
			row_fail(f, "%s: format %s command '%s' runs %zu series %zu", f->file, r.format,
				 r.command, r.runs, r.nr);
		nl_results_free(&r);
		free(path);
	}
}

static void test_fixture_series(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct series_row *w = &rows[i];
		char *path = fixture(w->file);
		const struct nl_series *s;
		struct nl_results r;
		struct nl_diag d;

		nl_diag_init(&d);
		if (nl_results_load(path, &r, &d))
			row_fail(w, "%s: %s", w->file, d.msg);
		s = nl_results_find(&r, w->name);
		if (!s)
			row_fail(w, "%s: no series %s", w->file, w->name);
		if (s->state != w->state)
			row_fail(w, "%s: state %d", w->name, s->state);
		if (s->running_pct != w->running_pct || s->scaled != w->scaled)
			row_fail(w, "%s: running %.2f scaled %d", w->name, s->running_pct, s->scaled);
		if (strcmp(s->unit, w->unit) || strcmp(s->metric, w->metric))
			row_fail(w, "%s: unit '%s' metric '%s'", w->name, s->unit, s->metric);
		if (s->state == OK) {
			if (!close_to(s->sum.mean, w->mean, 1e-12) || s->n != w->n ||
			    s->has_sem != w->has_sem)
				row_fail(w, "%s: mean %.17g n %zu has_sem %d", w->name, s->sum.mean, s->n,
					 s->has_sem);
			if (!isnan(w->sem_pct) && !close_to(s->sum.sem_pct, w->sem_pct, 1e-9))
				row_fail(w, "%s: sem_pct %.10g", w->name, s->sum.sem_pct);
			if (!isnan(w->mean_res) && !close_to(s->mean_resolution, w->mean_res, 1e-9))
				row_fail(w, "%s: mean resolution %g", w->name, s->mean_resolution);
			if (!isnan(w->sem_res) && !close_to(s->sem_pct_resolution, w->sem_res, 1e-9))
				row_fail(w, "%s: +- resolution %g", w->name, s->sem_pct_resolution);
			/* a summary rebuilt from perf text: the SEM in absolute units */
			if (s->n >= 2 && !close_to(s->sum.sem, fabs(s->sum.mean) * s->sum.sem_pct / 100, 1e-9))
				row_fail(w, "%s: sem %g", w->name, s->sum.sem);
		}
		nl_results_free(&r);
		free(path);
	}
}

static void test_csv_runs(void **state)
{
	char *path = fixture(CSV);
	const struct nl_series *s;
	struct nl_results r;
	struct nl_diag d;

	(void)state;
	nl_diag_init(&d);
	assert_int_equal(nl_results_load(path, &r, &d), 0);
	s = nl_results_find(&r, "task-clock");
	assert_non_null(s);
	assert_int_equal(s->n, 0);
	assert_int_equal(nl_results_assume_runs(&r, 5), 0);
	assert_int_equal(r.runs, 5);
	assert_int_equal(s->n, 5);
	assert_int_equal(s->sum.n, 5);
	assert_true(s->has_sem);
	assert_true(close_to(s->sum.sem_pct, 0.03, 1e-12));
	assert_true(close_to(s->sum.sd, 3497112.61 * 0.0003 * sqrt(5), 1e-9));
	/* not-measured series stay not measured */
	assert_int_equal(nl_results_find(&r, "LLC-loads")->state, NL_SERIES_NOT_COUNTED);
	nl_results_free(&r);
	free(path);
}

/* ---- small inline samples --------------------------------------------------------- */

struct text_row {
	int line;
	const char *text;
	int err;
	const char *name;	/* a series to check, or NULL */
	double mean;
	size_t n;
	double sem_pct;
};

static const struct text_row texts[] = {
	/* one run, no header, a ":u" modifier and C-locale numbers */
	{ SRC_LINE, "      1234567      cycles:u\n       0.500000000 seconds time elapsed\n", 0,
	  "cycles", 1234567, 1, 0 },
	{ SRC_LINE, "      1234567      cycles:u\n       0.500000000 seconds time elapsed\n", 0,
	  "elapsed", 0.5, 1, 0 },
	/* several runs, identical counts: perf omits the +- */
	{ SRC_LINE,
	  " Performance counter stats for './a.out x' (10 runs):\n\n"
	  "         1,000,000      instructions:u\n\n"
	  "          0.001000 +- 0.000010 seconds time elapsed  ( +-  1.00% )\n",
	  0, "instructions", 1e6, 10, 0 },
	/* warnings perf interleaves are not counters */
	{ SRC_LINE,
	  " Performance counter stats for 'x' (3 runs):\n"
	  "Some events weren't counted. Try disabling the NMI watchdog:\n"
	  "             12.50 msec task-clock:u   #  0.9 CPUs utilized  ( +-  1.50% )\n",
	  0, "task-clock", 12.5, 3, 1.5 },
	/* a thousands separator needs three digits after it */
	{ SRC_LINE, "        12,34      cycles\n  1.0 seconds time elapsed\n", 0, "elapsed", 1, 1, 0 },
	/* text that carries none of perf's markers is not perf stat output */
	{ SRC_LINE, "        1234      cycles\n", -NL_E_FORMAT, NULL },
	{ SRC_LINE, "hello world\nnothing here\n", -NL_E_FORMAT, NULL },
	{ SRC_LINE, "", -NL_E_FORMAT, NULL },
	{ SRC_LINE, " Performance counter stats for 'x' (3 runs):\n  5  cycles  ( +- x% )\n",
	  -NL_E_FORMAT, NULL },
	{ SRC_LINE, "{\"tool\": \"other\"}", -NL_E_FORMAT, NULL },
	{ SRC_LINE, "{\"tool\": \"noplab\", \"command\": \"stat\"", -NL_E_FORMAT, NULL },
	/* CSV whose later rows are not CSV */
	{ SRC_LINE, "1,,cycles,100,100.00,,\nfoo\n", -NL_E_FORMAT, NULL },
};

static void test_texts(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		const struct text_row *t = &texts[i];
		const struct nl_series *s;
		struct nl_results r;
		struct nl_diag d;
		int ret;

		nl_diag_init(&d);
		ret = nl_results_parse(t->text, strlen(t->text), &r, &d);
		if (ret != t->err)
			row_fail(t, "parse %d (%s)", ret, d.msg);
		if (ret) {
			if (!d.msg[0])
				row_fail(t, "an error without a message");
			nl_results_free(&r);
			continue;
		}
		s = nl_results_find(&r, t->name);
		if (!s)
			row_fail(t, "no series %s", t->name);
		if (!close_to(s->sum.mean, t->mean, 1e-12) || s->n != t->n ||
		    !close_to(s->sum.sem_pct, t->sem_pct, 1e-9))
			row_fail(t, "%s: mean %g n %zu sem_pct %g", t->name, s->sum.mean, s->n,
				 s->sum.sem_pct);
		nl_results_free(&r);
	}
	{
		/* and "12,34" above was not read as 1234, nor as 12 */
		const char *t = "        12,34      cycles\n  1.0 seconds time elapsed\n";
		struct nl_results r;

		assert_int_equal(nl_results_parse(t, strlen(t), &r, NULL), 0);
		assert_null(nl_results_find(&r, "cycles"));
		nl_results_free(&r);
	}
}

struct find_row {
	int line;
	const char *have, *ask;
	bool found;
};

static const struct find_row finds[] = {
	{ SRC_LINE, "cycles:u", "cycles", true },
	{ SRC_LINE, "cycles", "cycles:u", true },
	{ SRC_LINE, "CPU-migrations", "cpu-migrations", true },
	{ SRC_LINE, "task-clock-msecs", "task-clock", true },
	{ SRC_LINE, "cpu_core/cycles/", "cycles", false },
	{ SRC_LINE, "cycles", "cycle", false },
	{ SRC_LINE, "IC_TAG_HIT_MISS:IC_MISS", "IC_TAG_HIT_MISS", false },
	{ SRC_LINE, "IC_TAG_HIT_MISS:IC_MISS", "ic_tag_hit_miss:ic_miss", true },
};

static void test_find(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(finds) / sizeof(finds[0]); i++) {
		const struct find_row *f = &finds[i];
		struct nl_results r;

		nl_results_init(&r);
		assert_non_null(nl_results_add(&r, f->have));
		if ((nl_results_find(&r, f->ask) != NULL) != f->found)
			row_fail(f, "'%s' vs '%s'", f->have, f->ask);
		nl_results_free(&r);
	}
}

/* ---- real perf stat output --------------------------------------------------------- */

static char *run_perf(const char *args)
{
	char cmd[256], *out = NULL;
	int st;

	snprintf(cmd, sizeof(cmd), "perf stat %s -- true 2>&1 >/dev/null", args);
	st = nltest_run(cmd, &out);
	if (st != 0 || !out || !strstr(out, "task-clock")) {
		print_message("perf stat unusable here (status %d): %s\n", st, out ? out : "");
		free(out);
		return NULL;
	}
	return out;
}

/* The numbers at the start of the line that contains needle: "X" or "X +- Y", by sscanf. */
static int scan_line(const char *text, const char *needle, double *a, double *b)
{
	const char *p = strstr(text, needle);

	if (!p)
		return 0;
	while (p > text && p[-1] != '\n')
		p--;
	return sscanf(p, "%lf +- %lf", a, b);
}

static void test_real_perf_text(void **state)
{
	char *out = run_perf("-r 5");
	const struct nl_series *tc, *el, *pf;
	struct nl_results r;
	struct nl_diag d;
	double v = 0, sem = 0;

	(void)state;
	if (!out)
		skip();
	nl_diag_init(&d);
	if (nl_results_parse(out, strlen(out), &r, &d))
		fail_msg("%s\n%s", d.msg, out);
	assert_string_equal(r.format, "perf-stat");
	assert_int_equal(r.runs, 5);
	assert_string_equal(r.command, "true");
	tc = nl_results_find(&r, "task-clock");
	pf = nl_results_find(&r, "page-faults");
	el = nl_results_find(&r, "elapsed");
	assert_non_null(tc);
	assert_non_null(pf);
	assert_non_null(el);
	assert_int_equal(tc->state, NL_SERIES_COUNTED);
	assert_int_equal(tc->n, 5);
	assert_string_equal(tc->unit, "msec");
	assert_true(tc->has_sem);
	/* the same numbers, read independently */
	assert_true(scan_line(out, "msec task-clock", &v, &sem) >= 1);
	assert_true(close_to(tc->sum.mean, v, 1e-12));
	assert_int_equal(scan_line(out, "seconds time elapsed", &v, &sem), 2);
	assert_true(close_to(el->sum.mean, v, 1e-12));
	assert_true(close_to(el->sum.sem, sem, 1e-9));
	assert_int_equal(el->n, 5);
	assert_true(pf->sum.mean > 10);
	/* hardware events: counted where there is a PMU, <not supported> where not */
	for (size_t i = 0; i < r.nr; i++)
		if (r.series[i].state == NL_SERIES_COUNTED)
			assert_true(r.series[i].n == 5);
	nl_results_free(&r);
	free(out);
}

static void test_real_perf_csv(void **state)
{
	char *text = run_perf("-r 5"), *csv = run_perf("-x, -r 5");
	struct nl_results rt, rc;
	struct nl_diag d;

	(void)state;
	if (!text || !csv) {
		free(text);
		free(csv);
		skip();
	}
	nl_diag_init(&d);
	assert_int_equal(nl_results_parse(text, strlen(text), &rt, &d), 0);
	if (nl_results_parse(csv, strlen(csv), &rc, &d))
		fail_msg("%s\n%s", d.msg, csv);
	assert_string_equal(rc.format, "perf-stat-csv");
	assert_int_equal(rc.runs, 0);
	/* the same events in both dialects (CSV has no elapsed line) */
	assert_int_equal(rc.nr + 1, rt.nr);
	for (size_t i = 0; i < rc.nr; i++) {
		const struct nl_series *t = nl_results_find(&rt, rc.series[i].name);

		assert_non_null(t);
		assert_int_equal(t->state, rc.series[i].state);
	}
	assert_int_equal(nl_results_assume_runs(&rc, 5), 0);
	assert_int_equal(nl_results_find(&rc, "task-clock")->n, 5);
	nl_results_free(&rt);
	nl_results_free(&rc);
	free(text);
	free(csv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_files),
		cmocka_unit_test(test_fixture_series),
		cmocka_unit_test(test_csv_runs),
		cmocka_unit_test(test_texts),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_real_perf_text),
		cmocka_unit_test(test_real_perf_csv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
