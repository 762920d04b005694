/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_SCAN_H
#define NOPLAB_SCAN_H

/*
 * noplab scan: the static census of one ELF file.  Function-entry ftrace
 * sites and their class, decorations before the entry (__pfx_, kCFI,
 * patchable NOPs), the kernel's own records (__mcount_loc,
 * __patchable_function_entries) checked against the sites, the padding
 * between functions, and function/site alignment.
 *
 * Data flows one way: ELF model -> function list -> per-function findings
 * (in parallel) -> sites and records -> summaries per section and file.
 * Findings are counted, never errors: nl_scan() fails only on resources.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "noplab/diag.h"
#include "noplab/elf.h"
#include "noplab/nops.h"

enum nl_entry_class {
	NL_ENTRY_CALL_FENTRY,		/* call __fentry__ / mcount at the entry */
	NL_ENTRY_NOP5,			/* a 5-byte NOP at the entry (-mnop-mcount, objtool --mnop) */
	NL_ENTRY_ENDBR_CALL_FENTRY,
	NL_ENTRY_ENDBR_NOP5,
	NL_ENTRY_ENDBR,			/* ENDBR (or its poison NOP) and no site */
	NL_ENTRY_PATCHABLE,		/* a -fpatchable-function-entry NOP run after the label */
	NL_ENTRY_ENDBR_PATCHABLE,
	NL_ENTRY_OTHER,
	NL_NR_ENTRY_CLASSES
};

/* "call_fentry", "nop5", "endbr+call_fentry", ... as in the JSON */
const char *nl_entry_class_name(enum nl_entry_class c);

enum nl_site_kind {
	NL_SITE_NONE,
	NL_SITE_CALL,		/* e8 rel32 to __fentry__ / mcount */
	NL_SITE_NOP5,		/* one 5-byte NOP instruction */
	NL_SITE_PATCHABLE,	/* a NOP run (patchable function entry) */
};

enum nl_site_where {
	NL_WHERE_AT_ENTRY,	/* at the function's first byte */
	NL_WHERE_AFTER_ENDBR,	/* right after its ENDBR */
	NL_WHERE_IN_BODY,	/* elsewhere inside a function (e.g. after a 32-bit mcount prologue) */
	NL_WHERE_OUTSIDE,	/* outside every function symbol (an overridden __weak body) */
};

enum nl_deco_kind {
	NL_DECO_NONE,
	NL_DECO_PFX,		/* __pfx_ padding (CALL_PADDING): NOPs before the entry */
	NL_DECO_CFI,		/* kCFI preamble: b8 imm32 + NOPs */
	NL_DECO_PATCHABLE,	/* -fpatchable-function-entry=N,M: M NOPs before the label */
};

/* One site: a call to the ftrace hook, an entry NOP5, or an entry NOP run. */
struct nl_scan_site {
	uint64_t addr;
	enum nl_site_kind kind;
	enum nl_site_where where;
	uint8_t len;
	uint8_t straddles;	/* bit 0: a 16-byte boundary, bit 1: 32, bit 2: 64 */
	bool straddle_known;	/* false in ET_REL when the section alignment is below 64 */
	bool listed;		/* a __mcount_loc / __patchable_function_entries record names it */
	int64_t func;		/* index into the function list, -1 outside */
};

/* What the scan found for one function (parallel to the function list). */
struct nl_scan_func {
	enum nl_entry_class cls;
	bool endbr;		/* ENDBR64/ENDBR32, or the poison NOP over one */
	bool endbr_poison;
	enum nl_site_kind site;
	uint32_t site_off;	/* from the function start */
	uint8_t site_len;
	char encoding[32];	/* "e8 rel32", the NOP's name ("nopl5"), "90 x5" */
	const char *site_target; /* "__fentry__", "mcount"; NULL for NOPs */
	bool site_listed;	/* a record names the site */
	uint8_t straddles;	/* as in nl_scan_site */
	uint64_t align;		/* largest power of two dividing the start (capped at 4096) */
	enum nl_deco_kind deco;
	uint32_t deco_len;	/* bytes of the decoration before the entry */
	uint64_t gap_pad;	/* padding bytes between this function and the next */
	uint64_t gap_code;	/* code bytes without a symbol in that gap */
};

/* Histogram of padding pieces: one NOP instruction, a jump over fill, or a fill run. */
struct nl_seq {
	enum nl_pad_kind kind;
	uint8_t len;		/* bytes of the key (a fill run is keyed by its byte) */
	uint8_t bytes[NL_NOP_MAX_BYTES];
	char name[24];		/* the recognizer's name, "int3", "jmp" */
	uint64_t count;		/* pieces */
	uint64_t total_bytes;	/* bytes they cover (a jump includes what it skips) */
};

