// SPDX-License-Identifier: MIT
/* noplab bench: generated workloads, measured with the method of bench/method.c. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "noplab/bench.h"
#include "noplab/clock.h"
#include "plot.h"

static void bench_usage(FILE *f)
{
	fprintf(f,
"usage: noplab bench [calls|sled|layout|sweep] [options]\n"
"\n"
"Generate code from the NOP catalogue, run it in this process (W^X buffer, pinned\n"
"thread) and measure it: warm-up, R repetitions with the variants interleaved,\n"
"2n-n differencing, minimum over k rounds; mean, SEM ( +- x%% as perf stat prints\n"
"it), median, minimum and 95%% CI per figure; each variant against a baseline with\n"
"Welch's t-test and a verdict.  With no arguments: the entry-NOP comparison of the\n"
"kernel's old NOP tables against NOPL at a footprint that fits the L1i and one that\n"
"does not.\n"
"\n"
"Workloads (default calls):\n"
"  calls    N functions [endbr64][entry][mov eax,imm][ret], called in turn by a driver\n"
"  sled     a loop over copies of one NOP: decode throughput per encoding\n"
"  layout   H hot functions packed together, or each followed by C bytes of cold code\n"
"  sweep    calls with the entry at every offset 0..63 of a cache line\n"
"\n"
"Code:\n"
"  --entry LIST      catalogue names (p6:5,k8:5,...), none, call; default calls/sled:\n"
"                    p6:5,k8:5,k8:atomic5,generic:5,single:5,none,call (sled: no none/call);\n"
"                    layout/sweep: p6:5\n"
"  --funcs LIST      calls/sweep: functions per footprint, default L1i/128 and L1i/8\n"
"                    (256 and 4096 for a 32 KiB L1i; sweep: L1i/256, 128); layout: hot\n"
"                    functions, default 128\n"
"  --bytes LIST      sled: bytes of NOPs per loop, default 2048,65536\n"
"  --align A         slot alignment, default 64;  --offset O  start in the slot, default 0\n"
"  --stride S        slot size, default the smallest multiple of A that fits (sweep: 128)\n"
"  --fill F          bytes between functions: a family (int3 p6 k8 x86_nops gas ...), default int3\n"
"  --driver D        direct (a run of call rel32) or indirect (call through a table); default direct\n"
"  --order O         seq or random (seeded, --seed S, default 1); default seq\n"
"  --endbr           endbr64 before the entry, as with IBT\n"
"  --cold C          layout: cold bytes after each hot function, default 4096\n"
"  --emit-elf FILE   write the generated code as an ELF executable, one symbol per function\n"
"\n"
"Measurement:\n"
"  -r, --repeat R    measured repetitions, default 10;  --warmup W  discarded ones, default 2\n"
"  --inner K         rounds of n and 2n per repetition (minimum taken), default 20 (sweep 5)\n"
"  --sample-us US    length of one run of n iterations, default ~48 us (100000 TSC ticks)\n"
"  -e EVENTS         libpfm4 event names; default cycles,instructions,L1-ICACHE-LOAD-MISSES\n"
"                    with a PMU, context-switches,page-faults without\n"
"  --cpu C           pin to CPU C; default the steadiest allowed CPU by a short probe\n"
"  --sim cachegrind  also L1i misses and instructions from valgrind's cachegrind with this\n"
"                    CPU's L1i geometry (slow: two valgrind runs per variant)\n"
"  --baseline NAME   the variant others are compared with; default p6:5 (sweep +0, layout packed)\n"
"  --threshold PCT   smaller differences are \"no practical difference\", default 1\n"
"  --placement P     shared (every variant at one address, default) or separate\n"
"  --candidates K    shared: score K buffers on all variants, keep the fastest; default 12\n"
"  --pages P         2m (THP, default) or 4k (default for layout)\n"
"\n"
"Output:\n"
"  --json            JSON on stdout;  -o FILE  JSON to FILE (the text still prints)\n"
"  --plot FILE       the charts too: FILE.svg, FILE.png or FILE.pdf (noplab plot draws\n"
"                    them again from a saved -o FILE)\n"
"\n"
"Figures name their source: hw (PMU counter), tsc (time stamp counter; cycles from\n"
"tsc are ticks scaled by the core/TSC clock ratio a 1-cycle add chain measures\n"
"in every round), sw (software event), sim (cachegrind).\n");
}

struct bench_cli {
	struct nl_bench_opts o;
	bool json;
	const char *output;
	const char *plot;	/* --plot FILE */
	/* progress */
	bool tty;
	uint64_t t0, last;
	bool shown;
};

