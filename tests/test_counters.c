// SPDX-License-Identifier: MIT
/*
 * Counters without a PMU: event encoding (libpfm4 validate_x86.c style,
 * under LIBPFM_ENCODE_INACTIVE=1 so every PMU's table encodes on any host),
 * vendor names under LIBPFM_FORCE_PMU (in a re-executed copy of this test,
 * since libpfm4 reads its environment once), pass planning, the group read
 * format on hand-built buffers, the rdpmc arithmetic, and a real group of
 * software events through the same code path hardware events take.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nltest.h"
#include "noplab/counters.h"

/* ---- encoding --------------------------------------------------------------- */

struct enc_row {
	int line;
	const char *name;
	bool kernel;
	uint32_t type;
	uint64_t config, config1;
	bool hw, exclude_user, exclude_kernel;
};

static const struct enc_row encs[] = {
	{ SRC_LINE, "cycles", false, 0, 0, 0, true, false, true },
	{ SRC_LINE, "cpu-cycles", false, 0, 0, 0, true, false, true },
	{ SRC_LINE, "instructions", false, 0, 1, 0, true, false, true },
	{ SRC_LINE, "STALLED-CYCLES-FRONTEND", false, 0, 7, 0, true, false, true },
	{ SRC_LINE, "L1-ICACHE-LOAD-MISSES", false, 3, 0x10001, 0, true, false, true },
	{ SRC_LINE, "PERF_COUNT_HW_CACHE_L1I", false, 3, 0x10001, 0, true, false, true },
	{ SRC_LINE, "perf::PERF_COUNT_HW_CACHE_L1I:READ:MISS", false, 3, 0x10001, 0, true, false, true },
	{ SRC_LINE, "L1-ICACHE-LOADS", false, 3, 0x1, 0, true, false, true },
	{ SRC_LINE, "task-clock", false, 1, 1, 0, false, false, true },
	{ SRC_LINE, "cpu-clock", false, 1, 0, 0, false, false, true },
	{ SRC_LINE, "page-faults", false, 1, 2, 0, false, false, true },
	/* fires only in kernel mode: counted there unless ":u" insists */
	{ SRC_LINE, "context-switches", false, 1, 3, 0, false, false, false },
	{ SRC_LINE, "cpu-migrations", false, 1, 4, 0, false, false, false },
	{ SRC_LINE, "context-switches:u", false, 1, 3, 0, false, false, true },
	{ SRC_LINE, "r0487", false, 4, 0x487, 0, true, false, true },
	/* --kernel, and explicit perf-style modifiers, which win over the default */
	{ SRC_LINE, "cycles", true, 0, 0, 0, true, false, false },
	{ SRC_LINE, "cycles:k", false, 0, 0, 0, true, true, false },
	{ SRC_LINE, "  instructions\t", false, 0, 1, 0, true, false, true },
	/* vendor tables (staff notes 2a), reachable here only with a PMU prefix */
	{ SRC_LINE, "amd64_fam19h_zen3::IC_TAG_HIT_MISS:IC_MISS", false, 4, 0x10000188e, 0, true,
	  false, true },
	{ SRC_LINE, "amd64_fam19h_zen4::IC_TAG_HIT_MISS:IC_MISS", false, 4, 0x10000188e, 0, true,
	  false, true },
	{ SRC_LINE, "amd64_fam19h_zen3::OP_CACHE_HIT_MISS:OC_MISS", false, 4, 0x20000048f, 0, true,
	  false, true },
	{ SRC_LINE, "amd64_fam17h_zen2::INSTRUCTION_CACHE_REFILLS_FROM_L2", false, 4, 0x82, 0, true,
	  false, true },
	{ SRC_LINE, "skl::ICACHE_64B:IFTAG_MISS", false, 4, 0x283, 0, true, false, true },
	{ SRC_LINE, "icl::ICACHE_64B:IFTAG_MISS", false, 4, 0x283, 0, true, false, true },
	{ SRC_LINE, "skl::FRONTEND_RETIRED:L1I_MISS", false, 4, 0x1c6, 0x12, true, false, true },
};

