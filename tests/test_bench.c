// SPDX-License-Identifier: MIT
/*
 * The measurement method on synthetic workloads whose "cost" is a counter we
 * control, so the checks are exact and never depend on timing: differencing
 * removes a constant overhead, the minimum removes disturbances, every round
 * visits every variant once in a fresh order, wrong checksums are caught.
 * Then one small real experiment through nl_bench_run(), checked for
 * structure and provenance (never for speed).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nltest.h"
#include "noplab/bench.h"
#include "noplab/method.h"

/* ---- a synthetic driver: "work" advances by overhead + iters * per_iter ---- */

struct synth {
	uint64_t work;		/* what the fake counter reads */
	uint64_t overhead;	/* constant per run: what 2n - n must cancel */
	uint64_t per_iter;
	unsigned calls;		/* runs so far */
	unsigned disturb_every;	/* every k-th run pays an extra, like an interrupt */
	uint64_t disturbance;
	uint64_t bad_sum_at;	/* return a wrong checksum on this run (0: never) */
};

/* The table argument carries the context: drivers take no other pointer. */
static uint64_t synth_driver(uint64_t iters, void *const *table)
{
	struct synth *s = (struct synth *)(uintptr_t)table;

	s->calls++;
	s->work += s->overhead + iters * s->per_iter;
	if (s->disturb_every && s->calls % s->disturb_every == 0)
		s->work += s->disturbance;
	if (s->bad_sum_at && s->calls == s->bad_sum_at)
		return 12345;
	return iters * 3;
}

/* Reads the work counter of every variant at once: each variant owns one event slot. */
struct fake_reader {
	struct synth *s;
	size_t nr;
};

static int fake_read(void *ctx, uint64_t *vals)
{
	struct fake_reader *f = ctx;

	for (size_t i = 0; i < f->nr; i++)
		vals[i] = f->s[i].work;
	return 0;
}

struct method_row {
	int line;
	uint64_t overhead, per_iter;
	unsigned disturb_every;
	uint64_t disturbance;
	unsigned inner;
};

static const struct method_row method_rows[] = {
	{ SRC_LINE, 0, 10, 0, 0, 3 },
	{ SRC_LINE, 1000000, 10, 0, 0, 3 },		/* a huge constant overhead cancels */
	{ SRC_LINE, 777, 1, 0, 0, 1 },
	{ SRC_LINE, 50, 4, 5, 1000000, 4 },		/* disturbances, minimum drops them */
	{ SRC_LINE, 50, 4, 7, 99999, 6 },
};

static void test_differencing(void **state)
{
	(void)state;
	for (size_t ri = 0; ri < sizeof(method_rows) / sizeof(method_rows[0]); ri++) {
		const struct method_row *r = &method_rows[ri];
		enum { NV = 3, REPS = 4 };
		struct synth s[NV];
		struct nl_mvar v[NV];
		double ev[NV][NV][REPS], ticks[NV][REPS];
		struct fake_reader fr = { .s = s, .nr = NV };
		struct nl_reader rd = { .nr = NV, .read = fake_read, .ctx = &fr };
		struct nl_method m;

		nl_method_default(&m);
		m.reps = REPS;
		m.warmups = 1;
		m.inner = r->inner;
		m.reader = &rd;
		m.fixed_rounds = true;	/* the synthetic drivers take no time: count exactly */
		memset(s, 0, sizeof(s));
		memset(v, 0, sizeof(v));
		for (size_t i = 0; i < NV; i++) {
			s[i].overhead = r->overhead;
			s[i].per_iter = r->per_iter * (i + 1);
			s[i].disturb_every = r->disturb_every;
			s[i].disturbance = r->disturbance;
			v[i].fn = synth_driver;
			v[i].table = (void *const *)(uintptr_t)&s[i];
			v[i].expect_per_iter = 3;
			v[i].iters = 8 + i;	/* given: no calibration */
			v[i].ticks = ticks[i];
			for (size_t e = 0; e < NV; e++)
				v[i].events[e] = ev[i][e];
		}
		if (nl_method_run(&m, v, NV, NULL))
			row_fail(r, "nl_method_run failed");
		for (size_t i = 0; i < NV; i++)
			for (size_t rep = 0; rep < REPS; rep++)
				if (ev[i][i][rep] != (double)s[i].per_iter)
					row_fail(r, "variant %zu rep %zu: %.3f per iteration, want %llu", i,
						 rep, ev[i][i][rep], (unsigned long long)s[i].per_iter);
		/* (1 warm-up + REPS) x inner rounds x (dry + n + 2n) runs */
		for (size_t i = 0; i < NV; i++)
			if (s[i].calls != (1 + REPS) * r->inner * 3)
				row_fail(r, "variant %zu ran %u times", i, s[i].calls);
	}
}

