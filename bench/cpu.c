// SPDX-License-Identifier: MIT
/*
 * CPU identification.  CPUID goes through a callback so that tests can
 * replay dumps of CPUs we do not have (the Sandy Bridge Xeon of the 2021
 * ideal_nops measurement, for one).
 */
#include <cpuid.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "noplab/cpu.h"

void nl_cpuid_native(void *ctx, uint32_t leaf, uint32_t subleaf, uint32_t regs[4])
{
	(void)ctx;
	__cpuid_count(leaf, subleaf, regs[0], regs[1], regs[2], regs[3]);
}

static void regs_str(char *dst, const uint32_t *words, int nr)
{
	memcpy(dst, words, (size_t)nr * 4);
	dst[nr * 4] = '\0';
}

/* Vendors pad brand and hypervisor strings with spaces on either side. */
static void trim(char *str)
{
	char *s = str;

	while (*s == ' ')
		s++;
	memmove(str, s, strlen(s) + 1);
	for (size_t n = strlen(str); n && str[n - 1] == ' '; n--)
		str[n - 1] = '\0';
}

static enum nl_vendor vendor_of(const char *id)
{
	if (!strcmp(id, "GenuineIntel"))
		return NL_VENDOR_INTEL;
	if (!strcmp(id, "AuthenticAMD"))
		return NL_VENDOR_AMD;
	if (!strcmp(id, "HygonGenuine"))
		return NL_VENDOR_HYGON;
	if (!strcmp(id, "CentaurHauls"))
		return NL_VENDOR_CENTAUR;
	if (!strcmp(id, "  Shanghai  "))
		return NL_VENDOR_ZHAOXIN;
	return NL_VENDOR_OTHER;
}

/* Deterministic cache parameters: Intel leaf 4 and AMD leaf 0x8000001d share a layout. */
static bool find_l1i_leaf(nl_cpuid_fn cpuid, void *ctx, uint32_t leaf, struct nl_cache_info *c)
{
	for (uint32_t sub = 0; sub < 16; sub++) {
		uint32_t r[4];

		cpuid(ctx, leaf, sub, r);
		unsigned type = r[0] & 0x1f, level = (r[0] >> 5) & 7;

		if (!type)
			return false;
		if (type != 2 || level != 1)
			continue;
		c->ways = ((r[1] >> 22) & 0x3ff) + 1;
		unsigned partitions = ((r[1] >> 12) & 0x3ff) + 1;
		c->line = (r[1] & 0xfff) + 1;
		c->sets = r[2] + 1;
		c->fully_assoc = r[0] & (1u << 9);
		c->size_kib = (unsigned)((uint64_t)c->ways * partitions * c->line * c->sets / 1024);
		c->known = true;
		return true;
	}
	return false;
}

static unsigned amd_assoc(unsigned v)
{
	return v == 0xff ? 0 : v;	/* 0xff: fully associative, reported as 0 ways */
}

static void amd_l1(nl_cpuid_fn cpuid, void *ctx, struct nl_cpu *cpu)
{
	uint32_t r[4];

	cpuid(ctx, 0x80000005, 0, r);
	/* EDX: L1 instruction cache; EBX/EAX: L1 iTLB for 4K and 2M/4M pages */
	if (r[3]) {
		cpu->l1i.known = true;
		cpu->l1i.size_kib = r[3] >> 24;
		cpu->l1i.ways = amd_assoc((r[3] >> 16) & 0xff);
		cpu->l1i.fully_assoc = ((r[3] >> 16) & 0xff) == 0xff;
		cpu->l1i.line = r[3] & 0xff;
		if (cpu->l1i.line && cpu->l1i.ways)
			cpu->l1i.sets = cpu->l1i.size_kib * 1024 / (cpu->l1i.line * cpu->l1i.ways);
		cpu->l1i.source = "cpuid 0x80000005";
	}
	if (r[1] || r[0]) {
		cpu->itlb.known = true;
		cpu->itlb.entries_4k = r[1] & 0xff;
		cpu->itlb.ways_4k = amd_assoc((r[1] >> 8) & 0xff);
		cpu->itlb.entries_2m = r[0] & 0xff;
		cpu->itlb.ways_2m = amd_assoc((r[0] >> 8) & 0xff);
		cpu->itlb.source = "cpuid 0x80000005";
	}
}