static void test_encode(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(encs) / sizeof(encs[0]); i++) {
		const struct enc_row *r = &encs[i];
		struct nl_event ev;
		struct nl_diag d;
		int ret;

		nl_diag_init(&d);
		ret = nl_event_encode(r->name, r->kernel, &ev, &d);
		if (ret)
			row_fail(r, "%s: %d %s", r->name, ret, d.msg);
		if (ev.type != r->type || (ev.config & 0xffffffffffffull) != r->config ||
		    ev.config1 != r->config1)
			row_fail(r, "%s: type %u config %#llx config1 %#llx", r->name, ev.type,
				 (unsigned long long)ev.config, (unsigned long long)ev.config1);
		if (ev.hw != r->hw)
			row_fail(r, "%s: hw %d", r->name, ev.hw);
		if (ev.exclude_user != r->exclude_user || ev.exclude_kernel != r->exclude_kernel)
			row_fail(r, "%s: exclude_user %d exclude_kernel %d", r->name, ev.exclude_user,
				 ev.exclude_kernel);
		if (!ev.fstr[0] || strchr(ev.name, ' ') || strchr(ev.name, '\t'))
			row_fail(r, "%s: name '%s' fstr '%s'", r->name, ev.name, ev.fstr);
	}
}

/* Child mode: encode argv[2] with whatever LIBPFM_* the parent set, print the encoding. */
static int encode_child(const char *name)
{
	struct nl_event ev;
	struct nl_diag d;

	nl_diag_init(&d);
	if (nl_event_encode(name, false, &ev, &d)) {
		printf("error %s\n", d.msg);
		return 1;
	}
	printf("%u %#llx %#llx\n", ev.type, (unsigned long long)ev.config,
	       (unsigned long long)ev.config1);
	return 0;
}

struct force_row {
	int line;
	const char *pmu, *name, *want;
};

static const struct force_row forces[] = {
	{ SRC_LINE, "amd64_fam19h_zen3", "IC_TAG_HIT_MISS:IC_MISS", "4 0x10000188e 0" },
	{ SRC_LINE, "amd64_fam19h_zen4", "IC_TAG_HIT_MISS:IC_MISS", "4 0x10000188e 0" },
	{ SRC_LINE, "amd64_fam19h_zen4", "IC_TAG_HIT_MISS:IC_HIT", "4 0x10000078e 0" },
	{ SRC_LINE, "skl", "ICACHE_64B:IFTAG_MISS", "4 0x283 0" },
	{ SRC_LINE, "icl", "ICACHE_64B:IFTAG_MISS", "4 0x283 0" },
	/* a required unit mask that is missing */
	{ SRC_LINE, "amd64_fam19h_zen3", "IC_TAG_HIT_MISS", "error event 'IC_TAG_HIT_MISS'" },
};

static void test_force_pmu(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(forces) / sizeof(forces[0]); i++) {
		const struct force_row *r = &forces[i];
		char cmd[512], *out = NULL;

		snprintf(cmd, sizeof(cmd), "env -u LIBPFM_ENCODE_INACTIVE LIBPFM_FORCE_PMU=%s "
					   "/proc/%d/exe --encode '%s'", r->pmu, (int)getpid(), r->name);
		nltest_run(cmd, &out);
		if (!out || strncmp(out, r->want, strlen(r->want)))
			row_fail(r, "%s under %s: got '%s', want '%s'", r->name, r->pmu,
				 out ? out : "(nothing)", r->want);
		free(out);
	}
}

struct bad_row {
	int line;
	const char *name;
	int err;
	const char *needle[3];	/* each must appear in the message */
};