/* Without the minimum (one round), a disturbance in the n run is not removed: the check bites. */
static void test_minimum_is_needed(void **state)
{
	struct synth s = { .per_iter = 5, .disturb_every = 2, .disturbance = 800 };
	double ev[3], ticks[3];
	struct fake_reader fr = { .s = &s, .nr = 1 };
	struct nl_reader rd = { .nr = 1, .read = fake_read, .ctx = &fr };
	struct nl_mvar v = { .fn = synth_driver, .table = (void *const *)(uintptr_t)&s,
			     .expect_per_iter = 3, .iters = 10, .ticks = ticks,
			     .events = { ev } };
	struct nl_method m;

	(void)state;
	nl_method_default(&m);
	m.reps = 3;
	m.warmups = 0;
	m.inner = 1;
	m.reader = &rd;
	m.fixed_rounds = true;
	assert_int_equal(nl_method_run(&m, &v, 1, NULL), 0);
	/* runs 1 (dry), 2 (n, disturbed), 3 (2n): (2n - n) / n = per_iter - 800 / 10 */
	assert_true(ev[0] != 5.0);
}

/*
 * Extra rounds: a driver whose n runs are always slower than its 2n runs
 * (as if a burst hit every n run) never looks consistent, so it gets k more
 * rounds per repetition; a normal one beside it gets none.
 */
static uint64_t spin_driver(uint64_t iters, void *const *table)
{
	struct synth *s = (struct synth *)(uintptr_t)table;
	volatile uint64_t x = 0;
	uint64_t spins = iters * s->per_iter + s->overhead;

	s->calls++;
	/* bad: make the n run (the second of each round) cost as much as 2n */
	if (s->disturb_every && s->calls % 3 == 2)
		spins = 2 * iters * s->per_iter + s->overhead;
	for (uint64_t i = 0; i < spins; i++)
		x += i;
	return iters * 3;
}

static void test_extra_rounds(void **state)
{
	struct synth s[2] = { { .per_iter = 2000 }, { .per_iter = 2000, .disturb_every = 1 } };
	double ticks[2][2];
	struct nl_mvar v[2];
	struct nl_method m;

	(void)state;
	for (size_t i = 0; i < 2; i++)
		v[i] = (struct nl_mvar){ .fn = spin_driver, .table = (void *const *)(uintptr_t)&s[i],
					 .expect_per_iter = 3, .iters = 20, .ticks = ticks[i] };
	nl_method_default(&m);
	m.reps = 2;
	m.warmups = 0;
	m.inner = 3;
	assert_int_equal(nl_method_run(&m, v, 2, NULL), 0);
	assert_int_equal(v[1].extra_rounds, 2 * 3);
	assert_int_equal(s[1].calls, 2 * (3 + 3) * 3);
}

static void test_bad_checksum(void **state)
{
	struct synth s = { .per_iter = 1, .bad_sum_at = 5 };
	double ticks[2];
	struct nl_mvar v = { .fn = synth_driver, .table = (void *const *)(uintptr_t)&s,
			     .expect_per_iter = 3, .iters = 4, .ticks = ticks };
	struct nl_method m;
	struct nl_diag d;

	(void)state;
	nl_diag_init(&d);
	nl_method_default(&m);
	m.reps = 2;
	m.warmups = 0;
	m.inner = 2;
	assert_int_equal(nl_method_run(&m, &v, 1, &d), -EIO);
	assert_non_null(strstr(d.msg, "checksum"));
}

/* Sum events: totalled over every run of a repetition, not differenced. */
static void test_sum_events(void **state)
{
	struct synth s = { .per_iter = 2 };
	double ev[2], ticks[2];
	struct fake_reader fr = { .s = &s, .nr = 1 };
	struct nl_reader rd = { .nr = 1, .read = fake_read, .ctx = &fr, .sum = { true } };
	struct nl_mvar v = { .fn = synth_driver, .table = (void *const *)(uintptr_t)&s,
			     .expect_per_iter = 3, .iters = 5, .ticks = ticks, .events = { ev } };
	struct nl_method m;

	(void)state;
	nl_method_default(&m);
	m.reps = 2;
	m.warmups = 0;
	m.inner = 3;
	m.reader = &rd;
	m.fixed_rounds = true;
	assert_int_equal(nl_method_run(&m, &v, 1, NULL), 0);
	/* per repetition: 3 rounds x (n + n + 2n) iterations x 2 */
	assert_true(ev[0] == 3 * (5 + 5 + 10) * 2.0);
	assert_true(ev[1] == ev[0]);
}

/* Every round activates every variant once, and the order changes between rounds. */
struct act_log {
	size_t seq[512];
	size_t n;
};

static int log_activate(void *ctx, size_t i, struct nl_diag *d)
{
	struct act_log *l = ctx;

	(void)d;
	if (l->n < 512)
		l->seq[l->n++] = i;
	return 0;
}

