/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_METHOD_H
#define NOPLAB_METHOD_H

/*
 * The measurement method, after nanoBench and uarch-bench:
 *
 *  - discarded warm-up repetitions first (caches, predictors, page tables);
 *  - R measured repetitions, all variants interleaved inside each one, in
 *    a fresh seeded order per repetition, so slow drift (frequency, a
 *    neighbour's load) lands on every variant alike and no variant always
 *    inherits the same predecessor's cache and predictor state;
 *  - inside a repetition, k pairs of runs of n and 2n driver iterations; the
 *    repetition's figure is (min t(2n) - min t(n)) / n: the minimum drops
 *    samples hit by an interrupt, the difference cancels everything that does
 *    not scale with n (the call into the driver, the clock reads, the cold
 *    first pass after another variant ran);
 *  - every event a reader supplies (hardware or software counters) is
 *    aggregated the same way, next to the TSC;
 *  - with a clock probe run in every round, ticks become core cycles at the
 *    clock measured next to them;
 *  - a repetition whose minima disagree (2n - n not like n iterations: a
 *    burst of load hit every round of it) gets up to k more rounds;
 *  - a repetition in which most variants ran over 5% slower than their own
 *    median was disturbed as a whole and is measured again, all variants
 *    together (at most R times).
 *
 * Each run's checksum is compared with the expected one; a mismatch means the
 * generated code did not run as planned, and the run fails.
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "noplab/codebuf.h"
#include "noplab/diag.h"

#define NL_METHOD_MAX_EVENTS 16

/*
 * Something that reads counters around each run: hw or sw events through
 * perf_event_open, or nothing.  read() stores cumulative values of nr events.
 */
struct nl_reader {
	unsigned nr;
	int (*read)(void *ctx, uint64_t *vals);
	void *ctx;
	/*
	 * Events to total over every run of a repetition instead of 2n - n per
	 * iteration: software events such as context switches, which are rare
	 * events to count, not costs to normalise.
	 */
	bool sum[NL_METHOD_MAX_EVENTS];
};

/* One variant, loaded and runnable. */
struct nl_mvar {
	nl_driver_fn fn;
	void *const *table;
	uint64_t expect_per_iter;	/* checksum per driver iteration */
	uint64_t iters;			/* n; 0 = choose so a run of n takes sample_ticks */
	/* filled per measured repetition; arrays of nl_method.reps, caller-owned */
	double *ticks;			/* TSC ticks per driver iteration */
	double *events[NL_METHOD_MAX_EVENTS]; /* reader events per driver iteration (or summed) */
	double *cycles;			/* optional: core cycles per driver iteration, from ticks
					   and the clock probe run next to them (nl_method.clock) */
	double *ctx_switches;		/* voluntary + involuntary, during the repetition */
	double *faults;			/* minor + major page faults, during the repetition */
	/* diagnostics */
	double overhead_ticks;		/* median of t(n) - n * per-iteration: what differencing cancels */
	unsigned extra_rounds;		/* rounds added because a repetition's minima disagreed */
	unsigned redone_reps;		/* repetitions measured again: disturbed as a whole */
	unsigned reps_done;		/* measured repetitions completed (< reps when stopped) */
};

struct nl_method {
	unsigned reps;		/* R, measured repetitions */
	unsigned warmups;	/* discarded repetitions before them */
	unsigned inner;		/* k pairs (n, 2n) per repetition */
	bool fixed_rounds;	/* exactly k rounds and R repetitions: nothing measured again */
	double sample_ticks;	/* target length of a run of n iterations, in TSC ticks */
	uint64_t seed;		/* for the per-repetition order of the variants */
	/*
	 * Optional: called before variant i runs whenever another one ran last,
	 * e.g. to copy its code into the one buffer all variants share.
	 */
	int (*activate)(void *ctx, size_t i, struct nl_diag *d);
	void *activate_ctx;
	const struct nl_reader *reader;	/* optional */
	/*
	 * Optional core clock probe (nl_gen_clock_probe): run once in every
	 * round right before each variant's n and 2n runs.  A repetition's
	 * cycles are its ticks (from the fastest runs) at its fastest clock
	 * reading: minimum with minimum, so a wandering clock or a probe run
	 * hit by an interrupt cannot pair a slow moment with a fast one.
	 */
	const struct nl_mvar *clock;
	double clock_cycles_per_iter;	/* the probe's known cost, e.g. 100 adds = 100 */
	/* optional progress callback: fraction done, 0..1 */
	void (*progress)(void *ctx, double done);
	void *progress_ctx;
	/*
	 * Optional: set by the caller's SIGINT handler.  Checked between
	 * repetitions; the method then returns -EINTR with reps_done telling
	 * how many measured repetitions hold results.
	 */
	const volatile sig_atomic_t *stop;
};

void nl_method_default(struct nl_method *m);

/*
 * Measure nr variants.  Returns 0, -NL_E_USAGE (bad settings), -EIO (checksum
 * mismatch) or -EINTR (stopped through m->stop; v[].reps_done says how far).
 */
int nl_method_run(const struct nl_method *m, struct nl_mvar *v, size_t nr, struct nl_diag *d);

#endif