static const struct bad_row bads[] = {
	{ SRC_LINE, "bogus-event", -NL_E_EVENT, { "unknown event 'bogus-event'", "closest" } },
	{ SRC_LINE, "cycle", -NL_E_EVENT, { "unknown event 'cycle'", "cycles" } },
	{ SRC_LINE, "L1-ICACHE-LOAD-MISS", -NL_E_EVENT, { "l1-icache-load-misses" } },
	{ SRC_LINE, "task-clok", -NL_E_EVENT, { "task-clock" } },
	{ SRC_LINE, "PERF_COUNT_HW_CACHE_L1I:BOGUS", -NL_E_EVENT, { "unit masks", "MISS", "READ" } },
	{ SRC_LINE, "", -NL_E_EVENT, { "empty" } },
	{ SRC_LINE, "   ", -NL_E_EVENT, { "empty" } },
	{ SRC_LINE,
	  "an-event-name-that-goes-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on",
	  -NL_E_EVENT, { "too long" } },
};

static void test_unknown(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		const struct bad_row *r = &bads[i];
		struct nl_event ev;
		struct nl_diag d;
		int ret;

		nl_diag_init(&d);
		ret = nl_event_encode(r->name, false, &ev, &d);
		if (ret != r->err)
			row_fail(r, "'%s': %d, want %d (%s)", r->name, ret, r->err, d.msg);
		for (size_t k = 0; k < 3 && r->needle[k]; k++)
			if (!strstr(d.msg, r->needle[k]))
				row_fail(r, "'%s': message lacks '%s': %s", r->name, r->needle[k], d.msg);
	}
}

/* ---- lists ---------------------------------------------------------------------- */

struct log_capture {
	char text[1024];
	int count;
};

static void capture(void *ctx, enum nl_log_level level, const char *msg)
{
	struct log_capture *c = ctx;
	size_t n = strlen(c->text);

	(void)level;
	snprintf(c->text + n, sizeof(c->text) - n, "%s\n", msg);
	c->count++;
}

struct list_row {
	int line;
	const char *list;
	int err;
	size_t nr;		/* events kept */
	int warnings;
	const char *needle;	/* in the error or the warning */
};

static const struct list_row lists[] = {
	{ SRC_LINE, "cycles,instructions,L1-ICACHE-LOAD-MISSES,task-clock,context-switches,page-faults",
	  0, 6, 0, NULL },
	{ SRC_LINE, "cycles,cpu-cycles", 0, 1, 1, "same as 'cycles'" },
	{ SRC_LINE, "cycles,cycles:k", 0, 2, 0, NULL },
	{ SRC_LINE, "cycles,nope,task-clock", -NL_E_EVENT, 0, 0, "'nope'" },
	{ SRC_LINE, "cycles,", -NL_E_EVENT, 0, 0, "empty" },
	{ SRC_LINE, "", -NL_E_EVENT, 0, 0, "empty" },
};

static void test_lists(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		const struct list_row *r = &lists[i];
		struct log_capture cap = { .count = 0 };
		struct nl_event_list l;
		struct nl_diag d;
		int ret;

		nl_diag_init(&d);
		d.sink = capture;
		d.sink_ctx = &cap;
		ret = nl_events_parse(r->list, false, &l, &d);
		if (ret != r->err)
			row_fail(r, "'%s': %d (%s)", r->list, ret, d.msg);
		if (!ret && l.nr != r->nr)
			row_fail(r, "'%s': %zu events", r->list, l.nr);
		if (cap.count != r->warnings)
			row_fail(r, "'%s': %d warnings: %s", r->list, cap.count, cap.text);
		if (r->needle && !strstr(d.msg, r->needle) && !strstr(cap.text, r->needle))
			row_fail(r, "'%s': no '%s' in '%s' / '%s'", r->list, r->needle, d.msg, cap.text);
	}
}

static void test_drop_hw(void **state)
{
	struct nl_event_list l;
	struct nl_diag d;

	(void)state;
	nl_diag_init(&d);
	assert_int_equal(nl_events_parse("cycles,task-clock,L1-ICACHE-LOAD-MISSES,page-faults", false,
					 &l, &d), 0);
	assert_int_equal(nl_events_drop_hw(&l), 2);
	assert_int_equal(l.nr, 2);
	assert_string_equal(l.ev[0].name, "task-clock");
	assert_string_equal(l.ev[1].name, "page-faults");
	assert_int_equal(nl_events_drop_hw(&l), 0);
}

