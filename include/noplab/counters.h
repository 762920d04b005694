/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_COUNTERS_H
#define NOPLAB_COUNTERS_H

/*
 * Performance counters: what this machine offers, event names, pass
 * planning, counting groups.  libpfm4 and perf_event_open types stay inside
 * bench/counters.c; this header carries plain copies of what callers need.
 *
 * How bench and stat use it:
 *
 *   struct nl_event_list evs;          // names -> perf_event_attr encodings
 *   nl_events_parse("cycles,instructions,L1-ICACHE-LOAD-MISSES,task-clock",
 *                   false, &evs, d);   // -NL_E_EVENT: d names the bad one + closest names
 *   nl_pmu_probe(&probe, d);           // hw_usable false -> drop hardware events
 *   nl_events_drop_hw(&evs);           //   (say so once), keep software ones
 *   struct nl_plan plan;               // never multiplex: split into passes,
 *   nl_plan_passes(&evs, nl_counter_budget(&probe), &plan, d);
 *                                      // each hardware pass carries cycles and
 *                                      // instructions (added as anchors if absent)
 *   for each pass p:
 *     struct nl_group g;
 *     struct nl_group_opts o = { .pid = 0, .cpu = -1, .mmap = true };
 *     nl_group_open(&g, &evs, &plan.pass[p], &o, d);   // -NL_E_NOPMU + hint without a PMU
 *     nl_group_reset(&g); nl_group_enable(&g);
 *     ... nl_group_read_now(&g, vals, &used_rdpmc) ... // hot path: rdpmc or read()
 *     nl_group_disable(&g);
 *     struct nl_group_values v;
 *     nl_group_read(&g, &v, d);        // values in pass order, matched by id
 *     if (nl_values_multiplexed(&v))   // running < enabled: report every event of
 *         ... nl_values_running_pct(&v) ...   // this pass as scaled, loudly
 *     nl_group_close(&g);
 *
 * Counting a child (stat): .pid = child, .inherit = true, .enable_on_exec =
 * true, opened while the child waits before exec; read after it exits.
 *
 * Values are raw counts; nothing here scales.  nl_values_scaled() exists
 * for callers that must show perf's estimate next to the raw count.
 * rdpmc is used only for self-monitoring hardware events that sit on a
 * counter (cap_user_rdpmc, index != 0); a group holding a software event
 * always reads with read(), so keep software events out of a group that
 * must be read with rdpmc.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "noplab/diag.h"

struct nl_pmu_probe {
	bool pfm_ok;			/* pfm_initialize() succeeded */
	char pfm_error[128];
	char core_pmu[64];		/* libpfm4 name of the detected core PMU, "" if none */
	char core_pmu_desc[128];
	unsigned nr_counters, nr_fixed;	/* generic and fixed counters libpfm4 knows */
	char sysfs_pmu[32];		/* "cpu", "cpu_core" ...; "" when the kernel exposes none */
	int paranoid;			/* /proc/sys/kernel/perf_event_paranoid, or -100 */
	int nmi_watchdog;		/* 1 when it holds a counter, 0, or -1 unknown */
	int rdpmc;			/* /sys/bus/event_source/devices/<pmu>/rdpmc, or -1 */
	bool hw_usable;			/* a user-space cycles counter opened */
	int hw_err;			/* negative errno of that open when not usable */
	bool sw_usable;			/* task-clock opened */
	int sw_err;
};

int nl_pmu_probe(struct nl_pmu_probe *p, struct nl_diag *d);

/* What a perf_event_open errno usually means, in words a user can act on. */
const char *nl_perf_open_hint(int err);

/* ---- events ------------------------------------------------------------- */

#define NL_EVENT_NAME_MAX 96
#define NL_EVENT_FSTR_MAX 192
#define NL_EVENTS_MAX 48	/* one list, anchors included */
#define NL_GROUP_MAX 24		/* members of one group (software events ride along) */
#define NL_PASSES_MAX 16

