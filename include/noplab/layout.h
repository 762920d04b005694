/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_LAYOUT_H
#define NOPLAB_LAYOUT_H

/*
 * Layout audit: where text regions (.entry.text and friends) sit, what they
 * share cache lines and pages with, and the fill around them.
 *
 * The audit reads a small input model (sections, symbols, optional bytes)
 * rather than the ELF model directly, so the same code serves a vmlinux, a
 * .o/.ko and a kallsyms file (symbols only, bytes optionally from
 * /proc/kcore).  Adapters fill it: nl_layout_input_from_elf() and
 * nl_layout_input_from_symfile().
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "noplab/diag.h"
#include "noplab/jcc.h"
#include "noplab/nops.h"

#define NL_LINE 64u
#define NL_PAGE_4K 4096u
#define NL_PAGE_2M (2u << 20)
/* Alignment figures stop here: no x86 page or line is larger. */
#define NL_ALIGN_CAP (1ull << 30)

/* ---- the input model ---- */

struct nl_layout_sec {
	const char *name;
	uint64_t addr, size;
	uint64_t align;		/* sh_addralign; 0 or 1 when none */
	const uint8_t *data;	/* NULL when the bytes are not known */
	bool exec;
};

enum nl_lsym_kind {
	NL_LSYM_CODE,		/* a function or a code label */
	NL_LSYM_PREFIX,		/* __pfx_X / __cfi_X: padding owned by the next function */
	NL_LSYM_MARKER,		/* a region delimiter (__X_start, __start_X, _etext, ...) */
	NL_LSYM_OTHER,		/* data, absolute, ... */
};

struct nl_layout_sym {
	const char *name;
	uint64_t addr;
	uint64_t size;		/* 0: unknown (kallsyms) or a label */
	int sec;		/* index into secs, -1 when none */
	enum nl_lsym_kind kind;	/* set by the adapter; markers are found by nl_layout_prepare() */
	bool global;
};

struct nl_layout_input {
	const char *path;
	enum nl_mode mode;
	bool is_rel;		/* .o/.ko: addresses are synthetic, placement is the linker's */
	bool from_symfile;	/* System.map / kallsyms: no section table */
	bool bytes_live;	/* text bytes came from /proc/kcore */
	bool has_text_base;
	uint64_t text_base;	/* _text: kallsyms offsets are shown from it (KASLR) */

	struct nl_layout_sec *secs;
	size_t nr_secs, cap_secs;
	struct nl_layout_sym *syms;	/* sorted by address once prepared */
	size_t nr_syms, cap_syms;

	uint64_t *ftrace_sites;	/* sorted addresses of ftrace call sites (5 bytes), if known */
	size_t nr_ftrace_sites, cap_ftrace_sites;
	bool ftrace_known;	/* the site list was computed (it may be empty) */

	void **owned;		/* malloc'd buffers the input keeps (kcore text, names) */
	size_t nr_owned;
};

void nl_layout_input_init(struct nl_layout_input *in, const char *path, enum nl_mode mode);
void nl_layout_input_release(struct nl_layout_input *in);
/* Returns the new index, or -ENOMEM. */
int nl_layout_add_sec(struct nl_layout_input *in, const struct nl_layout_sec *sec);
int nl_layout_add_sym(struct nl_layout_input *in, const struct nl_layout_sym *sym);
int nl_layout_add_ftrace_site(struct nl_layout_input *in, uint64_t addr);
/* Keep a malloc'd buffer until nl_layout_input_release(); frees it on failure. */
int nl_layout_input_own(struct nl_layout_input *in, void *buf);

/*
 * Adapters.  The ELF model / symbol file must outlive the input: names and
 * bytes point into it.
 */
struct nl_elf;
struct nl_symfile;
struct nl_kcore;
int nl_layout_input_from_elf(const struct nl_elf *elf, struct nl_layout_input *in,
			     struct nl_diag *d);
/* Kernel symbols only (module symbols are skipped); text as pseudo-sections without bytes. */
int nl_layout_input_from_symfile(const struct nl_symfile *sf, const char *path,
				 struct nl_layout_input *in, struct nl_diag *d);
/* Fill the pseudo-sections' bytes from a kernel core (/proc/kcore). */
int nl_layout_input_read_kcore(struct nl_layout_input *in, struct nl_kcore *kc,
			       struct nl_diag *d);
/* Sort symbols, assign sections by address where missing, mark region delimiters. */
int nl_layout_prepare(struct nl_layout_input *in, struct nl_diag *d);

/* The executable section holding [addr, addr+len) (len 0: addr may be its end), or -1. */
int nl_layout_sec_of(const struct nl_layout_input *in, uint64_t addr, uint64_t len);
/* Bytes at addr and how many are readable there, or NULL. */
const uint8_t *nl_layout_bytes_at(const struct nl_layout_input *in, uint64_t addr,
				  uint64_t *avail);

/* ---- region arithmetic ---- */

/* Largest power of two dividing addr, at most NL_ALIGN_CAP (also for 0). */
uint64_t nl_align_of(uint64_t addr);
/* Units of `unit` bytes (a power of two) that [start, end) touches; 0 when empty. */
uint64_t nl_units_touched(uint64_t start, uint64_t end, uint64_t unit);

/* ---- regions ---- */

enum nl_region_kind {
	NL_REGION_SECTION,	/* a real section (.entry.text in a .o, .text in vmlinux) */
	NL_REGION_RANGE,	/* a symbol-delimited range inside a section */
};

#define NL_NEIGH_MAX 8

