/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_COUNTERS_H
#define NOPLAB_COUNTERS_H

/*
 * Hardware performance counters: what this machine offers.  libpfm4 and
 * perf_event_open types stay inside bench/counters.c.
 */

#include <stdbool.h>

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

#endif
