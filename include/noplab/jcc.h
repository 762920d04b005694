/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_JCC_H
#define NOPLAB_JCC_H

/*
 * Branch alignment audit: the condition of Intel's "JCC erratum" microcode
 * mitigation (Skylake .. Cascade Lake).  A branch unit (jmp, jcc, a
 * macro-fused cmp/test/add/sub/and/inc/dec + jcc pair, call, ret) that
 * crosses or ends on a 32-byte boundary cannot be cached in the decoded-uop
 * cache.  uiCA's rule: addr / 32 != (addr + len) / 32 over the whole unit.
 *
 * The text is decoded linearly, restarting at every cut (symbol starts,
 * region boundaries) the way objdump -d restarts at every symbol, so the
 * result does not depend on how the work is split between threads.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "noplab/diag.h"
#include "noplab/insn.h"
#include "noplab/nops.h"

enum nl_jcc_kind {
	NL_JCC_JMP,		/* direct unconditional jmp */
	NL_JCC_JMP_INDIRECT,
	NL_JCC_JCC,		/* a conditional jump not fused with what precedes it */
	NL_JCC_FUSED,		/* cmp/test/... + jcc, counted as one unit */
	NL_JCC_CALL,
	NL_JCC_CALL_INDIRECT,
	NL_JCC_RET,
	NL_JCC_NR_KINDS
};

struct nl_jcc_counts {
	uint64_t units, fused, affected;
	uint64_t kind_units[NL_JCC_NR_KINDS];
	uint64_t kind_affected[NL_JCC_NR_KINDS];
};

/* One affected unit. */
struct nl_jcc_unit {
	uint64_t addr;		/* first byte: the cmp of a fused pair */
	uint8_t len;		/* the whole unit */
	uint8_t branch_off;	/* where the branch starts within the unit (pair: cmp length) */
	uint8_t kind;		/* enum nl_jcc_kind */
	bool ends_on_boundary;	/* ends exactly on the boundary rather than crossing it */
};

struct nl_jcc_text {
	uint64_t addr;
	const uint8_t *data;
	uint64_t size;
};

struct nl_jcc_opts {
	enum nl_mode mode;
	unsigned boundary;	/* 0 = 32 */
	unsigned threads;	/* 0 = 2 */
	const uint64_t *cuts;	/* sorted, unique: decode restarts here; counts are binned */
	size_t nr_cuts;
	bool list;		/* keep every affected unit */
};

struct nl_jcc_result {
	struct nl_jcc_counts total;
	/* bins[0]: before cuts[0]; bins[i + 1]: [cuts[i], cuts[i + 1]) */
	struct nl_jcc_counts *bins;
	size_t nr_bins;
	struct nl_jcc_unit *affected;	/* sorted by address, with opts->list */
	size_t nr_affected;
	uint64_t insns, bytes, fill_skipped, decode_errors;
	unsigned threads_used;
};

/*
 * Audit the texts (each a contiguous run of code; they must not overlap and
 * must be sorted by address).  Returns 0 or a negative error.
 */
int nl_jcc_audit(const struct nl_jcc_text *texts, size_t nr, const struct nl_jcc_opts *opts,
		 struct nl_jcc_result *out, struct nl_diag *d);
void nl_jcc_result_release(struct nl_jcc_result *r);

/* Whether first (fusible) and a jcc fuse: Intel's condition-code table per first kind. */
bool nl_jcc_fuses(const struct nl_insn *first, const struct nl_insn *jcc);
/* Whether [addr, addr+len) crosses or ends on a boundary (a power of two). */
bool nl_jcc_crosses(uint64_t addr, unsigned len, unsigned boundary);

const char *nl_jcc_kind_name(enum nl_jcc_kind k);
void nl_jcc_counts_add(struct nl_jcc_counts *to, const struct nl_jcc_counts *from);

#endif