static void test_kernel_side(void **state)
{
	struct nl_event ev;
	struct nl_diag d;

	(void)state;
	nl_diag_init(&d);
	assert_int_equal(nl_event_encode("context-switches", false, &ev, &d), 0);
	assert_true(ev.kernel_side);
	assert_int_equal(nl_event_encode("context-switches:u", false, &ev, &d), 0);
	assert_false(ev.kernel_side);
	assert_int_equal(nl_event_encode("page-faults", false, &ev, &d), 0);
	assert_false(ev.kernel_side);
	/* with --kernel everything counts kernel mode anyway */
	assert_int_equal(nl_event_encode("cpu-migrations", true, &ev, &d), 0);
	assert_false(ev.kernel_side);
	assert_false(ev.exclude_kernel);
	assert_int_equal(nl_event_encode("task-clock", false, &ev, &d), 0);
	assert_int_equal(nl_event_try_open(&ev), 0);
}

/* ---- pass planning ------------------------------------------------------------------ */

struct plan_row {
	int line;
	const char *list;
	unsigned budget;
	int err;
	const char *passes;	/* "a,b|c,d": event names per pass, leader first */
};

static const struct plan_row plans[] = {
	{ SRC_LINE, "task-clock,page-faults", 4, 0, "task-clock,page-faults" },
	{ SRC_LINE, "cycles,instructions", 4, 0, "cycles,instructions" },
	{ SRC_LINE, "instructions,cycles", 2, 0, "cycles,instructions" },
	/* anchors are added when absent */
	{ SRC_LINE, "L1-ICACHE-LOAD-MISSES", 4, 0, "cycles,instructions,L1-ICACHE-LOAD-MISSES" },
	{ SRC_LINE, "cycles", 4, 0, "cycles,instructions" },
	{ SRC_LINE,
	  "cycles,instructions,branches,branch-misses,L1-ICACHE-LOAD-MISSES,L1-ICACHE-LOADS,task-clock",
	  4, 0,
	  "cycles,instructions,branches,branch-misses,task-clock|"
	  "cycles,instructions,L1-ICACHE-LOAD-MISSES,L1-ICACHE-LOADS" },
	{ SRC_LINE, "branches,branch-misses,L1-ICACHE-LOAD-MISSES,page-faults", 3, 0,
	  "cycles,instructions,branches,page-faults|cycles,instructions,branch-misses|"
	  "cycles,instructions,L1-ICACHE-LOAD-MISSES" },
	{ SRC_LINE, "branches,branch-misses,L1-ICACHE-LOAD-MISSES,page-faults", 6, 0,
	  "cycles,instructions,branches,branch-misses,L1-ICACHE-LOAD-MISSES,page-faults" },
	{ SRC_LINE, "cycles,branches", 2, -NL_E_LIMIT, NULL },
	{ SRC_LINE, "cycles", 1, -NL_E_LIMIT, NULL },
	/* software events need no counter, whatever the budget */
	{ SRC_LINE, "task-clock", 1, 0, "task-clock" },
};

static void check_plan_invariants(const struct plan_row *r, const struct nl_event_list *l,
				  const struct nl_plan *p)
{
	for (size_t k = 0; k < p->nr; k++) {
		const struct nl_pass *ps = &p->pass[k];
		unsigned hw = 0;
		bool cyc = false, ins = false;

		for (size_t m = 0; m < ps->nr; m++) {
			const struct nl_event *ev = &l->ev[ps->ev[m]];

			hw += ev->hw;
			cyc |= nl_event_is_cycles(ev);
			ins |= nl_event_is_instructions(ev);
		}
		if (hw > r->budget)
			row_fail(r, "pass %zu uses %u counters of %u", k, hw, r->budget);
		if (hw && !(cyc && ins))
			row_fail(r, "hardware pass %zu lacks cycles or instructions", k);
		if (ps->hw != (hw > 0))
			row_fail(r, "pass %zu hw flag %d", k, ps->hw);
		if (hw && !l->ev[ps->ev[0]].hw)
			row_fail(r, "pass %zu leader is a software event", k);
	}
	for (size_t i = 0; i < l->nr; i++) {
		const struct nl_pass *home = &p->pass[p->home[i]];
		bool found = false;

		for (size_t m = 0; m < home->nr; m++)
			found |= home->ev[m] == i;
		if (!found)
			row_fail(r, "event %s is not in its home pass %u", l->ev[i].name, p->home[i]);
	}
}