static void test_interleaving(void **state)
{
	enum { NV = 5 };
	struct synth s[NV];
	struct nl_mvar v[NV];
	double ticks[NV][4];
	struct act_log log = { .n = 0 };
	struct nl_method m;
	unsigned orders_differ = 0;

	(void)state;
	memset(s, 0, sizeof(s));
	memset(v, 0, sizeof(v));
	for (size_t i = 0; i < NV; i++) {
		s[i].per_iter = 1;
		v[i] = (struct nl_mvar){ .fn = synth_driver, .table = (void *const *)(uintptr_t)&s[i],
					 .expect_per_iter = 3, .iters = 2, .ticks = ticks[i] };
	}
	nl_method_default(&m);
	m.reps = 4;
	m.warmups = 0;
	m.inner = 5;
	m.activate = log_activate;
	m.activate_ctx = &log;
	m.fixed_rounds = true;
	assert_int_equal(nl_method_run(&m, v, NV, NULL), 0);
	/* 20 rounds of 5; a switch is skipped only when a round starts with the last one's last */
	assert_true(log.n >= 20 * NV - 20 && log.n <= 20 * NV);
	/* all variants equally often (the seed is fixed, so this is exact), orders vary */
	size_t count[NV] = { 0 };

	for (size_t k = 0; k < log.n; k++)
		count[log.seq[k]]++;
	for (size_t i = 0; i < NV; i++)
		assert_true(count[i] >= 16 && count[i] <= 20);
	for (size_t k = NV; k + NV <= log.n; k += NV)
		orders_differ += memcmp(&log.seq[k], &log.seq[k - NV], NV * sizeof(size_t)) != 0;
	assert_true(orders_differ >= 5);
	for (size_t i = 0; i < NV; i++)
		assert_int_equal(s[i].calls, 4 * 5 * 3);
}

/* ---- one small real experiment ---------------------------------------------- */

static void test_bench_run(void **state)
{
	struct nl_bench_opts o;
	struct nl_bench b;
	struct nl_diag d;
	const char *ents[] = { "p6:5", "none", "call", "generic:5" };

	(void)state;
	nl_diag_init(&d);
	nl_bench_opts_default(&o);
	nl_gen_spec_default(&o.spec, NL_WL_CALLS);
	o.nr_sizes = 1;
	o.sizes[0] = 16;
	o.nr_entries = 4;
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(nl_entry_parse(ents[i], &o.entries[i], NULL), 0);
	o.method.reps = 3;
	o.method.warmups = 1;
	o.method.inner = 2;
	o.method.sample_ticks = 20000;
	o.candidates = 2;
	if (nl_bench_run(&b, &o, &d))
		fail_msg("nl_bench_run: %s", d.msg);
	assert_int_equal(b.nr_w, 1);
	const struct nl_workload_run *w = &b.w[0];

	assert_string_equal(w->name, "calls-16");
	assert_int_equal(w->nr_v, 4);
	assert_string_equal(w->v[w->baseline].name, "p6:5");
	assert_true(w->fits_l1i);
	assert_int_equal(w->nr_cand, 2);
	for (size_t i = 0; i < w->nr_v; i++) {
		const struct nl_variant *v = &w->v[i];
		const struct nl_figure *cyc = nl_variant_figure(v, "cycles_per_call");
		const struct nl_figure *ticks = nl_variant_figure(v, "ticks_per_call");
		const struct nl_figure *entry = nl_variant_figure(v, "entry_cycles_per_call");

		assert_non_null(cyc);
		assert_non_null(ticks);
		assert_int_equal(ticks->source, NL_SRC_TSC);
		assert_int_equal(cyc->source, b.env.hw ? NL_SRC_HW : NL_SRC_TSC);
		assert_int_equal(v->primary, (int)(cyc - v->figs));
		assert_int_equal(cyc->n, 3);
		assert_true(cyc->sum.mean > 0 && ticks->sum.mean > 0);
		/* measured against none, except none itself */
		assert_true(v->spec.entry.kind == NL_ENTRY_NONE ? entry == NULL : entry != NULL);
		/* compared with the baseline, except the baseline */
		assert_true(v->has_cmp == ((int)i != w->baseline));
		if (v->has_cmp)
			assert_true(v->verdict[0] != '\0');
		/* never a zero for something not measured: without a PMU, no hw figure at all */
		for (size_t k = 0; k < v->nr_figs; k++) {
			const struct nl_figure *f = &v->figs[k];

			if (!b.env.hw && f->source == NL_SRC_HW)
				fail_msg("%s: hw figure %s without a PMU", v->name, f->key);
			if (f->source == NL_SRC_TSC && strncmp(f->key, "entry_", 6) && f->sum.mean <= 0)
				fail_msg("%s: %s is not positive", v->name, f->key);
		}
		if (v->spec.entry.kind == NL_ENTRY_NOP && !v->spec.entry.nop->nop64)
			assert_non_null(strstr(v->note, "ESI"));
	}
	assert_true(b.env.tsc_hz > 1e8);
	assert_true(b.env.cpu_pinned >= 0);
	assert_true(b.env.counters[0] != '\0');
	nl_bench_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_differencing),
		cmocka_unit_test(test_minimum_is_needed),
		cmocka_unit_test(test_extra_rounds),
		cmocka_unit_test(test_bad_checksum),
		cmocka_unit_test(test_sum_events),
		cmocka_unit_test(test_interleaving),
		cmocka_unit_test(test_bench_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
