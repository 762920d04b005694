/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_BENCH_H
#define NOPLAB_BENCH_H

/*
 * noplab bench: an experiment is one or more workloads (calls at 256 and at
 * 4096 functions, say), each with several variants (entry sequences, entry
 * offsets, packed or spread).  nl_bench_run() generates the code, measures
 * every workload's variants interleaved (method.h), and fills plain structs
 * with per-repetition figures, summaries and verdicts; cli/cmd_bench.c
 * renders them.
 *
 * Every figure says where it came from:
 *   hw   a hardware counter (perf_event_open, read with rdpmc or read())
 *   tsc  the time stamp counter; "cycles" from tsc are TSC ticks scaled by
 *        the core clock / TSC clock ratio that a one-cycle-per-add chain
 *        measures in every round (uarch-bench's clock timer does the same)
 *   sw   a software event (context switches, page faults)
 *   sim  valgrind's cachegrind simulating this CPU's L1i (--sim cachegrind)
 * A figure that was not measured is absent, never zero.
 *
 * Placement: by default all variants of a workload run from one code buffer
 * at one address (2 MiB-aligned, transparent huge pages when the kernel
 * allows), copied in when their turn comes.  Only the entry bytes then
 * differ between variants; with a buffer per variant, the buffers' addresses
 * decide branch-predictor and cache aliasing, and on the project's Zen 5 VM
 * that alone moved single variants from 2.4 to 11 TSC ticks per call from
 * one run to the next.  NL_PLACE_SEPARATE keeps that behaviour for study.
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "noplab/codebuf.h"
#include "noplab/codegen.h"
#include "noplab/diag.h"
#include "noplab/method.h"
#include "noplab/stats.h"

enum nl_source { NL_SRC_HW, NL_SRC_TSC, NL_SRC_SW, NL_SRC_SIM };
const char *nl_source_name(enum nl_source s);	/* "hw", "tsc", "sw", "sim" */

enum nl_placement { NL_PLACE_SHARED, NL_PLACE_SEPARATE };
enum nl_pages { NL_PAGES_DEFAULT, NL_PAGES_4K, NL_PAGES_2M };

#define NL_BENCH_MAX_ENTRIES 32
#define NL_BENCH_MAX_SIZES 8
#define NL_BENCH_MAX_FIGS 24
#define NL_BENCH_MAX_CANDIDATES 16

struct nl_bench_opts {
	enum nl_workload workload;
	bool builtin_default;		/* `noplab bench` with no arguments */
	size_t nr_entries;		/* 0: the workload's default list */
	struct nl_entry entries[NL_BENCH_MAX_ENTRIES];
	size_t nr_sizes;		/* calls/sweep: function counts; sled: bytes of NOPs;
					   layout: hot functions.  0: the workload's default */
	unsigned sizes[NL_BENCH_MAX_SIZES];
	struct nl_gen_spec spec;	/* align, offset, stride, fill, driver, order, seed, endbr,
					   cold_bytes; entry and nr_funcs come from the lists */
	char baseline[24];		/* variant name; "" = the workload's default */
	struct nl_method method;	/* reps, warmups, inner, sample_ticks, seed */
	int cpu;			/* -1: the steadiest allowed CPU, by a short probe */
	char events[512];		/* -e list; "" = cycles,instructions where a PMU exists */
	bool sim_cachegrind;
	const char *valgrind;		/* NULL: "valgrind" from PATH */
	const char *emit_elf;		/* write the generated code here */
	enum nl_placement placement;
	unsigned candidates;		/* shared: buffers tried, the fastest kept (default 12) */
	enum nl_pages pages;
	double threshold_pct;		/* a difference below this is "no practical difference" */
	/* optional progress: what is running and the fraction of the whole run done */
	void (*progress)(void *ctx, const char *what, double done);
	void *progress_ctx;
	/*
	 * Optional: set by the caller's SIGINT handler.  The run stops after the
	 * repetition in progress; what was measured is summarised and kept.
	 */
	const volatile sig_atomic_t *stop;
};

void nl_bench_opts_default(struct nl_bench_opts *o);

struct nl_figure {
	char key[64];		/* "cycles_per_call", "l1i_misses_per_1000_calls" */
	char unit[40];		/* "cycles/call" */
	enum nl_source source;
	size_t n;
	double *runs;		/* n values, one per repetition (one for sim) */
	struct nl_summary sum;
	bool deterministic;	/* a simulation: one value, no spread */
	bool scaled;		/* hw: the kernel time-shared the group (never asked for) */
	double running_pct;	/* hw: least running/enabled over the repetitions */
};

enum nl_word { NL_WORD_SAME, NL_WORD_SLOWER, NL_WORD_FASTER };

struct nl_variant {
	char name[48];		/* "p6:5"; sweep "p6:5+17"; layout "packed" / "spread" */
	struct nl_gen_spec spec;
	struct nl_image img;
	struct nl_codebuf cb;	/* NL_PLACE_SEPARATE only */
	void **table;		/* indirect driver table for the address it runs at */
	struct nl_mvar mv;
	size_t nr_figs;
	struct nl_figure figs[NL_BENCH_MAX_FIGS];
	int primary;		/* figure the comparison uses */
	bool has_cmp;		/* compared with the baseline (the baseline itself is not) */
	struct nl_compare cmp;
	enum nl_word word;	/* slower / faster / same: what must reproduce */
	char verdict[256];
	char note[256];		/* e.g. what a 32-bit-only entry clobbers */
};

