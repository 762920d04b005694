// SPDX-License-Identifier: MIT
/*
 * Counters: libpfm4 event encoding and perf_event_open.  This is the only
 * file that includes libpfm4 headers.
 */
#include <linux/perf_event.h>	/* must precede libpfm4's copy of it */
#include <perfmon/pfmlib_perf_event.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
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
		return "no hardware PMU in this kernel (usual in a VM: use bare metal or a VM with a "
		       "virtual PMU)";
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

/* ---- libpfm4 initialisation ------------------------------------------------ */

/*
 * pfm_initialize() is not thread-safe and reads LIBPFM_* from the
 * environment once; do it exactly once per process.
 */
static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_init_ret;

static void pfm_init_once(void)
{
	pfm_init_ret = pfm_initialize();
}

static int pfm_ready(struct nl_diag *d)
{
	pthread_once(&pfm_once, pfm_init_once);
	if (pfm_init_ret != PFM_SUCCESS)
		return nl_fail(d, -NL_E_UNSUPPORTED, "libpfm4 failed to initialise: %s",
			       pfm_strerror(pfm_init_ret));
	return 0;
}

/* ---- event names ----------------------------------------------------------- */

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[NL_EVENT_NAME_MAX + 1];

	if (lb > NL_EVENT_NAME_MAX)
		lb = NL_EVENT_NAME_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = toupper((unsigned char)a[i - 1]) !=
				      toupper((unsigned char)b[j - 1]);
			size_t best = diag + cost;

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

struct suggestion {
	size_t dist;
	char name[NL_EVENT_NAME_MAX + 64];
};

/* Split "pmu::EVENT:umask" into the PMU prefix (may be empty) and the event base. */
static void split_name(const char *name, char *pmu, size_t psize, char *base, size_t bsize)
{
	const char *sep = strstr(name, "::");
	const char *ev = sep ? sep + 2 : name;
	size_t n;

	pmu[0] = '\0';
	if (sep)
		snprintf(pmu, psize, "%.*s", (int)(sep - name), name);
	n = strcspn(ev, ":");
	snprintf(base, bsize, "%.*s", (int)n, ev);
}

static void offer(struct suggestion *best, size_t max, size_t *nr, size_t dist, const char *pmu,
		  const char *ev)
{
	char shown[sizeof(best[0].name)];
	size_t pos;

	/* the perf PMU's aliases read best the way perf spells them: "cycles" */
	if (!strcmp(pmu, "perf")) {
		bool lower = strncmp(ev, "PERF_COUNT_", 11) != 0;
		size_t i;

		for (i = 0; ev[i] && i + 1 < sizeof(shown); i++)
			shown[i] = lower ? (char)tolower((unsigned char)ev[i]) : ev[i];
		shown[i] = '\0';
	} else {
		snprintf(shown, sizeof(shown), "%s::%s", pmu, ev);
	}
	for (size_t i = 0; i < *nr; i++)
		if (!strcmp(best[i].name, shown))
			return;
	for (pos = *nr; pos > 0 && best[pos - 1].dist > dist; pos--)
		;
	if (pos >= max)
		return;
	if (*nr < max)
		(*nr)++;
	memmove(&best[pos + 1], &best[pos], (*nr - pos - 1) * sizeof(best[0]));
	best[pos].dist = dist;
	snprintf(best[pos].name, sizeof(best[pos].name), "%s", shown);
}

size_t nl_event_suggest(const char *name, size_t max, char *buf, size_t size)
{
	struct suggestion best[16];
	char pmu[64], base[NL_EVENT_NAME_MAX];
	size_t nr = 0, used = 0;

	if (size)
		buf[0] = '\0';
	if (max > sizeof(best) / sizeof(best[0]))
		max = sizeof(best) / sizeof(best[0]);
	if (!max || pfm_ready(NULL))
		return 0;
	split_name(name, pmu, sizeof(pmu), base, sizeof(base));
	for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; p++) {
		pfm_pmu_info_t pi;

		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm_get_pmu_info(p, &pi) != PFM_SUCCESS || !pi.is_present)
			continue;
		if (pmu[0] && strcasecmp(pmu, pi.name))
			continue;
		for (int i = pi.first_event; i != -1; i = pfm_get_event_next(i)) {
			pfm_event_info_t ei;

			memset(&ei, 0, sizeof(ei));
			ei.size = sizeof(ei);
			if (pfm_get_event_info(i, PFM_OS_PERF_EVENT_EXT, &ei) != PFM_SUCCESS)
				continue;
			if (strlen(ei.name) >= NL_EVENT_NAME_MAX)
				continue;
			offer(best, max, &nr, edit_distance(base, ei.name), pi.name, ei.name);
		}
	}
	for (size_t i = 0; i < nr && size; i++)
		used += (size_t)snprintf(buf + used, used < size ? size - used : 0, "%s%s",
					 i ? ", " : "", best[i].name);
	if (used >= size && size)
		buf[size - 1] = '\0';
	return nr;
}