static void test_plan(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); i++) {
		const struct plan_row *r = &plans[i];
		struct nl_event_list l;
		struct nl_plan p;
		struct nl_diag d;
		char got[512] = "";
		int ret;

		nl_diag_init(&d);
		if (nl_events_parse(r->list, false, &l, &d))
			row_fail(r, "parse: %s", d.msg);
		ret = nl_plan_passes(&l, r->budget, &p, &d);
		if (ret != r->err)
			row_fail(r, "plan: %d (%s)", ret, d.msg);
		if (ret)
			continue;
		for (size_t k = 0; k < p.nr; k++)
			for (size_t m = 0; m < p.pass[k].nr; m++) {
				size_t n = strlen(got);

				snprintf(got + n, sizeof(got) - n, "%s%s", m ? "," : k ? "|" : "",
					 l.ev[p.pass[k].ev[m]].name);
			}
		if (strcmp(got, r->passes))
			row_fail(r, "passes '%s', want '%s'", got, r->passes);
		check_plan_invariants(r, &l, &p);
	}
}

static void test_plan_anchor_privilege(void **state)
{
	struct nl_event_list l;
	struct nl_plan p;
	struct nl_diag d;

	(void)state;
	nl_diag_init(&d);
	assert_int_equal(nl_events_parse("L1-ICACHE-LOAD-MISSES", true, &l, &d), 0);
	assert_int_equal(nl_plan_passes(&l, 4, &p, &d), 0);
	assert_int_equal(l.nr, 3);
	/* the anchors count what the event they anchor counts: kernel too here */
	assert_true(l.ev[1].anchor && l.ev[2].anchor && !l.ev[0].anchor);
	assert_false(l.ev[1].exclude_kernel);
	assert_false(l.ev[2].exclude_kernel);
}

struct budget_row {
	int line;
	unsigned counters;
	int watchdog;
	unsigned want;
};

static const struct budget_row budgets[] = {
	{ SRC_LINE, 6, 0, 6 },
	{ SRC_LINE, 6, 1, 5 },
	{ SRC_LINE, 4, -1, 4 },
	{ SRC_LINE, 0, 0, NL_COUNTER_BUDGET_GENERIC },
	{ SRC_LINE, 0, 1, NL_COUNTER_BUDGET_GENERIC - 1 },
};

static void test_budget(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(budgets) / sizeof(budgets[0]); i++) {
		struct nl_pmu_probe p;

		memset(&p, 0, sizeof(p));
		p.nr_counters = budgets[i].counters;
		p.nmi_watchdog = budgets[i].watchdog;
		if (nl_counter_budget(&p) != budgets[i].want)
			row_fail(&budgets[i], "budget %u", nl_counter_budget(&p));
	}
}

/* ---- the read format ------------------------------------------------------------------ */

struct read_row {
	int line;
	uint64_t buf[12];
	size_t nwords;
	uint64_t ids[4];
	size_t nr;
	int err;
	uint64_t values[4];
	bool multiplexed;
	double running_pct;
	double scaled0;		/* nl_values_scaled(v, 0); NAN when it must be NAN */
};

