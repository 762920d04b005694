// SPDX-License-Identifier: MIT
/*
 * noplab stat: perf stat's job, with a discarded dry run before each
 * measured run, no multiplexed counts (events that do not fit one group are
 * counted in separate passes), and every run kept for noplab diff.
 *
 * The report goes to stderr in perf stat's layout, as perf does, so the
 * command's own output on stdout stays clean and people who read perf stat
 * read this at a glance; noplab diff reads it back like perf's.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "noplab/counters.h"
#include "noplab/cpu.h"
#include "noplab/runner.h"
#include "noplab/stats.h"

#define DEFAULT_EVENTS "cycles,instructions,L1-ICACHE-LOAD-MISSES,task-clock,context-switches,page-faults"
#define PERF_TYPE_SOFTWARE_ 1	/* perf_event.h stays in bench/counters.c */
#define SW_CPU_CLOCK 0
#define SW_TASK_CLOCK 1
#define HW_INSTRUCTIONS 1
#define HW_BRANCHES 4
#define HW_BRANCH_MISSES 5

struct stat_opts {
	unsigned repeat;
	const char *events, *pre, *post, *cpu_list, *output;
	bool dry_run, kernel, json, verbose;
	unsigned group_size;
	char **argv;
};

/* One event's result: its values across the runs of its home pass. */
struct ev_result {
	const struct nl_event *ev;
	unsigned pass, member;
	bool counted;		/* false: some run never had it on the PMU */
	bool clock;		/* a clock event: ns shown as msec */
	size_t n;
	double *vals;		/* in display units */
	struct nl_summary sum;
	double running_pct;	/* lowest over the runs */
	unsigned multiplexed_runs;
	bool has_metric;
	double metric;
	char metric_unit[32];
};

struct stat_report {
	struct nl_event_list evs;
	struct nl_plan plan;
	struct nl_stat_data data;
	struct nl_pmu_probe probe;
	char dropped[NL_EVENTS_MAX][NL_EVENT_NAME_MAX];
	size_t nr_dropped;
	char dropped_reason[NL_EVENTS_MAX][192];
	struct ev_result res[NL_EVENTS_MAX];
	struct nl_summary elapsed;	/* seconds, runs of pass 0 */
	double *elapsed_runs;
	size_t elapsed_n;
	char cmdline[1024];
	json_t *cross_pass;
};

static void stat_usage(FILE *f)
{
	fprintf(f,
		"usage: noplab stat [options] -- COMMAND [ARGS...]\n\n"
		"Run COMMAND repeatedly and count it the way perf stat does, with a discarded\n"
		"dry run before each measured run and without multiplexed counts.\n\n"
		"  -r, --repeat N       measured runs (default 5)\n"
		"  -e, --events LIST    libpfm4 event names, comma-separated (default\n"
		"                       " DEFAULT_EVENTS ")\n"
		"      --pre CMD        shell command run before every repetition (e.g. dropping caches)\n"
		"      --post CMD       shell command run after every repetition\n"
		"      --dry-run        run COMMAND once, uncounted, after --pre and before each\n"
		"                       measured run: the hot run is the one measured\n"
		"      --cpu LIST       pin COMMAND (dry and measured runs) to CPUs, e.g. 0 or 0,2-3\n"
		"      --kernel         count kernel mode too (needs perf_event_paranoid <= 1)\n"
		"      --group-size N   at most N events per counter group (default: the PMU's\n"
		"                       counters); events that do not fit run in further passes\n"
		"      --json           JSON on stdout instead of the report (COMMAND's stdout goes to stderr)\n"
		"  -o, --output FILE    also save every run as JSON (for noplab diff)\n"
		"  -v, --verbose        more detail on stderr\n\n"
		"Counting follows COMMAND and its descendants from exec to exit, user space only\n"
		"unless --kernel.  Each pass carries cycles and instructions so passes can be\n"
		"checked against each other; no count is ever scaled.  Without a hardware PMU,\n"
		"software events and wall time are measured and the rest is said to be missing.\n"
		"The report (stderr) uses perf stat's layout: value, event, derived metric after\n"
		"'#', ( +- x%% ) = standard error of the mean in percent of the mean.\n\n"
		"Exit status: 0 measured; 1 COMMAND exited non-zero in a measured run (counts\n"
		"still reported); 2 usage error or unknown event; 3 COMMAND cannot be run;\n"
		"4 counters unusable, or --pre/--post failed.\n"
		"SIGINT (Ctrl-C) or SIGTERM stops the runs: the running COMMAND gets SIGINT (SIGKILL\n"
		"2 s later), the runs completed so far are reported and saved marked partial, and\n"
		"noplab stat then ends by the same signal (status 130 for SIGINT in a shell).\n");
}

