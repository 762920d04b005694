/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_NOPS_H
#define NOPLAB_NOPS_H

/*
 * The x86 NOP catalogue and the table-driven recognizer.
 *
 * The catalogue is one C table (nops/catalogue.c) that the docs, the
 * recognizer, the scanner and the benchmark generator all read.  The
 * recognizer does not use Capstone: Capstone 4.0.2 rejects valid hint-NOP
 * forms (0f 1f c0, 0f 1e fa without f3), and the scanner needs a decoder it
 * can run over megabytes of padding quickly.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum nl_mode { NL_MODE_32 = 32, NL_MODE_64 = 64 };

enum nl_nop_family {
	NL_FAM_P6,
	NL_FAM_K8,
	NL_FAM_K7,
	NL_FAM_GENERIC,
	NL_FAM_X86_NOPS,
	NL_FAM_SDM,
	NL_FAM_GAS,
	NL_FAM_LLVM,
	NL_FAM_SINGLE,
	NL_FAM_JMP,
	NL_FAM_INT3,
	NL_FAM_IBT_POISON,
	NL_NR_FAMILIES
};

#define NL_NOP_MAX_BYTES 16

enum nl_nop_flags {
	NL_NOPF_ATOMIC = 1 << 0,   /* a *_NOP5_ATOMIC entry: one instruction by design */
	NL_NOPF_COMPOSED = 1 << 1, /* built from shorter entries by the producer's rule */
	NL_NOPF_JUMP = 1 << 2,     /* a jump over fill that never executes */
	NL_NOPF_FILL = 1 << 3,     /* trap fill: padding that must never execute */
	NL_NOPF_TABLE32 = 1 << 4,  /* from a table the kernel uses only for 32-bit code */
};

struct nl_nop {
	enum nl_nop_family family;
	const char *name;	/* "<family>:<len>", "k8:atomic5", "x86_nops:5/32" */
	const char *canonical;	/* names the byte string: "nopl5", "nop3+nop2" */
	uint8_t len;
	uint8_t bytes[NL_NOP_MAX_BYTES];
	uint8_t nr_insns;	/* instructions the bytes decode to */
	uint8_t max_prefixes;	/* most legacy+REX prefixes on one instruction */
	bool nop64;		/* executes with no architectural effect in 64-bit mode */
	bool nop32;		/* ... in 32-bit mode */
	unsigned flags;		/* enum nl_nop_flags */
	const char *source;
};

/* The whole catalogue, in documentation order. */
const struct nl_nop *nl_nop_catalogue(size_t *nr);

const char *nl_nop_family_name(enum nl_nop_family fam);
/* Returns the family or -1 for an unknown name. */
int nl_nop_family_by_name(const char *name);

/* "p6:5", "k8:atomic5", "x86_nops:11", "x86_nops:5/32"; NULL when unknown. */
const struct nl_nop *nl_nop_find(const char *name);
/* The entry of a family with the given length (plain, not the atomic one). */
const struct nl_nop *nl_nop_find_len(enum nl_nop_family fam, unsigned len, bool table32);

/* Every family that has an entry of exactly these bytes, as a bitmask of 1u << family. */
uint32_t nl_nop_families_of(const uint8_t *p, size_t len);
/* First catalogue entry with exactly these bytes, or NULL. */
const struct nl_nop *nl_nop_lookup(const uint8_t *p, size_t len);

/* Writes "p6,sdm,x86_nops,gas" for a family mask; returns buf. */
char *nl_nop_families_str(uint32_t mask, char *buf, size_t size);

/* ---- recognizer: one instruction ---- */

enum nl_nop_kind {
	NL_NOPK_NONE,		/* not a NOP (see why) */
	NL_NOPK_CATALOGUE,	/* a NOP whose bytes are a catalogue entry */
	NL_NOPK_OTHER,		/* architecturally a NOP, outside the catalogue */
	NL_NOPK_WRONG_MODE,	/* a NOP only in 32-bit mode, found in 64-bit code */
};