/* Default counter budget when libpfm4 does not know the core PMU. */
#define NL_COUNTER_BUDGET_GENERIC 4

struct nl_event {
	char name[NL_EVENT_NAME_MAX];	/* as the user wrote it: "cycles", "IC_TAG_HIT_MISS:IC_MISS" */
	char fstr[NL_EVENT_FSTR_MAX];	/* libpfm4's fully qualified string */
	/* the perf_event_attr fields libpfm4 filled in */
	uint32_t type;			/* PERF_TYPE_*: 0 hardware, 1 software, 3 cache, 4 raw ... */
	uint64_t config, config1, config2;
	bool exclude_user, exclude_kernel, exclude_hv;
	bool hw;			/* needs a PMU counter (everything but software events) */
	bool anchor;			/* cycles/instructions added by the planner, not asked for */
	/*
	 * A software event that only ever fires in kernel mode (context
	 * switches, CPU migrations): user-only it would always read 0, so it
	 * counts kernel mode too unless the name says ":u".  Where
	 * perf_event_paranoid forbids that, nl_event_try_open() says EACCES.
	 */
	bool kernel_side;
};

struct nl_event_list {
	size_t nr;
	struct nl_event ev[NL_EVENTS_MAX];
};

/*
 * Encode one event string with libpfm4 (any libpfm4 string, perf-style
 * ":u"/":k" modifiers included).  kernel = false counts user space only.
 * Unknown names give -NL_E_EVENT with the closest names libpfm4 knows in d;
 * a bad unit mask lists the event's unit masks.
 */
int nl_event_encode(const char *name, bool kernel, struct nl_event *ev, struct nl_diag *d);

/* A comma-separated list; duplicates are dropped with a warning. */
int nl_events_parse(const char *list, bool kernel, struct nl_event_list *out, struct nl_diag *d);

/* Open ev alone on this thread and close it again: 0, or the negative errno. */
int nl_event_try_open(const struct nl_event *ev);

/* Remove events that need a PMU; returns how many were removed. */
size_t nl_events_drop_hw(struct nl_event_list *l);

bool nl_event_is_cycles(const struct nl_event *ev);
bool nl_event_is_instructions(const struct nl_event *ev);

/*
 * Up to max names libpfm4 knows that are closest to name (edit distance,
 * case-insensitive), written into buf as "a, b, c".  Returns the count.
 */
size_t nl_event_suggest(const char *name, size_t max, char *buf, size_t size);

/* ---- passes ------------------------------------------------------------- */

struct nl_pass {
	size_t nr;
	unsigned ev[NL_GROUP_MAX];	/* indices into the event list; leader first */
	bool hw;			/* holds hardware events (and so cycles + instructions) */
};

struct nl_plan {
	size_t nr;
	struct nl_pass pass[NL_PASSES_MAX];
	unsigned budget;		/* hardware counters per pass */
	unsigned home[NL_EVENTS_MAX];	/* the pass whose value of event i is reported */
};

/*
 * Hardware counters one group may use: libpfm4's generic counter count for
 * the core PMU (NL_COUNTER_BUDGET_GENERIC when it knows none), minus one
 * when the NMI watchdog holds a counter.
 */
unsigned nl_counter_budget(const struct nl_pmu_probe *p);

/*
 * Split the events into passes so that no group needs more than budget
 * hardware counters.  Every hardware pass holds cycles and instructions;
 * they are appended to l (anchor = true) when the list lacks them, which is
 * why l is not const.  Software events go into the first pass(es).
 */
int nl_plan_passes(struct nl_event_list *l, unsigned budget, struct nl_plan *plan,
		   struct nl_diag *d);

/*
 * The same with at most group_max events in any group, software events
 * included (stat --group-size; 0 = NL_GROUP_MAX).  A hardware pass still
 * carries cycles and instructions, so group_max must be 2 or more for
 * hardware events and 3 or more beside other hardware events.
 */
