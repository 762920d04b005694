// SPDX-License-Identifier: MIT
/*
 * The NOP catalogue: every byte sequence noplab knows by name, with where it
 * comes from.  Byte tables follow ../shared/reference/kernel-facts.md; the
 * tests check each entry against Capstone and against binutils.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "noplab/nops.h"

/* validity: BOTH (a NOP in either mode) or ONLY32 (the lea/mov forms) */
#define NOP64_BOTH true
#define NOP32_BOTH true
#define NOP64_ONLY32 false
#define NOP32_ONLY32 true

#define E(fam, nm, canon, insns, pfx, validity, flg, src, ...)                          \
	{ .family = fam, .name = nm, .canonical = canon,                                \
	  .len = sizeof((const uint8_t[]){ __VA_ARGS__ }), .bytes = { __VA_ARGS__ },      \
	  .nr_insns = insns, .max_prefixes = pfx, .nop64 = NOP64_##validity,             \
	  .nop32 = NOP32_##validity, .flags = flg, .source = src }

#define V510 "Linux v5.10 arch/x86/include/asm/nops.h "
#define V65 "Linux v6.5 arch/x86/include/asm/nops.h (df25edbac31e) "
#define V513 "Linux v5.13 arch/x86/include/asm/nops.h (a89dfde3dc3c) "
#define SDM "Intel SDM Vol. 2B NOP, Table 4-12, "
#define GAS "GNU as 2.40 tc-i386.c alt_patt, "
#define LLVM "LLVM X86AsmBackend::writeNopData, "

static const struct nl_nop catalogue[] = {
	/* p6: 0f 1f /0 (NOPL); the table every x86_64 CPU from K10 / Ivy Bridge got */
	E(NL_FAM_P6, "p6:1", "nop1", 1, 0, BOTH, 0, V510 "P6_NOP1",
	  0x90),
	E(NL_FAM_P6, "p6:2", "nop2", 1, 1, BOTH, 0, V510 "P6_NOP2",
	  0x66, 0x90),
	E(NL_FAM_P6, "p6:3", "nopl3", 1, 0, BOTH, 0, V510 "P6_NOP3",
	  0x0f, 0x1f, 0x00),
	E(NL_FAM_P6, "p6:4", "nopl4", 1, 0, BOTH, 0, V510 "P6_NOP4",
	  0x0f, 0x1f, 0x40, 0x00),
	E(NL_FAM_P6, "p6:5", "nopl5", 1, 0, BOTH, 0, V510 "P6_NOP5",
	  0x0f, 0x1f, 0x44, 0x00, 0x00),
	E(NL_FAM_P6, "p6:6", "nopw6", 1, 1, BOTH, 0, V510 "P6_NOP6",
	  0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00),
	E(NL_FAM_P6, "p6:7", "nopl7", 1, 0, BOTH, 0, V510 "P6_NOP7",
	  0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_P6, "p6:8", "nopl8", 1, 0, BOTH, 0, V510 "P6_NOP8",
	  0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_P6, "p6:atomic5", "nopl5", 1, 0, BOTH, NL_NOPF_ATOMIC, V510 "P6_NOP5_ATOMIC",
	  0x0f, 0x1f, 0x44, 0x00, 0x00),

	/* k8: 0x66 operand-size prefixes on 90; the two-instruction 5..8 forms are why *_ATOMIC exists */
	E(NL_FAM_K8, "k8:1", "nop1", 1, 0, BOTH, 0, V510 "K8_NOP1",
	  0x90),
	E(NL_FAM_K8, "k8:2", "nop2", 1, 1, BOTH, 0, V510 "K8_NOP2",
	  0x66, 0x90),
	E(NL_FAM_K8, "k8:3", "nop3", 1, 2, BOTH, 0, V510 "K8_NOP3",
	  0x66, 0x66, 0x90),
	E(NL_FAM_K8, "k8:4", "nop4", 1, 3, BOTH, 0, V510 "K8_NOP4",
	  0x66, 0x66, 0x66, 0x90),
	E(NL_FAM_K8, "k8:5", "nop3+nop2", 2, 2, BOTH, 0, V510 "K8_NOP5",
	  0x66, 0x66, 0x90, 0x66, 0x90),
	E(NL_FAM_K8, "k8:6", "nop3+nop3", 2, 2, BOTH, 0, V510 "K8_NOP6",
	  0x66, 0x66, 0x90, 0x66, 0x66, 0x90),
	E(NL_FAM_K8, "k8:7", "nop4+nop3", 2, 3, BOTH, 0, V510 "K8_NOP7",
	  0x66, 0x66, 0x66, 0x90, 0x66, 0x66, 0x90),
	E(NL_FAM_K8, "k8:8", "nop4+nop4", 2, 3, BOTH, 0, V510 "K8_NOP8",
	  0x66, 0x66, 0x66, 0x90, 0x66, 0x66, 0x66, 0x90),
	E(NL_FAM_K8, "k8:atomic5", "nop5", 1, 4, BOTH, NL_NOPF_ATOMIC, V510 "K8_NOP5_ATOMIC",
	  0x66, 0x66, 0x66, 0x66, 0x90),

	/* k7: lea/mov on 32-bit registers; writing EAX zero-extends RAX, so not NOPs in 64-bit mode */
	E(NL_FAM_K7, "k7:1", "nop1", 1, 0, BOTH, 0, V510 "K7_NOP1",
	  0x90),
	E(NL_FAM_K7, "k7:2", "mov2_eax", 1, 0, ONLY32, 0, V510 "K7_NOP2",
	  0x8b, 0xc0),
	E(NL_FAM_K7, "k7:3", "lea3_eax", 1, 0, ONLY32, 0, V510 "K7_NOP3",
	  0x8d, 0x04, 0x20),
	E(NL_FAM_K7, "k7:4", "lea4_eax", 1, 0, ONLY32, 0, V510 "K7_NOP4",
	  0x8d, 0x44, 0x20, 0x00),
	E(NL_FAM_K7, "k7:5", "lea4_eax+nop1", 2, 0, ONLY32, 0, V510 "K7_NOP5",
	  0x8d, 0x44, 0x20, 0x00, 0x90),
	E(NL_FAM_K7, "k7:6", "lea6_eax", 1, 0, ONLY32, 0, V510 "K7_NOP6",
	  0x8d, 0x80, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_K7, "k7:7", "lea7_eax", 1, 0, ONLY32, 0, V510 "K7_NOP7",
	  0x8d, 0x04, 0x05, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_K7, "k7:8", "lea7_eax+nop1", 2, 0, ONLY32, 0, V510 "K7_NOP8",
	  0x8d, 0x04, 0x05, 0x00, 0x00, 0x00, 0x00, 0x90),
	E(NL_FAM_K7, "k7:atomic5", "ds_lea5_eax", 1, 1, ONLY32, NL_NOPF_ATOMIC, V510 "K7_NOP5_ATOMIC",
	  0x3e, 0x8d, 0x44, 0x20, 0x00),

	/* generic (intel_nops): lea/mov on ESI; 32-bit only for the same reason as k7 */
	E(NL_FAM_GENERIC, "generic:1", "nop1", 1, 0, BOTH, 0, V510 "GENERIC_NOP1",
	  0x90),
	E(NL_FAM_GENERIC, "generic:2", "mov2_esi", 1, 0, ONLY32, 0, V510 "GENERIC_NOP2",
	  0x89, 0xf6),
	E(NL_FAM_GENERIC, "generic:3", "lea3_esi", 1, 0, ONLY32, 0, V510 "GENERIC_NOP3",
	  0x8d, 0x76, 0x00),
	E(NL_FAM_GENERIC, "generic:4", "lea4_esi", 1, 0, ONLY32, 0, V510 "GENERIC_NOP4",
	  0x8d, 0x74, 0x26, 0x00),
	E(NL_FAM_GENERIC, "generic:5", "nop1+lea4_esi", 2, 0, ONLY32, 0, V510 "GENERIC_NOP5",
	  0x90, 0x8d, 0x74, 0x26, 0x00),
	E(NL_FAM_GENERIC, "generic:6", "lea6_esi", 1, 0, ONLY32, 0, V510 "GENERIC_NOP6",
	  0x8d, 0xb6, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_GENERIC, "generic:7", "lea7_esi", 1, 0, ONLY32, 0, V510 "GENERIC_NOP7",
	  0x8d, 0xb4, 0x26, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_GENERIC, "generic:8", "nop1+lea7_esi", 2, 0, ONLY32, 0, V510 "GENERIC_NOP8",
	  0x90, 0x8d, 0xb4, 0x26, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_GENERIC, "generic:atomic5", "ds_lea5_esi", 1, 1, ONLY32, NL_NOPF_ATOMIC, V510 "GENERIC_NOP5_ATOMIC",
	  0x3e, 0x8d, 0x74, 0x26, 0x00),

	/* x86_nops: today's fixed tables, one instruction each, at most 3 prefixes */
	E(NL_FAM_X86_NOPS, "x86_nops:1", "nop1", 1, 0, BOTH, 0, V513 "BYTES_NOP1",
	  0x90),
	E(NL_FAM_X86_NOPS, "x86_nops:2", "nop2", 1, 1, BOTH, 0, V513 "BYTES_NOP2",
	  0x66, 0x90),
	E(NL_FAM_X86_NOPS, "x86_nops:3", "nopl3", 1, 0, BOTH, 0, V513 "BYTES_NOP3",
	  0x0f, 0x1f, 0x00),
	E(NL_FAM_X86_NOPS, "x86_nops:4", "nopl4", 1, 0, BOTH, 0, V513 "BYTES_NOP4",
	  0x0f, 0x1f, 0x40, 0x00),
	E(NL_FAM_X86_NOPS, "x86_nops:5", "nopl5", 1, 0, BOTH, 0, V513 "BYTES_NOP5 (the ftrace NOP)",
	  0x0f, 0x1f, 0x44, 0x00, 0x00),
	E(NL_FAM_X86_NOPS, "x86_nops:6", "nopw6", 1, 1, BOTH, 0, V513 "BYTES_NOP6",
	  0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00),
	E(NL_FAM_X86_NOPS, "x86_nops:7", "nopl7", 1, 0, BOTH, 0, V513 "BYTES_NOP7",
	  0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_X86_NOPS, "x86_nops:8", "nopl8", 1, 0, BOTH, 0, V513 "BYTES_NOP8",
	  0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_X86_NOPS, "x86_nops:9", "cs_nopl9", 1, 1, BOTH, 0, V65 "BYTES_NOP9",
	  0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_X86_NOPS, "x86_nops:10", "cs_nopw10", 1, 2, BOTH, 0, V65 "BYTES_NOP10",
	  0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_X86_NOPS, "x86_nops:11", "cs_nopw11", 1, 3, BOTH, 0, V65 "BYTES_NOP11",
	  0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_X86_NOPS, "x86_nops:1/32", "nop1", 1, 0, BOTH, NL_NOPF_TABLE32, V513 "BYTES_NOP1 (32-bit)",
	  0x90),
	E(NL_FAM_X86_NOPS, "x86_nops:2/32", "mov2_esi", 1, 0, ONLY32, NL_NOPF_TABLE32, V513 "BYTES_NOP2 (32-bit)",
	  0x89, 0xf6),
	E(NL_FAM_X86_NOPS, "x86_nops:3/32", "lea3_esi", 1, 0, ONLY32, NL_NOPF_TABLE32, V513 "BYTES_NOP3 (32-bit)",
	  0x8d, 0x76, 0x00),
	E(NL_FAM_X86_NOPS, "x86_nops:4/32", "lea4_esi", 1, 0, ONLY32, NL_NOPF_TABLE32, V513 "BYTES_NOP4 (32-bit)",
	  0x8d, 0x74, 0x26, 0x00),
	E(NL_FAM_X86_NOPS, "x86_nops:5/32", "ds_lea5_esi", 1, 1, ONLY32, NL_NOPF_TABLE32, V513 "BYTES_NOP5 (32-bit, the ftrace NOP)",
	  0x3e, 0x8d, 0x74, 0x26, 0x00),
	E(NL_FAM_X86_NOPS, "x86_nops:6/32", "lea6_esi", 1, 0, ONLY32, NL_NOPF_TABLE32, V513 "BYTES_NOP6 (32-bit)",
	  0x8d, 0xb6, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_X86_NOPS, "x86_nops:7/32", "lea7_esi", 1, 0, ONLY32, NL_NOPF_TABLE32, V513 "BYTES_NOP7 (32-bit)",
	  0x8d, 0xb4, 0x26, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_X86_NOPS, "x86_nops:8/32", "ds_lea8_esi", 1, 1, ONLY32, NL_NOPF_TABLE32, V513 "BYTES_NOP8 (32-bit)",
	  0x3e, 0x8d, 0xb4, 0x26, 0x00, 0x00, 0x00, 0x00),

	/* sdm: the architectural recommendation */
	E(NL_FAM_SDM, "sdm:1", "nop1", 1, 0, BOTH, 0, SDM "1 byte",
	  0x90),
	E(NL_FAM_SDM, "sdm:2", "nop2", 1, 1, BOTH, 0, SDM "2 bytes",
	  0x66, 0x90),
	E(NL_FAM_SDM, "sdm:3", "nopl3", 1, 0, BOTH, 0, SDM "3 bytes",
	  0x0f, 0x1f, 0x00),
	E(NL_FAM_SDM, "sdm:4", "nopl4", 1, 0, BOTH, 0, SDM "4 bytes",
	  0x0f, 0x1f, 0x40, 0x00),
	E(NL_FAM_SDM, "sdm:5", "nopl5", 1, 0, BOTH, 0, SDM "5 bytes",
	  0x0f, 0x1f, 0x44, 0x00, 0x00),
	E(NL_FAM_SDM, "sdm:6", "nopw6", 1, 1, BOTH, 0, SDM "6 bytes",
	  0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00),
	E(NL_FAM_SDM, "sdm:7", "nopl7", 1, 0, BOTH, 0, SDM "7 bytes",
	  0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_SDM, "sdm:8", "nopl8", 1, 0, BOTH, 0, SDM "8 bytes",
	  0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_SDM, "sdm:9", "nopw9", 1, 1, BOTH, 0, SDM "9 bytes",
	  0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),

	/* gas: .p2align/.nops padding; 12..15 are the 11-byte NOP followed by the remainder */
	E(NL_FAM_GAS, "gas:1", "nop1", 1, 0, BOTH, 0, GAS "1 byte",
	  0x90),
	E(NL_FAM_GAS, "gas:2", "nop2", 1, 1, BOTH, 0, GAS "2 bytes",
	  0x66, 0x90),
	E(NL_FAM_GAS, "gas:3", "nopl3", 1, 0, BOTH, 0, GAS "3 bytes",
	  0x0f, 0x1f, 0x00),
	E(NL_FAM_GAS, "gas:4", "nopl4", 1, 0, BOTH, 0, GAS "4 bytes",
	  0x0f, 0x1f, 0x40, 0x00),
	E(NL_FAM_GAS, "gas:5", "nopl5", 1, 0, BOTH, 0, GAS "5 bytes",
	  0x0f, 0x1f, 0x44, 0x00, 0x00),
	E(NL_FAM_GAS, "gas:6", "nopw6", 1, 1, BOTH, 0, GAS "6 bytes",
	  0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00),
	E(NL_FAM_GAS, "gas:7", "nopl7", 1, 0, BOTH, 0, GAS "7 bytes",
	  0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_GAS, "gas:8", "nopl8", 1, 0, BOTH, 0, GAS "8 bytes",
	  0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_GAS, "gas:9", "nopw9", 1, 1, BOTH, 0, GAS "9 bytes",
	  0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_GAS, "gas:10", "cs_nopw10", 1, 2, BOTH, 0, GAS "10 bytes",
	  0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_GAS, "gas:11", "cs_nopw11", 1, 3, BOTH, 0, GAS "11 bytes (the .nops limit in 64-bit mode)",
	  0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_GAS, "gas:12", "cs_nopw11+nop1", 2, 3, BOTH, NL_NOPF_COMPOSED, GAS "12 bytes = 11 + 1 (largest first)",
	  0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, 0x90),
	E(NL_FAM_GAS, "gas:13", "cs_nopw11+nop2", 2, 3, BOTH, NL_NOPF_COMPOSED, GAS "13 bytes = 11 + 2 (largest first)",
	  0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, 0x66, 0x90),
	E(NL_FAM_GAS, "gas:14", "cs_nopw11+nopl3", 2, 3, BOTH, NL_NOPF_COMPOSED, GAS "14 bytes = 11 + 3 (largest first)",
	  0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0f, 0x1f, 0x00),
	E(NL_FAM_GAS, "gas:15", "cs_nopw11+nopl4", 2, 3, BOTH, NL_NOPF_COMPOSED, GAS "15 bytes = 11 + 4 (largest first)",
	  0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0f, 0x1f, 0x40, 0x00),

	/* llvm: the integrated assembler's default longest NOP, and the long form for Zen/Skylake tuning */
	E(NL_FAM_LLVM, "llvm:10", "cs_nopw10", 1, 2, BOTH, 0, LLVM "default getMaximumNopSize() 10",
	  0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	E(NL_FAM_LLVM, "llvm:15", "cs_nopw15", 1, 7, BOTH, 0, LLVM "TuningFast15ByteNOP (skylake, znver3)",
	  0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),

	/* ibt_poison: what the kernel writes over a sealed ENDBR64 */
	E(NL_FAM_IBT_POISON, "ibt_poison:osp", "nopw4", 1, 1, BOTH, 0, "Linux v5.18 arch/x86/include/asm/ibt.h IBT seal poison (osp nopl (%rax))",
	  0x66, 0x0f, 0x1f, 0x00),
	E(NL_FAM_IBT_POISON, "ibt_poison:d6", "nopl4_d6", 1, 0, BOTH, 0, "Linux 2025 FineIBT rework, asm/ibt.h seal poison nopl -0x2a(%rax) (release unconfirmed)",
	  0x0f, 0x1f, 0x40, 0xd6),
};

/*
 * single, jmp and int3 are regular enough to generate; keeping them in the
 * same array shape lets every consumer iterate one table.
 */
#define NR_GEN NL_NOP_MAX_BYTES	/* lengths 1..16 (jmp: 2..16) */
#define NR_GENERATED (3 * NR_GEN - 1)
static struct nl_nop generated[NR_GENERATED];
static char gen_names[NR_GENERATED][2][24];

static struct nl_nop all[sizeof(catalogue) / sizeof(catalogue[0]) + NR_GENERATED];
static size_t nr_all;
static pthread_once_t all_once = PTHREAD_ONCE_INIT;

static void fill_generated(void)
{
	size_t g = 0;

	for (unsigned len = 1; len <= NR_GEN; len++, g++) {
		struct nl_nop *n = &generated[g];

		snprintf(gen_names[g][0], sizeof(gen_names[g][0]), "single:%u", len);
		snprintf(gen_names[g][1], sizeof(gen_names[g][1]), len == 1 ? "nop1" : "nop1x%u", len);
		*n = (struct nl_nop){ .family = NL_FAM_SINGLE, .name = gen_names[g][0],
				      .canonical = gen_names[g][1], .len = len, .nr_insns = len,
				      .nop64 = true, .nop32 = true,
				      .source = "runs of 90 (gcc -fpatchable-function-entry, CALL_PADDING)" };
		memset(n->bytes, 0x90, len);
	}
	for (unsigned len = 2; len <= NR_GEN; len++, g++) {
		struct nl_nop *n = &generated[g];

		snprintf(gen_names[g][0], sizeof(gen_names[g][0]), "jmp:%u", len);
		if (len == 2)
			snprintf(gen_names[g][1], sizeof(gen_names[g][1]), "jmp2");
		else
			snprintf(gen_names[g][1], sizeof(gen_names[g][1]), "jmp2+int3x%u", len - 2);
		*n = (struct nl_nop){ .family = NL_FAM_JMP, .name = gen_names[g][0],
				      .canonical = gen_names[g][1], .len = len, .nr_insns = 1,
				      .nop64 = true, .nop32 = true, .flags = NL_NOPF_JUMP,
				      .source = "Linux v6.5 arch/x86/kernel/alternative.c add_nop() (6c480f222128)" };
		n->bytes[0] = 0xeb;
		n->bytes[1] = (uint8_t)(len - 2);
		memset(n->bytes + 2, 0xcc, len - 2);
	}
	for (unsigned len = 1; len <= NR_GEN; len++, g++) {
		struct nl_nop *n = &generated[g];

		snprintf(gen_names[g][0], sizeof(gen_names[g][0]), "int3:%u", len);
		snprintf(gen_names[g][1], sizeof(gen_names[g][1]), len == 1 ? "int3" : "int3x%u", len);
		*n = (struct nl_nop){ .family = NL_FAM_INT3, .name = gen_names[g][0],
				      .canonical = gen_names[g][1], .len = len, .nr_insns = len,
				      .flags = NL_NOPF_FILL,
				      .source = "linker and kernel fill 0xcc (vmlinux.lds.S), never executed" };
		memset(n->bytes, 0xcc, len);
	}
}

static void build_all(void)
{
	size_t fixed = sizeof(catalogue) / sizeof(catalogue[0]);

	fill_generated();
	memcpy(all, catalogue, sizeof(catalogue));
	memcpy(all + fixed, generated, sizeof(generated));
	nr_all = fixed + sizeof(generated) / sizeof(generated[0]);
}

const struct nl_nop *nl_nop_catalogue(size_t *nr)
{
	/* Constant once built; pthread_once makes the first build safe from any thread. */
	pthread_once(&all_once, build_all);
	if (nr)
		*nr = nr_all;
	return all;
}

static const char *const family_names[NL_NR_FAMILIES] = {
	[NL_FAM_P6] = "p6",	     [NL_FAM_K8] = "k8",	 [NL_FAM_K7] = "k7",
	[NL_FAM_GENERIC] = "generic", [NL_FAM_X86_NOPS] = "x86_nops", [NL_FAM_SDM] = "sdm",
	[NL_FAM_GAS] = "gas",	     [NL_FAM_LLVM] = "llvm",	 [NL_FAM_SINGLE] = "single",
	[NL_FAM_JMP] = "jmp",	     [NL_FAM_INT3] = "int3",	 [NL_FAM_IBT_POISON] = "ibt_poison",
};

const char *nl_nop_family_name(enum nl_nop_family fam)
{
	return (unsigned)fam < NL_NR_FAMILIES ? family_names[fam] : "?";
}

int nl_nop_family_by_name(const char *name)
{
	for (int f = 0; f < NL_NR_FAMILIES; f++)
		if (!strcmp(name, family_names[f]))
			return f;
	return -1;
}

const struct nl_nop *nl_nop_find(const char *name)
{
	size_t nr;
	const struct nl_nop *c = nl_nop_catalogue(&nr);

	for (size_t i = 0; i < nr; i++)
		if (!strcmp(c[i].name, name))
			return &c[i];
	return NULL;
}

const struct nl_nop *nl_nop_find_len(enum nl_nop_family fam, unsigned len, bool table32)
{
	size_t nr;
	const struct nl_nop *c = nl_nop_catalogue(&nr);

	for (size_t i = 0; i < nr; i++) {
		if (c[i].family != fam || c[i].len != len || (c[i].flags & NL_NOPF_ATOMIC))
			continue;
		if (!!(c[i].flags & NL_NOPF_TABLE32) != table32)
			continue;
		return &c[i];
	}
	return NULL;
}

uint32_t nl_nop_families_of(const uint8_t *p, size_t len)
{
	size_t nr;
	const struct nl_nop *c = nl_nop_catalogue(&nr);
	uint32_t mask = 0;

	for (size_t i = 0; i < nr; i++)
		if (c[i].len == len && !memcmp(c[i].bytes, p, len))
			mask |= 1u << c[i].family;
	return mask;
}

const struct nl_nop *nl_nop_lookup(const uint8_t *p, size_t len)
{
	size_t nr;
	const struct nl_nop *c = nl_nop_catalogue(&nr);

	for (size_t i = 0; i < nr; i++)
		if (c[i].len == len && !memcmp(c[i].bytes, p, len))
			return &c[i];
	return NULL;
}

char *nl_nop_families_str(uint32_t mask, char *buf, size_t size)
{
	size_t used = 0;

	if (!size)
		return buf;
	buf[0] = '\0';
	for (int f = 0; f < NL_NR_FAMILIES; f++) {
		if (!(mask & (1u << f)))
			continue;
		int n = snprintf(buf + used, size - used, "%s%s", used ? "," : "", family_names[f]);
		if (n < 0 || (size_t)n >= size - used)
			break;
		used += (size_t)n;
	}
	return buf;
}