static int parse_uint_list(const char *s, unsigned *out, size_t max, size_t *nr)
{
	char *end;

	*nr = 0;
	while (*s) {
		unsigned long v = strtoul(s, &end, 0);

		if (end == s || v == 0 || v > (1ul << 30) || *nr == max)
			return -1;
		out[(*nr)++] = (unsigned)v;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return *nr ? 0 : -1;
}

static int parse_uint(const char *s, unsigned *out, unsigned min, unsigned max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (end == s || *end || v < min || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_entries(const char *list, struct nl_bench_opts *o, struct nl_diag *d)
{
	char buf[1024], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	o->nr_entries = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (o->nr_entries == NL_BENCH_MAX_ENTRIES)
			return nl_fail(d, -NL_E_USAGE, "at most %d entries", NL_BENCH_MAX_ENTRIES);
		int err = nl_entry_parse(t, &o->entries[o->nr_entries], d);

		if (err)
			return err;
		o->nr_entries++;
	}
	return o->nr_entries ? 0 : nl_fail(d, -NL_E_USAGE, "empty entry list");
}

static void progress(void *p, const char *what, double done)
{
	struct bench_cli *c = p;
	uint64_t now = nl_mono_raw_ns();

	/* a line only for runs longer than a second, only to a terminal, a few times a second */
	if (!c->tty || now - c->t0 < 1000000000u || now - c->last < 200000000u)
		return;
	c->last = now;
	c->shown = true;
	fprintf(stderr, "\rnoplab bench: %-24s %3.0f%%  %5.1f s ", what ? what : "", done * 100,
		(double)(now - c->t0) / 1e9);
	fflush(stderr);
}

static void progress_clear(struct bench_cli *c)
{
	if (c->shown)
		fprintf(stderr, "\r%60s\r", "");
}

/* ---- text ---------------------------------------------------------------- */

struct column {
	const char *key;
	char head[40];
	int idx;
};

/* Column heads short enough for a table; the JSON keeps the full keys and units. */
static void column_head(const struct nl_figure *f, char *buf, size_t size)
{
	static const struct { const char *prefix, *label; } names[] = {
		{ "cycles_per_", "cycles/" }, { "ticks_per_", "ticks/" },
		{ "instructions_per_", "insns/" }, { "entry_cycles_per_", "entry cyc/" },
		{ "nops_per_cycle", "NOPs/cycle" }, { "insns_per_cycle", "insns/cycle" }, { "context_switches_per_repetition", "ctx-sw/rep" },
		{ "page_faults_per_repetition", "faults/rep" }, { "l1i_misses_per_1000_", "L1i miss/1k " },
	};
	const char *label = NULL, *rest = "";

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i].prefix);

		if (!strncmp(f->key, names[i].prefix, n)) {
			label = names[i].label;
			rest = f->key + n;
			break;
		}
	}
	if (!label) {
		const char *rep = strstr(f->key, "_per_repetition");
		int n = rep ? (int)(rep - f->key) : (int)strlen(f->key);

		snprintf(buf, size, "%.*s%s [%s]", n > 14 ? 14 : n, f->key, rep ? "/rep" : "",
			 nl_source_name(f->source));
		return;
	}
	char tail[32];

	snprintf(tail, sizeof(tail), "%s", rest);
	if (!strcmp(tail, "nop"))
		snprintf(tail, sizeof(tail), "NOP");
	if (!strcmp(tail, "calls") || !strcmp(tail, "nops"))
		tail[strlen(tail) - 1] = '\0';
	if (strstr(tail, "_sim"))
		*strstr(tail, "_sim") = '\0';
	snprintf(buf, size, "%s%s [%s]", label, tail, nl_source_name(f->source));
}

