// SPDX-License-Identifier: MIT
/*
 * noplab diff A B: does B differ from A, event by event, beyond noise?
 * Inputs are noplab JSON (stat, bench) or perf stat text/CSV, detected from
 * their contents.  The verdict is in the output, not the exit status, unless
 * --fail-on-regression asks for one (for CI).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "noplab/results.h"
#include "noplab/stats.h"

#define ALPHA 0.05

struct diff_opts {
	struct nl_diff_opts d;
	size_t runs_a, runs_b;
	const char *fail_on, *output;
	bool json;
};

static void diff_usage(FILE *f)
{
	fprintf(f,
		"usage: noplab diff [options] A B\n\n"
		"Compare two measurements event by event: means, difference in percent with its\n"
		"95%% confidence interval, Welch's t-test (t, degrees of freedom, p) and a verdict.\n"
		"A and B may each be noplab JSON (noplab stat -o, noplab bench -o), the text that\n"
		"perf stat -r N prints (today's or the 2.6.3x format), or perf stat -x, CSV.\n"
		"perf's '+- x%%' is the standard error of the mean; from perf text the test uses\n"
		"mean, standard error and run count, from noplab JSON every run.\n\n"
		"      --threshold PCT    a difference this large matters in practice (default 0.5)\n"
		"      --runs N           run count for inputs that do not say (perf stat -x,)\n"
		"      --runs-a N, --runs-b N   the same for one side\n"
		"      --fail-on-regression EVENT[,EVENT...]\n"
		"                         exit 1 when EVENT is significantly higher in B and beyond\n"
		"                         the threshold (higher = worse: times and counts)\n"
		"      --json             JSON on stdout\n"
		"  -o, --output FILE      JSON into FILE\n\n"
		"Verdicts (alpha = 0.05): higher, lower, no-significant-difference.  Warnings mark\n"
		"weak ground: multiplexed/scaled counts, fewer than 3 runs, a relative error above\n"
		"5%%, and printed numbers whose rounding limits the precision.\n\n"
		"Exit status: 0 compared; 1 a regression asked for with --fail-on-regression;\n"
		"2 usage error; 3 an input is missing or not understood.\n");
}

static json_t *jreal(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* 3497112.61 -> "3,497,112.61"; small or fractional values with 6 significant digits */
static void fmt_value(double v, const char *unit, char *buf, size_t size)
{
	char num[64];
	const char *u = !strcmp(unit, "seconds") ? " s" : unit[0] ? " " : "";

	if (fabs(v) >= 1e5 && fabs(v) < 1.8e19) {
		char ip[40];
		double r = round(fabs(v));

		cli_thousands((uint64_t)r, ip, sizeof(ip));
		snprintf(num, sizeof(num), "%s%s", v < 0 ? "-" : "", ip);
	} else {
		snprintf(num, sizeof(num), "%.6g", v);
	}
	snprintf(buf, size, "%s%s%s", num, u, !strcmp(unit, "seconds") ? "" : unit);
}

static const char *verdict_words(const struct nl_diff_row *row)
{
	if (!row->compared)
		return "not tested";
	switch (row->cmp.verdict) {
	case NL_VERDICT_HIGHER:
		return "significantly higher";
	case NL_VERDICT_LOWER:
		return "significantly lower";
	case NL_VERDICT_NONE:
		break;
	}
	return "no significant difference";
}

static void describe(const char *label, const char *path, const struct nl_results *r)
{
	printf("%s = %s (%s", label, path, r->format);
	if (r->runs)
		printf(", %zu run%s", r->runs, r->runs == 1 ? "" : "s");
	if (r->command[0])
		printf(", '%s'", r->command);
	printf(")\n");
}