static const struct read_row reads[] = {
	/* two counters, kernel order = our order */
	{ SRC_LINE, { 2, 1000, 1000, 111, 27, 222, 28 }, 7, { 27, 28 }, 2, 0, { 111, 222 }, false, 100,
	  111 },
	/* kernel order differs from ours: matched by id */
	{ SRC_LINE, { 2, 1000, 1000, 111, 27, 222, 28 }, 7, { 28, 27 }, 2, 0, { 222, 111 }, false, 100,
	  222 },
	/* multiplexed: ran 1000 of 1200 ns, perf would print (83.33%) and scale by 1.2 */
	{ SRC_LINE, { 3, 1200, 1000, 500, 5, 600, 6, 700, 7 }, 9, { 5, 6, 7 }, 3, 0, { 500, 600, 700 },
	  true, 100.0 * 1000 / 1200, 600 },
	/* never ran */
	{ SRC_LINE, { 1, 500, 0, 0, 9 }, 5, { 9 }, 1, 0, { 0 }, true, 0, NAN },
	/* never enabled */
	{ SRC_LINE, { 1, 0, 0, 0, 9 }, 5, { 9 }, 1, 0, { 0 }, false, 100, NAN },
	/* counts above 2^53 survive as integers */
	{ SRC_LINE, { 1, 10, 10, 0x20000000000001ull, 4 }, 5, { 4 }, 1, 0, { 0x20000000000001ull },
	  false, 100, (double)0x20000000000001ull },
	/* malformed */
	{ SRC_LINE, { 2, 1000 }, 2, { 1, 2 }, 2, -NL_E_FORMAT },
	{ SRC_LINE, { 3, 1000, 1000, 1, 1, 2, 2 }, 7, { 1, 2 }, 2, -NL_E_FORMAT },	/* count */
	{ SRC_LINE, { 2, 1000, 1000, 1, 1, 2 }, 6, { 1, 2 }, 2, -NL_E_FORMAT },	/* truncated */
	{ SRC_LINE, { 2, 1000, 1000, 1, 1, 2, 2, 0 }, 8, { 1, 2 }, 2, -NL_E_FORMAT }, /* trailing */
	{ SRC_LINE, { 2, 1000, 1000, 1, 1, 2, 3 }, 7, { 1, 2 }, 2, -NL_E_FORMAT },	/* unknown id */
	{ SRC_LINE, { 2, 1000, 1000, 1, 1, 2, 1 }, 7, { 1, 2 }, 2, -NL_E_FORMAT },	/* id twice */
	{ SRC_LINE, { 1, 1000, 1001, 1, 1 }, 5, { 1 }, 1, -NL_E_FORMAT },	/* running > enabled */
};

static void test_read_format(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
		const struct read_row *r = &reads[i];
		struct nl_group_values v;
		struct nl_diag d;
		int ret;

		nl_diag_init(&d);
		ret = nl_group_parse(r->buf, r->nwords, r->ids, r->nr, &v, &d);
		if (ret != r->err)
			row_fail(r, "parse %d, want %d (%s)", ret, r->err, d.msg);
		if (ret) {
			if (!d.msg[0])
				row_fail(r, "no message");
			continue;
		}
		if (v.nr != r->nr)
			row_fail(r, "nr %zu", v.nr);
		for (size_t k = 0; k < r->nr; k++)
			if (v.value[k] != r->values[k])
				row_fail(r, "value[%zu] = %llu", k, (unsigned long long)v.value[k]);
		if (nl_values_multiplexed(&v) != r->multiplexed)
			row_fail(r, "multiplexed %d", nl_values_multiplexed(&v));
		if (fabs(nl_values_running_pct(&v) - r->running_pct) > 1e-9)
			row_fail(r, "running %.4f%%", nl_values_running_pct(&v));
		if (isnan(r->scaled0) ? !isnan(nl_values_scaled(&v, 0))
				      : fabs(nl_values_scaled(&v, 0) - r->scaled0) > 1e-6 * r->scaled0)
			row_fail(r, "scaled %.17g", nl_values_scaled(&v, 0));
	}
}

struct pmc_row {
	int line;
	int64_t offset;
	uint64_t raw;
	unsigned width;
	uint64_t want;
};

