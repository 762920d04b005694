// SPDX-License-Identifier: MIT
/*
 * noplab stat on a real command: a small program built here that appends a
 * line to a log on every run (so runs can be counted from outside) and
 * touches many pages on its 1st, 3rd, 5th... invocation and few on the
 * others.  With --dry-run the dry runs are exactly those heavy invocations,
 * so a measured page-fault count in the thousands would mean a dry run was
 * counted; without --dry-run the heavy runs must show up.  Also: --pre and
 * --post run counts, several passes, counting of descendants, the no-PMU
 * report, exit statuses, and the text report read back as perf stat text.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nltest.h"
#include "noplab/counters.h"
#include "noplab/results.h"

#define HEAVY_PAGES 3000
#define LIGHT_PAGES 8

static const char prog_src[] =
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <sys/mman.h>\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	FILE *f = fopen(argv[1], \"a+\");\n"
	"	long lines = 0;\n"
	"	int c;\n"
	"	if (!f) return 99;\n"
	"	rewind(f);\n"
	"	while ((c = fgetc(f)) != EOF) lines += c == '\\n';\n"
	"	fprintf(f, \"run\\n\");\n"
	"	fclose(f);\n"
	"	size_t pages = lines % 2 == 0 ? 3000 : 8, ps = 4096;\n"
	"	char *p = mmap(0, pages * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);\n"
	"	if (p == MAP_FAILED) return 98;\n"
	"	madvise(p, pages * ps, MADV_NOHUGEPAGE);\n"
	"	for (size_t i = 0; i < pages; i++) p[i * ps] = 1;\n"
	"	return argc > 2 ? atoi(argv[2]) : 0;\n"
	"}\n";

struct fixture {
	char *dir;
	char prog[512], log[512], pre[512], post[512], json[512], text[512];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char cmd[2048], src[600];
	FILE *fp;

	f->dir = nltest_tmpdir("stat");
	assert_non_null(f->dir);
	snprintf(src, sizeof(src), "%s/prog.c", f->dir);
	snprintf(f->prog, sizeof(f->prog), "%s/prog", f->dir);
	snprintf(f->log, sizeof(f->log), "%s/runs.log", f->dir);
	snprintf(f->pre, sizeof(f->pre), "%s/pre.log", f->dir);
	snprintf(f->post, sizeof(f->post), "%s/post.log", f->dir);
	snprintf(f->json, sizeof(f->json), "%s/out.json", f->dir);
	snprintf(f->text, sizeof(f->text), "%s/report.txt", f->dir);
	fp = fopen(src, "w");
	assert_non_null(fp);
	fputs(prog_src, fp);
	fclose(fp);
	/* built without the sanitizers: the command under test is plain C */
	snprintf(cmd, sizeof(cmd), "cc -O1 -o %s %s", f->prog, src);
	if (nltest_run(cmd, NULL) != 0)
		fail_msg("cannot build the test program");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	nltest_run(cmd, NULL);
	free(f->dir);
	free(f);
	return 0;
}

static void reset_logs(const struct fixture *f)
{
	unlink(f->log);
	unlink(f->pre);
	unlink(f->post);
	unlink(f->json);
	unlink(f->text);
}

static int count_lines(const char *path)
{
	FILE *fp = fopen(path, "r");
	int n = 0, c;

	if (!fp)
		return 0;
	while ((c = fgetc(fp)) != EOF)
		n += c == '\n';
	fclose(fp);
	return n;
}

/* Run noplab stat ARGS; the report (stderr) goes to f->text.  Returns the exit status. */
static int stat_run(const struct fixture *f, const char *args)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "'%s' stat %s 2>'%s' >/dev/null", nltest_noplab(), args, f->text);
	return nltest_run(cmd, NULL);
}

static char *slurp(const char *path)
{
	char cmd[600], *out = NULL;

	snprintf(cmd, sizeof(cmd), "cat '%s'", path);
	nltest_run(cmd, &out);
	return out;
}

static json_t *event(json_t *doc, const char *name)
{
	size_t i;
	json_t *ev;

	json_array_foreach(json_object_get(doc, "events"), i, ev)
		if (!strcmp(json_string_value(json_object_get(ev, "name")), name))
			return ev;
	return NULL;
}

static json_int_t count(json_t *doc, const char *key)
{
	return json_integer_value(json_object_get(json_object_get(doc, "counts"), key));
}