static void print_workload(const struct nl_bench *b, const struct nl_workload_run *w)
{
	const struct nl_gen_spec *p = &w->params;
	const struct nl_variant *v0 = &w->v[0];
	struct column cols[NL_BENCH_MAX_FIGS];
	size_t nc = 0;
	char hex[64];

	printf("\n%s: ", w->name);
	switch (w->kind) {
	case NL_WL_SLED:
		printf("a loop over %u bytes of copies of one NOP; a NOP is one copy, whatever it "
		       "decodes to\n", w->size);
		break;
	case NL_WL_LAYOUT:
		printf("%u hot functions, %s driver, %s order; packed, or each followed by %u bytes "
		       "of cold code\n", p->nr_funcs, p->driver ? "indirect" : "direct",
		       p->order ? "random" : "seq", p->cold_bytes);
		break;
	default:
		printf("%u functions, %u-byte slots (align %u, offset %s%u), %s fill, %s driver, "
		       "%s order%s\n", p->nr_funcs, p->stride ? p->stride : p->align, p->align,
		       w->kind == NL_WL_SWEEP ? "0.." : "", w->kind == NL_WL_SWEEP ? 63 : p->offset,
		       nl_nop_family_name(p->fill), p->driver ? "indirect" : "direct",
		       p->order ? "random" : "seq", p->endbr ? ", endbr64" : "");
	}
	printf("  %s; %.2f s", w->fit, w->seconds);
	if (v0->mv.redone_reps)
		printf("; %u repetition%s disturbed as a whole, measured again", v0->mv.redone_reps,
		       v0->mv.redone_reps == 1 ? "" : "s");
	printf("\n");
	if (w->nr_cand) {
		printf("  placement: the fastest of %u candidate buffers (ticks/%s:", w->nr_cand,
		       w->kind == NL_WL_SLED ? "NOP" : "call");
		for (unsigned i = 0; i < w->nr_cand; i++)
			printf(" %s%.2f%s", i == w->chosen ? "[" : "", w->cand_score[i],
			       i == w->chosen ? "]" : "");
		printf(")\n");
	}
	printf("\n");

	/* columns: every figure of the first variant, the primary first, software last */
	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; i < v0->nr_figs; i++) {
			const struct nl_figure *f = &v0->figs[i];
			int want = (int)i == v0->primary ? 0 : f->source == NL_SRC_SW ? 2 : 1;

			if (want != pass || !strncmp(f->key, "ns_per_", 7) ||
			    !strcmp(f->key, "bytes_per_cycle"))
				continue;	/* those are in the JSON; the table stays readable */
			cols[nc].key = f->key;
			column_head(f, cols[nc].head, sizeof(cols[nc].head));
			nc++;
		}
	}
	printf("  %-12s %-16s", "variant", w->kind == NL_WL_SLED ? "NOP" : "entry");
	for (size_t k = 0; k < nc; k++)
		printf(k == 0 ? " %22s" : " %17s", cols[k].head);
	printf("\n");
	for (size_t i = 0; i < w->nr_v; i++) {
		const struct nl_variant *v = &w->v[i];
		const struct nl_entry *e = &v->spec.entry;

		if (e->kind == NL_ENTRY_NOP)
			cli_hex(e->nop->bytes, e->nop->len, hex, sizeof(hex));
		else
			snprintf(hex, sizeof(hex), "%s", e->kind == NL_ENTRY_CALL ? "e8 <stub>" : "-");
		printf("  %-12s %-16s", v->name, hex);
		for (size_t k = 0; k < nc; k++) {
			const struct nl_figure *f = nl_variant_figure(v, cols[k].key);
			char cell[64];

			if (!f)
				snprintf(cell, sizeof(cell), "-");
			else if (k == 0 && !f->deterministic)
				snprintf(cell, sizeof(cell), "%.3f ( +- %.2f%% )", f->sum.mean,
					 f->sum.sem_pct);
			else if (f->source == NL_SRC_SW)
				snprintf(cell, sizeof(cell), "%.0f", f->sum.mean);
			else
				snprintf(cell, sizeof(cell), "%.3f", f->sum.mean);
			if (f && f->scaled)
				strncat(cell, " (scaled!)", sizeof(cell) - strlen(cell) - 1);
			printf(k == 0 ? " %22s" : " %17s", cell);
		}
		printf("\n");
	}
	(void)b;
}

static void print_compare(const struct nl_bench *b, const struct nl_workload_run *w)
{
	const struct nl_variant *base;
	size_t same = 0, nops = 0;

	if (w->baseline < 0 || w->nr_v < 2)
		return;
	base = &w->v[w->baseline];
	printf("\n  Compared with %s on %s (Welch's t-test, 95%%; under %g%% counts as no "
	       "practical difference):\n", base->name,
	       base->primary >= 0 ? base->figs[base->primary].unit : "?", b->opts.threshold_pct);
	for (size_t i = 0; i < w->nr_v; i++) {
		const struct nl_variant *v = &w->v[i];

		if (!v->has_cmp)
			continue;
		printf("  %-12s %s\n", v->name, v->verdict);
		if (v->spec.entry.kind == NL_ENTRY_NOP) {
			nops++;
			same += v->word == NL_WORD_SAME;
		}
	}
	if (w->kind == NL_WL_CALLS && nops) {
		const struct nl_figure *miss = nl_variant_figure(base, "l1i_misses_per_1000_calls");
		const struct nl_variant *none = NULL;

		for (size_t i = 0; i < w->nr_v; i++)
			if (w->v[i].spec.entry.kind == NL_ENTRY_NONE)
				none = &w->v[i];
		printf("  Reading: %s", w->fits_l1i ? "fits L1i" : "exceeds L1i");
		if (miss)
			printf(" (%.0f L1i misses per 1000 calls [%s])", miss->sum.mean,
			       nl_source_name(miss->source));
		if (same == nops) {
			printf("; every entry NOP costs the same as %s here", base->name);
			if (none && none->primary >= 0)
				printf(": a call with no NOP at all takes %.2f %s, and the NOP's decode "
				       "hides in it", none->figs[none->primary].sum.mean,
				       none->figs[none->primary].unit);
			printf(".\n  (noplab bench sled measures decode throughput per encoding.)\n");
		} else {
			printf("; %zu of %zu entry NOPs differ from %s beyond the threshold.\n",
			       nops - same, nops, base->name);
		}
	}
	for (size_t i = 0; i < w->nr_v; i++)
		if (w->v[i].note[0] && (i == 0 || strcmp(w->v[i].note, w->v[i - 1].note)))
			printf("  Note: %s.\n", w->v[i].note);
}

