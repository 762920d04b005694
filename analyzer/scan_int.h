/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_ANALYZER_SCAN_INT_H
#define NOPLAB_ANALYZER_SCAN_INT_H

/*
 * Internal to the scan: the shared, read-only context the worker threads
 * see, and the passes split by concept (scan_entry.c: entry classes and
 * decorations; scan_pad.c: padding, alignment, function tails;
 * scan_records.c: ftrace records and sites away from the entry).
 */

#include "noplab/insn.h"
#include "noplab/scan.h"

#define SCAN_MAX_HOOKS 8
#define SCAN_ENTRY_RUN_MAX 64	/* longest NOP run looked at after an entry */

struct scan_hook {
	uint64_t addr;		/* the hook, its PLT stub, or (got) its GOT slot */
	const char *name;
	bool got;		/* reached by call *slot(%rip) */
};

/* One kind of record, read into sorted addresses; zeros are counted, not kept. */
struct scan_records {
	bool present;
	const char *source;
	uint64_t entries, zero;
	uint64_t *addr;
	size_t nr;
};

struct scan_ctx {
	const struct nl_elf *elf;
	enum nl_mode mode;
	struct nl_func *funcs;
	size_t nr_funcs;
	struct nl_scan_func *fx;
	uint64_t *region_start;	/* per function: end of what precedes it in its section */
	uint32_t *patch_off;	/* per function: offset of the NOP run after the label */
	uint8_t *patch_len;	/* per function: its length (0: none) */
	uint64_t *gap_pad;	/* per function: padding bytes in the gap before it */
	uint64_t *gap_code;	/* per function: code bytes in that gap */
	struct scan_hook hooks[SCAN_MAX_HOOKS];
	size_t nr_hooks;
	bool got_hooks;		/* some hook is reached through the GOT */
	uint8_t poison[4][4];	/* the catalogue's 4-byte ENDBR poison NOPs */
	size_t nr_poison;
	struct scan_records mcount, patchable;
	int *group_of;		/* per section index: its summary group, -1 if none */
	struct scan_group *groups;
	size_t nr_groups;
};

/* What one worker accumulates; merged by the caller. */
struct scan_sec_acc {
	int group;			/* index into scan_ctx.groups */
	struct nl_scan_summary sum;
};

struct scan_group {
	const char *name;
	const struct nl_section *first;
	size_t nr_sections;
	uint64_t size;
};

struct scan_worker {
	const struct scan_ctx *c;
	size_t lo, hi;			/* function range */
	const struct nl_section **chunk_sec; /* byte-scan chunks */
	uint64_t *chunk_lo, *chunk_hi;	/* offsets within chunk_sec */
	size_t nr_chunks;
	/* results */
	struct nl_scan_site *sites;
	size_t nr_sites, cap_sites;
	uint64_t *cands;		/* e8 rel32 -> hook, not yet verified */
	size_t nr_cands, cap_cands;
	struct scan_sec_acc *secs;
	size_t nr_secs, cap_secs;
	struct nl_pad_piece *pieces;
	size_t cap_pieces;
	struct nl_decoder *dec;		/* opened on first need */
	int dec_err;			/* the decoder could not be opened: confirmations fail */
	struct nl_diag diag;
	int err;			/* out of memory: the scan fails */
};

/* scan_entry.c */
/* Length of the call to the ftrace hook at off (5: e8 rel32, 6: ff 15 GOT), 0 if none. */
unsigned scan_is_hook_call(const struct scan_ctx *c, const struct nl_func *f, uint64_t off,
			   const char **target);
unsigned scan_is_hook_call_at(const struct scan_ctx *c, const struct nl_section *sec,
			      uint64_t off, const char **target);
bool scan_records_has_in(const struct scan_records *r, uint64_t lo, uint64_t hi);
void scan_classify(const struct scan_ctx *c, size_t i, struct nl_scan_func *fx,
		   uint32_t *patch_off, uint8_t *patch_len);
void scan_decoration(const struct scan_ctx *c, size_t i, struct nl_scan_func *fx);
void scan_resolve_hooks(struct scan_ctx *c, struct nl_diag *d);
void scan_poison_init(struct scan_ctx *c);

/* scan_pad.c */
int scan_seq_add(struct nl_seq_hist *h, const struct nl_seq *s, uint64_t count,
		 uint64_t total_bytes);
int scan_gap(struct scan_worker *w, const uint8_t *p, uint64_t len, struct nl_scan_summary *sum,
	     uint64_t *pad, uint64_t *code);
uint64_t scan_align_of(const struct nl_elf *elf, const struct nl_section *sec, uint64_t addr);
void scan_count_align(struct nl_scan_summary *sum, uint64_t align, bool rel);
void scan_straddle(const struct nl_elf *elf, const struct nl_section *sec, struct nl_scan_site *s);
void scan_count_site(struct nl_scan_summary *sum, const struct nl_scan_site *s);
int scan_step(struct scan_worker *w, const uint8_t *p, uint64_t avail, uint64_t addr,
	      enum nl_insn_class *cls);
uint64_t scan_trim_tail(struct scan_worker *w, const struct nl_func *f);
int scan_worker_decoder(struct scan_worker *w);

/* scan_records.c */
int scan_read_records(struct scan_ctx *c, struct nl_diag *d);
void scan_bytes_for_calls(struct scan_worker *w);
int scan_finish_sites(struct scan_ctx *c, struct scan_worker *main_w, struct nl_scan_result *r,
		      struct nl_diag *d);

#endif
