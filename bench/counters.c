// SPDX-License-Identifier: MIT
/*
 * Counters: libpfm4 event encoding and perf_event_open.  This is the only
 * file that includes libpfm4 headers.
 */
#include <linux/perf_event.h>	/* must precede libpfm4's copy of it */
#include <perfmon/pfmlib_perf_event.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "noplab/counters.h"

static long nl_perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			 unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

static int read_int_file(const char *path, int *out)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%d", out) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

/* Try one counting event on this thread, user space only; returns 0 or -errno. */
static int try_open(unsigned type, unsigned long long config)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = nl_perf_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	close((int)fd);
	return 0;
}

static void find_sysfs_pmu(struct nl_pmu_probe *p)
{
	static const char *const names[] = { "cpu", "cpu_core", "cpu_atom" };
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s", names[i]);
		if (access(path, F_OK) == 0) {
			snprintf(p->sysfs_pmu, sizeof(p->sysfs_pmu), "%s", names[i]);
			snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/rdpmc", names[i]);
			if (read_int_file(path, &p->rdpmc))
				p->rdpmc = -1;
			return;
		}
	}
}

static void find_core_pmu(struct nl_pmu_probe *p)
{
	for (int pmu = PFM_PMU_NONE; pmu < PFM_PMU_MAX; pmu++) {
		pfm_pmu_info_t info;

		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pfm_get_pmu_info(pmu, &info) != PFM_SUCCESS || !info.is_present)
			continue;
		if (info.type != PFM_PMU_TYPE_CORE)
			continue;
		snprintf(p->core_pmu, sizeof(p->core_pmu), "%s", info.name);
		snprintf(p->core_pmu_desc, sizeof(p->core_pmu_desc), "%s", info.desc ? info.desc : "");
		p->nr_counters = (unsigned)info.num_cntrs;
		p->nr_fixed = (unsigned)info.num_fixed_cntrs;
		/* the first core PMU is the default one; a hybrid CPU lists more */
		return;
	}
}

int nl_pmu_probe(struct nl_pmu_probe *p, struct nl_diag *d)
{
	int ret;

	(void)d;
	memset(p, 0, sizeof(*p));
	p->paranoid = -100;
	p->nmi_watchdog = -1;
	p->rdpmc = -1;

	ret = pfm_initialize();
	if (ret == PFM_SUCCESS) {
		p->pfm_ok = true;
		find_core_pmu(p);
	} else {
		snprintf(p->pfm_error, sizeof(p->pfm_error), "%s", pfm_strerror(ret));
	}
	find_sysfs_pmu(p);
	if (read_int_file("/proc/sys/kernel/perf_event_paranoid", &p->paranoid))
		p->paranoid = -100;
	if (read_int_file("/proc/sys/kernel/nmi_watchdog", &p->nmi_watchdog))
		p->nmi_watchdog = -1;

	p->hw_err = try_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	p->hw_usable = p->hw_err == 0;
	p->sw_err = try_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	p->sw_usable = p->sw_err == 0;
	return 0;
}

const char *nl_perf_open_hint(int err)
{
	switch (-err) {
	case 0:
		return "available";
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		return "no hardware PMU exposed to this kernel (usual in a VM without a virtual PMU)";
	case EACCES:
	case EPERM:
		return "not permitted: lower /proc/sys/kernel/perf_event_paranoid (e.g. to 1) or grant CAP_PERFMON";
	case EMFILE:
		return "too many open files: raise the file descriptor limit (ulimit -n)";
	case EBUSY:
		return "the counters are held exclusively by another user (another profiler or the NMI watchdog)";
	case EINVAL:
		return "the kernel rejected the event encoding (unsupported event or modifier)";
	case ENOSYS:
		return "perf_event_open is not available in this kernel (CONFIG_PERF_EVENTS off or blocked by seccomp)";
	}
	return "unexpected error";
}