/* JSON has no NaN or infinity: an undefined figure is null, never 0 */
static json_t *jreal(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static bool is_clock(const struct nl_event *ev)
{
	return ev->type == PERF_TYPE_SOFTWARE_ &&
	       (ev->config == SW_TASK_CLOCK || ev->config == SW_CPU_CLOCK);
}

static bool is_hw(const struct nl_event *ev, uint64_t config)
{
	return ev->type == 0 && (ev->config & 0xffffffffu) == config;
}

static const struct ev_result *find_role(const struct stat_report *r, int role)
{
	for (size_t i = 0; i < r->evs.nr; i++) {
		const struct ev_result *e = &r->res[i];

		if (!e->counted)
			continue;
		if ((role == 'c' && nl_event_is_cycles(e->ev)) ||
		    (role == 'i' && nl_event_is_instructions(e->ev)) ||
		    (role == 't' && is_clock(e->ev)) || (role == 'b' && is_hw(e->ev, HW_BRANCHES)))
			return e;
	}
	return NULL;
}

/* perf's rate: "/sec", "K/sec", "M/sec", "G/sec". */
static void set_rate(struct ev_result *e, double per_sec)
{
	static const char *const units[] = { "/sec", "K/sec", "M/sec", "G/sec" };
	int u = 0;

	while (u < 3 && fabs(per_sec) >= 1e3) {
		per_sec /= 1e3;
		u++;
	}
	e->has_metric = true;
	e->metric = per_sec;
	snprintf(e->metric_unit, sizeof(e->metric_unit), "%s", units[u]);
}

static void set_metric(struct ev_result *e, double v, const char *unit)
{
	e->has_metric = true;
	e->metric = v;
	snprintf(e->metric_unit, sizeof(e->metric_unit), "%s", unit);
}

/* Derived metrics from the means, as perf prints them. */
static void derive_metrics(struct stat_report *r)
{
	const struct ev_result *clk = find_role(r, 't'), *cyc = find_role(r, 'c');
	const struct ev_result *ins = find_role(r, 'i'), *br = find_role(r, 'b');
	double wall = r->elapsed.mean;

	for (size_t i = 0; i < r->evs.nr; i++) {
		struct ev_result *e = &r->res[i];
		const struct nl_event *ev = e->ev;

		if (!e->counted)
			continue;
		if (e->clock) {
			if (wall > 0)
				set_metric(e, e->sum.mean / 1e3 / wall, "CPUs utilized");
		} else if (!ev->hw) {
			double secs = clk ? clk->sum.mean / 1e3 : wall;

			if (secs > 0)
				set_rate(e, e->sum.mean / secs);
		} else if (nl_event_is_cycles(ev)) {
			if (clk && clk->sum.mean > 0)
				set_metric(e, e->sum.mean / (clk->sum.mean * 1e6), "GHz");
		} else if (nl_event_is_instructions(ev)) {
			if (cyc && cyc->sum.mean > 0)
				set_metric(e, e->sum.mean / cyc->sum.mean, "insn per cycle");
		} else if (is_hw(ev, HW_BRANCH_MISSES) && br && br->sum.mean > 0) {
			set_metric(e, 100.0 * e->sum.mean / br->sum.mean, "% of all branches");
		} else if (ins && ins->sum.mean > 0) {
			set_metric(e, 1e3 * e->sum.mean / ins->sum.mean, "per 1k instructions");
		} else if (clk && clk->sum.mean > 0) {
			set_rate(e, e->sum.mean / (clk->sum.mean / 1e3));
		}
	}
}

static int collect(struct stat_report *r, struct nl_diag *d)
{
	const struct nl_stat_data *sd = &r->data;
	size_t per_pass = sd->nr_runs / r->plan.nr;

	for (size_t i = 0; i < r->evs.nr; i++) {
		struct ev_result *e = &r->res[i];
		unsigned p = r->plan.home[i];
		size_t k = 0;

		e->ev = &r->evs.ev[i];
		e->pass = p;
		e->clock = is_clock(e->ev);
		e->counted = true;
		e->running_pct = 100.0;
		for (unsigned m = 0; m < r->plan.pass[p].nr; m++)
			if (r->plan.pass[p].ev[m] == i)
				e->member = m;
		e->vals = calloc(per_pass ? per_pass : 1, sizeof(double));
		if (!e->vals)
			return -ENOMEM;
		for (size_t j = 0; j < sd->nr_runs; j++) {
			const struct nl_stat_run *run = &sd->runs[j];
			double pct;

			if (run->pass != p)
				continue;
			if (!run->v.time_enabled || !run->v.time_running) {
				e->counted = false;	/* never on the PMU: no count, not a zero */
				continue;
			}
			pct = nl_values_running_pct(&run->v);
			if (pct < 100.0) {
				e->multiplexed_runs++;
				if (pct < e->running_pct)
					e->running_pct = pct;
			}
			e->vals[k++] = e->clock ? (double)run->v.value[e->member] / 1e6
						: (double)run->v.value[e->member];
		}
		e->n = k;
		if (!e->counted || !k) {
			e->counted = false;
			continue;
		}
		if (nl_summarize(e->vals, k, &e->sum))
			return nl_fail(d, -EINVAL, "%s: values cannot be summarised", e->ev->name);
	}

	r->elapsed_runs = calloc(per_pass ? per_pass : 1, sizeof(double));
	if (!r->elapsed_runs)
		return -ENOMEM;
	for (size_t j = 0; j < sd->nr_runs; j++)
		if (sd->runs[j].pass == 0)
			r->elapsed_runs[r->elapsed_n++] = sd->runs[j].wall_ns / 1e9;
	if (nl_summarize(r->elapsed_runs, r->elapsed_n, &r->elapsed))
		return nl_fail(d, -EINVAL, "elapsed times cannot be summarised");
	derive_metrics(r);
	return 0;
}

/*
 * Cycles and instructions ride in every hardware pass.  The command should
 * do the same work in each; if its instructions differ between passes, the
 * events of different passes do not describe the same runs.
 */
static void check_passes(struct stat_report *r, struct nl_diag *d)
{
	r->cross_pass = json_array();
	for (size_t i = 0; i < r->evs.nr; i++) {
		const struct ev_result *home = &r->res[i];

		if (!home->counted || !home->ev->hw ||
		    !(nl_event_is_cycles(home->ev) || nl_event_is_instructions(home->ev)))
			continue;
		for (unsigned p = 0; p < r->plan.nr; p++) {
			double *vals = calloc(r->data.nr_runs, sizeof(double));
			struct nl_summary s;
			struct nl_compare c;
			size_t k = 0;
			unsigned m = 0;

			if (p == home->pass || !r->plan.pass[p].hw || !vals) {
				free(vals);
				continue;
			}
			for (unsigned j = 0; j < r->plan.pass[p].nr; j++)
				if (r->plan.pass[p].ev[j] == i)
					m = j;
			for (size_t j = 0; j < r->data.nr_runs; j++)
				if (r->data.runs[j].pass == p && r->data.runs[j].v.time_running)
					vals[k++] = (double)r->data.runs[j].v.value[m];
			if (k >= 2 && home->n >= 2 && !nl_summarize(vals, k, &s) &&
			    !nl_compare(&home->sum, &s, 1.0, &c)) {
				bool bad = c.verdict != NL_VERDICT_NONE && c.practical;

				json_array_append_new(r->cross_pass, json_pack(
					"{s:s, s:i, s:i, s:o, s:o, s:s, s:b}", "event", home->ev->name,
					"pass", (int)p + 1, "home_pass", (int)home->pass + 1, "delta_pct",
					jreal(c.delta_pct), "p", jreal(c.p), "verdict",
					nl_verdict_name(c.verdict), "agree", !bad));
				if (bad)
					nl_log(d, NL_LOG_WARN,
					       "%s differs by %+.2f%% between pass %u and pass %u (p = %.3g): "
					       "the command does not do the same work in every run",
					       home->ev->name, c.delta_pct, home->pass + 1, p + 1, c.p);
			}
			free(vals);
		}
	}
}

/* 3497112.61 -> "3,497,112.61" (decimals digits), as perf's %'.2f prints it. */
static void fmt_grouped(double v, int decimals, char *buf, size_t size)
{
	double scale = pow(10.0, decimals), r = round(fabs(v) * scale);
	uint64_t ip = (uint64_t)(r / scale), fp = (uint64_t)(r - (double)ip * scale);
	char ibuf[40];

	cli_thousands(ip, ibuf, sizeof(ibuf));
	if (decimals)
		snprintf(buf, size, "%s%s.%0*llu", v < 0 ? "-" : "", ibuf, decimals,
			 (unsigned long long)fp);
	else
		snprintf(buf, size, "%s%s", v < 0 ? "-" : "", ibuf);
}

static void rstrip_print(FILE *f, char *line)
{
	size_t n = strlen(line);

	while (n && line[n - 1] == ' ')
		line[--n] = '\0';
	fprintf(f, "%s\n", line);
}

/* perf's get_precision(): digits to show the SEM's first significant digit. */
static int precision_for(double sem)
{
	if (!(sem > 0))
		return 9;
	if (sem > 1)
		return 0;
	return (int)lround(ceil(-log10(sem)));
}

static void print_report(FILE *f, const struct stat_report *r, const struct stat_opts *o)
{
	char line[512], value[64];
	size_t n = r->elapsed_n;

	fprintf(f, "\n Performance counter stats for '%s'", r->cmdline);
	if (r->data.interrupted) {
		/* the runs that completed, in the form perf prints (and noplab diff reads) */
		if (n > 1)
			fprintf(f, " (%zu runs)", n);
	} else if (o->repeat > 1) {
		fprintf(f, " (%u runs)", o->repeat);
	}
	fprintf(f, ":\n\n");
	if (r->data.interrupted)
		fprintf(f, " # interrupted: partial results, %zu of %u repetitions completed; the run "
			   "that was cut short is not counted\n\n", n, o->repeat);
	if (r->plan.nr > 1)
		fprintf(f, " # %zu counter passes: the command ran %zu times per repetition, once per "
			   "group%s\n\n",
			r->plan.nr, r->plan.nr,
			r->plan.pass[0].hw ? "; cycles and instructions in every hardware pass" : "");

	for (size_t i = 0; i < r->evs.nr; i++) {
		const struct ev_result *e = &r->res[i];
		int len;

		if (!e->counted) {
			snprintf(line, sizeof(line), "%18s %-4s %-32s", "<not counted>", "",
				 e->ev->name);
			rstrip_print(f, line);
			continue;
		}
		fmt_grouped(e->sum.mean, e->clock ? 2 : 0, value, sizeof(value));
		len = snprintf(line, sizeof(line), "%18s %-4s %-32s ", value, e->clock ? "msec" : "",
			       e->ev->name);
		if (e->has_metric)
			len += snprintf(line + len, sizeof(line) - (size_t)len, "# %8.3f %-23s",
					e->metric, e->metric_unit);
		else
			len += snprintf(line + len, sizeof(line) - (size_t)len, "%34s", "");
		if (e->n > 1 && e->sum.sem_pct > 0)
			len += snprintf(line + len, sizeof(line) - (size_t)len, "  ( +-%6.2f%% )",
					e->sum.sem_pct);
		if (e->multiplexed_runs)
			snprintf(line + len, sizeof(line) - (size_t)len, "  (%.2f%%)", e->running_pct);
		rstrip_print(f, line);
	}
	for (size_t i = 0; i < r->nr_dropped; i++) {
		snprintf(line, sizeof(line), "%18s %-4s %-32s", "<not supported>", "", r->dropped[i]);
		rstrip_print(f, line);
	}
	fprintf(f, "\n");
	if (n > 1) {
		int prec = precision_for(r->elapsed.sem) + 2;

		fprintf(f, " %17.*f +- %.*f seconds time elapsed", prec, r->elapsed.mean, prec,
			r->elapsed.sem);
		if (r->elapsed.sem_pct > 0)
			fprintf(f, "  ( +-%6.2f%% )", r->elapsed.sem_pct);
		fprintf(f, "\n");
	} else {
		fprintf(f, " %17.9f seconds time elapsed\n", r->elapsed.mean);
	}
	fprintf(f, "\n");
	for (size_t i = 0; i < r->evs.nr; i++)
		if (r->res[i].multiplexed_runs)
			fprintf(f, " # %s was time-shared on the PMU in %u of %zu runs (counted %.2f%% of "
				   "the time at worst): the value shown is the raw count, NOT scaled\n",
				r->res[i].ev->name, r->res[i].multiplexed_runs, r->res[i].n,
				r->res[i].running_pct);
}

/* The summary keys and every run, appended to o (which the caller has named). */
static json_t *summary_json(json_t *o, const struct nl_summary *s, const double *runs, size_t n,
			    bool integer)
{
	json_t *arr = json_array();

	json_object_set_new(o, "n", json_integer((json_int_t)s->n));
	json_object_set_new(o, "mean", jreal(s->mean));
	json_object_set_new(o, "sd", jreal(s->sd));
	json_object_set_new(o, "sem_pct", jreal(s->sem_pct));
	json_object_set_new(o, "median", jreal(s->median));
	json_object_set_new(o, "min", jreal(s->min));
	json_object_set_new(o, "max", jreal(s->max));
	json_object_set_new(o, "ci95", json_pack("[o, o]", jreal(s->ci95_lo), jreal(s->ci95_hi)));
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, integer ? json_integer((json_int_t)runs[i])
						   : jreal(runs[i]));
	json_object_set_new(o, "runs", arr);
	return o;
}