/* Intel leaf 0x18: deterministic address translation parameters. */
static void intel_itlb(nl_cpuid_fn cpuid, void *ctx, struct nl_cpu *cpu)
{
	uint32_t r[4];

	cpuid(ctx, 0x18, 0, r);
	uint32_t max_sub = r[0];

	for (uint32_t sub = 0; sub <= max_sub && sub < 32; sub++) {
		cpuid(ctx, 0x18, sub, r);
		unsigned type = r[3] & 0x1f, level = (r[3] >> 5) & 7;

		if (type != 2 || level != 1)	/* instruction TLB, level 1 */
			continue;
		unsigned ways = (r[1] >> 16) & 0xffff, sets = r[2];
		bool full = r[3] & (1u << 8);
		unsigned entries = ways * sets;

		if (r[1] & 1) {		/* 4K pages */
			cpu->itlb.entries_4k = entries;
			cpu->itlb.ways_4k = full ? 0 : ways;
		}
		if (r[1] & 6) {		/* 2M / 4M pages */
			cpu->itlb.entries_2m = entries;
			cpu->itlb.ways_2m = full ? 0 : ways;
		}
		cpu->itlb.known = true;
		cpu->itlb.source = "cpuid 0x18";
	}
}

static int read_sysfs_uint(const char *root, int index, const char *file, unsigned *out,
			   char *str, size_t strsize)
{
	char path[512];
	char buf[64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu0/cache/index%d/%s", root, index, file);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	if (str)
		snprintf(str, strsize, "%s", buf);
	if (out) {
		unsigned v;

		if (sscanf(buf, "%u", &v) != 1)
			return -EINVAL;
		*out = v;
	}
	return 0;
}

/* sysfs describes what the kernel was told; prefer it when CPUID hides the leaves. */
static void sysfs_l1i(const char *root, struct nl_cpu *cpu)
{
	for (int i = 0; i < 8; i++) {
		unsigned level, size, ways, line, sets;
		char type[32];

		if (read_sysfs_uint(root, i, "level", &level, NULL, 0))
			return;
		if (read_sysfs_uint(root, i, "type", NULL, type, sizeof(type)) || level != 1 ||
		    strcmp(type, "Instruction"))
			continue;
		if (read_sysfs_uint(root, i, "size", &size, NULL, 0) ||
		    read_sysfs_uint(root, i, "ways_of_associativity", &ways, NULL, 0) ||
		    read_sysfs_uint(root, i, "coherency_line_size", &line, NULL, 0) ||
		    read_sysfs_uint(root, i, "number_of_sets", &sets, NULL, 0))
			return;
		cpu->l1i = (struct nl_cache_info){ .known = true, .size_kib = size, .ways = ways,
						   .line = line, .sets = sets, .source = "sysfs" };
		return;
	}
}

static bool cpuinfo_has_flag(const char *path, const char *flag)
{
	char line[8192];
	bool found = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		char *save = NULL;
		char *colon = strchr(line, ':');

		for (char *tok = strtok_r(colon ? colon + 1 : line, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save))
			if (!strcmp(tok, flag))
				found = true;
		break;
	}
	fclose(f);
	return found;
}