/* Across footprints: what leaving the L1i costs the baseline. */
static void print_footprints(const struct nl_bench *b)
{
	const struct nl_workload_run *fit = NULL, *big = NULL;

	for (size_t i = 0; i < b->nr_w; i++) {
		if (b->w[i].kind != NL_WL_CALLS || b->w[i].baseline < 0 || !b->w[i].measured)
			continue;
		if (b->w[i].fits_l1i && !fit)
			fit = &b->w[i];
		if (!b->w[i].fits_l1i && !big)
			big = &b->w[i];
	}
	if (!fit || !big)
		return;
	const struct nl_variant *a = &fit->v[fit->baseline], *z = &big->v[big->baseline];

	if (a->primary < 0 || z->primary < 0 || strcmp(a->name, z->name))
		return;
	double ma = a->figs[a->primary].sum.mean, mz = z->figs[z->primary].sum.mean;

	printf("\nFootprint: %s goes from %.3f %s (%s, fits L1i) to %.3f (%s, exceeds L1i): "
	       "%+.1f%%.\n", a->name, ma, a->figs[a->primary].unit, fit->name, mz, big->name,
	       100 * (mz - ma) / ma);
}

static void print_env(const struct nl_bench *b)
{
	const struct nl_bench_env *e = &b->env;

	printf("\nEnvironment: %s; %s; CPU %d pinned (%s); %s; counters: %s; pages %s; "
	       "placement %s; %u repetitions (%u warm-up) x %u rounds; %.1f s in all.\n",
	       e->cpu, e->kernel, e->cpu_pinned, e->cpu_choice, e->freq, e->counters, e->pages,
	       e->placement, b->opts.method.reps, b->opts.method.warmups, b->opts.method.inner,
	       b->seconds);
}

static void print_text(const struct nl_bench *b)
{
	const struct nl_bench_opts *o = &b->opts;

	printf("noplab bench: %s%s, %zu footprint%s, %u repetitions; figures are means, "
	       "( +- x%% ) the standard error of the mean\n", nl_workload_name(o->workload),
	       o->builtin_default ? " (the built-in default: kernel NOP tables vs NOPL at entry)" : "",
	       b->nr_w, b->nr_w == 1 ? "" : "s", o->method.reps);
	for (size_t i = 0; i < b->nr_w; i++) {
		const struct nl_workload_run *w = &b->w[i];

		if (!w->measured) {
			printf("\n%s: not measured (interrupted before it started)\n", w->name);
			continue;
		}
		print_workload(b, w);
		if (w->partial)
			printf("  interrupted: partial results, %u of the %u repetitions asked for\n",
			       w->reps, b->reps_asked);
		print_compare(b, w);
	}
	print_footprints(b);
	/* warnings went to stderr as they happened, and are in the JSON */
	print_env(b);
}

/* ---- JSON ---------------------------------------------------------------- */

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *figure_json(const struct nl_figure *f)
{
	json_t *o = json_object(), *runs = json_array();

	for (size_t r = 0; r < f->n; r++)
		json_array_append_new(runs, json_real(f->runs[r]));
	json_object_set_new(o, "mean", json_real(f->sum.mean));
	json_object_set_new(o, "sem_pct", f->deterministic || f->n < 2 ? json_null() :
					  num_or_null(f->sum.sem_pct));
	json_object_set_new(o, "median", json_real(f->sum.median));
	json_object_set_new(o, "min", json_real(f->sum.min));
	json_object_set_new(o, "max", json_real(f->sum.max));
	json_object_set_new(o, "ci95", f->deterministic || f->n < 2 ? json_null() :
				       json_pack("[f, f]", f->sum.ci95_lo, f->sum.ci95_hi));
	json_object_set_new(o, "source", json_string(nl_source_name(f->source)));
	json_object_set_new(o, "unit", json_string(f->unit));
	json_object_set_new(o, "n", json_integer((json_int_t)f->n));
	json_object_set_new(o, "runs", runs);
	if (f->source == NL_SRC_HW) {
		json_object_set_new(o, "running_pct", json_real(f->running_pct));
		json_object_set_new(o, "scaled", json_boolean(f->scaled));
	}
	return o;
}

static const char *word_name(enum nl_word w)
{
	return w == NL_WORD_SLOWER ? "slower" : w == NL_WORD_FASTER ? "faster" : "same";
}