struct nl_seq_hist {
	struct nl_seq *v;
	size_t nr, cap;
};

struct nl_record_summary {
	bool present;		/* the file has these records at all */
	const char *source;	/* "__mcount_loc", "__start_mcount_loc..__stop_mcount_loc", ... */
	uint64_t entries;	/* records, zeros included */
	uint64_t zero;		/* zero entries (linked files: overridden __weak functions), skipped */
	uint64_t at_entry;	/* point at a function entry (start, after ENDBR, patchable area) */
	uint64_t in_body;	/* inside a function, not at its entry */
	uint64_t outside_functions; /* outside every function symbol */
	uint64_t missing;	/* entry sites no record names (valid only when present) */
	uint64_t not_a_site;	/* point at bytes that are no call/NOP site */
};

#define NL_ALIGN_LOG2_MAX 12	/* alignment histogram: 1 .. 4096+ */

struct nl_scan_summary {
	uint64_t functions;
	uint64_t size_inferred;		/* functions whose size came from the next symbol */
	uint64_t bytes;			/* bytes covered by functions */
	uint64_t entry_classes[NL_NR_ENTRY_CLASSES];
	uint64_t endbr_poison;
	struct {
		uint64_t total, at_entry, after_endbr, in_body, outside_functions;
		uint64_t calls, nop5, patchable;
	} sites;
	struct nl_record_summary mcount_loc, patchable;
	struct {
		uint64_t pfx, cfi, patchable, bytes;
	} decorations;
	struct {
		uint64_t gaps;		/* gaps between consecutive functions */
		uint64_t bytes;		/* padding bytes in them (NOP, int3, jump, zero) */
		uint64_t nop_bytes, int3_bytes, jmp_bytes, zero_bytes, nops;
		uint64_t code_gaps;	/* gaps holding code without a symbol */
		uint64_t code_bytes;
		struct nl_seq_hist seqs;
	} padding;
	struct {
		uint64_t ge16, ge32, ge64, lt16;	/* ge16 includes ge32, which includes ge64 */
		uint64_t by_log2[NL_ALIGN_LOG2_MAX + 1];
		bool rel_capped;	/* ET_REL: capped at the section's sh_addralign */
	} alignment;
	struct {
		uint64_t sites;		/* sites checked: ftrace sites and entry NOP runs */
		uint64_t b16, b32, b64;
		uint64_t unknown;	/* ET_REL sites in sections aligned below 64 */
	} straddles;
};

/*
 * Per-section summary.  With more than 64 executable sections (an object
 * built with -ffunction-sections) the .text.<function> sections are summed
 * into groups named ".text.*", ".text.unlikely.*", ...: sec is then the first
 * member, name the group, nr_sections and size the members' count and bytes.
 */
struct nl_scan_section {
	const struct nl_section *sec;
	const char *name;
	size_t nr_sections;
	uint64_t size;
	struct nl_scan_summary sum;
};

struct nl_scan_opts {
	unsigned threads;	/* 0: one per online CPU (at most 8) for large inputs, else 1 */
};

struct nl_scan_result {
	const struct nl_elf *elf;
	struct nl_func *funcs;
	size_t nr_funcs;
	struct nl_scan_func *fx;	/* per function */
	struct nl_scan_site *sites;	/* every ftrace site and entry NOP run, by address */
	size_t nr_sites;
	uint64_t *stray_records;	/* records outside functions or not at a site */
	size_t nr_stray_records;
	struct nl_scan_section *sections; /* executable sections (or groups) with functions or sites */
	size_t nr_sections;
	struct nl_scan_summary summary;
	const char *ftrace_target;	/* the hook the calls go to, NULL when none was found */
	unsigned threads;		/* threads the scan used */
};

int nl_scan(const struct nl_elf *elf, const struct nl_scan_opts *opts,
	    struct nl_scan_result **out, struct nl_diag *d);
void nl_scan_free(struct nl_scan_result *r);

/* dst += src (the sequence histogram merges); for per-file totals. */
int nl_scan_summary_add(struct nl_scan_summary *dst, const struct nl_scan_summary *src);
void nl_scan_summary_release(struct nl_scan_summary *s);
/* Sequences sorted by count, most frequent first (sorts in place). */
void nl_seq_hist_sort(struct nl_seq_hist *h);

#endif
