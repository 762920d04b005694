// SPDX-License-Identifier: MIT
/*
 * noplab diff: verdicts and warnings from the comparison library, then the
 * command itself (JSON schema, exit statuses).  Reference values:
 *  - Borislav Petkov's kernel-build timings (439.809 +- 0.156 s vs
 *    440.266 +- 0.195 s, 5 runs each): t ~ 1.83, df ~ 7.6, p ~ 0.11, not
 *    significant (tests/fixtures/perfstat/modern-kbuild-{a,b}.txt);
 *  - R's t.test() on two samples, reached through noplab JSON with per-run
 *    values: t = -1.8325, df = 17.9, p-value = 0.08356.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nltest.h"
#include "noplab/results.h"

static const struct nl_diff_opts dflt = { .threshold_pct = 0.5, .max_sem_pct = 5, .min_runs = 3 };

static char *fixture(const char *name)
{
	const char *src = getenv("NOPLAB_SRC");
	char *path = malloc(4096);

	snprintf(path, 4096, "%s/tests/fixtures/perfstat/%s", src ? src : ".", name);
	return path;
}

static void load_text(const char *text, struct nl_results *r)
{
	struct nl_diag d;

	nl_diag_init(&d);
	if (nl_results_parse(text, strlen(text), r, &d))
		fail_msg("parse: %s\n%s", d.msg, text);
}

static const struct nl_diff_row *row_named(const struct nl_diff_row *rows, size_t nr,
					   const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(rows[i].a->name, name))
			return &rows[i];
	return NULL;
}

static bool warned(const struct nl_diff_row *row, const char *needle)
{
	for (size_t i = 0; i < row->nr_warnings; i++)
		if (strstr(row->warnings[i], needle))
			return true;
	return false;
}

/* ---- the kernel-build fixtures ------------------------------------------------------ */

struct verdict_row {
	int line;
	const char *event;
	bool compared;
	enum nl_verdict verdict;
	bool practical;
	double t, df, p, tol;	/* NAN: not checked */
	const char *warn[3];	/* each must be among the warnings */
	size_t nr_warnings;	/* exactly this many */
};

static const struct verdict_row kbuild[] = {
	/* Borislav: not significant, and no weak ground (the absolute +- has enough digits) */
	{ SRC_LINE, "elapsed", true, NL_VERDICT_NONE, false, 1.830, 7.63, 0.1064, 0.005, { NULL }, 0 },
	{ SRC_LINE, "instructions", true, NL_VERDICT_HIGHER, true, NAN, NAN, NAN, 0,
	  { "A: multiplexed and scaled, counted 83.33%", "B: multiplexed", "rounded" }, 4 },
	{ SRC_LINE, "branch-misses", true, NL_VERDICT_LOWER, false, NAN, NAN, NAN, 0,
	  { "83.33%" }, 4 },
	{ SRC_LINE, "stalled-cycles-backend", true, NL_VERDICT_NONE, false, NAN, NAN, NAN, 0,
	  { "A: multiplexed and scaled, counted 66.67%", "B: multiplexed and scaled, counted 66.67%" },
	  2 },
	/* "( +-  0.00% )" is tested as the largest value that prints as 0.00% */
	{ SRC_LINE, "page-faults", true, NL_VERDICT_NONE, false, NAN, NAN, NAN, 0,
	  { "A: printed +- is 0 at this precision; tested as 0.005%", "B: printed +- is 0" }, 2 },
	{ SRC_LINE, "task-clock", true, NL_VERDICT_NONE, false, NAN, NAN, NAN, 0,
	  { "A: printed +- 0.03% is rounded", "B: printed +- 0.04% is rounded" }, 2 },
	{ SRC_LINE, "L1-icache-load-misses", false, NL_VERDICT_NONE, false, NAN, NAN, NAN, 0,
	  { "A: not supported", "B: not supported" }, 2 },
	{ SRC_LINE, "LLC-loads", false, NL_VERDICT_NONE, false, NAN, NAN, NAN, 0,
	  { "A: not counted", "B: not counted" }, 2 },
};