static json_t *report_json(const struct stat_report *r, const struct stat_opts *o,
			   const struct nl_cpu *cpu)
{
	json_t *doc = cli_json_doc("stat"), *argv = json_array(), *passes = json_array();
	json_t *events = json_array(), *missing = json_array(), *el;
	struct utsname u;
	char kernel[300] = "";

	for (char **a = o->argv; *a; a++)
		json_array_append_new(argv, json_string(*a));
	json_object_set_new(doc, "measured", json_pack("{s:o, s:s}", "argv", argv, "cmdline",
						       r->cmdline));
	json_object_set_new(doc, "partial", json_boolean(r->data.interrupted));
	json_object_set_new(doc, "options", json_pack(
		"{s:i, s:b, s:s?, s:s?, s:s?, s:b, s:s, s:o?}", "runs", (int)o->repeat, "dry_run",
		o->dry_run, "pre", o->pre, "post", o->post, "cpus", o->cpu_list, "kernel",
		o->kernel, "events", o->events, "group_size",
		o->group_size ? json_integer(o->group_size) : NULL));
	if (!uname(&u))
		snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release, u.machine);
	json_object_set_new(doc, "environment", json_pack(
		"{s:s, s:s, s:b, s:s?, s:s?, s:s?, s:i, s:i, s:i, s:s}", "kernel", kernel, "cpu",
		cpu ? cpu->brand : "", "hw_counters", r->probe.hw_usable, "hw_error",
		r->probe.hw_usable ? NULL : nl_strerror(r->probe.hw_err), "hw_hint",
		r->probe.hw_usable ? NULL : nl_perf_open_hint(r->probe.hw_err), "libpfm_core_pmu",
		r->probe.core_pmu[0] ? r->probe.core_pmu : NULL, "counter_budget",
		(int)r->plan.budget, "perf_event_paranoid", r->probe.paranoid, "nmi_watchdog",
		r->probe.nmi_watchdog, "clock", "CLOCK_MONOTONIC"));

	for (unsigned p = 0; p < r->plan.nr; p++) {
		json_t *names = json_array(), *walls = json_array();

		for (size_t m = 0; m < r->plan.pass[p].nr; m++)
			json_array_append_new(names, json_string(r->evs.ev[r->plan.pass[p].ev[m]].name));
		for (size_t j = 0; j < r->data.nr_runs; j++)
			if (r->data.runs[j].pass == p)
				json_array_append_new(walls, jreal(r->data.runs[j].wall_ns / 1e9));
		json_array_append_new(passes, json_pack("{s:o, s:b, s:o}", "events", names, "hw",
							r->plan.pass[p].hw, "elapsed_runs", walls));
	}
	json_object_set_new(doc, "passes", passes);

	for (size_t i = 0; i < r->evs.nr; i++) {
		const struct ev_result *e = &r->res[i];
		json_t *ej;

		if (!e->counted) {
			json_array_append_new(missing, json_pack(
				"{s:s, s:s}", "name", e->ev->name, "reason",
				"not counted: the group never ran on the PMU"));
			continue;
		}
		ej = json_object();
		json_object_set_new(ej, "name", json_string(e->ev->name));
		json_object_set_new(ej, "unit", json_string(e->clock ? "msec" : ""));
		json_object_set_new(ej, "source", json_string(e->ev->hw ? "hw" : "sw"));
		json_object_set_new(ej, "encoding", json_string(e->ev->fstr));
		json_object_set_new(ej, "pass", json_integer(e->pass + 1));
		json_object_set_new(ej, "anchor", json_boolean(e->ev->anchor));
		json_object_set_new(ej, "running_pct", jreal(e->running_pct));
		json_object_set_new(ej, "multiplexed", json_boolean(e->multiplexed_runs > 0));
		json_object_set_new(ej, "scaled", json_false());
		json_object_set_new(ej, "metric", e->has_metric ? json_pack(
			"{s:o, s:s}", "value", jreal(e->metric), "unit", e->metric_unit) : json_null());
		summary_json(ej, &e->sum, e->vals, e->n, !e->clock);
		json_array_append_new(events, ej);
	}
	for (size_t i = 0; i < r->nr_dropped; i++)
		json_array_append_new(missing, json_pack("{s:s, s:s}", "name", r->dropped[i], "reason",
							 r->dropped_reason[i]));
	json_object_set_new(doc, "events", events);
	json_object_set_new(doc, "not_measured", missing);
	el = json_pack("{s:s, s:s}", "unit", "seconds", "source", "wall");
	summary_json(el, &r->elapsed, r->elapsed_runs, r->elapsed_n, false);
	json_object_set_new(doc, "elapsed", el);
	json_object_set_new(doc, "cross_pass", json_incref(r->cross_pass));
	json_object_set_new(doc, "counts", json_pack(
		"{s:i, s:i, s:i, s:i, s:i, s:i}", "passes", (int)r->plan.nr, "measured_runs",
		(int)r->data.measured, "dry_runs", (int)r->data.dry, "pre_runs", (int)r->data.pre,
		"post_runs", (int)r->data.post, "failed_runs", (int)r->data.failed));
	return doc;
}