/* Foreign code in one line or page at the edge of a region. */
struct nl_neigh {
	uint64_t unit_start;	/* the line or page */
	uint64_t foreign_bytes;	/* bytes of foreign code symbols in it */
	const char *names[NL_NEIGH_MAX];
	size_t nr_names;	/* all of them, even beyond the array */
};

enum nl_fill_kind {
	NL_FILL_NONE, NL_FILL_INT3, NL_FILL_NOP, NL_FILL_ZERO, NL_FILL_MIXED,
	NL_FILL_UNKNOWN,	/* no bytes: only the symbol-free distance is known */
};

struct nl_fill {
	uint64_t from, to;	/* [from, to) */
	enum nl_fill_kind kind;
	uint64_t to_align;	/* nl_align_of(to) for fill after, of from for fill before */
};

struct nl_padding {
	bool known;		/* every code symbol inside has a size */
	bool bytes_known;	/* and the bytes were there to classify */
	uint64_t bytes, nop, int3, zero, jmp, other;
	uint64_t prefix;	/* __pfx_/__cfi_ preambles (NOPs the kernel patches at boot) */
};

struct nl_region {
	char *name;		/* ".entry.text" for sections, "entry_text" for ranges */
	char *key;		/* normalised: "entry_text" for both */
	enum nl_region_kind kind;
	const char *start_sym, *end_sym;	/* ranges only */
	int sec;		/* section holding it, -1 */
	int parent;		/* innermost enclosing region, -1 */
	bool empty;

	uint64_t start, end, size;
	uint64_t align_start, align_end;
	uint64_t lines, pages_4k, pages_2m;
	struct nl_neigh first_line, last_line, first_page, last_page;

	size_t func_first, nr_funcs;	/* slice of nl_layout.funcs */
	struct nl_padding padding;
	struct nl_fill fill_before, fill_after;

	bool jcc_known;
	struct nl_jcc_counts jcc;
};

struct nl_layout_func {
	const char *name;
	uint64_t addr, size;
	bool size_inferred;
	int sec;
	const char *entry_class;	/* from scan when known, else NULL */
	bool jcc_known;
	struct nl_jcc_counts jcc;
};

struct nl_code_ext {
	const struct nl_layout_sym *sym;
	uint64_t start, end;
	bool inferred;		/* end is the next symbol, not a size */
};

struct nl_layout_opts {
	bool jcc;		/* decode the text and audit branch alignment */
	unsigned threads;	/* for the JCC audit; 0 = 2 */
};

struct nl_layout {
	const struct nl_layout_input *in;
	struct nl_region *regions;
	size_t nr_regions;
	struct nl_layout_func *funcs;	/* sorted by address */
	size_t nr_funcs;
	/* code symbols (functions, labels, prefixes) with their extents, sorted */
	struct nl_code_ext *code;
	size_t nr_code;
	uint64_t code_max_len;	/* longest extent, bounds the backward searches */

	bool jcc_done;
	struct nl_jcc_result jcc;
	uint64_t *cuts;		/* where the decode restarted: the bins of jcc */
	size_t nr_cuts;
	struct nl_jcc_counts *jcc_cum;	/* jcc_cum[i]: bins[0 .. i) summed (nr_bins + 1) */
};

/* Regions, their figures, functions, and (with opts->jcc) the branch audit. */
int nl_layout_analyze(const struct nl_layout_input *in, const struct nl_layout_opts *opts,
		      struct nl_layout **out, struct nl_diag *d);
void nl_layout_free(struct nl_layout *lay);

/*
 * A region by name: the exact name (".entry.text", "entry_text") first, then
 * the normalised key, then known aliases (spinlock_text = lock_text).
 * Ranges win over sections of the same key (vmlinux has both .text and _stext..).
 */
const struct nl_region *nl_layout_find_region(const struct nl_layout *lay, const char *name);
/* "entry_text" from ".entry.text"; writes at most size bytes. */
char *nl_region_key(const char *name, char *buf, size_t size);
/* Foreign code symbols in [lo, hi) outside [r->start, r->end) (a .o: same section only). */
void nl_layout_foreign(const struct nl_layout *lay, const struct nl_region *r, uint64_t lo,
		       uint64_t hi, struct nl_neigh *out);
/* A function's alignment: of its address, or in a .o what its section's sh_addralign allows. */
uint64_t nl_layout_func_align(const struct nl_layout *lay, const struct nl_layout_func *f);
/* The function holding addr, or NULL. */
const struct nl_layout_func *nl_layout_func_at(const struct nl_layout *lay, uint64_t addr);
/* The code symbol whose extent holds addr (prefixes included), or NULL. */
const struct nl_code_ext *nl_layout_code_at(const struct nl_layout *lay, uint64_t addr);

const char *nl_fill_kind_name(enum nl_fill_kind k);

/* JCC counts over [start, end), from the audit's bins (0 when it did not run): O(log bins). */
void nl_layout_jcc_in(const struct nl_layout *lay, uint64_t start, uint64_t end,
		      struct nl_jcc_counts *out);

/*
 * ftrace call sites: the adapter's list when it has one, else found in the
 * bytes at each function entry (after an ENDBR): a call to __fentry__ or
 * the 5-byte NOP ftrace leaves there.  Returns -NL_E_UNSUPPORTED when
 * neither is available (kallsyms without --live).  *sites is malloc'd.
 */
int nl_layout_ftrace_sites(const struct nl_layout *lay, uint64_t **sites, size_t *nr,
			   struct nl_diag *d);

#endif
