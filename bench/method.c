// SPDX-License-Identifier: MIT
/* The measurement method: warm-up, interleaving, 2n-n differencing, minimum of k (method.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "noplab/clock.h"
#include "noplab/method.h"

#define MAX_ITERS (UINT64_C(1) << 40)

void nl_method_default(struct nl_method *m)
{
	memset(m, 0, sizeof(*m));
	m->reps = 10;
	m->warmups = 2;
	m->inner = 5;
	m->sample_ticks = 200e3;	/* ~0.1 ms at 2 GHz: rarely hit by a timer tick */
	m->seed = 1;
}

struct sample {
	uint64_t ticks;
	uint64_t ev[NL_METHOD_MAX_EVENTS];
};

struct run_state {
	const struct nl_method *m;
	struct nl_diag *d;
	/*
	 * Read the counters around every run (events to difference), or only
	 * around every round (all events summed): a read() is a system call,
	 * and with PTI and no PCID each one flushes the TLB; keep them out of
	 * the timed region's neighbourhood when nothing needs them there.
	 */
	bool per_run;
	uint64_t ev0[NL_METHOD_MAX_EVENTS], ev1[NL_METHOD_MAX_EVENTS];
	double clock_overhead;	/* ticks of a probe run of zero iterations */
};

static int timed_run(struct run_state *st, const struct nl_mvar *v, uint64_t iters,
		     struct sample *out)
{
	const struct nl_reader *rd = st->per_run ? st->m->reader : NULL;
	uint64_t t0, t1, sum;

	if (rd && rd->read(rd->ctx, st->ev0))
		return nl_fail(st->d, -EIO, "reading counters");
	t0 = nl_tsc_begin();
	sum = v->fn(iters, v->table);
	t1 = nl_tsc_end();
	if (rd && rd->read(rd->ctx, st->ev1))
		return nl_fail(st->d, -EIO, "reading counters");
	if (sum != iters * v->expect_per_iter)
		return nl_fail(st->d, -EIO,
			       "generated code returned checksum %#llx after %llu iterations, "
			       "expected %#llx: it did not run as generated",
			       (unsigned long long)sum, (unsigned long long)iters,
			       (unsigned long long)(iters * v->expect_per_iter));
	out->ticks = t1 - t0;
	for (unsigned e = 0; rd && e < rd->nr; e++)
		out->ev[e] = st->ev1[e] - st->ev0[e];
	return 0;
}

static void keep_min(struct sample *best, const struct sample *s, unsigned nr_ev, bool first)
{
	if (first || s->ticks < best->ticks)
		best->ticks = s->ticks;
	for (unsigned e = 0; e < nr_ev; e++)
		if (first || s->ev[e] < best->ev[e])
			best->ev[e] = s->ev[e];
}

/*
 * Double n until a run takes half of sample_ticks, then scale n to the
 * target from a second, warm run: the first runs of fresh code are slow
 * (cold caches and TLB) and would leave n far too small.
 */
static int calibrate(struct run_state *st, struct nl_mvar *v)
{
	struct sample s;
	uint64_t n = 1;
	int err;

	for (;;) {
		err = timed_run(st, v, n, &s);
		if (err)
			return err;
		if ((double)s.ticks >= st->m->sample_ticks / 2 || n >= MAX_ITERS)
			break;
		n *= 2;
	}
	for (int pass = 0; pass < 2; pass++) {
		err = timed_run(st, v, n, &s);
		if (err)
			return err;
		if (s.ticks)
			n = (uint64_t)((double)n * st->m->sample_ticks / (double)s.ticks + 0.5);
		if (!n)
			n = 1;
		if (n > MAX_ITERS)
			n = MAX_ITERS;
	}
	v->iters = n;
	return 0;
}

static double switches(const struct rusage *r)
{
	return (double)r->ru_nvcsw + (double)r->ru_nivcsw;
}

static double faults(const struct rusage *r)
{
	return (double)r->ru_minflt + (double)r->ru_majflt;
}