/* The unit masks and modifiers an event takes, for a "bad unit mask" message. */
static void list_attrs(const char *name, char *buf, size_t size)
{
	char pmu[64], base[NL_EVENT_NAME_MAX], full[NL_EVENT_NAME_MAX + 66];
	pfm_event_info_t ei;
	size_t used = 0;
	int idx;

	buf[0] = '\0';
	split_name(name, pmu, sizeof(pmu), base, sizeof(base));
	snprintf(full, sizeof(full), "%s%s%s", pmu, pmu[0] ? "::" : "", base);
	idx = pfm_find_event(full);
	memset(&ei, 0, sizeof(ei));
	ei.size = sizeof(ei);
	if (idx < 0 || pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &ei) != PFM_SUCCESS)
		return;
	for (int a = 0; a < ei.nattrs && used < size; a++) {
		pfm_event_attr_info_t ai;

		memset(&ai, 0, sizeof(ai));
		ai.size = sizeof(ai);
		if (pfm_get_event_attr_info(idx, a, PFM_OS_PERF_EVENT_EXT, &ai) != PFM_SUCCESS)
			continue;
		if (ai.type != PFM_ATTR_UMASK)
			continue;
		used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", ai.name);
	}
}

/* Is any core PMU present?  Without one only perf:: and raw events encode. */
static bool have_core_pmu(void)
{
	for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; p++) {
		pfm_pmu_info_t pi;

		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm_get_pmu_info(p, &pi) == PFM_SUCCESS && pi.is_present &&
		    pi.type == PFM_PMU_TYPE_CORE)
			return true;
	}
	return false;
}

static int unknown_event(const char *name, int pfm_ret, struct nl_diag *d)
{
	char list[384], pmu[64], base[NL_EVENT_NAME_MAX];

	split_name(name, pmu, sizeof(pmu), base, sizeof(base));
	if (pfm_ret == PFM_ERR_UMASK || pfm_ret == PFM_ERR_ATTR || pfm_ret == PFM_ERR_ATTR_VAL) {
		list_attrs(name, list, sizeof(list));
		return nl_fail(d, -NL_E_EVENT, "event '%s': %s%s%s", name, pfm_strerror(pfm_ret),
			       list[0] ? "; unit masks of this event: " : "", list);
	}
	if (pfm_ret != PFM_ERR_NOTFOUND)
		return nl_fail(d, -NL_E_EVENT, "event '%s': %s", name, pfm_strerror(pfm_ret));
	if (pmu[0]) {
		for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; p++) {
			pfm_pmu_info_t pi;

			memset(&pi, 0, sizeof(pi));
			pi.size = sizeof(pi);
			if (pfm_get_pmu_info(p, &pi) != PFM_SUCCESS || strcasecmp(pi.name, pmu))
				continue;
			if (!pi.is_present)
				return nl_fail(d, -NL_E_EVENT,
					       "event '%s': libpfm4 knows PMU %s but not on this machine "
					       "(LIBPFM_FORCE_PMU=%s overrides detection)",
					       name, pi.name, pi.name);
		}
	}
	nl_event_suggest(name, 5, list, sizeof(list));
	return nl_fail(d, -NL_E_EVENT, "unknown event '%s'%s%s%s", name,
		       list[0] ? "; closest libpfm4 names: " : "", list,
		       have_core_pmu() ? ""
				       : "; libpfm4 knows no core PMU on this CPU, so only generic "
					 "events and raw rNNNN codes encode");
}