int nl_plan_passes_max(struct nl_event_list *l, unsigned budget, unsigned group_max,
		       struct nl_plan *plan, struct nl_diag *d);

/* ---- groups ------------------------------------------------------------- */

struct nl_group_opts {
	int pid;		/* 0: the calling thread; else a process (a child) */
	int cpu;		/* -1: wherever the task runs */
	bool inherit;		/* count children forked after the open (stat) */
	bool enable_on_exec;	/* start counting at the target's next exec */
	bool pinned;		/* leader pinned: an unschedulable group is an error, not multiplexed */
	bool mmap;		/* map each member's user page for rdpmc (self only) */
};

struct nl_group {
	size_t nr;
	int fd[NL_GROUP_MAX];
	uint64_t id[NL_GROUP_MAX];	/* PERF_EVENT_IOC_ID of each member */
	unsigned ev[NL_GROUP_MAX];	/* event list index of each member */
	void *page[NL_GROUP_MAX];	/* perf_event_mmap_page, or NULL */
	size_t page_size;
	bool rdpmc;			/* every member's page offers user rdpmc */
};

struct nl_group_values {
	uint64_t time_enabled, time_running;	/* ns */
	size_t nr;
	uint64_t value[NL_GROUP_MAX];		/* raw counts in member order */
};

/*
 * Open the pass's events as one group (leader disabled; enable it, or let
 * enable_on_exec do so).  -NL_E_NOPMU, with the reason and a hint in d, when
 * a hardware event finds no PMU (ENOENT/ENODEV/EOPNOTSUPP) or the kernel
 * refuses counting (EACCES/EPERM: perf_event_paranoid); -errno otherwise.
 */
int nl_group_open(struct nl_group *g, const struct nl_event_list *l, const struct nl_pass *pass,
		  const struct nl_group_opts *o, struct nl_diag *d);
void nl_group_close(struct nl_group *g);
int nl_group_enable(struct nl_group *g);
int nl_group_disable(struct nl_group *g);
int nl_group_reset(struct nl_group *g);

/* One read() of the group, parsed and matched to the members by id. */
int nl_group_read(struct nl_group *g, struct nl_group_values *v, struct nl_diag *d);

/*
 * Current raw counts of every member into values[g->nr]: rdpmc when every
 * member is on a counter right now, else one read().  *rdpmc says which.
 */
int nl_group_read_now(struct nl_group *g, uint64_t *values, bool *rdpmc);

/*
 * Parse a PERF_FORMAT_GROUP | ID | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING
 * buffer of nwords u64: { nr, enabled, running, { value, id } [nr] }.
 * Values are matched to ids[0..nr) whatever order the kernel used.
 * -NL_E_FORMAT for a short buffer, a count or id mismatch, running > enabled.
 */
int nl_group_parse(const uint64_t *buf, size_t nwords, const uint64_t *ids, size_t nr,
		   struct nl_group_values *v, struct nl_diag *d);

static inline bool nl_values_multiplexed(const struct nl_group_values *v)
{
	return v->time_running < v->time_enabled;
}

/* 100 * running / enabled: what perf prints as "(83.33%)"; 100 when never enabled. */
double nl_values_running_pct(const struct nl_group_values *v);

/* perf's estimate value * enabled / running, for display beside the raw count only. */
double nl_values_scaled(const struct nl_group_values *v, size_t i);

/*
 * The rdpmc count of the user page protocol: offset plus the raw counter
 * sign-extended from its width bits (what the kernel documents and
 * libpfm4's self_count.c forgets).
 */
uint64_t nl_pmc_count(int64_t offset, uint64_t raw, unsigned width);

/*
 * Cost of one nl_group_read_now() on this group: the fastest of several
 * batches of reads, in ns per read.  *rdpmc says which path was taken.
 */
int nl_group_read_cost(struct nl_group *g, unsigned reads, double *ns, bool *rdpmc);

#endif