static void test_kbuild(void **state)
{
	char *pa = fixture("modern-kbuild-a.txt"), *pb = fixture("modern-kbuild-b.txt");
	struct nl_results a, b;
	struct nl_diff_row *rows;
	struct nl_diag d;
	size_t nr;

	(void)state;
	nl_diag_init(&d);
	assert_int_equal(nl_results_load(pa, &a, &d), 0);
	assert_int_equal(nl_results_load(pb, &b, &d), 0);
	assert_int_equal(nl_results_diff(&a, &b, &dflt, &rows, &nr, &d), 0);
	assert_int_equal(nr, 13);
	for (size_t i = 0; i < sizeof(kbuild) / sizeof(kbuild[0]); i++) {
		const struct verdict_row *w = &kbuild[i];
		const struct nl_diff_row *row = row_named(rows, nr, w->event);

		if (!row)
			row_fail(w, "no row for %s", w->event);
		if (row->compared != w->compared)
			row_fail(w, "%s: compared %d", w->event, row->compared);
		if (w->compared && (row->cmp.verdict != w->verdict || row->cmp.practical != w->practical))
			row_fail(w, "%s: verdict %s practical %d (delta %.3f%%, p %g)", w->event,
				 nl_verdict_name(row->cmp.verdict), row->cmp.practical,
				 row->cmp.delta_pct, row->cmp.p);
		if (!isnan(w->t) && (fabs(row->cmp.t - w->t) > w->tol || fabs(row->cmp.df - w->df) > w->tol * 4 ||
				     fabs(row->cmp.p - w->p) > w->tol / 5))
			row_fail(w, "%s: t %.4f df %.3f p %.4f", w->event, row->cmp.t, row->cmp.df,
				 row->cmp.p);
		for (size_t k = 0; k < 3 && w->warn[k]; k++)
			if (!warned(row, w->warn[k]))
				row_fail(w, "%s: no warning '%s' (%zu warnings, first '%s')", w->event,
					 w->warn[k], row->nr_warnings,
					 row->nr_warnings ? row->warnings[0] : "");
		if (row->nr_warnings != w->nr_warnings)
			row_fail(w, "%s: %zu warnings, want %zu", w->event, row->nr_warnings,
				 w->nr_warnings);
	}
	free(rows);
	nl_results_free(&a);
	nl_results_free(&b);
	free(pa);
	free(pb);
}

/* ---- small inputs: weak ground and the two statistics paths ------------------------------- */

#define HDR(n) " Performance counter stats for 'x' (" #n " runs):\n\n"

struct pair_row {
	int line;
	const char *a, *b;
	const char *event;
	bool compared;
	enum nl_verdict verdict;
	const char *warn;	/* NULL: no warning at all */
	double t, df, p;	/* NAN: not checked; to 1e-3 relative */
};