struct nl_nop_id {
	enum nl_nop_kind kind;
	uint8_t len;		/* bytes of the instruction; 0 when none was recognised */
	uint8_t nr_prefixes;
	uint32_t families;	/* families with an entry of exactly these bytes */
	const struct nl_nop *entry; /* first such entry, or NULL */
	char name[24];		/* canonical name; for OTHER a descriptive form name */
	const char *why;	/* for NONE / WRONG_MODE: what the bytes are instead */
};

/*
 * Identify the instruction at p (avail bytes readable) in the given mode.
 * Returns id->kind.  Never reads past avail.
 */
enum nl_nop_kind nl_nop_recognize(const uint8_t *p, size_t avail, enum nl_mode mode,
				  struct nl_nop_id *id);

static inline bool nl_nop_is_nop(enum nl_nop_kind k)
{
	return k == NL_NOPK_CATALOGUE || k == NL_NOPK_OTHER;
}

/* ---- padding runs ---- */

enum nl_pad_kind {
	NL_PAD_NOP,	/* one NOP instruction */
	NL_PAD_INT3,	/* a run of cc */
	NL_PAD_JMP,	/* eb/e9 jump whose target is the end of the run, with its skipped bytes */
	NL_PAD_ZERO,	/* a run of 00 fill */
	NL_PAD_CODE,	/* anything else: real code, or data */
};

struct nl_pad_piece {
	uint32_t off;
	uint32_t len;
	enum nl_pad_kind kind;
	struct nl_nop_id id;	/* for NL_PAD_NOP (and the jump itself for NL_PAD_JMP) */
};

struct nl_pad_split {
	uint64_t nop_bytes, int3_bytes, jmp_bytes, zero_bytes, code_bytes;
	uint32_t nr_nops;
	uint32_t nr_pieces;	/* pieces found, even beyond the caller's array */
};

/*
 * Split a gap between functions into what an assembler or linker writes:
 * NOP instructions, int3 fill, jump-over-fill, zero fill; whatever is left is
 * code.  Fills up to max pieces, counts all of them in out.
 */
void nl_pad_split(const uint8_t *p, size_t len, enum nl_mode mode,
		  struct nl_pad_piece *pieces, size_t max, struct nl_pad_split *out);

/*
 * Write len bytes of padding the way the producer behind a family does:
 * gas and llvm (largest NOP first), the pre-5.13 kernel's add_nops() for
 * p6/k8/k7/generic (8-byte chunks), today's kernel add_nop() for x86_nops
 * (one NOP up to 11 bytes, else a jump over int3), single (90s), jmp, int3.
 * Returns the number of instructions written, or a negative error.
 */
int nl_nop_compose(enum nl_nop_family fam, enum nl_mode mode, size_t len,
		   uint8_t *out, size_t cap);

/* ---- the kernel's NOP selection (arch_init_ideal_nops, v2.6.38 .. v5.12) ---- */

enum nl_vendor {
	NL_VENDOR_OTHER,
	NL_VENDOR_INTEL,
	NL_VENDOR_AMD,
	NL_VENDOR_HYGON,
	NL_VENDOR_CENTAUR,
	NL_VENDOR_ZHAOXIN,
};

struct nl_cpu_sig {
	enum nl_vendor vendor;
	unsigned family;	/* displayed family (base + extended) */
	unsigned model;		/* displayed model (with extended bits) */
	bool has_nopl;		/* X86_FEATURE_NOPL */
	bool has_k8;		/* X86_FEATURE_K8 (32-bit kernels only look at it) */
	bool has_k7;		/* X86_FEATURE_K7 */
};

struct nl_nop_choice {
	enum nl_nop_family family;	/* p6, k8, k7 or generic */
	const struct nl_nop *ftrace_nop; /* ideal_nops[NOP_ATOMIC5] */
	const char *reason;
};

void nl_kernel_ideal_nops(const struct nl_cpu_sig *cpu, enum nl_mode mode,
			  struct nl_nop_choice *out);
/* v5.13+: one fixed table per mode; the ftrace NOP is x86_nops[5]. */
void nl_kernel_fixed_nops(enum nl_mode mode, struct nl_nop_choice *out);

const char *nl_vendor_name(enum nl_vendor v);

#endif
