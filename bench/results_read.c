// SPDX-License-Identifier: MIT
/*
 * noplab's own JSON read back into series: `noplab stat -o` (events[],
 * elapsed, not_measured[]) and `noplab bench -o` (workloads[].variants[].
 * figures{}).  Per-run values are used when present; otherwise the saved
 * mean, sem_pct and run count.  A figure saved as null was not measured and
 * stays that way.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "noplab/results.h"

static const char *str_or(json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : dflt;
}

static bool num(json_t *o, const char *key, double *v)
{
	json_t *j = json_object_get(o, key);

	if (!json_is_number(j))
		return false;
	*v = json_number_value(j);
	return true;
}

/*
 * A run count from a JSON number: 0 when absent, -NL_E_FORMAT when it is not
 * a count (negative, fractional, or beyond any real measurement; converting
 * such a double to size_t would be undefined).
 */
#define RUNS_MAX 1e9

static int runs_of(json_t *o, const char *key, size_t *out, struct nl_diag *d)
{
	double v;

	*out = 0;
	if (!num(o, key, &v))
		return 0;
	if (!(v >= 0 && v <= RUNS_MAX) || v != floor(v))
		return nl_fail(d, -NL_E_FORMAT, "\"%s\": %g is not a run count", key, v);
	*out = (size_t)v;
	return 0;
}

/* One figure or event object into a series. */
static int read_series(json_t *o, const char *name, size_t dflt_runs, struct nl_results *r,
		       struct nl_diag *d)
{
	struct nl_series *s = nl_results_add(r, name);
	json_t *runs = json_object_get(o, "runs");
	double mean, sem_pct = 0, v;
	size_t n_runs;
	int ret;

	if (!s)
		return -ENOMEM;
	snprintf(s->unit, sizeof(s->unit), "%s", str_or(o, "unit", ""));
	snprintf(s->source, sizeof(s->source), "%s", str_or(o, "source", ""));
	if (num(o, "running_pct", &v))
		s->running_pct = v;
	s->scaled = json_is_true(json_object_get(o, "scaled"));

	if (json_is_array(runs) && json_array_size(runs)) {
		size_t n = json_array_size(runs);
		double *vals = malloc(n * sizeof(*vals));

		if (!vals)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			json_t *x = json_array_get(runs, i);

			if (!json_is_number(x)) {
				free(vals);
				return nl_fail(d, -NL_E_FORMAT, "%s: runs[%zu] is not a number", name, i);
			}
			vals[i] = json_number_value(x);
		}
		ret = nl_series_set_runs(s, vals, n);
		free(vals);
		if (ret)
			return nl_fail(d, -NL_E_FORMAT, "%s: runs cannot be summarised", name);
		return 0;
	}
	if (!num(o, "mean", &mean)) {
		/* null or absent: not measured, never a zero */
		s->state = NL_SERIES_NOT_SUPPORTED;
		return 0;
	}
	num(o, "sem_pct", &sem_pct);
	if ((ret = runs_of(o, "n", &n_runs, d)))
		return ret;
	if (n_runs)
		dflt_runs = n_runs;
	if (nl_series_set_summary(s, mean, sem_pct, dflt_runs))
		return nl_fail(d, -NL_E_FORMAT, "%s: bad mean or sem_pct", name);
	s->has_sem = dflt_runs >= 2 && json_is_number(json_object_get(o, "sem_pct"));
	return 0;
}

static int read_stat(json_t *doc, struct nl_results *r, struct nl_diag *d)
{
	json_t *events = json_object_get(doc, "events"), *ev, *el, *nm;
	size_t i;
	int ret;

	snprintf(r->format, sizeof(r->format), "noplab-stat");
	snprintf(r->command, sizeof(r->command), "%s",
		 str_or(json_object_get(doc, "measured"), "cmdline", ""));
	if ((ret = runs_of(json_object_get(doc, "options"), "runs", &r->runs, d)))
		return ret;
	json_array_foreach(events, i, ev) {
		const char *name = json_string_value(json_object_get(ev, "name"));

		if (!name)
			return nl_fail(d, -NL_E_FORMAT, "events[%zu] has no name", i);
		ret = read_series(ev, name, r->runs, r, d);
		if (ret)
			return ret;
	}
	json_array_foreach(json_object_get(doc, "not_measured"), i, nm) {
		const char *name = json_string_value(json_object_get(nm, "name"));
		struct nl_series *s;

		if (!name)
			continue;
		s = nl_results_add(r, name);
		if (!s)
			return -ENOMEM;
		s->state = NL_SERIES_NOT_SUPPORTED;
	}
	el = json_object_get(doc, "elapsed");
	if (json_is_object(el)) {
		ret = read_series(el, "elapsed", r->runs, r, d);
		if (ret)
			return ret;
	}
	return 0;
}

static int read_bench(json_t *doc, struct nl_results *r, struct nl_diag *d)
{
	json_t *wl, *var;
	size_t i, j;
	int ret;

	snprintf(r->format, sizeof(r->format), "noplab-bench");
	/* the repetition count, wherever bench keeps it */
	if ((ret = runs_of(json_object_get(doc, "options"), "runs", &r->runs, d)) ||
	    (!r->runs && (ret = runs_of(json_object_get(doc, "method"), "repetitions", &r->runs, d))) ||
	    (!r->runs && (ret = runs_of(doc, "repetitions", &r->runs, d))))
		return ret;
	json_array_foreach(json_object_get(doc, "workloads"), i, wl) {
		const char *wname = str_or(wl, "name", "workload");

		json_array_foreach(json_object_get(wl, "variants"), j, var) {
			const char *vname = str_or(var, "name", "variant"), *fname;
			json_t *fig;

			json_object_foreach(json_object_get(var, "figures"), fname, fig) {
				char name[128];

				snprintf(name, sizeof(name), "%s/%s/%s", wname, vname, fname);
				if (json_is_null(fig)) {
					struct nl_series *s = nl_results_add(r, name);

					if (!s)
						return -ENOMEM;
					s->state = NL_SERIES_NOT_SUPPORTED;
					continue;
				}
				if (!json_is_object(fig))
					return nl_fail(d, -NL_E_FORMAT, "%s: a figure is not an object", name);
				ret = read_series(fig, name, r->runs, r, d);
				if (ret)
					return ret;
			}
		}
	}
	if (!r->nr)
		return nl_fail(d, -NL_E_FORMAT, "bench results with no figures");
	return 0;
}

int nl_results_read_json(const char *text, size_t len, struct nl_results *r, struct nl_diag *d)
{
	json_error_t jerr;
	json_t *doc = json_loadb(text, len, 0, &jerr);
	const char *tool, *cmd;
	int ret;

	if (!doc)
		return nl_fail(d, -NL_E_FORMAT, "JSON line %d: %s", jerr.line, jerr.text);
	tool = str_or(doc, "tool", "");
	cmd = str_or(doc, "command", "");
	if (strcmp(tool, "noplab")) {
		json_decref(doc);
		return nl_fail(d, -NL_E_FORMAT, "JSON that noplab did not write (no \"tool\": \"noplab\")");
	}
	if (json_is_array(json_object_get(doc, "events")))
		ret = read_stat(doc, r, d);
	else if (json_is_array(json_object_get(doc, "workloads")))
		ret = read_bench(doc, r, d);
	else
		ret = nl_fail(d, -NL_E_FORMAT, "noplab %s JSON holds no measurements", cmd);
	json_decref(doc);
	return ret;
}