static const struct pair_row pairs[] = {
	/* a clear 2% regression in 10 runs each */
	{ SRC_LINE, HDR(10) "  1.000000 +- 0.001000 seconds time elapsed\n",
	  HDR(10) "  1.020000 +- 0.001000 seconds time elapsed\n", "elapsed", true, NL_VERDICT_HIGHER,
	  NULL, 14.142, 18.0, NAN },
	/* two runs: a test, but on weak ground */
	{ SRC_LINE, HDR(2) "  1000  cycles:u  ( +-  1.00% )\n 1.0 +- 0.1 seconds time elapsed\n",
	  HDR(2) "  1100  cycles:u  ( +-  1.00% )\n 1.0 +- 0.1 seconds time elapsed\n", "cycles:u", true,
	  NL_VERDICT_HIGHER, "only 2 runs", 100 / hypot(10, 11), NAN, NAN },
	/* a noisy input */
	{ SRC_LINE, HDR(5) "  1000  cycles  ( +-  7.50% )\n 1.0 +- 0.1 seconds time elapsed\n",
	  HDR(5) "  1010  cycles  ( +-  1.00% )\n 1.0 +- 0.1 seconds time elapsed\n", "cycles", true,
	  NL_VERDICT_NONE, "A: relative error 7.50% is above 5%", NAN, NAN, NAN },
	/* one run has no spread: no test */
	{ SRC_LINE, "  1000  cycles\n  1.0 seconds time elapsed\n",
	  "  1000  cycles\n  1.0 seconds time elapsed\n", "cycles", false, NL_VERDICT_NONE,
	  "no test", NAN, NAN, NAN },
	/* identical deterministic counts (perf omits the +-): certainly no difference */
	{ SRC_LINE, HDR(5) "  1,000,000  instructions\n 1.0 +- 0.1 seconds time elapsed\n",
	  HDR(5) "  1,000,000  instructions\n 1.0 +- 0.1 seconds time elapsed\n", "instructions", true,
	  NL_VERDICT_NONE, NULL, 0, 8, 1 },
	/* a count printed as "1": its rounding is large next to its error */
	{ SRC_LINE, HDR(5) "  1  context-switches  ( +- 20.00% )\n 1.0 +- 0.1 seconds time elapsed\n",
	  HDR(5) "  2  context-switches  ( +- 20.00% )\n 1.0 +- 0.1 seconds time elapsed\n",
	  "context-switches", true, NL_VERDICT_NONE, "mean is rounded", 1 / hypot(0.2, 0.4), NAN, NAN },
	/* CSV without a run count: no test until one is given */
	{ SRC_LINE, "1000,,cycles,1.00%,100,100.00,,\n", "1100,,cycles,1.00%,100,100.00,,\n", "cycles",
	  false, NL_VERDICT_NONE, "run count is unknown", NAN, NAN, NAN },
	/* noplab JSON keeps every run: R's t.test(ts1, ts2) */
	{ SRC_LINE,
	  "{\"tool\":\"noplab\",\"command\":\"stat\",\"options\":{\"runs\":10},\"events\":[{\"name\":"
	  "\"cycles\",\"runs\":[11,9,10,11,10,12,9,11,12,9]}]}",
	  "{\"tool\":\"noplab\",\"command\":\"stat\",\"options\":{\"runs\":10},\"events\":[{\"name\":"
	  "\"cycles\",\"runs\":[11,13,10,13,12,9,11,12,12,11]}]}",
	  "cycles", true, NL_VERDICT_NONE, NULL, 1.8325, 17.9, 0.08356 },
	/* bench JSON figures become workload/variant/figure series; null is not measured */
	{ SRC_LINE,
	  "{\"tool\":\"noplab\",\"command\":\"bench\",\"workloads\":[{\"name\":\"calls\",\"variants\":"
	  "[{\"name\":\"p6:5\",\"figures\":{\"ticks_per_call\":{\"mean\":4.8,\"sem_pct\":0.5,"
	  "\"runs\":[4.78,4.80,4.82,4.79,4.81]},\"l1i_misses_per_1k\":null}}]}]}",
	  "{\"tool\":\"noplab\",\"command\":\"bench\",\"workloads\":[{\"name\":\"calls\",\"variants\":"
	  "[{\"name\":\"p6:5\",\"figures\":{\"ticks_per_call\":{\"mean\":11.0,\"sem_pct\":0.4,"
	  "\"n\":5},\"l1i_misses_per_1k\":null}}]}]}",
	  "calls/p6:5/ticks_per_call", true, NL_VERDICT_HIGHER, NULL, NAN, NAN, NAN },
};