int nl_event_encode(const char *name, bool kernel, struct nl_event *ev, struct nl_diag *d)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	char *fstr = NULL;
	size_t len;
	int ret;

	memset(ev, 0, sizeof(*ev));
	while (isspace((unsigned char)*name))
		name++;
	len = strlen(name);
	while (len && isspace((unsigned char)name[len - 1]))
		len--;
	if (!len)
		return nl_fail(d, -NL_E_EVENT, "empty event name");
	if (len >= sizeof(ev->name))
		return nl_fail(d, -NL_E_EVENT, "event name '%.40s...' is too long", name);
	memcpy(ev->name, name, len);
	ev->name[len] = '\0';

	ret = pfm_ready(d);
	if (ret)
		return ret;
	/* size first: libpfm4 checks it for ABI compatibility */
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	arg.fstr = &fstr;
	ret = pfm_get_os_event_encoding(ev->name, kernel ? PFM_PLM0 | PFM_PLM3 : PFM_PLM3,
					PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret != PFM_SUCCESS) {
		free(fstr);
		return unknown_event(ev->name, ret, d);
	}
	snprintf(ev->fstr, sizeof(ev->fstr), "%s", fstr ? fstr : ev->name);
	free(fstr);
	ev->type = attr.type;
	ev->config = attr.config;
	ev->config1 = attr.config1;
	ev->config2 = attr.config2;
	ev->exclude_user = attr.exclude_user;
	ev->exclude_kernel = attr.exclude_kernel;
	ev->exclude_hv = attr.exclude_hv;
	ev->hw = attr.type != PERF_TYPE_SOFTWARE;
	if (!kernel && attr.type == PERF_TYPE_SOFTWARE &&
	    (attr.config == PERF_COUNT_SW_CONTEXT_SWITCHES ||
	     attr.config == PERF_COUNT_SW_CPU_MIGRATIONS ||
	     attr.config == PERF_COUNT_SW_CGROUP_SWITCHES) &&
	    !strstr(ev->name, ":u")) {
		/* the scheduler raises these in kernel mode: user-only they always read 0 */
		ev->exclude_kernel = false;
		ev->exclude_hv = false;
		ev->kernel_side = true;
	}
	return 0;
}

int nl_event_try_open(const struct nl_event *ev)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = ev->type;
	attr.config = ev->config;
	attr.config1 = ev->config1;
	attr.config2 = ev->config2;
	attr.exclude_user = ev->exclude_user;
	attr.exclude_kernel = ev->exclude_kernel;
	attr.exclude_hv = ev->exclude_hv;
	attr.disabled = 1;
	fd = nl_perf_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	close((int)fd);
	return 0;
}

static bool same_event(const struct nl_event *a, const struct nl_event *b)
{
	return a->type == b->type && a->config == b->config && a->config1 == b->config1 &&
	       a->config2 == b->config2 && a->exclude_user == b->exclude_user &&
	       a->exclude_kernel == b->exclude_kernel && a->exclude_hv == b->exclude_hv;
}

int nl_events_parse(const char *list, bool kernel, struct nl_event_list *out, struct nl_diag *d)
{
	const char *p = list;

	memset(out, 0, sizeof(*out));
	if (!list)
		return nl_fail(d, -NL_E_EVENT, "no events given");
	for (;;) {
		size_t n = strcspn(p, ",");
		char item[NL_EVENT_NAME_MAX + 1];
		struct nl_event ev;
		bool dup = false;
		int ret;

		if (n >= sizeof(item))
			return nl_fail(d, -NL_E_EVENT, "event name '%.40s...' is too long", p);
		memcpy(item, p, n);
		item[n] = '\0';
		ret = nl_event_encode(item, kernel, &ev, d);
		if (ret)
			return ret;
		for (size_t i = 0; i < out->nr; i++) {
			if (same_event(&out->ev[i], &ev)) {
				nl_log(d, NL_LOG_WARN, "event '%s' is the same as '%s'; counted once",
				       ev.name, out->ev[i].name);
				dup = true;
			}
		}
		if (!dup) {
			/* two slots stay free for the cycles/instructions anchors */
			if (out->nr + 2 >= NL_EVENTS_MAX)
				return nl_fail(d, -NL_E_LIMIT, "more than %d events", NL_EVENTS_MAX - 2);
			out->ev[out->nr++] = ev;
		}
		if (!p[n])
			break;
		p += n + 1;
	}
	return 0;
}