/* Ticks of one probe run, its fixed overhead (call and fences) taken off. */
static int clock_ticks(struct run_state *st, double *ticks)
{
	const struct nl_mvar *p = st->m->clock;
	struct sample s;
	int err = timed_run(st, p, p->iters, &s);

	*ticks = (double)s.ticks - st->clock_overhead;
	return err;
}


/*
 * One probe run per round, right before the variant's n and 2n runs; the
 * repetition's clock is its fastest probe run, the clock's fastest moment,
 * to go with the ticks' minima, which are the runs' fastest moments.  (A
 * median clock with minimum ticks undercounts cycles whenever the clock
 * wanders, and a disturbed probe only ever reads slow, so the minimum is
 * also the robust choice.)
 */

/* What one variant has gathered so far in the current repetition. */
struct rep_acc {
	struct sample best1, best2;	/* minima of the n and 2n runs */
	double probe_min;		/* fastest probe run of the repetition, in ticks */
	double switches, faults;
	double evsum[NL_METHOD_MAX_EVENTS];	/* summed events, over every run */
};

static void add_sums(const struct nl_reader *rd, struct rep_acc *acc, const struct sample *s)
{
	for (unsigned e = 0; rd && e < rd->nr; e++)
		if (rd->sum[e])
			acc->evsum[e] += (double)s->ev[e];
}

/*
 * One inner round for one variant: a dry run (the previous variant has just
 * evicted this one's code and trained the predictors on its own), the clock
 * probe, then n and 2n, both warm, so the difference holds no switching cost.
 */
static int inner_round(struct run_state *st, struct nl_mvar *v, struct rep_acc *acc, bool first)
{
	unsigned nr_ev = st->m->reader ? st->m->reader->nr : 0;
	const struct nl_reader *sums = st->per_run ? st->m->reader : NULL;
	const struct nl_reader *round = st->per_run ? NULL : st->m->reader;
	struct rusage ru0, ru1;
	struct sample s, s1, s2;
	double p1 = 0;
	int err;

	getrusage(RUSAGE_THREAD, &ru0);
	if (round && round->read(round->ctx, st->ev0))
		return nl_fail(st->d, -EIO, "reading counters");
	err = timed_run(st, v, v->iters, &s);
	if (!err) {
		add_sums(sums, acc, &s);
		if (st->m->clock)
			err = clock_ticks(st, &p1);
	}
	if (!err)
		err = timed_run(st, v, v->iters, &s1);
	if (!err) {
		add_sums(sums, acc, &s1);
		err = timed_run(st, v, 2 * v->iters, &s2);
	}
	if (!err)
		add_sums(sums, acc, &s2);
	if (!err) {
		keep_min(&acc->best1, &s1, st->per_run ? nr_ev : 0, first);
		keep_min(&acc->best2, &s2, st->per_run ? nr_ev : 0, first);
	}
	if (!err && st->m->clock && p1 > 0 && (acc->probe_min <= 0 || p1 < acc->probe_min))
		acc->probe_min = p1;
	if (!err && round) {
		if (round->read(round->ctx, st->ev1))
			return nl_fail(st->d, -EIO, "reading counters");
		for (unsigned e = 0; e < round->nr; e++)
			acc->evsum[e] += (double)(st->ev1[e] - st->ev0[e]);
	}
	getrusage(RUSAGE_THREAD, &ru1);
	acc->switches += switches(&ru1) - switches(&ru0);
	acc->faults += faults(&ru1) - faults(&ru0);
	return err;
}


/*
 * A repetition is usable when 2n - n looks like n iterations: positive, and
 * the overhead it implies (t(n) minus the difference) at most a third of
 * it.  Both minima must come from undisturbed runs for that to hold; n is
 * calibrated so the true overhead is a few per cent at most.
 */
static bool consistent(const struct rep_acc *acc)
{
	double d = (double)acc->best2.ticks - (double)acc->best1.ticks;

	return d > 0 && d >= 0.75 * (double)acc->best1.ticks;
}