static void print_text(const char *pa, const char *pb, const struct nl_results *a,
		       const struct nl_results *b, const struct nl_diff_row *rows, size_t nr,
		       const struct diff_opts *o)
{
	unsigned higher = 0, lower = 0, same = 0, untested = 0;

	describe("A", pa, a);
	describe("B", pb, b);
	printf("\n%-30s %18s %18s %9s  %-21s %7s %6s %9s  %s\n", "event", "A mean", "B mean", "delta",
	       "95% CI of delta", "t", "df", "p", "verdict");
	for (size_t i = 0; i < nr; i++) {
		const struct nl_diff_row *row = &rows[i];
		char va[48] = "-", vb[48] = "-", ci[48] = "", delta[24] = "";
		bool both = row->a->state == NL_SERIES_COUNTED && row->b->state == NL_SERIES_COUNTED;

		if (row->a->state == NL_SERIES_COUNTED)
			fmt_value(row->a->sum.mean, row->a->unit, va, sizeof(va));
		else
			snprintf(va, sizeof(va), "<%s>", row->a->state == NL_SERIES_NOT_SUPPORTED
							   ? "not supported" : "not counted");
		if (row->b->state == NL_SERIES_COUNTED)
			fmt_value(row->b->sum.mean, row->b->unit, vb, sizeof(vb));
		else
			snprintf(vb, sizeof(vb), "<%s>", row->b->state == NL_SERIES_NOT_SUPPORTED
							   ? "not supported" : "not counted");
		if (row->compared) {
			snprintf(delta, sizeof(delta), "%+.2f%%", row->cmp.delta_pct);
			snprintf(ci, sizeof(ci), "[%+.2f%%, %+.2f%%]", row->cmp.ci95_lo,
				 row->cmp.ci95_hi);
			printf("%-30s %18s %18s %9s  %-21s %7.2f %6.1f %9.3g  %s%s\n", row->a->name, va,
			       vb, delta, ci, row->cmp.t, row->cmp.df, row->cmp.p, verdict_words(row),
			       row->cmp.verdict == NL_VERDICT_NONE ? ""
			       : row->cmp.practical		   ? " (beyond the threshold)"
								   : " (within the threshold)");
		} else {
			if (both && row->a->sum.mean != 0)
				snprintf(delta, sizeof(delta), "%+.2f%%",
					 100.0 * (row->b->sum.mean - row->a->sum.mean) /
						 fabs(row->a->sum.mean));
			printf("%-30s %18s %18s %9s  %-21s %7s %6s %9s  %s\n", row->a->name, va, vb,
			       delta, "", "", "", "", verdict_words(row));
		}
		for (size_t w = 0; w < row->nr_warnings; w++)
			printf("    ! %s\n", row->warnings[w]);
		if (!row->compared)
			untested++;
		else if (row->cmp.verdict == NL_VERDICT_HIGHER)
			higher++;
		else if (row->cmp.verdict == NL_VERDICT_LOWER)
			lower++;
		else
			same++;
	}
	printf("\nB against A: %u significantly higher, %u significantly lower, %u no significant "
	       "difference, %u not tested (Welch's t-test, alpha %.2f; practical threshold %.2g%%)\n",
	       higher, lower, same, untested, ALPHA, o->d.threshold_pct);
}

static json_t *side_json(const struct nl_series *s)
{
	if (s->state != NL_SERIES_COUNTED)
		return json_pack("{s:n, s:n, s:o, s:s}", "mean", "sem_pct", "n",
				 s->n ? json_integer((json_int_t)s->n) : json_null(), "state",
				 s->state == NL_SERIES_NOT_SUPPORTED ? "not-supported" : "not-counted");
	return json_pack("{s:o, s:o, s:o, s:o, s:b}", "mean", jreal(s->sum.mean), "sem_pct",
			 s->has_sem ? jreal(s->sum.sem_pct) : json_null(), "n",
			 s->n ? json_integer((json_int_t)s->n) : json_null(), "running_pct",
			 jreal(s->running_pct), "scaled", s->scaled);
}

static json_t *input_json(const char *path, const struct nl_results *r)
{
	return json_pack("{s:s, s:s, s:s, s:o}", "path", path, "format", r->format, "command",
			 r->command, "runs", r->runs ? json_integer((json_int_t)r->runs) : json_null());
}