size_t nl_events_drop_hw(struct nl_event_list *l)
{
	size_t kept = 0, dropped;

	for (size_t i = 0; i < l->nr; i++)
		if (!l->ev[i].hw)
			l->ev[kept++] = l->ev[i];
	dropped = l->nr - kept;
	l->nr = kept;
	return dropped;
}

bool nl_event_is_cycles(const struct nl_event *ev)
{
	/* the low 32 bits: hybrid PMUs put a PMU type in config[63:32] */
	return ev->type == PERF_TYPE_HARDWARE &&
	       (ev->config & 0xffffffffu) == PERF_COUNT_HW_CPU_CYCLES;
}

bool nl_event_is_instructions(const struct nl_event *ev)
{
	return ev->type == PERF_TYPE_HARDWARE &&
	       (ev->config & 0xffffffffu) == PERF_COUNT_HW_INSTRUCTIONS;
}

/* ---- pass planning ----------------------------------------------------------- */

unsigned nl_counter_budget(const struct nl_pmu_probe *p)
{
	unsigned n = p && p->nr_counters ? p->nr_counters : NL_COUNTER_BUDGET_GENERIC;

	/* the watchdog's cycles event lives on a general counter on AMD; assume it everywhere */
	if (p && p->nmi_watchdog == 1 && n > 1)
		n--;
	return n;
}

static int add_anchor(struct nl_event_list *l, const char *name, const struct nl_event *like,
		      struct nl_diag *d)
{
	struct nl_event ev;
	int ret;

	if (l->nr >= NL_EVENTS_MAX)
		return nl_fail(d, -NL_E_LIMIT, "no room for the %s anchor", name);
	ret = nl_event_encode(name, false, &ev, d);
	if (ret)
		return ret;
	/* count the same privilege levels as the events it anchors */
	ev.exclude_user = like->exclude_user;
	ev.exclude_kernel = like->exclude_kernel;
	ev.exclude_hv = like->exclude_hv;
	ev.anchor = true;
	l->ev[l->nr] = ev;
	return (int)l->nr++;
}

int nl_plan_passes(struct nl_event_list *l, unsigned budget, struct nl_plan *plan,
		   struct nl_diag *d)
{
	return nl_plan_passes_max(l, budget, NL_GROUP_MAX, plan, d);
}

int nl_plan_passes_max(struct nl_event_list *l, unsigned budget, unsigned group_max,
		       struct nl_plan *plan, struct nl_diag *d)
{
	unsigned others[NL_EVENTS_MAX], soft[NL_EVENTS_MAX];
	size_t nr_others = 0, nr_soft = 0;
	int cyc = -1, ins = -1, first_hw = -1;

	memset(plan, 0, sizeof(*plan));
	if (!group_max || group_max > NL_GROUP_MAX)
		group_max = NL_GROUP_MAX;
	/* a hardware pass is one group: it cannot hold more counters than the group holds */
	if (budget > group_max)
		budget = group_max;
	plan->budget = budget;
	for (size_t i = 0; i < l->nr; i++) {
		const struct nl_event *ev = &l->ev[i];

		if (!ev->hw)
			soft[nr_soft++] = (unsigned)i;
		else if (cyc < 0 && nl_event_is_cycles(ev))
			cyc = (int)i;
		else if (ins < 0 && nl_event_is_instructions(ev))
			ins = (int)i;
		else
			others[nr_others++] = (unsigned)i;
		if (ev->hw && first_hw < 0)
			first_hw = (int)i;
	}