struct nl_workload_run {
	char name[48];		/* "calls-256", "sled-2KiB", "layout-128", "sweep-256" */
	enum nl_workload kind;
	struct nl_gen_spec params;	/* the first variant's spec (entry aside) */
	unsigned size;			/* the list value this workload was made from */
	char fit[200];			/* "18 KiB run per pass: fits the 32 KiB L1i" */
	bool fits_l1i;
	uint64_t hot_bytes;		/* distinct cache lines run per driver pass, in bytes */
	size_t nr_v;
	struct nl_variant *v;
	int baseline;			/* index, or -1 */
	double core_ratio;		/* core clock / TSC clock, mean over the repetitions */
	double seconds;
	bool huge;			/* the shared buffer is backed by huge pages */
	struct nl_codebuf shared;	/* NL_PLACE_SHARED */
	unsigned nr_cand, chosen;	/* candidate buffers scored (0: none), the one kept */
	double cand_score[NL_BENCH_MAX_CANDIDATES]; /* mean TSC ticks per call of all variants */
	uint64_t emit_addr;		/* where its code ran (for --emit-elf) */
	bool measured;			/* false: never reached (the run was stopped before) */
	bool partial;			/* stopped: fewer repetitions than asked for */
	unsigned reps;			/* measured repetitions its figures hold */
};

struct nl_bench_env {
	char cpu[160];		/* brand, family/model */
	char kernel[128];
	char counters[256];	/* where counts come from, and why */
	bool hw;		/* hardware counters used */
	char hw_reason[160];	/* why not, when not */
	double read_cost_ns;	/* one counter read (hw), 0 when none */
	bool read_rdpmc;
	int cpu_pinned;
	char cpu_choice[128];	/* "given" / "auto: steadiest of 2 CPUs by a 30 ms probe" */
	char freq[256];
	double tsc_hz;
	double core_hz;		/* estimated from the add chain, 0 when unknown */
	unsigned l1i_kib, l1i_ways, l1i_line;
	char pages[64];		/* "2 MiB (transparent huge pages)" */
	char placement[96];
	char events[512];	/* the events counted, comma-separated */
};

struct nl_bench {
	struct nl_bench_opts opts;
	struct nl_bench_env env;
	size_t nr_w;
	struct nl_workload_run *w;
	double seconds;
	char warnings[4][256];	/* said once, also through the diag sink */
	size_t nr_warnings;
	bool interrupted;	/* stopped through opts.stop: the results are partial */
	unsigned reps_asked;	/* the repetitions asked for (opts.method.reps before a stop) */
};

/* Generate, measure, summarise and compare.  Returns 0 or a negative error (diag says why). */
int nl_bench_run(struct nl_bench *b, const struct nl_bench_opts *o, struct nl_diag *d);
void nl_bench_free(struct nl_bench *b);

/* Figure of a variant by key, or NULL. */
const struct nl_figure *nl_variant_figure(const struct nl_variant *v, const char *key);

/* ---- the pieces, exported for the tests ---- */

/*
 * Write images as an ELF64 x86-64 executable: one section and one PT_LOAD per
 * part at its address, one STT_FUNC symbol per generated function (named
 * prefix + name), e_entry when entry != 0, and optionally a data segment
 * (the indirect driver's table for a stand-alone run).
 */
struct nl_elf_part {
	const struct nl_image *img;
	uint64_t addr;		/* page-aligned */
	char section[96];	/* ".text", ".text.calls-256.k8:5" */
	char prefix[64];	/* "" or "calls-256.k8:5." */
};

struct nl_elf_emit {
	const struct nl_elf_part *parts;
	size_t nr;
	uint64_t entry;
	const void *data;
	size_t data_size;
	uint64_t data_addr;	/* page-aligned */
};

int nl_emit_elf(const char *path, const struct nl_elf_emit *e, struct nl_diag *d);

/* cachegrind run of one image: per driver iteration, from the 2n - n difference. */
struct nl_sim_opts {
	unsigned l1i_size, l1i_ways, l1i_line;	/* bytes, ways, bytes */
	uint64_t iters;				/* n (default 10) */
	const char *valgrind;			/* NULL: "valgrind" */
	const char *tmpdir;			/* NULL: $TMPDIR or /tmp */
};

struct nl_sim_result {
	double i1_misses_per_iter;
	double insns_per_iter;
	uint64_t i1_misses[2], insns[2];	/* the n and 2n runs, as cachegrind reported */
	char i1_desc[96];			/* cachegrind's "desc: I1 cache:" line */
};

/* -ENOENT (with a hint) when valgrind is missing, -EIO when a run failed. */
int nl_sim_cachegrind(const struct nl_image *img, const struct nl_sim_opts *o,
		      struct nl_sim_result *r, struct nl_diag *d);

#endif