static void store_rep(const struct nl_method *m, struct nl_mvar *v, const struct rep_acc *acc,
		      int rep, double *overhead)
{
	unsigned nr_ev = m->reader ? m->reader->nr : 0;
	double n = (double)v->iters;
	double per_iter = ((double)acc->best2.ticks - (double)acc->best1.ticks) / n;

	*overhead = (double)acc->best1.ticks - per_iter * n;
	if (rep < 0)
		return;
	v->ticks[rep] = per_iter;
	if (v->cycles && m->clock)
		v->cycles[rep] = acc->probe_min > 0 ?
				 per_iter * m->clock_cycles_per_iter * (double)m->clock->iters /
				 acc->probe_min : 0;
	for (unsigned e = 0; e < nr_ev; e++)
		v->events[e][rep] = m->reader->sum[e] ? acc->evsum[e] :
				    ((double)acc->best2.ev[e] - (double)acc->best1.ev[e]) / n;
	if (v->ctx_switches)
		v->ctx_switches[rep] = acc->switches;
	if (v->faults)
		v->faults[rep] = acc->faults;
}

static uint64_t next_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);	/* splitmix64 */

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void shuffle(size_t *a, size_t n, uint64_t *rng)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(next_rand(rng) % i), t = a[i - 1];

		a[i - 1] = a[j];
		a[j] = t;
	}
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/*
 * One repetition (rep < 0: a warm-up, not stored).  The k inner rounds are
 * spread over all the variants, not run back to back, so each minimum is
 * taken over the whole repetition's span: a burst of load from a neighbour
 * then has to cover all of it to move the figure.  Each round visits every
 * variant once in a fresh seeded order: a fixed round-robin would always run
 * each variant right after the same neighbour, whose cache and predictor
 * state it would inherit.  ovh points at this repetition's nr overheads.
 */
static int one_repetition(struct run_state *st, struct nl_mvar *v, size_t nr,
			  struct rep_acc *acc, size_t *order, size_t *active, uint64_t *rng,
			  int rep, double *ovh, unsigned total)
{
	const struct nl_method *m = st->m;
	int err = 0;

	(void)total;
	memset(acc, 0, nr * sizeof(*acc));
	for (unsigned k = 0; k < m->inner && !err; k++) {
		shuffle(order, nr, rng);
		for (size_t j = 0; j < nr && !err; j++) {
			if (m->activate && order[j] != *active)
				err = m->activate(m->activate_ctx, order[j], st->d);
			*active = order[j];
			if (!err)
				err = inner_round(st, &v[order[j]], &acc[order[j]], k == 0);
		}
	}
	/*
	 * Variants whose minima still disagree get more rounds, up to k more: a
	 * burst of load that covered all of one variant's rounds would
	 * otherwise leave a nonsense figure (even a negative one).
	 */
	for (unsigned extra = 0; extra < m->inner && !m->fixed_rounds && !err; extra++) {
		bool again = false;

		for (size_t j = 0; j < nr && !err; j++) {
			size_t i = order[j];

			if (consistent(&acc[i]))
				continue;
			again = true;
			if (m->activate && i != *active)
				err = m->activate(m->activate_ctx, i, st->d);
			*active = i;
			if (!err)
				err = inner_round(st, &v[i], &acc[i], false);
			v[i].extra_rounds++;
		}
		if (!again)
			break;
	}
	for (size_t i = 0; i < nr && !err; i++)
		store_rep(m, &v[i], &acc[i], rep, &ovh[i]);
	return err;
}

#define DISTURBED 0.05

static double median_of(const double *x, size_t n)
{
	double *c = malloc(n * sizeof(*c)), med;

	if (!c)
		return 0;
	memcpy(c, x, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_double);
	med = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return med;
}

/* The first repetition most variants call disturbed, or -1. */
static int disturbed_rep(const struct nl_method *m, const struct nl_mvar *v, size_t nr)
{
	if (m->reps < 3)
		return -1;
	for (unsigned r = 0; r < m->reps; r++) {
		size_t slow = 0;

		for (size_t i = 0; i < nr; i++) {
			const double *x = v[i].cycles && m->clock ? v[i].cycles : v[i].ticks;

			slow += x[r] > (1 + DISTURBED) * median_of(x, m->reps);
		}
		if (2 * slow > nr)
			return (int)r;
	}
	return -1;
}