	if (first_hw >= 0) {
		size_t per, nr_pass;

		if (budget < 2 || (nr_others && budget < 3))
			return nl_fail(d, -NL_E_LIMIT,
				       "%u hardware counter%s per group: too few to carry cycles and "
				       "instructions beside other events",
				       budget, budget == 1 ? "" : "s");
		if (cyc < 0 && (cyc = add_anchor(l, "cycles", &l->ev[first_hw], d)) < 0)
			return cyc;
		if (ins < 0 && (ins = add_anchor(l, "instructions", &l->ev[first_hw], d)) < 0)
			return ins;
		per = budget - 2;
		nr_pass = nr_others ? (nr_others + per - 1) / per : 1;
		if (nr_pass > NL_PASSES_MAX)
			return nl_fail(d, -NL_E_LIMIT,
				       "%zu events need %zu passes of %u counters; at most %d passes",
				       nr_others, nr_pass, budget, NL_PASSES_MAX);
		for (size_t p = 0, o = 0; p < nr_pass; p++) {
			struct nl_pass *ps = &plan->pass[p];

			ps->hw = true;
			ps->ev[ps->nr++] = (unsigned)cyc;	/* leader: a hardware event */
			ps->ev[ps->nr++] = (unsigned)ins;
			for (size_t k = 0; k < per && o < nr_others; k++)
				ps->ev[ps->nr++] = others[o++];
		}
		plan->nr = nr_pass;
	}

	/* software events need no counter: they ride in the first passes with room */
	for (size_t s = 0, p = 0; s < nr_soft; s++) {
		while (p < plan->nr && plan->pass[p].nr >= group_max)
			p++;
		if (p == plan->nr) {
			if (plan->nr >= NL_PASSES_MAX)
				return nl_fail(d, -NL_E_LIMIT, "too many events for %d passes",
					       NL_PASSES_MAX);
			plan->nr++;
		}
		plan->pass[p].ev[plan->pass[p].nr++] = soft[s];
	}
	if (!plan->nr)
		return nl_fail(d, -NL_E_EVENT, "no events to count");

	for (size_t i = 0; i < l->nr; i++) {
		plan->home[i] = 0;
		for (size_t p = plan->nr; p-- > 0;)
			for (size_t k = 0; k < plan->pass[p].nr; k++)
				if (plan->pass[p].ev[k] == i)
					plan->home[i] = (unsigned)p;
	}
	return 0;
}

/* ---- groups ------------------------------------------------------------------- */

#define NL_READ_FORMAT                                                                   \
	(PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |           \
	 PERF_FORMAT_TOTAL_TIME_RUNNING)

void nl_group_close(struct nl_group *g)
{
	for (size_t i = 0; i < g->nr; i++) {
		if (g->page[i])
			munmap(g->page[i], g->page_size);
		if (g->fd[i] >= 0)
			close(g->fd[i]);
		g->page[i] = NULL;
		g->fd[i] = -1;
	}
	g->nr = 0;
}

static int open_failed(struct nl_group *g, const struct nl_event *ev, const struct nl_group_opts *o,
		       int err, struct nl_diag *d)
{
	nl_group_close(g);
	if (ev->hw && (err == -ENOENT || err == -ENODEV || err == -EOPNOTSUPP))
		return nl_fail(d, -NL_E_NOPMU, "%s: %s (%s)", ev->name, strerror(-err),
			       nl_perf_open_hint(err));
	/* refused by policy: the counters are unusable here, not a bad input file */
	if (err == -EACCES || err == -EPERM)
		return nl_fail(d, -NL_E_NOPMU, "%s: perf_event_open: %s (%s)", ev->name,
			       strerror(-err), nl_perf_open_hint(err));
	if (err == -EINVAL && o->inherit)
		return nl_fail(d, err, "%s: perf_event_open: %s (%s; counting descendants with a "
				       "group read also needs a recent kernel)",
			       ev->name, strerror(-err), nl_perf_open_hint(err));
	return nl_fail(d, err, "%s: perf_event_open: %s (%s)", ev->name, strerror(-err),
		       nl_perf_open_hint(err));
}

