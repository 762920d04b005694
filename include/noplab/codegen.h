/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_CODEGEN_H
#define NOPLAB_CODEGEN_H

/*
 * Workload generators: the code under test, built from the NOP catalogue.
 *
 * A generator writes a position-independent image: every branch inside it is
 * rel32, so the same bytes run wherever the W^X buffer (codebuf.h) lands and
 * can be written to an ELF file at that address or at another one.  The only
 * absolute addresses are those of the indirect driver's table, which lives
 * outside the code (it is data) and is built when the image is loaded.
 *
 * Register contract (why generic:5 and k7:5 are safe to measure): the 32-bit
 * catalogue forms write ESI or EAX (zero-extending into RSI/RAX), so generated
 * code keeps nothing live in RAX or RSI across an entry sequence.  Every
 * generated function sets EAX after its entry sequence and returns.
 *
 * Every generated function returns a checksum contribution; the driver adds
 * them up, so a test can check that each function ran exactly as often as
 * planned (nl_image_expect()).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "noplab/diag.h"
#include "noplab/nops.h"

enum nl_workload { NL_WL_CALLS, NL_WL_SLED, NL_WL_LAYOUT, NL_WL_SWEEP, NL_NR_WORKLOADS };
enum nl_driver { NL_DRIVER_DIRECT, NL_DRIVER_INDIRECT };
enum nl_order { NL_ORDER_SEQ, NL_ORDER_RANDOM };

enum nl_entry_kind {
	NL_ENTRY_NOP,	/* a catalogue entry at the function entry */
	NL_ENTRY_NONE,	/* baseline: nothing */
	NL_ENTRY_CALL,	/* call to an empty stub: what an enabled ftrace site costs */
};

struct nl_entry {
	enum nl_entry_kind kind;
	const struct nl_nop *nop;	/* NL_ENTRY_NOP only */
	char name[24];			/* "p6:5", "none", "call" */
};

/*
 * "p6:5", "k8:atomic5", "none", "call".  Trap fill (int3:N) is refused: it
 * would never return.  Returns 0 or -NL_E_USAGE.
 */
int nl_entry_parse(const char *name, struct nl_entry *e, struct nl_diag *d);
/* Bytes the entry sequence occupies in each function (5 for call). */
unsigned nl_entry_len(const struct nl_entry *e);
/* Instructions it executes per call: 0 for none, 1 for call (the stub's ret not counted). */
unsigned nl_entry_insns(const struct nl_entry *e);
/* True when the entry is not a NOP in 64-bit mode (it writes ESI or EAX). */
bool nl_entry_clobbers(const struct nl_entry *e);

struct nl_gen_spec {
	enum nl_workload workload;
	struct nl_entry entry;
	bool endbr;		/* endbr64 before the entry sequence, as with IBT */
	/* calls, sweep, layout */
	unsigned nr_funcs;	/* functions called per iteration (layout: hot functions) */
	unsigned align;		/* slot alignment, power of two, 1..4096 */
	unsigned offset;	/* function start inside its slot, < align (or < stride) */
	unsigned stride;	/* slot size, a multiple of align; 0 = smallest that fits */
	enum nl_nop_family fill; /* bytes between functions (never executed unless a NOP) */
	enum nl_driver driver;
	enum nl_order order;
	uint64_t seed;		/* for NL_ORDER_RANDOM */
	/* sled */
	unsigned copies;	/* copies of the NOP inside the loop */
	/* layout */
	unsigned cold_bytes;	/* never-executed code per hot function, a multiple of align */
	bool packed;		/* hot functions together, all the cold code after them; else
				   each hot function followed by its cold_bytes.  Both images
				   hold the same code, only its placement differs. */
};

/* Defaults documented in the README: 256 functions, align 64, offset 0, int3 fill, direct. */
void nl_gen_spec_default(struct nl_gen_spec *s, enum nl_workload wl);

enum nl_sym_kind { NL_SYM_FUNC, NL_SYM_DRIVER, NL_SYM_STUB, NL_SYM_COLD, NL_SYM_START };

struct nl_gsym {
	char name[24];
	uint32_t off, size;
	enum nl_sym_kind kind;
	uint32_t entry_off;	/* offset of the entry sequence (after endbr64) */
	uint32_t value;		/* what the function returns (its checksum contribution) */
};

struct nl_image {
	uint8_t *code;
	size_t size, cap;
	struct nl_gsym *syms;
	size_t nr_syms, cap_syms;
	uint32_t driver_off;	/* uint64_t driver(uint64_t iters, void *const *table) */
	uint32_t *table;	/* indirect driver: symbol offsets in call order */
	size_t nr_table;
	uint64_t sum_per_iter;	/* the driver returns iters * sum_per_iter (mod 2^64) */
	/* per driver iteration, for normalising */
	uint64_t calls_per_iter;	/* calls into generated functions */
	uint64_t nops_per_iter;		/* entry (or sled) NOPs executed: catalogue entries,
					   so k8:5 (two instructions) counts once */
	uint64_t nop_insns_per_iter;	/* the instructions those NOPs decode to */
	uint64_t nop_bytes_per_iter;	/* bytes of those NOPs */
	uint64_t hot_bytes;		/* bytes of code that run (functions + driver) */
};

/* Build the image for one variant.  Returns 0, -ENOMEM, -NL_E_USAGE or -NL_E_LIMIT. */
int nl_gen(const struct nl_gen_spec *spec, struct nl_image *img, struct nl_diag *d);
void nl_image_free(struct nl_image *img);

/*
 * The core-clock probe: a loop of chain dependent `add rax, rdx`, one cycle
 * each on every x86 core, so chain * iters / elapsed TSC ticks is the core
 * clock over the TSC clock.  Called as driver(iters, (void *const *)1): the
 * addend comes in through the table argument, so no renamer can fold it,
 * and the checksum is iters * chain.
 */
int nl_gen_clock_probe(struct nl_image *img, unsigned chain, struct nl_diag *d);

/* What the driver returns after iters iterations. */
static inline uint64_t nl_image_expect(const struct nl_image *img, uint64_t iters)
{
	return iters * img->sum_per_iter;
}

/*
 * Append a _start for a stand-alone executable (the --sim cachegrind run):
 * call the driver with iters and table_addr, then exit(0) when it returned the
 * expected checksum, exit(1) otherwise.  Returns the symbol's offset (> 0) or
 * a negative error.
 */
int nl_image_add_start(struct nl_image *img, uint64_t iters, uint64_t table_addr,
		       struct nl_diag *d);

const char *nl_workload_name(enum nl_workload wl);
int nl_workload_by_name(const char *name);	/* -1 when unknown */

#endif