static void test_pairs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		const struct pair_row *w = &pairs[i];
		struct nl_results a, b;
		struct nl_diff_row *rows;
		const struct nl_diff_row *row;
		struct nl_diag d;
		size_t nr;

		nl_diag_init(&d);
		load_text(w->a, &a);
		load_text(w->b, &b);
		if (nl_results_diff(&a, &b, &dflt, &rows, &nr, &d))
			row_fail(w, "diff: %s", d.msg);
		row = row_named(rows, nr, w->event);
		if (!row)
			row_fail(w, "no row %s", w->event);
		if (row->compared != w->compared)
			row_fail(w, "compared %d (%s)", row->compared,
				 row->nr_warnings ? row->warnings[0] : "");
		if (w->compared && row->cmp.verdict != w->verdict)
			row_fail(w, "verdict %s (p %g)", nl_verdict_name(row->cmp.verdict), row->cmp.p);
		if (w->warn ? !warned(row, w->warn) : row->nr_warnings != 0)
			row_fail(w, "warnings: %zu, first '%s'", row->nr_warnings,
				 row->nr_warnings ? row->warnings[0] : "");
		if (!isnan(w->t) && fabs(row->cmp.t - w->t) > 1e-3 * fabs(w->t) + 1e-9)
			row_fail(w, "t %.5f", row->cmp.t);
		if (!isnan(w->df) && (fabs(row->cmp.df - w->df) > 0.05 ||
				      fabs(row->cmp.p - w->p) > 1e-3 * w->p))
			row_fail(w, "t %.5f df %.3f p %.6f", row->cmp.t, row->cmp.df, row->cmp.p);
		free(rows);
		nl_results_free(&a);
		nl_results_free(&b);
	}
}

static void test_csv_with_runs(void **state)
{
	const char *ta = "1000,,cycles,1.00%,100,100.00,,\n", *tb = "1100,,cycles,1.00%,100,100.00,,\n";
	struct nl_results a, b;
	struct nl_diff_row *rows;
	struct nl_diag d;
	size_t nr;

	(void)state;
	nl_diag_init(&d);
	load_text(ta, &a);
	load_text(tb, &b);
	assert_int_equal(nl_results_assume_runs(&a, 5), 0);
	assert_int_equal(nl_results_assume_runs(&b, 5), 0);
	assert_int_equal(nl_results_diff(&a, &b, &dflt, &rows, &nr, &d), 0);
	assert_int_equal(nr, 1);
	assert_true(rows[0].compared);
	assert_int_equal(rows[0].cmp.verdict, NL_VERDICT_HIGHER);
	/* 10% apart at 1% SEM each: t = 100 / hypot(10, 11) */
	assert_true(fabs(rows[0].cmp.t - 100 / hypot(10, 11)) < 1e-9);
	free(rows);
	nl_results_free(&a);
	nl_results_free(&b);
}

static void test_nothing_shared(void **state)
{
	struct nl_results a, b;
	struct nl_diff_row *rows;
	struct nl_diag d;
	size_t nr;

	(void)state;
	nl_diag_init(&d);
	load_text("  1000  cycles\n  1.0 seconds time elapsed\n", &a);
	load_text("{\"tool\":\"noplab\",\"events\":[{\"name\":\"task-clock\",\"runs\":[1,2]}]}", &b);
	assert_int_equal(nl_results_diff(&a, &b, &dflt, &rows, &nr, &d), -NL_E_FORMAT);
	assert_non_null(strstr(d.msg, "share no event"));
	nl_results_free(&a);
	nl_results_free(&b);
}

/* ---- the command ------------------------------------------------------------------------ */

static int diff_cmd(const char *args, char **out)
{
	const char *src = getenv("NOPLAB_SRC");
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "cd '%s/tests/fixtures/perfstat' && '%s' diff %s 2>&1",
		 src ? src : ".", nltest_noplab(), args);
	return nltest_run(cmd, out);
}

static json_t *json_event(json_t *doc, const char *name)
{
	size_t i;
	json_t *ev;

	json_array_foreach(json_object_get(doc, "events"), i, ev)
		if (!strcmp(json_string_value(json_object_get(ev, "name")), name))
			return ev;
	return NULL;
}