struct progress {
	double start;
	bool shown;
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress_cb(void *ctx, unsigned done, unsigned total)
{
	struct progress *p = ctx;

	/* only for runs longer than a second, and only on a terminal */
	if (mono_s() - p->start < 1.0)
		return;
	fprintf(stderr, "\rnoplab stat: run %u of %u", done, total);
	p->shown = true;
}

static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	v = strtoul(s, &end, 10);
	if (*end || v < min || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static void free_report(struct stat_report *r)
{
	for (size_t i = 0; i < NL_EVENTS_MAX; i++)
		free(r->res[i].vals);
	free(r->elapsed_runs);
	json_decref(r->cross_pass);
	nl_stat_data_free(&r->data);
}

static void drop(struct stat_report *r, size_t i, const char *reason)
{
	snprintf(r->dropped[r->nr_dropped], NL_EVENT_NAME_MAX, "%s", r->evs.ev[i].name);
	snprintf(r->dropped_reason[r->nr_dropped], sizeof(r->dropped_reason[0]), "%s", reason);
	r->nr_dropped++;
}

/*
 * Events this machine cannot count: hardware events without a PMU (said
 * once, plainly), and scheduler events when the kernel refuses kernel-mode
 * counting.  They are reported as not measured, never as zero.
 */
static void drop_unmeasurable(struct stat_report *r, struct nl_diag *d)
{
	char names[512] = "", reason[192];
	size_t kept = 0, len = 0;

	snprintf(reason, sizeof(reason), "no hardware counters: %s (%s)",
		 nl_strerror(r->probe.hw_err), nl_perf_open_hint(r->probe.hw_err));
	for (size_t i = 0; i < r->evs.nr; i++) {
		const struct nl_event *ev = &r->evs.ev[i];
		int err;

		if (ev->hw && !r->probe.hw_usable) {
			drop(r, i, reason);
			len += (size_t)snprintf(names + len, len < sizeof(names) ? sizeof(names) - len : 0,
						"%s%s", len ? ", " : "", ev->name);
			continue;
		}
		if (ev->kernel_side && (err = nl_event_try_open(ev)) != 0) {
			char why[192];

			snprintf(why, sizeof(why), "occurs only in kernel mode, which may not be counted "
						   "here: %s (%s)", nl_strerror(err), nl_perf_open_hint(err));
			drop(r, i, why);
			nl_log(d, NL_LOG_WARN, "%s %s; not measured", ev->name, why);
			continue;
		}
		r->evs.ev[kept++] = *ev;
	}
	r->evs.nr = kept;
	if (names[0])
		nl_log(d, NL_LOG_WARN, "%s; measuring software events and wall time only "
				       "(not measured: %s)", reason, names);
}

int cmd_stat(int argc, char **argv)
{
	enum { OPT_PRE = 256, OPT_POST, OPT_DRY, OPT_CPU, OPT_KERNEL, OPT_GROUP, OPT_JSON };
	static const struct option longopts[] = {
		{ "repeat", required_argument, NULL, 'r' },
		{ "events", required_argument, NULL, 'e' },
		{ "event", required_argument, NULL, 'e' },
		{ "pre", required_argument, NULL, OPT_PRE },
		{ "post", required_argument, NULL, OPT_POST },
		{ "dry-run", no_argument, NULL, OPT_DRY },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "kernel", no_argument, NULL, OPT_KERNEL },
		{ "group-size", required_argument, NULL, OPT_GROUP },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "output", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct stat_opts o = { .repeat = 5, .events = DEFAULT_EVENTS };
	struct stat_report *r;
	struct nl_runner_opts ro;
	struct progress prog = { .start = mono_s() };
	struct nl_diag diag;
	struct nl_cpu cpu;
	cpu_set_t cpus;
	bool have_cpu;
	int c, err, status = NL_EXIT_OK, stop_sig = 0;
	struct cli_stop stop;

	optind = 1;
	/* "+": stop at the command, whose options are its own */
	while ((c = getopt_long(argc, argv, "+r:e:o:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (parse_uint(optarg, 1, 100000, &o.repeat))
				return cli_usage_error("stat", "-r needs a run count from 1 to 100000, not '%s'",
						       optarg);
			break;
		case 'e': o.events = optarg; break;
		case OPT_PRE: o.pre = optarg; break;
		case OPT_POST: o.post = optarg; break;
		case OPT_DRY: o.dry_run = true; break;
		case OPT_CPU: o.cpu_list = optarg; break;
		case OPT_KERNEL: o.kernel = true; break;
		case OPT_GROUP:
			if (parse_uint(optarg, 1, NL_GROUP_MAX, &o.group_size))
				return cli_usage_error("stat", "--group-size needs 1 to %d, not '%s'",
						       NL_GROUP_MAX, optarg);
			break;
		case OPT_JSON: o.json = true; break;
		case 'o': o.output = optarg; break;
		case 'v': o.verbose = true; break;
		case 'h': stat_usage(stdout); return NL_EXIT_OK;
		default: stat_usage(stderr); return NL_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return cli_usage_error("stat", "no command to measure (noplab stat [options] -- COMMAND)");
	o.argv = argv + optind;

	cli_diag_init(&diag, "stat", o.verbose);
	r = calloc(1, sizeof(*r));
	if (!r)
		return cli_error("stat", NULL, -ENOMEM, NULL);
	for (char **a = o.argv; *a; a++) {
		size_t len = strlen(r->cmdline);

		snprintf(r->cmdline + len, sizeof(r->cmdline) - len, "%s%s", len ? " " : "", *a);
	}
	have_cpu = o.cpu_list != NULL;
	if (have_cpu && (err = nl_parse_cpu_list(o.cpu_list, &cpus, &diag))) {
		status = cli_error("stat", "--cpu", err, &diag);
		goto out;
	}
	err = nl_events_parse(o.events, o.kernel, &r->evs, &diag);
	if (err) {
		status = cli_error("stat", "-e", err, &diag);
		goto out;
	}
	nl_pmu_probe(&r->probe, &diag);
	drop_unmeasurable(r, &diag);
	if (r->evs.nr) {
		err = nl_plan_passes_max(&r->evs, nl_counter_budget(&r->probe), o.group_size,
					 &r->plan, &diag);
		if (err) {
			status = cli_error("stat", "events", err, &diag);
			goto out;
		}
	} else {
		/* nothing countable: one pass that times the command */
		r->plan.nr = 1;
	}
	if (o.verbose)
		for (unsigned p = 0; p < r->plan.nr; p++)
			for (size_t m = 0; m < r->plan.pass[p].nr; m++)
				nl_log(&diag, NL_LOG_INFO, "pass %u: %s = %s", p + 1,
				       r->evs.ev[r->plan.pass[p].ev[m]].name,
				       r->evs.ev[r->plan.pass[p].ev[m]].fstr);

	memset(&ro, 0, sizeof(ro));
	ro.argv = o.argv;
	ro.pre = o.pre;
	ro.post = o.post;
	ro.repeat = o.repeat;
	ro.dry_run = o.dry_run;
	ro.cpus = have_cpu ? &cpus : NULL;
	ro.stdout_to_stderr = o.json && (!o.output || !strcmp(o.output, "-"));
	if (isatty(STDERR_FILENO)) {
		ro.progress = progress_cb;
		ro.progress_ctx = &prog;
	}
	/* SIGINT/SIGTERM stop the runs; the runner interrupts and reaps the command */
	ro.stop = cli_stop_begin(&stop);
	err = nl_stat_run(&ro, &r->evs, &r->plan, &r->data, &diag);
	stop_sig = cli_stop_end(&stop);
	if (!r->data.interrupted)
		stop_sig = 0;	/* the signal came after the last run: a normal end */
	if (prog.shown)
		fprintf(stderr, "\r%40s\r", "");
	if (err) {
		status = cli_error("stat", NULL, err, &diag);
		goto out;
	}
	if (r->data.interrupted && !r->data.measured) {
		fprintf(stderr, "noplab stat: interrupted (%s) before the first measured run "
				"completed: nothing to report\n", strsignal(stop_sig));
		goto out;
	}
	if (r->data.interrupted)
		nl_log(&diag, NL_LOG_WARN, "interrupted (%s) after %u of %u measured runs: reporting "
					   "those, marked partial", strsignal(stop_sig),
		       r->data.measured, o.repeat * (unsigned)r->plan.nr);
	err = collect(r, &diag);
	if (err) {
		status = cli_error("stat", NULL, err, &diag);
		goto out;
	}
	check_passes(r, &diag);
	if (r->data.failed)
		status = NL_EXIT_FINDINGS;

	if (o.json || o.output) {
		bool got_cpu = nl_cpu_identify(&cpu, NULL) == 0;
		json_t *doc = report_json(r, &o, got_cpu ? &cpu : NULL);
		int wret;

		if (o.output && o.json && strcmp(o.output, "-")) {
			/* both: the file and stdout */
			wret = cli_json_write(json_incref(doc), o.output, "stat");
			if (!wret)
				wret = cli_json_write(doc, NULL, "stat");
			else
				json_decref(doc);
		} else {
			wret = cli_json_write(doc, o.output, "stat");
		}
		if (wret) {
			status = wret;
			goto out;
		}
	}
	if (!o.json)
		print_report(stderr, r, &o);
	if (r->data.failed)
		fprintf(stderr, "noplab stat: '%s' exited non-zero in %u of %u measured runs\n",
			r->cmdline, r->data.failed, r->data.measured);
out:
	free_report(r);
	free(r);
	/* end the way the signal would have: a calling shell script stops too */
	cli_stop_reraise(stop_sig);
	return status;
}