/* min and max of an event's per-run values */
static void run_range(json_t *ev, double *lo, double *hi)
{
	json_t *runs = json_object_get(ev, "runs"), *v;
	size_t i;

	*lo = INFINITY;
	*hi = -INFINITY;
	json_array_foreach(runs, i, v) {
		double x = json_number_value(v);

		*lo = x < *lo ? x : *lo;
		*hi = x > *hi ? x : *hi;
	}
}

static void test_dry_run_pre_passes(void **state)
{
	struct fixture *f = *state;
	char args[2048];
	json_error_t err;
	json_t *doc, *pf, *tc, *cs;
	double lo, hi;
	int st;

	reset_logs(f);
	/* --group-size 2 splits three software events into two passes */
	snprintf(args, sizeof(args),
		 "-r 3 --dry-run --pre 'echo pre >> %s' --post 'echo post >> %s' "
		 "-e task-clock,page-faults,context-switches --group-size 2 -o '%s' -- '%s' '%s'",
		 f->pre, f->post, f->json, f->prog, f->log);
	st = stat_run(f, args);
	if (st != 0) {
		char *t = slurp(f->text);

		fail_msg("noplab stat exited %d:\n%s", st, t ? t : "");
	}
	/* 3 repetitions x 2 passes x (dry + measured) */
	assert_int_equal(count_lines(f->log), 12);
	assert_int_equal(count_lines(f->pre), 6);
	assert_int_equal(count_lines(f->post), 6);

	doc = json_load_file(f->json, 0, &err);
	assert_non_null(doc);
	assert_int_equal(count(doc, "passes"), 2);
	assert_int_equal(count(doc, "measured_runs"), 6);
	assert_int_equal(count(doc, "dry_runs"), 6);
	assert_int_equal(count(doc, "pre_runs"), 6);
	assert_int_equal(count(doc, "post_runs"), 6);
	assert_int_equal(json_array_size(json_object_get(doc, "passes")), 2);
	pf = event(doc, "page-faults");
	tc = event(doc, "task-clock");
	cs = event(doc, "context-switches");
	assert_non_null(pf);
	assert_non_null(tc);
	assert_non_null(cs);
	assert_int_equal(json_integer_value(json_object_get(pf, "n")), 3);
	assert_int_equal(json_integer_value(json_object_get(cs, "n")), 3);
	assert_int_equal(json_integer_value(json_object_get(cs, "pass")), 2);
	assert_int_equal(json_integer_value(json_object_get(pf, "pass")), 1);
	/* the heavy invocations were the dry runs: none of them was counted */
	run_range(pf, &lo, &hi);
	assert_true(lo >= LIGHT_PAGES);
	assert_true(hi < HEAVY_PAGES / 2);
	assert_true(json_real_value(json_object_get(tc, "mean")) > 0);
	assert_string_equal(json_string_value(json_object_get(tc, "unit")), "msec");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "elapsed"), "n")), 3);
	assert_true(json_is_true(json_object_get(json_object_get(doc, "options"), "dry_run")));
	json_decref(doc);
}

static void test_without_dry_run(void **state)
{
	struct fixture *f = *state;
	char args[2048];
	json_error_t err;
	json_t *doc;
	double lo, hi;

	reset_logs(f);
	snprintf(args, sizeof(args), "-r 4 -e page-faults -o '%s' -- '%s' '%s'", f->json, f->prog,
		 f->log);
	assert_int_equal(stat_run(f, args), 0);
	assert_int_equal(count_lines(f->log), 4);
	doc = json_load_file(f->json, 0, &err);
	assert_non_null(doc);
	assert_int_equal(count(doc, "dry_runs"), 0);
	/* invocations 1 and 3 are heavy and are measured now */
	run_range(event(doc, "page-faults"), &lo, &hi);
	assert_true(hi >= HEAVY_PAGES);
	assert_true(lo < HEAVY_PAGES / 2);
	json_decref(doc);
}

static void test_descendants_counted(void **state)
{
	struct fixture *f = *state;
	char args[2048];
	json_error_t err;
	json_t *doc;
	double lo, hi;

	reset_logs(f);
	/* the shell forks the program twice: one heavy, one light invocation per run */
	snprintf(args, sizeof(args), "-r 2 -e page-faults -o '%s' -- /bin/sh -c \"'%s' '%s'; '%s' '%s'\"",
		 f->json, f->prog, f->log, f->prog, f->log);
	assert_int_equal(stat_run(f, args), 0);
	assert_int_equal(count_lines(f->log), 4);
	doc = json_load_file(f->json, 0, &err);
	assert_non_null(doc);
	run_range(event(doc, "page-faults"), &lo, &hi);
	assert_true(lo >= HEAVY_PAGES);
	json_decref(doc);
}

