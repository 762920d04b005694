/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_CLOCK_H
#define NOPLAB_CLOCK_H

/*
 * Clocks for the measurement method: the TSC read with fences around it (so
 * the code under test can neither start before nor finish after the read),
 * and CLOCK_MONOTONIC_RAW, which calibrates the TSC to nanoseconds and stands
 * in for it where the TSC is not invariant.  Also CPU pinning, because a TSC
 * interval that migrates between CPUs measures two clocks.
 */

#include <stdbool.h>
#include <stdint.h>

#include "noplab/diag.h"

struct nl_clock {
	bool tsc_invariant;	/* CPUID 0x80000007 EDX[8], or constant_tsc + nonstop_tsc */
	bool rdtscp;		/* CPUID 0x80000001 EDX[27]: absent in some VMs (this one) */
	double tsc_hz;		/* calibrated against CLOCK_MONOTONIC_RAW; 0 until known */
	char tsc_source[64];	/* how tsc_hz was found */
	uint64_t cal_tsc;	/* calibration start */
	uint64_t cal_ns;
};

int nl_clock_init(struct nl_clock *c, struct nl_diag *d);

/* Start of an interval: earlier instructions retire first, later ones wait for the read. */
static inline uint64_t nl_tsc_begin(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}

/* End of an interval: the same fences, so begin and end cost the same and cancel. */
static inline uint64_t nl_tsc_end(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}

uint64_t nl_mono_raw_ns(void);

/* Start a TSC calibration interval; nl_clock_calibrate_end() sets tsc_hz from it. */
void nl_clock_calibrate_begin(struct nl_clock *c);
/* Needs >= 20 ms since begin for a figure good to ~1e-4; returns 0 or -EAGAIN. */
int nl_clock_calibrate_end(struct nl_clock *c);

/*
 * Pin the calling thread to cpu, or to the CPU it runs on now when cpu < 0.
 * Returns the CPU (>= 0) or a negative error.
 */
int nl_pin_cpu(int cpu, struct nl_diag *d);

/* "TSC 2096 MHz (invariant); no cpufreq: core clock unknown" and the like. */
void nl_freq_note(const struct nl_clock *c, int cpu, char *buf, size_t size);

#endif