int nl_group_open(struct nl_group *g, const struct nl_event_list *l, const struct nl_pass *pass,
		  const struct nl_group_opts *o, struct nl_diag *d)
{
	long ps = sysconf(_SC_PAGESIZE);

	memset(g, 0, sizeof(*g));
	for (size_t i = 0; i < NL_GROUP_MAX; i++)
		g->fd[i] = -1;
	g->page_size = ps > 0 ? (size_t)ps : 4096;
	if (!pass->nr || pass->nr > NL_GROUP_MAX)
		return nl_fail(d, -EINVAL, "a group needs 1 to %d events, not %zu", NL_GROUP_MAX,
			       pass->nr);

	for (size_t i = 0; i < pass->nr; i++) {
		const struct nl_event *ev;
		struct perf_event_attr attr;
		long fd;

		if (pass->ev[i] >= l->nr)
			return nl_fail(d, -EINVAL, "pass names event %u of %zu", pass->ev[i], l->nr);
		ev = &l->ev[pass->ev[i]];
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = ev->type;
		attr.config = ev->config;
		attr.config1 = ev->config1;
		attr.config2 = ev->config2;
		attr.exclude_user = ev->exclude_user;
		attr.exclude_kernel = ev->exclude_kernel;
		attr.exclude_hv = ev->exclude_hv;
		attr.read_format = NL_READ_FORMAT;
		attr.inherit = o->inherit;
		if (i == 0) {
			/* members follow the leader: only it is disabled and enabled */
			attr.disabled = 1;
			attr.enable_on_exec = o->enable_on_exec;
			attr.pinned = o->pinned;
		}
		fd = nl_perf_open(&attr, o->pid, o->cpu, i ? g->fd[0] : -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0)
			return open_failed(g, ev, o, -errno, d);
		g->fd[i] = (int)fd;
		g->ev[i] = pass->ev[i];
		g->nr = i + 1;
		if (ioctl(g->fd[i], PERF_EVENT_IOC_ID, &g->id[i])) {
			int err = -errno;

			nl_group_close(g);
			return nl_fail_errno(d, err, "%s: PERF_EVENT_IOC_ID", ev->name);
		}
		if (o->mmap && o->pid == 0) {
			void *p = mmap(NULL, g->page_size, PROT_READ, MAP_SHARED, g->fd[i], 0);

			/* no page just means read() instead of rdpmc */
			g->page[i] = p == MAP_FAILED ? NULL : p;
		}
	}
	g->rdpmc = o->mmap && o->pid == 0;
	for (size_t i = 0; i < g->nr; i++)
		if (!g->page[i] || !l->ev[g->ev[i]].hw)
			g->rdpmc = false;
	return 0;
}

static int group_ioctl(struct nl_group *g, unsigned long req)
{
	if (!g->nr)
		return -EBADF;
	if (ioctl(g->fd[0], req, PERF_IOC_FLAG_GROUP))
		return -errno;
	return 0;
}

int nl_group_enable(struct nl_group *g)
{
	return group_ioctl(g, PERF_EVENT_IOC_ENABLE);
}

int nl_group_disable(struct nl_group *g)
{
	return group_ioctl(g, PERF_EVENT_IOC_DISABLE);
}

int nl_group_reset(struct nl_group *g)
{
	return group_ioctl(g, PERF_EVENT_IOC_RESET);
}

int nl_group_parse(const uint64_t *buf, size_t nwords, const uint64_t *ids, size_t nr,
		   struct nl_group_values *v, struct nl_diag *d)
{
	bool seen[NL_GROUP_MAX] = { false };

	memset(v, 0, sizeof(*v));
	if (nr > NL_GROUP_MAX)
		return nl_fail(d, -EINVAL, "%zu members, at most %d", nr, NL_GROUP_MAX);
	if (nwords < 3)
		return nl_fail(d, -NL_E_FORMAT, "group read of %zu words: shorter than its header",
			       nwords);
	if (buf[0] != nr)
		return nl_fail(d, -NL_E_FORMAT, "group read holds %llu counters, the group has %zu",
			       (unsigned long long)buf[0], nr);
	if (nwords != 3 + 2 * nr)
		return nl_fail(d, -NL_E_FORMAT, "group read of %zu words, %zu expected for %zu counters",
			       nwords, 3 + 2 * nr, nr);
	v->time_enabled = buf[1];
	v->time_running = buf[2];
	if (v->time_running > v->time_enabled)
		return nl_fail(d, -NL_E_FORMAT, "time running %llu exceeds time enabled %llu",
			       (unsigned long long)v->time_running,
			       (unsigned long long)v->time_enabled);
	v->nr = nr;
	for (size_t k = 0; k < nr; k++) {
		uint64_t value = buf[3 + 2 * k], id = buf[4 + 2 * k];
		size_t m;

		for (m = 0; m < nr && ids[m] != id; m++)
			;
		if (m == nr)
			return nl_fail(d, -NL_E_FORMAT, "group read names unknown id %llu",
				       (unsigned long long)id);
		if (seen[m])
			return nl_fail(d, -NL_E_FORMAT, "group read names id %llu twice",
				       (unsigned long long)id);
		seen[m] = true;
		v->value[m] = value;
	}
	return 0;
}