static const struct pmc_row pmcs[] = {
	{ SRC_LINE, 1000, 5, 48, 1005 },
	/* a 48-bit counter at -1 (the kernel preloads counters negative) */
	{ SRC_LINE, 1000, 0xffffffffffffull, 48, 999 },
	/* bits above the width are ignored */
	{ SRC_LINE, 0, 0xffff000000000010ull, 48, 0x10 },
	/* a negative offset plus a positive counter */
	{ SRC_LINE, -0x7ffffffffff0ll, 0x800000000000ull, 48, (uint64_t)-0x7ffffffffff0ll - 0x800000000000ull },
	{ SRC_LINE, 7, 0x10, 64, 0x17 },
	{ SRC_LINE, 7, 0x10, 0, 0x17 },	/* width 0: take the whole register */
	{ SRC_LINE, 0, 0x80000000ull, 32, (uint64_t)-0x80000000ll },
};

static void test_pmc_count(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(pmcs) / sizeof(pmcs[0]); i++) {
		const struct pmc_row *r = &pmcs[i];
		uint64_t got = nl_pmc_count(r->offset, r->raw, r->width);

		if (got != r->want)
			row_fail(r, "got %#llx, want %#llx", (unsigned long long)got,
				 (unsigned long long)r->want);
	}
}

/* ---- real groups ------------------------------------------------------------------------ */

static uint64_t touch_pages(size_t pages)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, pages * ps, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t sum = 0;

	assert_true(p != MAP_FAILED);
	for (size_t i = 0; i < pages; i++)
		p[i * ps] = (char)i;
	for (size_t i = 0; i < pages; i++)
		sum += (uint64_t)p[i * ps];
	munmap((void *)p, pages * ps);
	return sum;
}

static void test_software_group(void **state)
{
	struct nl_group_values v1, v2, v3;
	struct nl_event_list l;
	struct nl_plan plan;
	struct nl_group g;
	struct nl_diag d;
	struct nl_group_opts o = { .pid = 0, .cpu = -1, .mmap = true };
	uint64_t now[NL_GROUP_MAX];
	bool used_rdpmc = true;
	double ns = 0;

	(void)state;
	nl_diag_init(&d);
	assert_int_equal(nl_events_parse("task-clock,page-faults,context-switches", false, &l, &d), 0);
	assert_int_equal(nl_plan_passes(&l, 4, &plan, &d), 0);
	assert_int_equal(plan.nr, 1);
	if (nl_group_open(&g, &l, &plan.pass[0], &o, &d))
		fail_msg("open: %s", d.msg);
	assert_int_equal(g.nr, 3);
	assert_true(g.id[0] != g.id[1] && g.id[1] != g.id[2] && g.id[0] != g.id[2]);
	/* software events never sit on a hardware counter */
	assert_false(g.rdpmc);

	assert_int_equal(nl_group_reset(&g), 0);
	assert_int_equal(nl_group_enable(&g), 0);
	touch_pages(64);
	if (nl_group_read(&g, &v1, &d))
		fail_msg("read: %s", d.msg);
	touch_pages(64);
	assert_int_equal(nl_group_disable(&g), 0);
	assert_int_equal(nl_group_read(&g, &v2, &d), 0);
	touch_pages(64);
	assert_int_equal(nl_group_read(&g, &v3, &d), 0);

	assert_int_equal(v1.nr, 3);
	assert_true(v1.value[0] > 0);		/* task-clock, ns */
	assert_true(v1.value[1] >= 64);		/* page-faults: 64 fresh pages */
	for (size_t i = 0; i < 3; i++) {
		assert_true(v2.value[i] >= v1.value[i]);
		assert_true(v3.value[i] == v2.value[i]);	/* disabled: nothing counted */
	}
	assert_true(v2.value[1] >= v1.value[1] + 64);
	/* software groups are never time-shared */
	assert_false(nl_values_multiplexed(&v2));
	assert_true(v2.time_enabled > 0 && v2.time_enabled >= v1.time_enabled);

	assert_int_equal(nl_group_read_now(&g, now, &used_rdpmc), 0);
	assert_false(used_rdpmc);
	assert_true(now[1] == v3.value[1]);
	assert_int_equal(nl_group_read_cost(&g, 2000, &ns, &used_rdpmc), 0);
	assert_true(ns > 0 && ns < 1e6);
	print_message("one read() of a 3-event software group: %.0f ns\n", ns);
	nl_group_close(&g);
	assert_int_equal(g.nr, 0);
}