static void test_text_report_reads_back(void **state)
{
	struct fixture *f = *state;
	char args[2048], *text;
	struct nl_results r;
	struct nl_diag d;
	json_error_t err;
	json_t *doc;
	const struct nl_series *pf, *el;

	reset_logs(f);
	snprintf(args, sizeof(args), "-r 3 -e task-clock,page-faults -o '%s' -- '%s' '%s'", f->json,
		 f->prog, f->log);
	assert_int_equal(stat_run(f, args), 0);
	text = slurp(f->text);
	assert_non_null(strstr(text, "Performance counter stats for '"));
	assert_non_null(strstr(text, "' (3 runs):"));
	assert_non_null(strstr(text, "msec task-clock"));
	assert_non_null(strstr(text, "seconds time elapsed"));
	assert_non_null(strstr(text, "( +-"));
	/* perf stat's layout: noplab diff reads it like perf's */
	nl_diag_init(&d);
	if (nl_results_parse(text, strlen(text), &r, &d))
		fail_msg("%s\n%s", d.msg, text);
	assert_string_equal(r.format, "perf-stat");
	assert_int_equal(r.runs, 3);
	doc = json_load_file(f->json, 0, &err);
	pf = nl_results_find(&r, "page-faults");
	el = nl_results_find(&r, "elapsed");
	assert_non_null(pf);
	assert_non_null(el);
	/* the printed mean is rounded to an integer count */
	assert_true(fabs(pf->sum.mean - json_number_value(json_object_get(event(doc, "page-faults"),
									    "mean"))) <= 0.5);
	assert_true(fabs(el->sum.mean - json_number_value(json_object_get(
						json_object_get(doc, "elapsed"), "mean"))) <
		    el->sum.sem + 1e-9);
	/* and noplab's own JSON reads back with every run */
	{
		struct nl_results rj;
		const struct nl_series *s;

		assert_int_equal(nl_results_load(f->json, &rj, &d), 0);
		assert_string_equal(rj.format, "noplab-stat");
		s = nl_results_find(&rj, "page-faults");
		assert_non_null(s);
		assert_non_null(s->runs);
		assert_int_equal(s->n, 3);
		nl_results_free(&rj);
	}
	json_decref(doc);
	nl_results_free(&r);
	free(text);
}

static void test_no_pmu_report(void **state)
{
	struct fixture *f = *state;
	struct nl_pmu_probe probe;
	char args[2048], *text;
	json_error_t err;
	json_t *doc, *nm, *x;
	const char *p;
	size_t i;
	int said = 0;

	nl_pmu_probe(&probe, NULL);
	if (probe.hw_usable) {
		print_message("a hardware PMU is present: the no-PMU report does not apply\n");
		skip();
	}
	reset_logs(f);
	/* the default events: cycles, instructions and L1i misses cannot be counted here */
	snprintf(args, sizeof(args), "-r 2 -o '%s' -- '%s' '%s'", f->json, f->prog, f->log);
	assert_int_equal(stat_run(f, args), 0);
	text = slurp(f->text);
	for (p = text; (p = strstr(p, "no hardware counters")); p++)
		said++;
	assert_int_equal(said, 1);	/* said plainly, once */
	assert_non_null(strstr(text, "<not supported>      cycles"));
	assert_non_null(strstr(text, "<not supported>      instructions"));
	assert_non_null(strstr(text, "<not supported>      L1-ICACHE-LOAD-MISSES"));
	assert_non_null(strstr(text, "msec task-clock"));
	doc = json_load_file(f->json, 0, &err);
	assert_non_null(doc);
	assert_null(event(doc, "cycles"));	/* never a zero for what was not measured */
	nm = json_object_get(doc, "not_measured");
	assert_int_equal(json_array_size(nm), 3);
	json_array_foreach(nm, i, x)
		assert_non_null(strstr(json_string_value(json_object_get(x, "reason")),
				       "no hardware counters"));
	assert_true(json_is_false(json_object_get(json_object_get(doc, "environment"),
						  "hw_counters")));
	json_decref(doc);
	free(text);
}

