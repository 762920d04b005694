/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_CPU_H
#define NOPLAB_CPU_H

/*
 * CPU identification from CPUID (and sysfs where present): what the NOP
 * question depends on: vendor/family/model, NOPL, the L1 instruction cache
 * and the L1 iTLB.
 */

#include <stdbool.h>
#include <stdint.h>

#include "noplab/diag.h"
#include "noplab/nops.h"

struct nl_cache_info {
	bool known;
	unsigned size_kib, ways, line, sets;
	bool fully_assoc;
	const char *source;	/* "cpuid 0x80000005", "cpuid 4", "sysfs" */
};

struct nl_tlb_info {
	bool known;
	unsigned entries_4k, ways_4k;	/* ways 0 = fully associative */
	unsigned entries_2m, ways_2m;
	const char *source;
};

struct nl_cpu {
	char vendor_id[13];
	enum nl_vendor vendor;
	unsigned family, model, stepping;	/* displayed values */
	unsigned signature;			/* CPUID.1:EAX */
	char brand[49];
	bool hypervisor;
	char hypervisor_id[13];
	bool nopl;
	const char *nopl_source;
	struct nl_cache_info l1i;
	struct nl_tlb_info itlb;
};

/* Supplies CPUID results; the real one executes the instruction, tests replay dumps. */
typedef void (*nl_cpuid_fn)(void *ctx, uint32_t leaf, uint32_t subleaf, uint32_t regs[4]);

void nl_cpuid_native(void *ctx, uint32_t leaf, uint32_t subleaf, uint32_t regs[4]);

/*
 * Identify a CPU.  sysfs_root is "/sys" for the running machine, or NULL to
 * use CPUID alone; cpuinfo_path is "/proc/cpuinfo" (for the kernel's nopl
 * flag) or NULL.
 */
int nl_cpu_identify_with(nl_cpuid_fn cpuid, void *ctx, const char *sysfs_root,
			 const char *cpuinfo_path, struct nl_cpu *cpu, struct nl_diag *d);
int nl_cpu_identify(struct nl_cpu *cpu, struct nl_diag *d);

void nl_cpu_signature(const struct nl_cpu *cpu, struct nl_cpu_sig *sig);

#endif