static void test_cli_json(void **state)
{
	char *out = NULL;
	json_error_t err;
	json_t *doc, *el, *ins, *a;

	(void)state;
	assert_int_equal(diff_cmd("--json modern-kbuild-a.txt modern-kbuild-b.txt", &out), 0);
	doc = json_loads(out, 0, &err);
	if (!doc)
		fail_msg("not JSON: %s\n%s", err.text, out);
	assert_string_equal(json_string_value(json_object_get(doc, "command")), "diff");
	el = json_event(doc, "elapsed");
	assert_non_null(el);
	a = json_object_get(el, "a");
	assert_true(fabs(json_number_value(json_object_get(a, "mean")) - 439.809) < 1e-9);
	assert_true(fabs(json_number_value(json_object_get(a, "sem_pct")) - 100 * 0.156 / 439.809) < 1e-9);
	assert_int_equal(json_integer_value(json_object_get(a, "n")), 5);
	assert_true(fabs(json_number_value(json_object_get(el, "delta_pct")) -
			 100 * (440.266 - 439.809) / 439.809) < 1e-9);
	assert_int_equal(json_array_size(json_object_get(el, "ci95")), 2);
	assert_true(fabs(json_number_value(json_object_get(el, "t")) - 1.830) < 0.001);
	assert_true(fabs(json_number_value(json_object_get(el, "df")) - 7.63) < 0.01);
	assert_true(fabs(json_number_value(json_object_get(el, "p")) - 0.106) < 0.001);
	assert_string_equal(json_string_value(json_object_get(el, "verdict")),
			    "no-significant-difference");
	assert_int_equal(json_array_size(json_object_get(el, "warnings")), 0);
	ins = json_event(doc, "instructions");
	assert_string_equal(json_string_value(json_object_get(ins, "verdict")), "higher");
	assert_true(json_array_size(json_object_get(ins, "warnings")) > 0);
	/* not measured: null, never 0 */
	assert_true(json_is_null(json_object_get(json_object_get(json_event(doc, "LLC-loads"), "a"),
						 "mean")));
	assert_true(json_is_null(json_object_get(json_event(doc, "LLC-loads"), "verdict")));
	json_decref(doc);
	free(out);
}

struct cli_row {
	int line;
	const char *args;
	int status;
	const char *needle;
};

static const struct cli_row clis[] = {
	{ SRC_LINE, "modern-kbuild-a.txt modern-kbuild-b.txt", 0, "elapsed" },
	{ SRC_LINE, "modern-kbuild-a.txt modern-kbuild-b.txt", 0, "no significant difference" },
	{ SRC_LINE, "--fail-on-regression instructions modern-kbuild-a.txt modern-kbuild-b.txt", 1,
	  "regression beyond 0.5%: instructions" },
	{ SRC_LINE, "--fail-on-regression elapsed,branch-misses modern-kbuild-a.txt modern-kbuild-b.txt",
	  0, "significantly lower" },
	{ SRC_LINE, "--threshold 2 --fail-on-regression instructions modern-kbuild-a.txt "
		    "modern-kbuild-b.txt", 0, "within the threshold" },
	{ SRC_LINE, "--fail-on-regression nosuch modern-kbuild-a.txt modern-kbuild-b.txt", 2,
	  "'nosuch' is not an event" },
	{ SRC_LINE, "v2.6.32-style.txt modern-kbuild-a.txt", 0, "perf-stat-2.6" },
	{ SRC_LINE, "csv-repeat.csv modern-kbuild-a.txt", 0, "run count is unknown" },
	{ SRC_LINE, "--runs-a 5 csv-repeat.csv modern-kbuild-a.txt", 0, "perf-stat-csv, 5 runs" },
	{ SRC_LINE, "missing.txt modern-kbuild-a.txt", 3, "missing.txt" },
	{ SRC_LINE, "README.md modern-kbuild-a.txt", 3, "README.md: " },
	{ SRC_LINE, ". modern-kbuild-a.txt", 3, "not a regular file" },
	{ SRC_LINE, "modern-kbuild-a.txt", 2, "two inputs" },
	{ SRC_LINE, "--threshold abc modern-kbuild-a.txt modern-kbuild-b.txt", 2, "--threshold" },
};

static void test_cli(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(clis) / sizeof(clis[0]); i++) {
		const struct cli_row *r = &clis[i];
		char *out = NULL;
		int st = diff_cmd(r->args, &out);

		if (st != r->status || !out || !strstr(out, r->needle))
			row_fail(r, "'%s': exit %d (want %d), no '%s' in:\n%s", r->args, st, r->status,
				 r->needle, out ? out : "");
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kbuild),
		cmocka_unit_test(test_pairs),
		cmocka_unit_test(test_csv_with_runs),
		cmocka_unit_test(test_nothing_shared),
		cmocka_unit_test(test_cli_json),
		cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