int nl_group_read(struct nl_group *g, struct nl_group_values *v, struct nl_diag *d)
{
	uint64_t buf[3 + 2 * NL_GROUP_MAX];
	ssize_t n;

	if (!g->nr)
		return nl_fail(d, -EBADF, "group is not open");
	n = read(g->fd[0], buf, sizeof(buf));
	if (n < 0)
		return nl_fail_errno(d, -errno, "reading the counter group");
	if (n == 0)
		/* a pinned group the PMU could not hold is in error state: read() says EOF */
		return nl_fail(d, -EBUSY, "the pinned counter group could not be scheduled "
					  "(not enough free counters)");
	if (n % 8)
		return nl_fail(d, -NL_E_FORMAT, "group read of %zd bytes", n);
	return nl_group_parse(buf, (size_t)n / 8, g->id, g->nr, v, d);
}

double nl_values_running_pct(const struct nl_group_values *v)
{
	if (!v->time_enabled)
		return 100.0;
	return 100.0 * (double)v->time_running / (double)v->time_enabled;
}

double nl_values_scaled(const struct nl_group_values *v, size_t i)
{
	if (i >= v->nr || !v->time_running)
		return NAN;
	/* long double: value * enabled overflows 64 bits for long runs */
	return (double)((long double)v->value[i] * v->time_enabled / v->time_running);
}

uint64_t nl_pmc_count(int64_t offset, uint64_t raw, unsigned width)
{
	unsigned shift = width && width < 64 ? 64 - width : 0;
	int64_t pmc = (int64_t)(raw << shift) >> shift;

	return (uint64_t)offset + (uint64_t)pmc;
}

static inline uint64_t rdpmc(uint32_t counter)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return lo | (uint64_t)hi << 32;
}

#define barrier() __asm__ volatile("" ::: "memory")
#define lfence() __asm__ volatile("lfence" ::: "memory")

/* The seqlock read of the user page protocol; false when the event is not on a counter. */
static bool page_count(const volatile struct perf_event_mmap_page *pc, uint64_t *out)
{
	uint32_t seq, idx;
	uint64_t count;

	do {
		seq = pc->lock;
		barrier();
		idx = pc->index;
		if (!pc->cap_user_rdpmc || !idx)
			return false;
		/* rdpmc is not serialising: keep it from drifting into the code under test */
		lfence();
		count = nl_pmc_count(pc->offset, rdpmc(idx - 1), pc->pmc_width);
		lfence();
		barrier();
	} while (pc->lock != seq);
	*out = count;
	return true;
}

int nl_group_read_now(struct nl_group *g, uint64_t *values, bool *used_rdpmc)
{
	struct nl_group_values v;
	int ret;

	if (g->rdpmc) {
		size_t i;

		for (i = 0; i < g->nr; i++)
			if (!page_count(g->page[i], &values[i]))
				break;
		if (i == g->nr) {
			if (used_rdpmc)
				*used_rdpmc = true;
			return 0;
		}
	}
	if (used_rdpmc)
		*used_rdpmc = false;
	ret = nl_group_read(g, &v, NULL);
	if (ret)
		return ret;
	memcpy(values, v.value, g->nr * sizeof(*values));
	return 0;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int nl_group_read_cost(struct nl_group *g, unsigned reads, double *ns, bool *used_rdpmc)
{
	enum { BATCHES = 5 };
	uint64_t values[NL_GROUP_MAX];
	unsigned per = reads / BATCHES ? reads / BATCHES : 1;
	double best = INFINITY;
	bool fast = true;

	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns(), t;

		for (unsigned i = 0; i < per; i++) {
			bool r;
			int ret = nl_group_read_now(g, values, &r);

			if (ret)
				return ret;
			fast = fast && r;
		}
		t = (now_ns() - t0) / per;
		/* the fastest batch: interrupts and migrations only ever add */
		if (t < best)
			best = t;
	}
	*ns = best;
	if (used_rdpmc)
		*used_rdpmc = fast;
	return 0;
}
