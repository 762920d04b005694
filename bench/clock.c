// SPDX-License-Identifier: MIT
/* TSC and CLOCK_MONOTONIC_RAW, pinning, and what can be said about the clock frequency. */
#include <cpuid.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "noplab/clock.h"

static bool cpuinfo_flag(const char *flag)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[4096];
	bool found = false;
	size_t n = strlen(flag);

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		for (char *p = strstr(line, flag); p; p = strstr(p + 1, flag))
			if (p[-1] == ' ' && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
				found = true;
		break;
	}
	fclose(f);
	return found;
}

int nl_clock_init(struct nl_clock *c, struct nl_diag *d)
{
	unsigned a, b, cx, dx;
	struct timespec ts;

	memset(c, 0, sizeof(*c));
	if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts))
		return nl_fail_errno(d, -errno, "CLOCK_MONOTONIC_RAW");
	if (__get_cpuid_max(0x80000000, NULL) >= 0x80000001) {
		__cpuid(0x80000001, a, b, cx, dx);
		c->rdtscp = dx & (1u << 27);
	}
	if (__get_cpuid_max(0x80000000, NULL) >= 0x80000007) {
		__cpuid(0x80000007, a, b, cx, dx);
		c->tsc_invariant = dx & (1u << 8);
	}
	/* hypervisors often hide leaf 0x80000007 but tell the kernel the TSC is stable */
	if (!c->tsc_invariant)
		c->tsc_invariant = cpuinfo_flag("constant_tsc") && cpuinfo_flag("nonstop_tsc");
	(void)a;
	(void)b;
	(void)cx;
	return 0;
}

uint64_t nl_mono_raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void nl_clock_calibrate_begin(struct nl_clock *c)
{
	c->cal_ns = nl_mono_raw_ns();
	c->cal_tsc = nl_tsc_begin();
}

int nl_clock_calibrate_end(struct nl_clock *c)
{
	uint64_t tsc = nl_tsc_end(), ns = nl_mono_raw_ns();

	if (ns - c->cal_ns < 20000000u || tsc <= c->cal_tsc)
		return -EAGAIN;
	c->tsc_hz = (double)(tsc - c->cal_tsc) * 1e9 / (double)(ns - c->cal_ns);
	snprintf(c->tsc_source, sizeof(c->tsc_source), "calibrated against CLOCK_MONOTONIC_RAW "
		 "over %.2f s", (double)(ns - c->cal_ns) / 1e9);
	return 0;
}

int nl_pin_cpu(int cpu, struct nl_diag *d)
{
	cpu_set_t set;

	if (cpu < 0) {
		cpu = sched_getcpu();
		if (cpu < 0)
			return nl_fail_errno(d, -errno, "sched_getcpu");
	}
	if (cpu >= CPU_SETSIZE)
		return nl_fail(d, -NL_E_USAGE, "CPU %d out of range", cpu);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		if (errno == EINVAL)
			return nl_fail(d, -NL_E_USAGE, "CPU %d is not available to this process", cpu);
		return nl_fail_errno(d, -errno, "pinning to CPU %d", cpu);
	}
	return cpu;
}

static bool read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

void nl_freq_note(const struct nl_clock *c, int cpu, char *buf, size_t size)
{
	char path[128], gov[64], boost[16];
	int n = snprintf(buf, size, "TSC %.0f MHz%s", c->tsc_hz / 1e6,
			 c->tsc_invariant ? " (invariant)" : " (NOT invariant)");

	if (n < 0 || (size_t)n >= size)
		return;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor",
		 cpu < 0 ? 0 : cpu);
	if (!read_line(path, gov, sizeof(gov))) {
		snprintf(buf + n, size - (size_t)n, ", no cpufreq here (the core clock is not reported)");
		return;
	}
	n += snprintf(buf + n, size - (size_t)n, ", governor %s", gov);
	if ((size_t)n < size && read_line("/sys/devices/system/cpu/cpufreq/boost", boost, sizeof(boost)))
		snprintf(buf + n, size - (size_t)n, ", boost %s", boost[0] == '1' ? "on" : "off");
}