/*
 * As an unprivileged user with perf_event_paranoid >= 2, scheduler events
 * (kernel mode only) cannot be counted: not measured, said so, never 0.
 * Needs root to become nobody; skipped elsewhere.
 */
static void test_unprivileged(void **state)
{
	struct nl_pmu_probe probe;
	char cmd[1024], *out = NULL;
	json_error_t err;
	json_t *doc, *nm, *x;
	bool listed = false;
	size_t i;

	(void)state;
	nl_pmu_probe(&probe, NULL);
	if (getuid() != 0 || probe.paranoid < 2 || nltest_run("command -v setpriv >/dev/null", NULL)) {
		print_message("needs root, setpriv and perf_event_paranoid >= 2: skipped\n");
		skip();
	}
	snprintf(cmd, sizeof(cmd),
		 "cd / && setpriv --reuid=65534 --regid=65534 --clear-groups '%s' stat --json -r 2 "
		 "-e task-clock,context-switches -- /bin/true 2>/dev/null",
		 nltest_noplab());
	if (nltest_run(cmd, &out) != 0 || !out || out[0] != '{') {
		print_message("noplab not runnable as nobody here: skipped\n");
		free(out);
		skip();
	}
	doc = json_loads(out, 0, &err);
	assert_non_null(doc);
	assert_null(event(doc, "context-switches"));
	assert_non_null(event(doc, "task-clock"));
	nm = json_object_get(doc, "not_measured");
	json_array_foreach(nm, i, x)
		listed |= !strcmp(json_string_value(json_object_get(x, "name")), "context-switches") &&
			  strstr(json_string_value(json_object_get(x, "reason")), "kernel mode");
	assert_true(listed);
	json_decref(doc);
	free(out);
}

struct exit_row {
	int line;
	const char *args;	/* PROG and LOG stand for the program and its log */
	int status;
	const char *needle;	/* in the report (stderr) */
};

static const struct exit_row exits[] = {
	{ SRC_LINE, "-r 2 -e task-clock -- 'PROG' 'LOG' 3", 1, "exited non-zero in 2 of 2" },
	{ SRC_LINE, "-r 1 -e task-clock -- /nonexistent/command", 3, "cannot run" },
	{ SRC_LINE, "-r 1 -e task-clock --pre 'exit 7' -- 'PROG' 'LOG'", 4, "status 7" },
	{ SRC_LINE, "-r 0 -- true", 2, "-r" },
	{ SRC_LINE, "-e cyclez -- true", 2, "closest libpfm4 names: cycles" },
	{ SRC_LINE, "--cpu 99999 -- true", 2, "does not exist" },
	{ SRC_LINE, "--cpu 0 -r 1 -e task-clock -- 'PROG' 'LOG'", 0, "Performance counter stats for" },
	{ SRC_LINE, "-r 1", 2, "no command" },
	{ SRC_LINE, "--group-size 0 -- true", 2, "--group-size" },
};

/* args with PROG and LOG replaced */
static void expand(const char *in, const struct fixture *f, char *out, size_t size)
{
	size_t o = 0;

	while (*in && o + 1 < size) {
		const char *with = !strncmp(in, "PROG", 4) ? f->prog : !strncmp(in, "LOG", 3) ? f->log : NULL;

		if (with) {
			o += (size_t)snprintf(out + o, size - o, "%s", with);
			in += with == f->prog ? 4 : 3;
		} else {
			out[o++] = *in++;
		}
	}
	out[o < size ? o : size - 1] = '\0';
}

static void test_exit_statuses(void **state)
{
	struct fixture *f = *state;

	for (size_t i = 0; i < sizeof(exits) / sizeof(exits[0]); i++) {
		const struct exit_row *r = &exits[i];
		char args[2048], *text;
		int st;

		reset_logs(f);
		expand(r->args, f, args, sizeof(args));
		st = stat_run(f, args);
		text = slurp(f->text);
		if (st != r->status)
			row_fail(r, "'%s': exit %d, want %d\n%s", args, st, r->status, text);
		if (!text || !strstr(text, r->needle))
			row_fail(r, "'%s': report lacks '%s':\n%s", args, r->needle, text);
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dry_run_pre_passes),
		cmocka_unit_test(test_without_dry_run),
		cmocka_unit_test(test_descendants_counted),
		cmocka_unit_test(test_text_report_reads_back),
		cmocka_unit_test(test_no_pmu_report),
		cmocka_unit_test(test_unprivileged),
		cmocka_unit_test(test_exit_statuses),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