static json_t *variant_json(const struct nl_workload_run *w, const struct nl_variant *v)
{
	json_t *o = json_object(), *figs = json_object(), *entry;
	const struct nl_entry *e = &v->spec.entry;
	char hex[64];

	json_object_set_new(o, "name", json_string(v->name));
	if (e->kind == NL_ENTRY_NOP)
		entry = json_pack("{s:s, s:s, s:i, s:i, s:b}", "name", e->name, "bytes",
				  cli_hex(e->nop->bytes, e->nop->len, hex, sizeof(hex)), "length",
				  e->nop->len, "insns", e->nop->nr_insns, "nop64", e->nop->nop64);
	else
		entry = json_pack("{s:s, s:i}", "name", e->name, "length", nl_entry_len(e));
	json_object_set_new(o, "entry", entry);
	if (w->kind == NL_WL_SWEEP)
		json_object_set_new(o, "offset", json_integer(v->spec.offset));
	if (w->kind == NL_WL_LAYOUT)
		json_object_set_new(o, "packed", json_boolean(v->spec.packed));
	if (w->kind == NL_WL_SLED)
		json_object_set_new(o, "copies", json_integer(v->spec.copies));
	if (v->note[0])
		json_object_set_new(o, "note", json_string(v->note));
	json_object_set_new(o, "iterations", json_integer((json_int_t)v->mv.iters));
	json_object_set_new(o, "extra_rounds", json_integer(v->mv.extra_rounds));
	json_object_set_new(o, "redone_repetitions", json_integer(v->mv.redone_reps));
	for (size_t i = 0; i < v->nr_figs; i++)
		json_object_set_new(figs, v->figs[i].key, figure_json(&v->figs[i]));
	json_object_set_new(o, "figures", figs);
	if (v->has_cmp) {
		const struct nl_variant *b = &w->v[w->baseline];

		json_object_set_new(o, "compare", json_pack(
			"{s:s, s:s, s:o, s:[o, o], s:o, s:o, s:o, s:s, s:b, s:s}",
			"baseline", b->name, "figure", b->figs[b->primary].key,
			"delta_pct", num_or_null(v->cmp.delta_pct),
			"ci95", num_or_null(v->cmp.ci95_lo), num_or_null(v->cmp.ci95_hi),
			"p", num_or_null(v->cmp.p), "t", num_or_null(v->cmp.t),
			"df", num_or_null(v->cmp.df), "verdict", word_name(v->word),
			"significant", v->cmp.verdict != NL_VERDICT_NONE, "text", v->verdict));
	}
	return o;
}

static json_t *workload_json(const struct nl_workload_run *w)
{
	const struct nl_gen_spec *p = &w->params;
	json_t *o = json_object(), *params = json_object(), *vars = json_array();

	json_object_set_new(o, "name", json_string(w->name));
	json_object_set_new(o, "kind", json_string(nl_workload_name(w->kind)));
	if (w->kind == NL_WL_SLED) {
		json_object_set_new(params, "bytes", json_integer(w->size));
	} else {
		json_object_set_new(params, "funcs", json_integer(p->nr_funcs));
		json_object_set_new(params, "align", json_integer(p->align));
		if (w->kind != NL_WL_SWEEP)
			json_object_set_new(params, "offset", json_integer(p->offset));
		json_object_set_new(params, "stride", p->stride ? json_integer(p->stride) : json_null());
		json_object_set_new(params, "fill", json_string(nl_nop_family_name(p->fill)));
		json_object_set_new(params, "driver", json_string(p->driver ? "indirect" : "direct"));
		json_object_set_new(params, "order", json_string(p->order ? "random" : "seq"));
		json_object_set_new(params, "seed", json_integer((json_int_t)p->seed));
		json_object_set_new(params, "endbr", json_boolean(p->endbr));
		if (w->kind == NL_WL_LAYOUT)
			json_object_set_new(params, "cold_bytes", json_integer(p->cold_bytes));
	}
	json_object_set_new(o, "params", params);
	json_object_set_new(o, "hot_bytes", json_integer((json_int_t)w->hot_bytes));
	json_object_set_new(o, "fits_l1i", json_boolean(w->fits_l1i));
	json_object_set_new(o, "fit", json_string(w->fit));
	json_object_set_new(o, "core_clock_ratio", num_or_null(w->core_ratio));
	json_object_set_new(o, "huge_pages", json_boolean(w->huge));
	if (w->nr_cand) {
		json_t *cs = json_array();

		for (unsigned i = 0; i < w->nr_cand; i++)
			json_array_append_new(cs, json_real(w->cand_score[i]));
		json_object_set_new(o, "placement_candidates", json_pack(
			"{s:o, s:i, s:s}", "ticks_per_call", cs, "chosen", w->chosen, "rule",
			"every variant scored in each candidate buffer; the fastest kept"));
	}
	json_object_set_new(o, "seconds", json_real(w->seconds));
	json_object_set_new(o, "baseline", w->baseline >= 0 ? json_string(w->v[w->baseline].name) :
							      json_null());
	for (size_t i = 0; i < w->nr_v; i++)
		json_array_append_new(vars, variant_json(w, &w->v[i]));
	json_object_set_new(o, "variants", vars);
	return o;
}

static json_t *events_json(const char *list)
{
	json_t *a = json_array();
	char buf[512], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		json_array_append_new(a, json_string(t));
	return a;
}