static json_t *diff_json(const char *pa, const char *pb, const struct nl_results *a,
			 const struct nl_results *b, const struct nl_diff_row *rows, size_t nr,
			 const struct diff_opts *o, json_t *regressions)
{
	json_t *doc = cli_json_doc("diff"), *events = json_array();

	json_object_set_new(doc, "a", input_json(pa, a));
	json_object_set_new(doc, "b", input_json(pb, b));
	json_object_set_new(doc, "threshold_pct", json_real(o->d.threshold_pct));
	json_object_set_new(doc, "alpha", json_real(ALPHA));
	for (size_t i = 0; i < nr; i++) {
		const struct nl_diff_row *row = &rows[i];
		json_t *w = json_array(), *ev;
		double delta = NAN;

		for (size_t k = 0; k < row->nr_warnings; k++)
			json_array_append_new(w, json_string(row->warnings[k]));
		if (row->compared)
			delta = row->cmp.delta_pct;
		else if (row->a->state == NL_SERIES_COUNTED && row->b->state == NL_SERIES_COUNTED &&
			 row->a->sum.mean != 0)
			delta = 100.0 * (row->b->sum.mean - row->a->sum.mean) / fabs(row->a->sum.mean);
		ev = json_pack("{s:s, s:s, s:o, s:o, s:o}", "name", row->a->name, "unit", row->a->unit,
			       "a", side_json(row->a), "b", side_json(row->b), "delta_pct",
			       jreal(delta));
		if (row->compared) {
			json_object_set_new(ev, "ci95", json_pack("[o, o]", jreal(row->cmp.ci95_lo),
								  jreal(row->cmp.ci95_hi)));
			/* t is infinite when neither side varies: null, with p = 0 */
			json_object_set_new(ev, "t", jreal(row->cmp.t));
			json_object_set_new(ev, "df", jreal(row->cmp.df));
			json_object_set_new(ev, "p", jreal(row->cmp.p));
			json_object_set_new(ev, "verdict",
					    json_string(nl_verdict_name(row->cmp.verdict)));
			json_object_set_new(ev, "practical", json_boolean(row->cmp.practical));
		} else {
			json_object_set_new(ev, "ci95", json_null());
			json_object_set_new(ev, "t", json_null());
			json_object_set_new(ev, "df", json_null());
			json_object_set_new(ev, "p", json_null());
			json_object_set_new(ev, "verdict", json_null());
			json_object_set_new(ev, "practical", json_null());
		}
		json_object_set_new(ev, "warnings", w);
		json_array_append_new(events, ev);
	}
	json_object_set_new(doc, "events", events);
	json_object_set_new(doc, "regressions", json_incref(regressions));
	return doc;
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	v = strtoul(s, &end, 10);
	if (*end || v < 1 || v > 1000000)
		return -1;
	*out = v;
	return 0;
}

/* --fail-on-regression: which of the named events regressed.  -1: a name is not in both. */
static int regressions(const struct diff_opts *o, const struct nl_results *a,
		       const struct nl_diff_row *rows, size_t nr, json_t *out, char *missing,
		       size_t msize)
{
	const char *p = o->fail_on;
	int found = 0;

	while (p && *p) {
		size_t len = strcspn(p, ",");
		char name[128];
		const struct nl_diff_row *row = NULL;
		const struct nl_series *s;

		snprintf(name, sizeof(name), "%.*s", (int)len, p);
		p += len + (p[len] == ',');
		s = nl_results_find(a, name);
		for (size_t i = 0; i < nr && s && !row; i++)
			if (rows[i].a == s)
				row = &rows[i];
		if (!row) {
			snprintf(missing, msize, "%s", name);
			return -1;
		}
		if (row->compared && row->cmp.verdict == NL_VERDICT_HIGHER && row->cmp.practical) {
			json_array_append_new(out, json_string(row->a->name));
			found++;
		}
	}
	return found;
}

