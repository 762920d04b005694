/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_RUNNER_H
#define NOPLAB_RUNNER_H

/*
 * The command runner behind `noplab stat`: run a command R times per pass,
 * counting it and its descendants (inherit, enable_on_exec) from its exec to
 * its exit, with optional --pre/--post shell commands and a discarded dry
 * run before each measured one.  Passes are interleaved within each
 * repetition, so drift over time hits every pass alike.
 *
 * For every repetition and every pass, in this order:
 *   pre (sh -c) -> dry run (uncounted) -> measured run -> post (sh -c)
 */

#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "noplab/counters.h"
#include "noplab/diag.h"

struct nl_runner_opts {
	char *const *argv;	/* the command; argv[0] is looked up in PATH */
	const char *pre, *post;	/* shell commands around every measured run, or NULL */
	unsigned repeat;	/* measured runs per pass, >= 1 */
	bool dry_run;		/* one uncounted run after pre, before each measured run */
	const cpu_set_t *cpus;	/* pin dry and measured runs (not pre/post), or NULL */
	bool stdout_to_stderr;	/* send the command's stdout to our stderr */
	/* called after each measured run (for a progress line), may be NULL */
	void (*progress)(void *ctx, unsigned done, unsigned total);
	void *progress_ctx;
	/*
	 * Set (by the caller's SIGINT/SIGTERM handler) to stop: the running child
	 * gets SIGINT, then SIGKILL if it is still there 2 s later, is reaped, and
	 * nl_stat_run() returns 0 with the runs completed so far and
	 * nl_stat_data.interrupted set.  The run that was cut short is not kept.
	 * The handler must be installed without SA_RESTART.  NULL: never stop.
	 */
	const volatile sig_atomic_t *stop;
};

struct nl_stat_run {
	unsigned pass, rep;
	double wall_ns;		/* CLOCK_MONOTONIC from the go signal to the reaped exit */
	int status;		/* exit status, or 128 + the signal that killed it */
	struct nl_group_values v; /* raw counts in the pass's member order */
};

struct nl_stat_data {
	size_t nr_runs;
	struct nl_stat_run *runs; /* repeat x passes, in the order they ran */
	unsigned measured, dry, pre, post; /* how many of each ran */
	unsigned failed;	/* measured runs with a non-zero status */
	bool interrupted;	/* *stop was set: runs holds what completed before it */
};

/* "0,2-3" -> a CPU set; -NL_E_USAGE for anything else or CPUs this machine lacks. */
int nl_parse_cpu_list(const char *list, cpu_set_t *set, struct nl_diag *d);

/*
 * Run and count.  A command that cannot be executed is an error (-ENOENT,
 * -EACCES ...); a --pre/--post command that fails stops the runs
 * (-ECANCELED); a measured command that exits non-zero is counted and
 * reported in failed.  A stop request (o->stop) is not an error: see there.
 */
int nl_stat_run(const struct nl_runner_opts *o, const struct nl_event_list *l,
		const struct nl_plan *plan, struct nl_stat_data *out, struct nl_diag *d);

void nl_stat_data_free(struct nl_stat_data *s);

#endif