static json_t *bench_json(const struct nl_bench *b)
{
	const struct nl_bench_env *e = &b->env;
	const struct nl_bench_opts *o = &b->opts;
	json_t *doc = cli_json_doc("bench"), *wls = json_array(), *warn = json_array();

	json_object_set_new(doc, "environment", json_pack(
		"{s:s, s:s, s:s, s:b, s:s?, s:o, s:s?, s:i, s:s, s:s, s:f, s:o, s:o, s:s, s:s, s:o}",
		"cpu", e->cpu, "kernel", e->kernel, "counters", e->counters, "hardware_counters", e->hw,
		"hardware_unavailable", e->hw ? NULL : e->hw_reason,
		"counter_read_ns", e->read_cost_ns > 0 ? json_real(e->read_cost_ns) : json_null(),
		"counter_read", e->read_cost_ns > 0 ? (e->read_rdpmc ? "rdpmc" : "read") : NULL,
		"cpu_pinned", e->cpu_pinned, "cpu_choice", e->cpu_choice, "frequency", e->freq,
		"tsc_hz", e->tsc_hz, "core_hz_estimate", e->core_hz > 0 ? json_real(e->core_hz) : json_null(),
		"l1i", e->l1i_kib ? json_pack("{s:i, s:i, s:i}", "size_kib", e->l1i_kib, "ways",
					      e->l1i_ways, "line", e->l1i_line) : json_null(),
		"pages", e->pages, "placement", e->placement, "events", events_json(e->events)));
	json_object_set_new(doc, "method", json_pack(
		"{s:i, s:i, s:i, s:f, s:I, s:s, s:s, s:f}",
		"repetitions", o->method.reps, "warmups", o->method.warmups, "inner_rounds",
		o->method.inner, "sample_ticks", o->method.sample_ticks, "seed",
		(json_int_t)o->method.seed,
		"aggregation", "per repetition: (min t(2n) - min t(n)) / n over the inner rounds",
		"interleaving", "every variant once per round, in a fresh seeded order",
		"threshold_pct", o->threshold_pct));
	for (size_t i = 0; i < b->nr_w; i++) {
		if (!b->w[i].measured)
			continue;
		json_t *wj = workload_json(&b->w[i]);

		json_object_set_new(wj, "partial", json_boolean(b->w[i].partial));
		json_object_set_new(wj, "repetitions", json_integer(b->w[i].reps));
		json_array_append_new(wls, wj);
	}
	json_object_set_new(doc, "workloads", wls);
	json_object_set_new(doc, "partial", json_boolean(b->interrupted));
	for (size_t i = 0; i < b->nr_warnings; i++)
		json_array_append_new(warn, json_string(b->warnings[i]));
	json_object_set_new(doc, "warnings", warn);
	json_object_set_new(doc, "seconds", json_real(b->seconds));
	return doc;
}

/* ---- options ------------------------------------------------------------- */

enum {
	OPT_ENTRY = 256, OPT_FUNCS, OPT_BYTES, OPT_ALIGN, OPT_OFFSET, OPT_STRIDE, OPT_FILL,
	OPT_DRIVER, OPT_ORDER, OPT_SEED, OPT_ENDBR, OPT_COLD, OPT_WARMUP, OPT_INNER, OPT_SAMPLE,
	OPT_CPU, OPT_SIM, OPT_EMIT, OPT_BASELINE, OPT_THRESHOLD, OPT_PLACEMENT, OPT_PAGES,
	OPT_VALGRIND, OPT_CANDIDATES, OPT_PLOT,
};