int nl_method_run(const struct nl_method *m, struct nl_mvar *v, size_t nr, struct nl_diag *d)
{
	struct run_state st = { .m = m, .d = d };
	unsigned total = m->warmups + m->reps;
	uint64_t rng = m->seed;
	struct rep_acc *acc;
	size_t *order, active = SIZE_MAX;
	double *ovh;
	int err = 0;

	if (!nr)
		return 0;
	if (!m->reps || !m->inner || m->sample_ticks <= 0)
		return nl_fail(d, -NL_E_USAGE, "repetitions, inner samples and sample length must be > 0");
	if (m->reader && m->reader->nr > NL_METHOD_MAX_EVENTS)
		return nl_fail(d, -NL_E_USAGE, "at most %d events per pass", NL_METHOD_MAX_EVENTS);
	if (m->clock && m->clock_cycles_per_iter <= 0)
		return nl_fail(d, -NL_E_USAGE, "a clock probe needs its cycles per iteration");
	for (unsigned e = 0; m->reader && e < m->reader->nr; e++)
		st.per_run |= !m->reader->sum[e];
	ovh = calloc(nr * total, sizeof(*ovh));
	order = calloc(nr, sizeof(*order));
	acc = calloc(nr, sizeof(*acc));
	if (!ovh || !order || !acc) {
		err = -ENOMEM;
		goto out;
	}

	if (m->clock) {
		/*
		 * The probe's n from the same calibration, and its overhead from
		 * runs of zero iterations: the call and the fences, no adds.
		 */
		struct nl_mvar *p = (struct nl_mvar *)m->clock;
		struct sample s;

		if (!p->iters)
			err = calibrate(&st, p);
		for (int k = 0; k < 64 && !err; k++) {
			err = timed_run(&st, p, 0, &s);
			if (!err && (!k || (double)s.ticks < st.clock_overhead))
				st.clock_overhead = (double)s.ticks;
		}
	}
	for (size_t i = 0; i < nr && !err; i++) {
		if (v[i].iters)
			continue;
		if (m->activate)
			err = m->activate(m->activate_ctx, i, d);
		active = i;
		if (!err)
			err = calibrate(&st, &v[i]);
	}
	for (size_t i = 0; i < nr; i++)
		order[i] = i;
	unsigned r;

	for (r = 0; r < total && !err; r++) {
		if (m->stop && *m->stop)
			break;
		err = one_repetition(&st, v, nr, acc, order, &active, &rng, (int)r - (int)m->warmups,
				     &ovh[r * nr], total);
		if (m->progress)
			m->progress(m->progress_ctx, (double)(r + 1) / (double)total);
	}
	for (size_t i = 0; i < nr; i++)
		v[i].reps_done = err ? 0 : r > m->warmups ? r - m->warmups : 0;
	if (!err && r < total) {
		/* stopped: what was measured stays; nothing is measured again */
		total = r ? r : 1;
		err = -EINTR;
		goto overhead;
	}
	/*
	 * A repetition in which most variants ran more than DISTURBED slower
	 * than their own median was hit as a whole: a neighbour's burst covered
	 * all of its rounds, every variant alike (the clock probe says the
	 * clock did not change).  It is measured again, all variants together,
	 * so no variant is favoured; at most R repetitions are redone.
	 */
	for (unsigned redo = 0; redo < m->reps && !m->fixed_rounds && !err; redo++) {
		int bad = disturbed_rep(m, v, nr);

		if (bad < 0)
			break;
		err = one_repetition(&st, v, nr, acc, order, &active, &rng, bad,
				     &ovh[(m->warmups + (unsigned)bad) * nr], total);
		for (size_t i = 0; i < nr; i++)
			v[i].redone_reps++;
	}
overhead:
	for (size_t i = 0; i < nr && (!err || err == -EINTR); i++) {
		double *o = calloc(total, sizeof(*o));

		if (!o) {
			err = -ENOMEM;
			break;
		}
		for (unsigned k = 0; k < total; k++)
			o[k] = ovh[k * nr + i];
		qsort(o, total, sizeof(*o), cmp_double);
		v[i].overhead_ticks = o[total / 2];
		free(o);
	}
out:
	free(ovh);
	free(order);
	free(acc);
	return err;
}