int nl_cpu_identify_with(nl_cpuid_fn cpuid, void *ctx, const char *sysfs_root,
			 const char *cpuinfo_path, struct nl_cpu *cpu, struct nl_diag *d)
{
	uint32_t r[4], max_leaf, max_ext;

	memset(cpu, 0, sizeof(*cpu));
	cpuid(ctx, 0, 0, r);
	max_leaf = r[0];
	uint32_t vid[3] = { r[1], r[3], r[2] };

	regs_str(cpu->vendor_id, vid, 3);
	cpu->vendor = vendor_of(cpu->vendor_id);
	if (max_leaf < 1)
		return nl_fail(d, -NL_E_UNSUPPORTED, "CPUID leaf 1 is not available");

	cpuid(ctx, 1, 0, r);
	cpu->signature = r[0];
	unsigned base_family = (r[0] >> 8) & 0xf, base_model = (r[0] >> 4) & 0xf;
	unsigned ext_family = (r[0] >> 20) & 0xff, ext_model = (r[0] >> 16) & 0xf;

	cpu->stepping = r[0] & 0xf;
	cpu->family = base_family == 0xf ? base_family + ext_family : base_family;
	/* Intel folds the extended model in for families 6 and 15; AMD from family 15 up. */
	if (base_family == 0xf || (base_family == 6 && cpu->vendor != NL_VENDOR_AMD))
		cpu->model = (ext_model << 4) | base_model;
	else
		cpu->model = base_model;
	cpu->hypervisor = r[2] & (1u << 31);
	if (cpu->hypervisor) {
		cpuid(ctx, 0x40000000, 0, r);
		uint32_t hv[3] = { r[1], r[2], r[3] };

		regs_str(cpu->hypervisor_id, hv, 3);
		trim(cpu->hypervisor_id);
	}

	cpuid(ctx, 0x80000000, 0, r);
	max_ext = r[0];
	if (max_ext >= 0x80000004) {
		uint32_t b[12];

		for (uint32_t i = 0; i < 3; i++)
			cpuid(ctx, 0x80000002 + i, 0, b + 4 * i);
		regs_str(cpu->brand, b, 12);
		trim(cpu->brand);
	}

	/*
	 * CPUID has no NOPL bit: the SDM promises 0f 1f /0 on family 6 and 15,
	 * and the kernel sets X86_FEATURE_NOPL on every x86_64 CPU.
	 */
	if (cpuinfo_path && cpuinfo_has_flag(cpuinfo_path, "nopl")) {
		cpu->nopl = true;
		cpu->nopl_source = "/proc/cpuinfo flag nopl";
	} else {
		cpu->nopl = base_family == 6 || base_family == 0xf;
		cpu->nopl_source = "SDM: CPUID family 6 or 15";
	}

	if (cpu->vendor == NL_VENDOR_AMD || cpu->vendor == NL_VENDOR_HYGON) {
		if (max_ext >= 0x8000001d && find_l1i_leaf(cpuid, ctx, 0x8000001d, &cpu->l1i))
			cpu->l1i.source = "cpuid 0x8000001d";
		if (max_ext >= 0x80000005) {
			struct nl_cache_info keep = cpu->l1i;

			amd_l1(cpuid, ctx, cpu);
			if (keep.known)
				cpu->l1i = keep;
		}
	} else {
		if (max_leaf >= 4 && find_l1i_leaf(cpuid, ctx, 4, &cpu->l1i))
			cpu->l1i.source = "cpuid 4";
		if (max_leaf >= 0x18)
			intel_itlb(cpuid, ctx, cpu);
	}
	if (sysfs_root)
		sysfs_l1i(sysfs_root, cpu);
	return 0;
}

int nl_cpu_identify(struct nl_cpu *cpu, struct nl_diag *d)
{
	return nl_cpu_identify_with(nl_cpuid_native, NULL, "/sys", "/proc/cpuinfo", cpu, d);
}

void nl_cpu_signature(const struct nl_cpu *cpu, struct nl_cpu_sig *sig)
{
	memset(sig, 0, sizeof(*sig));
	sig->vendor = cpu->vendor;
	sig->family = cpu->family;
	sig->model = cpu->model;
	sig->has_nopl = cpu->nopl;
	/* X86_FEATURE_K8/K7 are synthetic: the kernel sets them for AMD family 15 / 6 */
	sig->has_k8 = cpu->vendor == NL_VENDOR_AMD && cpu->family == 0xf;
	sig->has_k7 = cpu->vendor == NL_VENDOR_AMD && cpu->family == 6;
}