int cmd_bench(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "entry", required_argument, NULL, OPT_ENTRY },
		{ "funcs", required_argument, NULL, OPT_FUNCS },
		{ "bytes", required_argument, NULL, OPT_BYTES },
		{ "align", required_argument, NULL, OPT_ALIGN },
		{ "offset", required_argument, NULL, OPT_OFFSET },
		{ "stride", required_argument, NULL, OPT_STRIDE },
		{ "fill", required_argument, NULL, OPT_FILL },
		{ "driver", required_argument, NULL, OPT_DRIVER },
		{ "order", required_argument, NULL, OPT_ORDER },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "endbr", no_argument, NULL, OPT_ENDBR },
		{ "cold", required_argument, NULL, OPT_COLD },
		{ "repeat", required_argument, NULL, 'r' },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "inner", required_argument, NULL, OPT_INNER },
		{ "sample-us", required_argument, NULL, OPT_SAMPLE },
		{ "events", required_argument, NULL, 'e' },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "sim", required_argument, NULL, OPT_SIM },
		{ "valgrind", required_argument, NULL, OPT_VALGRIND },
		{ "emit-elf", required_argument, NULL, OPT_EMIT },
		{ "baseline", required_argument, NULL, OPT_BASELINE },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "placement", required_argument, NULL, OPT_PLACEMENT },
		{ "pages", required_argument, NULL, OPT_PAGES },
		{ "candidates", required_argument, NULL, OPT_CANDIDATES },
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_cli c;
	struct nl_bench_opts *o = &c.o;
	struct nl_bench b;
	struct nl_diag diag;
	const char *entries = NULL, *funcs = NULL, *bytes = NULL;
	unsigned u, align = 0, offset = 0, stride = 0, cold = 0;
	int fill = -1, driver = -1, order = -1, endbr = 0, wl = NL_WL_CALLS, ch, err;
	bool have_inner = false;
	unsigned long long seed = 0;
	bool have_offset = false, have_seed = false;
	double sample_us = 0;

	memset(&c, 0, sizeof(c));
	nl_bench_opts_default(o);
	cli_diag_init(&diag, "bench", false);
	o->builtin_default = argc == 1;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "r:e:o:jh", longopts, NULL)) != -1) {
		switch (ch) {
		case OPT_ENTRY: entries = optarg; break;
		case OPT_FUNCS: funcs = optarg; break;
		case OPT_BYTES: bytes = optarg; break;
		case OPT_ALIGN:
			if (parse_uint(optarg, &align, 1, 4096) || (align & (align - 1)))
				return cli_usage_error("bench", "--align wants a power of two 1..4096");
			break;
		case OPT_OFFSET:
			if (parse_uint(optarg, &offset, 0, 4095))
				return cli_usage_error("bench", "--offset wants 0..4095");
			have_offset = true;
			break;
		case OPT_STRIDE:
			if (parse_uint(optarg, &stride, 1, 1u << 20))
				return cli_usage_error("bench", "--stride wants 1..1048576");
			break;
		case OPT_FILL:
			fill = nl_nop_family_by_name(optarg);
			if (fill < 0)
				return cli_usage_error("bench", "unknown fill family '%s'", optarg);
			break;
		case OPT_DRIVER:
			if (!strcmp(optarg, "direct"))
				driver = NL_DRIVER_DIRECT;
			else if (!strcmp(optarg, "indirect"))
				driver = NL_DRIVER_INDIRECT;
			else
				return cli_usage_error("bench", "--driver is direct or indirect");
			break;
		case OPT_ORDER:
			if (!strcmp(optarg, "seq"))
				order = NL_ORDER_SEQ;
			else if (!strcmp(optarg, "random"))
				order = NL_ORDER_RANDOM;
			else
				return cli_usage_error("bench", "--order is seq or random");
			break;
		case OPT_SEED: {
			char *end;

			seed = strtoull(optarg, &end, 0);
			if (end == optarg || *end)
				return cli_usage_error("bench", "--seed wants a number");
			have_seed = true;
			break;
		}
		case OPT_ENDBR: endbr = 1; break;
		case OPT_COLD:
			if (parse_uint(optarg, &cold, 0, 1u << 20))
				return cli_usage_error("bench", "--cold wants 0..1048576");
			break;
		case 'r':
			if (parse_uint(optarg, &o->method.reps, 2, 1000))
				return cli_usage_error("bench", "-r wants 2..1000 repetitions");
			break;
		case OPT_WARMUP:
			if (parse_uint(optarg, &o->method.warmups, 0, 100))
				return cli_usage_error("bench", "--warmup wants 0..100");
			break;
		case OPT_INNER:
			if (parse_uint(optarg, &o->method.inner, 1, 10000))
				return cli_usage_error("bench", "--inner wants 1..10000");
			have_inner = true;
			break;
		case OPT_SAMPLE: {
			char *end;

			sample_us = strtod(optarg, &end);
			if (end == optarg || *end || !(sample_us >= 1 && sample_us <= 1e6))
				return cli_usage_error("bench", "--sample-us wants 1..1000000");
			break;
		}
		case 'e': snprintf(o->events, sizeof(o->events), "%s", optarg); break;
		case OPT_CPU:
			if (parse_uint(optarg, &u, 0, 4095))
				return cli_usage_error("bench", "--cpu wants a CPU number");
			o->cpu = (int)u;
			break;
		case OPT_SIM:
			if (strcmp(optarg, "cachegrind"))
				return cli_usage_error("bench", "--sim knows only cachegrind");
			o->sim_cachegrind = true;
			break;
		case OPT_VALGRIND: o->valgrind = optarg; break;
		case OPT_EMIT: o->emit_elf = optarg; break;
		case OPT_BASELINE: snprintf(o->baseline, sizeof(o->baseline), "%s", optarg); break;
		case OPT_THRESHOLD: {
			char *end;

			o->threshold_pct = strtod(optarg, &end);
			if (end == optarg || *end || !(o->threshold_pct >= 0 && o->threshold_pct < 100))
				return cli_usage_error("bench", "--threshold wants a percentage");
			break;
		}
		case OPT_PLACEMENT:
			if (!strcmp(optarg, "shared"))
				o->placement = NL_PLACE_SHARED;
			else if (!strcmp(optarg, "separate"))
				o->placement = NL_PLACE_SEPARATE;
			else
				return cli_usage_error("bench", "--placement is shared or separate");
			break;
		case OPT_PAGES:
			if (!strcmp(optarg, "4k"))
				o->pages = NL_PAGES_4K;
			else if (!strcmp(optarg, "2m"))
				o->pages = NL_PAGES_2M;
			else
				return cli_usage_error("bench", "--pages is 4k or 2m");
			break;
		case OPT_CANDIDATES:
			if (parse_uint(optarg, &o->candidates, 1, NL_BENCH_MAX_CANDIDATES))
				return cli_usage_error("bench", "--candidates wants 1..%d",
						       NL_BENCH_MAX_CANDIDATES);
			break;
		case 'j': c.json = true; break;
		case 'o': c.output = optarg; break;
		case OPT_PLOT:
			/* a bad name is a usage error now, not after the measurement */
			if (cli_plot_check_path(optarg, &diag))
				return cli_usage_error("bench", "--plot: %s", diag.msg);
			c.plot = optarg;
			break;
		case 'h': bench_usage(stdout); return NL_EXIT_OK;
		default: bench_usage(stderr); return NL_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		wl = nl_workload_by_name(argv[optind]);
		if (wl < 0)
			return cli_usage_error("bench", "unknown workload '%s' (calls, sled, layout, sweep)",
					       argv[optind]);
		if (++optind < argc)
			return cli_usage_error("bench", "unexpected argument '%s'", argv[optind]);
	}

	/* the workload's own defaults first, then what was given */
	o->workload = (enum nl_workload)wl;
	nl_gen_spec_default(&o->spec, o->workload);
	if (align)
		o->spec.align = align;
	if (o->workload == NL_WL_SWEEP && !have_inner)
		o->method.inner = 5;	/* 64 variants: fewer rounds keep it to seconds */
	if (have_offset) {
		if (o->workload == NL_WL_SWEEP)
			return cli_usage_error("bench", "sweep runs every offset: drop --offset");
		o->spec.offset = offset;
	}
	if (stride)
		o->spec.stride = stride;
	if (fill >= 0)
		o->spec.fill = (enum nl_nop_family)fill;
	if (driver >= 0)
		o->spec.driver = (enum nl_driver)driver;
	if (order >= 0)
		o->spec.order = (enum nl_order)order;
	if (have_seed)
		o->spec.seed = o->method.seed = seed;
	o->spec.endbr = endbr;
	if (cold) {
		if (o->workload != NL_WL_LAYOUT)
			return cli_usage_error("bench", "--cold is for the layout workload");
		o->spec.cold_bytes = cold;
	}
	if (sample_us > 0) {
		struct nl_clock clk;

		/* microseconds to TSC ticks needs the TSC rate; a quick calibration gives it */
		nl_clock_init(&clk, NULL);
		nl_clock_calibrate_begin(&clk);
		while (nl_clock_calibrate_end(&clk) == -EAGAIN)
			;
		o->method.sample_ticks = sample_us * clk.tsc_hz / 1e6;
	}
	if (entries && (err = parse_entries(entries, o, &diag)))
		return cli_usage_error("bench", "%s", diag.msg);
	if (bytes && o->workload != NL_WL_SLED)
		return cli_usage_error("bench", "--bytes is for the sled workload (others take --funcs)");
	if (funcs && o->workload == NL_WL_SLED)
		return cli_usage_error("bench", "sled takes --bytes, not --funcs");
	if ((funcs || bytes) &&
	    parse_uint_list(funcs ? funcs : bytes, o->sizes, NL_BENCH_MAX_SIZES, &o->nr_sizes))
		return cli_usage_error("bench", "--%s wants a list of up to %d positive numbers",
				       funcs ? "funcs" : "bytes", NL_BENCH_MAX_SIZES);
	if (o->workload == NL_WL_SWEEP && o->nr_entries > 4)
		return cli_usage_error("bench", "sweep: at most 4 entries (64 variants each)");

	c.tty = isatty(STDERR_FILENO);
	c.t0 = c.last = nl_mono_raw_ns();
	o->progress = progress;
	o->progress_ctx = &c;
	struct cli_stop stop;

	o->stop = cli_stop_begin(&stop);
	err = nl_bench_run(&b, o, &diag);
	int stop_sig = cli_stop_end(&stop);

	progress_clear(&c);
	if (!err && b.interrupted) {
		size_t measured = 0;

		for (size_t i = 0; i < b.nr_w; i++)
			measured += b.w[i].measured;
		fprintf(stderr, "noplab bench: interrupted (%s): %s\n", strsignal(stop_sig),
			measured ? "reporting what was measured, marked partial"
				 : "nothing was measured yet");
		if (!measured) {
			nl_bench_free(&b);
			cli_stop_reraise(stop_sig);
			return NL_EXIT_ENV;
		}
	}
	if (err) {
		int st = cli_error("bench", NULL, err, &diag);

		nl_bench_free(&b);
		/* a bad event name or option value is the user's; the rest is the environment */
		return err == -NL_E_USAGE || err == -NL_E_EVENT ? NL_EXIT_USAGE :
		       st == NL_EXIT_INPUT && !o->emit_elf ? NL_EXIT_ENV : st;
	}
	if (c.json) {
		err = cli_json_write(bench_json(&b), NULL, "bench");
	} else {
		print_text(&b);
		fflush(stdout);
	}
	if (!err && c.output)
		err = cli_json_write(bench_json(&b), c.output, "bench");
	if (!err && c.plot) {
		/* drawn from the same document -o writes, so noplab plot redraws it alike */
		json_t *doc = bench_json(&b);
		int perr = cli_plot_bench(doc, c.plot, &diag);

		json_decref(doc);
		if (perr)
			err = cli_error("bench", c.plot, perr, &diag);
	}
	nl_bench_free(&b);
	/* after the results are out, end by the signal the user sent */
	cli_stop_reraise(stop_sig);
	return err;
}