int cmd_diff(int argc, char **argv)
{
	enum { OPT_THRESHOLD = 256, OPT_RUNS, OPT_RUNS_A, OPT_RUNS_B, OPT_FAIL, OPT_JSON };
	static const struct option longopts[] = {
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "runs", required_argument, NULL, OPT_RUNS },
		{ "runs-a", required_argument, NULL, OPT_RUNS_A },
		{ "runs-b", required_argument, NULL, OPT_RUNS_B },
		{ "fail-on-regression", required_argument, NULL, OPT_FAIL },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct diff_opts o = { .d = { .threshold_pct = 0.5, .max_sem_pct = 5.0, .min_runs = 3 } };
	struct nl_results a, b;
	struct nl_diff_row *rows = NULL;
	struct nl_diag diag;
	json_t *regs;
	size_t nr = 0;
	char *end, missing[128];
	int c, err, nregs, status = NL_EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_THRESHOLD:
			o.d.threshold_pct = strtod(optarg, &end);
			if (*end == '%')
				end++;
			if (end == optarg || *end || !(o.d.threshold_pct >= 0) ||
			    o.d.threshold_pct > 1e6)
				return cli_usage_error("diff", "--threshold needs a percentage, not '%s'",
						       optarg);
			break;
		case OPT_RUNS:
			if (parse_size(optarg, &o.runs_a))
				return cli_usage_error("diff", "--runs needs a run count, not '%s'", optarg);
			o.runs_b = o.runs_a;
			break;
		case OPT_RUNS_A:
			if (parse_size(optarg, &o.runs_a))
				return cli_usage_error("diff", "--runs-a needs a run count, not '%s'", optarg);
			break;
		case OPT_RUNS_B:
			if (parse_size(optarg, &o.runs_b))
				return cli_usage_error("diff", "--runs-b needs a run count, not '%s'", optarg);
			break;
		case OPT_FAIL: o.fail_on = optarg; break;
		case OPT_JSON: o.json = true; break;
		case 'o': o.output = optarg; break;
		case 'h': diff_usage(stdout); return NL_EXIT_OK;
		default: diff_usage(stderr); return NL_EXIT_USAGE;
		}
	}
	if (argc - optind != 2)
		return cli_usage_error("diff", "needs two inputs, A and B");

	cli_diag_init(&diag, "diff", false);
	err = nl_results_load(argv[optind], &a, &diag);
	if (err)
		return cli_error("diff", argv[optind], err, &diag);
	err = nl_results_load(argv[optind + 1], &b, &diag);
	if (err) {
		nl_results_free(&a);
		return cli_error("diff", argv[optind + 1], err, &diag);
	}
	if (o.runs_a && !a.runs)
		nl_results_assume_runs(&a, o.runs_a);
	if (o.runs_b && !b.runs)
		nl_results_assume_runs(&b, o.runs_b);

	err = nl_results_diff(&a, &b, &o.d, &rows, &nr, &diag);
	if (err) {
		status = cli_error("diff", NULL, err, &diag);
		goto out;
	}
	regs = json_array();
	nregs = regressions(&o, &a, rows, nr, regs, missing, sizeof(missing));
	if (nregs < 0) {
		json_decref(regs);
		status = cli_usage_error("diff", "--fail-on-regression: '%s' is not an event of both inputs",
					 missing);
		goto out;
	}
	if (o.json || o.output) {
		json_t *doc = diff_json(argv[optind], argv[optind + 1], &a, &b, rows, nr, &o, regs);

		err = cli_json_write(doc, o.json ? NULL : o.output, "diff");
		if (!err && o.json && o.output)
			err = cli_json_write(diff_json(argv[optind], argv[optind + 1], &a, &b, rows, nr,
						       &o, regs), o.output, "diff");
		if (err)
			status = err;
	}
	if (!o.json)
		print_text(argv[optind], argv[optind + 1], &a, &b, rows, nr, &o);
	if (!status && nregs > 0) {
		fprintf(stderr, "noplab diff: %d regression%s beyond %.2g%%:", nregs, nregs == 1 ? "" : "s",
			o.d.threshold_pct);
		for (size_t i = 0; i < json_array_size(regs); i++)
			fprintf(stderr, " %s", json_string_value(json_array_get(regs, i)));
		fprintf(stderr, "\n");
		status = NL_EXIT_FINDINGS;
	}
	json_decref(regs);
out:
	free(rows);
	nl_results_free(&a);
	nl_results_free(&b);
	return status;
}