static void test_missing_pmu(void **state)
{
	struct nl_pmu_probe probe;
	struct nl_event_list l;
	struct nl_plan plan;
	struct nl_group g;
	struct nl_diag d;
	struct nl_group_opts o = { .pid = 0, .cpu = -1 };
	int ret;

	(void)state;
	nl_diag_init(&d);
	assert_int_equal(nl_pmu_probe(&probe, &d), 0);
	assert_int_equal(nl_events_parse("cycles,task-clock", false, &l, &d), 0);
	assert_int_equal(nl_plan_passes(&l, nl_counter_budget(&probe), &plan, &d), 0);
	ret = nl_group_open(&g, &l, &plan.pass[0], &o, &d);
	if (probe.hw_usable) {
		/* a machine with a PMU: the group must open */
		if (ret)
			fail_msg("open with a PMU: %s", d.msg);
		nl_group_close(&g);
		return;
	}
	assert_int_equal(ret, -NL_E_NOPMU);
	assert_non_null(strstr(d.msg, "cycles"));
	assert_non_null(strstr(d.msg, nl_perf_open_hint(probe.hw_err)));
	assert_int_equal(g.nr, 0);
}

static void test_hardware_group(void **state)
{
	struct nl_pmu_probe probe;
	struct nl_event_list l;
	struct nl_plan plan;
	struct nl_group g;
	struct nl_diag d;
	struct nl_group_opts o = { .pid = 0, .cpu = -1, .mmap = true };
	uint64_t a[NL_GROUP_MAX], b[NL_GROUP_MAX];
	struct nl_group_values v;
	bool r1 = false, r2 = false;
	double ns = 0;
	volatile uint64_t x = 0;

	(void)state;
	nl_diag_init(&d);
	assert_int_equal(nl_pmu_probe(&probe, &d), 0);
	if (!probe.hw_usable) {
		print_message("no hardware PMU here (%s): skipped\n", nl_perf_open_hint(probe.hw_err));
		skip();
	}
	assert_int_equal(nl_events_parse("cycles,instructions", false, &l, &d), 0);
	assert_int_equal(nl_plan_passes(&l, nl_counter_budget(&probe), &plan, &d), 0);
	if (nl_group_open(&g, &l, &plan.pass[0], &o, &d))
		fail_msg("open: %s", d.msg);
	assert_int_equal(nl_group_reset(&g), 0);
	assert_int_equal(nl_group_enable(&g), 0);
	assert_int_equal(nl_group_read_now(&g, a, &r1), 0);
	for (int i = 0; i < 1000000; i++)
		x += (uint64_t)i;
	assert_int_equal(nl_group_read_now(&g, b, &r2), 0);
	assert_true(b[0] > a[0] && b[1] > a[1]);
	assert_true(b[1] - a[1] >= 1000000);	/* at least one instruction per iteration */
	assert_int_equal(nl_group_read_cost(&g, 10000, &ns, &r1), 0);
	print_message("one read of cycles+instructions: %.1f ns via %s (rdpmc sysfs %d)\n", ns,
		      r1 ? "rdpmc" : "read()", probe.rdpmc);
	assert_int_equal(nl_group_disable(&g), 0);
	assert_int_equal(nl_group_read(&g, &v, &d), 0);
	if (nl_values_multiplexed(&v))
		print_message("the kernel time-shared the group: running %.2f%%\n",
			      nl_values_running_pct(&v));
	nl_group_close(&g);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_force_pmu),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_drop_hw),
		cmocka_unit_test(test_kernel_side),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_plan_anchor_privilege),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_read_format),
		cmocka_unit_test(test_pmc_count),
		cmocka_unit_test(test_software_group),
		cmocka_unit_test(test_missing_pmu),
		cmocka_unit_test(test_hardware_group),
	};

	if (argc == 3 && !strcmp(argv[1], "--encode"))
		return encode_child(argv[2]);
	/* before libpfm4 initialises: every PMU table encodes on any host */
	setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
