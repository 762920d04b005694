// SPDX-License-Identifier: MIT
/*
 * noplab bench: experiments of workloads and variants (bench.h).  This file
 * plans the workloads, sets up the environment (pinning, counters, pages),
 * drives the method, and turns raw per-repetition values into figures,
 * summaries and verdicts.  It prints nothing.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>

#include "noplab/bench.h"
#include "noplab/clock.h"
#include "noplab/counters.h"
#include "noplab/cpu.h"

#define CLOCK_CHAIN 100		/* adds per probe iteration */
#define LINE 64u
#define HUGE_SPAN (2u << 20)
#define SWEEP_OFFSETS 64
#define MAX_VARIANTS 4096
#define AUTO_CPUS_MAX 16	/* CPUs the automatic choice looks at */

static const char *const default_entries[] = {
	"p6:5", "k8:5", "k8:atomic5", "generic:5", "single:5", "none", "call",
};

const char *nl_source_name(enum nl_source s)
{
	static const char *const names[] = { "hw", "tsc", "sw", "sim" };

	return (unsigned)s < 4 ? names[s] : "?";
}

void nl_bench_opts_default(struct nl_bench_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->workload = NL_WL_CALLS;
	nl_gen_spec_default(&o->spec, NL_WL_CALLS);
	nl_method_default(&o->method);
	o->method.inner = 20;
	o->method.sample_ticks = 100e3;
	o->cpu = -1;
	o->placement = NL_PLACE_SHARED;
	o->candidates = 12;
	o->pages = NL_PAGES_DEFAULT;
	o->threshold_pct = 1.0;
}

const struct nl_figure *nl_variant_figure(const struct nl_variant *v, const char *key)
{
	for (size_t i = 0; i < v->nr_figs; i++)
		if (!strcmp(v->figs[i].key, key))
			return &v->figs[i];
	return NULL;
}

static void warn_once(struct nl_bench *b, struct nl_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void warn_once(struct nl_bench *b, struct nl_diag *d, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < b->nr_warnings; i++)
		if (!strcmp(b->warnings[i], msg))
			return;
	if (b->nr_warnings < sizeof(b->warnings) / sizeof(b->warnings[0]))
		snprintf(b->warnings[b->nr_warnings++], sizeof(b->warnings[0]), "%s", msg);
	nl_log(d, NL_LOG_WARN, "%s", msg);
}

/* ---- figures ------------------------------------------------------------- */

static struct nl_figure *add_fig(struct nl_variant *v, const char *key, const char *unit,
				 enum nl_source src, size_t n)
{
	struct nl_figure *f;

	if (v->nr_figs == NL_BENCH_MAX_FIGS)
		return NULL;
	f = &v->figs[v->nr_figs++];
	memset(f, 0, sizeof(*f));
	snprintf(f->key, sizeof(f->key), "%s", key);
	snprintf(f->unit, sizeof(f->unit), "%s", unit);
	f->source = src;
	f->n = n;
	f->running_pct = 100;
	f->runs = calloc(n ? n : 1, sizeof(*f->runs));
	if (!f->runs) {
		v->nr_figs--;
		return NULL;
	}
	return f;
}

static int finish_fig(struct nl_figure *f)
{
	return f ? nl_summarize(f->runs, f->n, &f->sum) : -ENOMEM;
}

/* "IC_TAG_HIT_MISS:IC_MISS" -> "ic_tag_hit_miss_ic_miss" */
static void key_of_event(const char *name, char *buf, size_t size)
{
	size_t o = 0;

	for (const char *p = name; *p && o + 1 < size; p++) {
		char c = *p;

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			c = '_';
		if (c == '_' && (o == 0 || buf[o - 1] == '_'))
			continue;
		buf[o++] = c;
	}
	while (o && buf[o - 1] == '_')
		o--;
	buf[o] = '\0';
}

static bool is_miss_event(const char *name)
{
	for (const char *p = name; *p; p++)
		if (!strncasecmp(p, "miss", 4))
			return true;
	return false;
}

/* ---- environment --------------------------------------------------------- */

struct ctx {
	struct nl_bench *b;
	const struct nl_bench_opts *o;
	struct nl_diag *d;
	struct nl_clock clk;
	struct nl_cpu cpu;
	struct nl_pmu_probe pmu;
	struct nl_event_list evs;
	struct nl_plan plan;
	bool have_events;
	struct nl_image probe_img;
	struct nl_codebuf probe_cb;
	double done_before, share;	/* progress bookkeeping */
	const char *what;
};

static int probe_run(struct nl_codebuf *cb, const struct nl_image *img, uint64_t iters)
{
	nl_driver_fn fn = nl_codebuf_driver(cb, img);

	return fn(iters, (void *const *)(uintptr_t)1) == iters * img->sum_per_iter ? 0 : -EIO;
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return (a > b) - (a < b);
}

/*
 * The automatic CPU: on a small VM one vCPU often shares its core with the
 * other's busy hyperthread or takes the device interrupts.  Time 200 short
 * probe runs on each allowed CPU and keep the steadiest (smallest upper
 * quartile over minimum), then the fastest.
 */
static int pick_cpu(struct ctx *c, char *why, size_t size)
{
	cpu_set_t allowed;
	int best = -1, seen = 0;
	double best_score = 0;
	uint64_t t[200];

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return nl_fail_errno(c->d, -errno, "sched_getaffinity");
	for (int cpu = 0; cpu < CPU_SETSIZE && seen < AUTO_CPUS_MAX; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		seen++;
		if (nl_pin_cpu(cpu, NULL) < 0)
			continue;
		probe_run(&c->probe_cb, &c->probe_img, 2000);	/* warm */
		for (size_t i = 0; i < 200; i++) {
			uint64_t t0 = nl_tsc_begin();

			if (probe_run(&c->probe_cb, &c->probe_img, 200))
				return nl_fail(c->d, -EIO, "the clock probe returned a wrong checksum");
			t[i] = nl_tsc_end() - t0;
		}
		qsort(t, 200, sizeof(t[0]), cmp_u64);
		double score = (double)t[150] / (double)t[0] + (double)t[0] * 1e-12;

		if (best < 0 || score < best_score) {
			best = cpu;
			best_score = score;
		}
	}
	if (best < 0)
		return nl_fail(c->d, -EIO, "no CPU to pin to");
	/* sched_setaffinity narrowed the mask; restore it before the final choice */
	sched_setaffinity(0, sizeof(allowed), &allowed);
	if (seen > 1)
		snprintf(why, size, "auto: steadiest of %d CPUs by a short probe", seen);
	else
		snprintf(why, size, "auto: the only allowed CPU");
	return nl_pin_cpu(best, c->d);
}

static void describe_cpu(struct ctx *c)
{
	struct nl_bench_env *e = &c->b->env;
	struct utsname u;

	snprintf(e->cpu, sizeof(e->cpu), "%s (%s family %#x model %#x)",
		 c->cpu.brand[0] ? c->cpu.brand : c->cpu.vendor_id, nl_vendor_name(c->cpu.vendor),
		 c->cpu.family, c->cpu.model);
	if (!uname(&u))
		snprintf(e->kernel, sizeof(e->kernel), "%s %s", u.sysname, u.release);
	if (c->cpu.l1i.known) {
		e->l1i_kib = c->cpu.l1i.size_kib;
		e->l1i_ways = c->cpu.l1i.fully_assoc ? 0 : c->cpu.l1i.ways;
		e->l1i_line = c->cpu.l1i.line;
	}
}

/* Events: the user's list, or cycles + instructions (+ L1i misses) where a PMU exists. */
static int plan_events(struct ctx *c)
{
	struct nl_bench_env *e = &c->b->env;
	const char *list = c->o->events;
	char dflt[256];
	int err;

	nl_pmu_probe(&c->pmu, c->d);
	if (!c->pmu.hw_usable)
		snprintf(e->hw_reason, sizeof(e->hw_reason), "%s: %s", nl_strerror(c->pmu.hw_err),
			 nl_perf_open_hint(c->pmu.hw_err));
	if (!list[0]) {
		if (c->pmu.hw_usable)
			snprintf(dflt, sizeof(dflt), "cycles,instructions,L1-ICACHE-LOAD-MISSES");
		else if (c->pmu.sw_usable)
			snprintf(dflt, sizeof(dflt), "context-switches,page-faults");
		else
			dflt[0] = '\0';
		list = dflt;
	}
	if (!list[0])
		return 0;
	err = nl_events_parse(list, false, &c->evs, c->d);
	if (err == -NL_E_EVENT && !c->o->events[0] && c->pmu.hw_usable) {
		/* the default's cache event may not encode on this PMU: drop it, say so */
		warn_once(c->b, c->d, "L1-ICACHE-LOAD-MISSES does not encode here; counting cycles "
			  "and instructions only");
		c->d->msg[0] = '\0';
		err = nl_events_parse("cycles,instructions", false, &c->evs, c->d);
	}
	if (err)
		return err;
	if (!c->pmu.hw_usable) {
		size_t dropped = nl_events_drop_hw(&c->evs);

		if (dropped)
			warn_once(c->b, c->d, "no hardware PMU (%s): %zu hardware event%s not counted; "
				  "time comes from the TSC", e->hw_reason, dropped, dropped == 1 ? "" : "s");
	}
	if (!c->evs.nr)
		return 0;
	err = nl_plan_passes(&c->evs, nl_counter_budget(&c->pmu), &c->plan, c->d);
	if (err)
		return err;
	c->have_events = true;
	for (size_t i = 0, o = 0; i < c->evs.nr; i++)
		o += (size_t)snprintf(e->events + o, o < sizeof(e->events) ? sizeof(e->events) - o : 0,
				      "%s%s", i ? "," : "", c->evs.ev[i].name);
	return 0;
}

/* ---- workloads and variants ---------------------------------------------- */

static unsigned l1i_bytes(const struct ctx *c)
{
	return c->cpu.l1i.known ? c->cpu.l1i.size_kib * 1024u : 32768u;
}

static size_t entry_list(const struct ctx *c, struct nl_entry *out)
{
	const struct nl_bench_opts *o = c->o;
	size_t n = 0;

	if (o->nr_entries) {
		memcpy(out, o->entries, o->nr_entries * sizeof(*out));
		return o->nr_entries;
	}
	if (o->workload == NL_WL_CALLS || o->workload == NL_WL_SLED) {
		for (size_t i = 0; i < sizeof(default_entries) / sizeof(default_entries[0]); i++) {
			nl_entry_parse(default_entries[i], &out[n], NULL);
			if (o->workload == NL_WL_SLED && out[n].kind != NL_ENTRY_NOP)
				continue;
			n++;
		}
		return n;
	}
	nl_entry_parse("p6:5", &out[0], NULL);
	return 1;
}

static size_t size_list(const struct ctx *c, unsigned *out)
{
	const struct nl_bench_opts *o = c->o;
	unsigned l1i = l1i_bytes(c);

	if (o->nr_sizes) {
		memcpy(out, o->sizes, o->nr_sizes * sizeof(*out));
		return o->nr_sizes;
	}
	switch (o->workload) {
	case NL_WL_CALLS:
		/* half the L1i, and eight times it: fits with room, clearly does not */
		out[0] = l1i / 2 / LINE;
		out[1] = l1i * 8 / LINE;
		return 2;
	case NL_WL_SLED:
		out[0] = 2048;		/* bytes of NOPs: in the op cache and L1i */
		out[1] = 64 * 1024;	/* beyond the L1i, and any op cache */
		return 2;
	case NL_WL_LAYOUT:
		out[0] = 128;		/* hot functions: 2x a 64-entry L1 iTLB when spread */
		return 1;
	default:
		/* sweep: 128-byte slots, a function may take two lines: a quarter fits */
		out[0] = l1i / 4 / LINE;
		return 1;
	}
}

static int add_variant(struct nl_workload_run *w, const struct nl_gen_spec *spec,
		       const char *name)
{
	struct nl_variant *v;

	if (w->nr_v == MAX_VARIANTS)
		return -NL_E_LIMIT;
	v = &w->v[w->nr_v++];
	memset(v, 0, sizeof(*v));
	v->spec = *spec;
	snprintf(v->name, sizeof(v->name), "%s", name);
	v->primary = -1;
	return 0;
}

static void clobber_note(struct nl_variant *v)
{
	const struct nl_entry *e = &v->spec.entry;

	if (!nl_entry_clobbers(e))
		return;
	snprintf(v->note, sizeof(v->note),
		 "%s is not a NOP in 64-bit mode: it writes %s (a 32-bit lea/mov zero-extends into "
		 "the 64-bit register); the generated code keeps nothing live there, so it runs "
		 "and is measured, but a 64-bit kernel could not use it", e->name,
		 e->nop->family == NL_FAM_K7 ? "EAX" : "ESI");
}

static int plan_workloads(struct ctx *c)
{
	const struct nl_bench_opts *o = c->o;
	struct nl_bench *b = c->b;
	struct nl_entry ents[NL_BENCH_MAX_ENTRIES];
	unsigned sizes[NL_BENCH_MAX_SIZES];
	size_t ne = entry_list(c, ents), ns = size_list(c, sizes);
	char name[64];
	int err = 0;

	b->w = calloc(ns, sizeof(*b->w));
	if (!b->w)
		return -ENOMEM;
	for (size_t si = 0; si < ns && !err; si++) {
		struct nl_workload_run *w = &b->w[b->nr_w++];
		struct nl_gen_spec s = o->spec;
		size_t cap;

		w->kind = o->workload;
		w->size = sizes[si];
		w->baseline = -1;
		s.workload = o->workload;
		if (o->workload == NL_WL_LAYOUT && !s.cold_bytes)
			s.cold_bytes = 4096;
		switch (o->workload) {
		case NL_WL_SLED:
			snprintf(w->name, sizeof(w->name), "sled-%uKiB", sizes[si] / 1024);
			if (sizes[si] % 1024)
				snprintf(w->name, sizeof(w->name), "sled-%uB", sizes[si]);
			break;
		case NL_WL_LAYOUT:
			snprintf(w->name, sizeof(w->name), "layout-%u", sizes[si]);
			break;
		case NL_WL_SWEEP:
			snprintf(w->name, sizeof(w->name), "sweep-%u", sizes[si]);
			if (!s.stride)
				s.stride = 2 * LINE;
			break;
		default:
			snprintf(w->name, sizeof(w->name), "calls-%u", sizes[si]);
		}
		s.nr_funcs = sizes[si];
		cap = o->workload == NL_WL_SWEEP ? ne * SWEEP_OFFSETS : o->workload == NL_WL_LAYOUT ?
		      2 * ne : ne;
		w->v = calloc(cap, sizeof(*w->v));
		if (!w->v)
			return -ENOMEM;
		for (size_t ei = 0; ei < ne && !err; ei++) {
			s.entry = ents[ei];
			if (o->workload == NL_WL_SLED) {
				if (ents[ei].kind != NL_ENTRY_NOP)
					return nl_fail(c->d, -NL_E_USAGE,
						       "sled runs catalogue NOPs, not '%s'", ents[ei].name);
				s.copies = sizes[si] / ents[ei].nop->len;
				if (!s.copies)
					s.copies = 1;
				err = add_variant(w, &s, ents[ei].name);
			} else if (o->workload == NL_WL_LAYOUT) {
				for (int packed = 1; packed >= 0 && !err; packed--) {
					s.packed = packed;
					if (ne == 1)
						snprintf(name, sizeof(name), "%s", packed ? "packed" : "spread");
					else
						snprintf(name, sizeof(name), "%s %s", ents[ei].name,
							 packed ? "packed" : "spread");
					err = add_variant(w, &s, name);
				}
			} else if (o->workload == NL_WL_SWEEP) {
				for (unsigned off = 0; off < SWEEP_OFFSETS && !err; off++) {
					s.offset = off;
					snprintf(name, sizeof(name), "%s+%u", ents[ei].name, off);
					err = add_variant(w, &s, name);
				}
			} else {
				err = add_variant(w, &s, ents[ei].name);
			}
		}
		if (err)
			return err;
		w->params = w->v[0].spec;
		for (size_t i = 0; i < w->nr_v; i++)
			clobber_note(&w->v[i]);
		/* baseline: the user's name, else p6:5 (today's kernel NOP), else the first */
		const char *want = o->baseline[0] ? o->baseline : NULL;

		for (size_t i = 0; i < w->nr_v && w->baseline < 0; i++)
			if (want ? !strcmp(w->v[i].name, want) : i == 0)
				w->baseline = (int)i;
		if (!want) {
			for (size_t i = 0; i < w->nr_v; i++)
				if (!strcmp(w->v[i].name, "p6:5"))
					w->baseline = (int)i;
		}
		if (want && w->baseline < 0)
			return nl_fail(c->d, -NL_E_USAGE, "baseline '%s' is not a variant of %s", want,
				       w->name);
	}
	return err;
}

/* Distinct cache lines the code that runs touches, in bytes. */
static uint64_t hot_lines_bytes(const struct nl_image *img, bool call_entry)
{
	uint64_t bytes = 0, last = UINT64_MAX;

	for (size_t i = 0; i < img->nr_syms; i++) {
		const struct nl_gsym *s = &img->syms[i];

		if (s->kind == NL_SYM_COLD || s->kind == NL_SYM_START ||
		    (s->kind == NL_SYM_STUB && !call_entry) || !s->size)
			continue;
		for (uint64_t l = s->off / LINE; l <= (s->off + s->size - 1) / LINE; l++) {
			if (l != last)
				bytes += LINE;
			last = l;
		}
	}
	return bytes;
}

static void fit_note(struct ctx *c, struct nl_workload_run *w)
{
	const struct nl_variant *v = &w->v[0];
	unsigned l1i = l1i_bytes(c);
	uint64_t hot = 0;

	for (size_t i = 0; i < w->nr_v; i++) {
		uint64_t h = hot_lines_bytes(&w->v[i].img, w->v[i].spec.entry.kind == NL_ENTRY_CALL);

		if (h > hot)
			hot = h;
	}
	w->hot_bytes = hot;
	w->fits_l1i = hot <= l1i;
	if (w->kind == NL_WL_LAYOUT) {
		uint64_t span = v->spec.nr_funcs * ((uint64_t)v->spec.cold_bytes + LINE);

		snprintf(w->fit, sizeof(w->fit),
			 "%u hot functions (%.0f KiB of hot code: %s the %u KiB L1i); spread: one "
			 "every %u bytes over %.0f KiB, %u 4 KiB pages",
			 v->spec.nr_funcs, hot / 1024.0, w->fits_l1i ? "fits" : "exceeds", l1i / 1024,
			 v->spec.cold_bytes + LINE, span / 1024.0, (unsigned)((span + 4095) / 4096));
	} else if (w->fits_l1i) {
		snprintf(w->fit, sizeof(w->fit), "%.1f KiB of code runs per pass: fits the %u KiB L1i",
			 hot / 1024.0, l1i / 1024);
	} else {
		snprintf(w->fit, sizeof(w->fit),
			 "%.1f KiB of code runs per pass: exceeds the %u KiB L1i (%.1fx)", hot / 1024.0,
			 l1i / 1024, (double)hot / l1i);
	}
}

/* ---- placement ----------------------------------------------------------- */

struct activate_ctx {
	struct nl_workload_run *w;
};

/* Shared placement: copy variant i into the buffer (W^X: unseal, copy, seal). */
static int activate_shared(void *p, size_t i, struct nl_diag *d)
{
	struct nl_workload_run *w = ((struct activate_ctx *)p)->w;
	int err;

	if (i >= w->nr_v)
		return 0;	/* the clock probe lives in its own buffer */
	err = nl_codebuf_unseal(&w->shared, d);
	if (err)
		return err;
	memcpy(w->shared.base, w->v[i].img.code, w->v[i].img.size);
	return nl_codebuf_seal(&w->shared, d);
}

static bool use_huge(const struct ctx *c)
{
	if (c->o->pages == NL_PAGES_4K)
		return false;
	if (c->o->pages == NL_PAGES_2M)
		return true;
	/* layout is about iTLB reach: keep it on 4 KiB pages unless told otherwise */
	return c->o->workload != NL_WL_LAYOUT;
}

static double per_unit(const struct nl_image *img, enum nl_workload wl)
{
	double u = wl == NL_WL_SLED ? (double)img->nops_per_iter : (double)img->calls_per_iter;

	return u > 0 ? u : 1;
}

static int map_candidate(struct nl_codebuf *cb, size_t size, unsigned flags, bool *huge,
			 struct nl_diag *d)
{
	int err = nl_codebuf_map_flags(cb, size, flags, d);

	if (err)
		return err;
	/* touch it now: the kernel picks the page size at the first write fault */
	memset(cb->base, 0xcc, cb->size);
	*huge = flags && nl_codebuf_huge_bytes(cb) > 0;
	return nl_codebuf_seal(cb, d);
}

static int copy_in(struct nl_codebuf *cb, const struct nl_image *img, struct nl_diag *d)
{
	int err = nl_codebuf_unseal(cb, d);

	if (err)
		return err;
	memcpy(cb->base, img->code, img->size);
	return nl_codebuf_seal(cb, d);
}

/* Quick per-call ticks of every variant with the code in cb: a placement's score. */
static int quick_score(const struct nl_workload_run *w, struct nl_codebuf *cb, int runs,
		       double *score, struct nl_diag *d)
{
	double sum = 0;

	for (size_t i = 0; i < w->nr_v; i++) {
		const struct nl_image *img = &w->v[i].img;
		double calls = per_unit(img, w->kind);
		uint64_t n = (uint64_t)(16384 / calls) + 1, best[2] = { UINT64_MAX, UINT64_MAX };
		void **table = NULL;
		int err = copy_in(cb, img, d);

		if (!err && img->nr_table) {
			table = malloc(img->nr_table * sizeof(*table));
			if (!table)
				err = -ENOMEM;
			for (size_t k = 0; table && k < img->nr_table; k++)
				table[k] = cb->base + img->table[k];
		}
		nl_driver_fn fn = nl_codebuf_driver(cb, img);

		if (!err && fn(n, table) != n * img->sum_per_iter)	/* dry, and a check */
			err = nl_fail(d, -EIO, "%s: the generated code returned a wrong checksum",
				      w->v[i].name);
		for (int k = 0; k < runs && !err; k++) {
			uint64_t it = n << (k & 1), t0 = nl_tsc_begin();

			fn(it, table);
			uint64_t t = nl_tsc_end() - t0;

			if (t < best[k & 1])
				best[k & 1] = t;
		}
		free(table);
		if (err)
			return err;
		sum += ((double)best[1] - (double)best[0]) / (double)n / calls;
	}
	*score = sum / (double)w->nr_v;
	return 0;
}

/*
 * The shared buffer: the best of several candidates.  In a VM a guest's huge
 * page may or may not be backed by a huge page on the host, and which one the
 * kernel hands out changes from run to run; on the project's VM that alone
 * moved p6:5 at 4096 functions between 4.1 and 4.9 cycles per call (iTLB
 * reach), and took single:5 with it differently.  Mapping a few buffers,
 * scoring each on all variants, and keeping the fastest measures every
 * variant in the same, best placement, run after run.
 */
static int choose_buffer(struct ctx *c, struct nl_workload_run *w, size_t size, unsigned flags)
{
	unsigned k = c->o->candidates ? c->o->candidates : 1;
	struct nl_codebuf cand[NL_BENCH_MAX_CANDIDATES];
	bool huge[NL_BENCH_MAX_CANDIDATES];
	unsigned best = 0;
	int err = 0;

	if (k > NL_BENCH_MAX_CANDIDATES)
		k = NL_BENCH_MAX_CANDIDATES;
	memset(cand, 0, sizeof(cand));
	for (unsigned i = 0; i < k && !err; i++)
		err = map_candidate(&cand[i], size, flags, &huge[i], c->d);
	for (unsigned i = 0; i < k && !err && k > 1; i++) {
		err = quick_score(w, &cand[i], 16, &w->cand_score[i], c->d);
		if (!err && w->cand_score[i] < w->cand_score[best])
			best = i;
	}
	/*
	 * The quick scores of the best few are often within their own noise of
	 * each other: score the three best again, four times as long, and keep
	 * the best of those.
	 */
	if (!err && k > 3) {
		unsigned top[3];
		double final_best = 0;

		for (unsigned t = 0; t < 3; t++) {
			top[t] = UINT32_MAX;
			for (unsigned i = 0; i < k; i++) {
				bool taken = false;

				for (unsigned u = 0; u < t; u++)
					taken |= top[u] == i;
				if (!taken && (top[t] == UINT32_MAX ||
					       w->cand_score[i] < w->cand_score[top[t]]))
					top[t] = i;
			}
		}
		for (unsigned t = 0; t < 3 && !err; t++) {
			double sc;

			err = quick_score(w, &cand[top[t]], 64, &sc, c->d);
			if (!err && (t == 0 || sc < final_best)) {
				final_best = sc;
				best = top[t];
			}
		}
	}
	w->nr_cand = k > 1 ? k : 0;
	w->chosen = best;
	for (unsigned i = 0; i < k; i++)
		if (i != best || err)
			nl_codebuf_unmap(&cand[i]);
	if (err)
		return err;
	w->shared = cand[best];
	w->huge = huge[best];
	return 0;
}

static int load_workload(struct ctx *c, struct nl_workload_run *w)
{
	unsigned flags = use_huge(c) ? NL_CODEBUF_HUGE : 0;
	size_t max = 0;
	int err;

	for (size_t i = 0; i < w->nr_v; i++) {
		err = nl_gen(&w->v[i].spec, &w->v[i].img, c->d);
		if (err)
			return err;
		if (w->v[i].img.size > max)
			max = w->v[i].img.size;
	}
	fit_note(c, w);
	if (c->o->placement == NL_PLACE_SHARED) {
		err = choose_buffer(c, w, max, flags);
		if (err)
			return err;
		w->emit_addr = (uintptr_t)w->shared.base;
	}
	for (size_t i = 0; i < w->nr_v; i++) {
		struct nl_variant *v = &w->v[i];
		uint8_t *base;

		if (c->o->placement == NL_PLACE_SEPARATE) {
			err = nl_codebuf_load_flags(&v->cb, &v->img, flags, c->d);
			if (err)
				return err;
			base = v->cb.base;
			w->huge = flags && nl_codebuf_huge_bytes(&v->cb) > 0;
		} else {
			base = w->shared.base;
		}
		if (v->img.nr_table) {
			v->table = malloc(v->img.nr_table * sizeof(*v->table));
			if (!v->table)
				return -ENOMEM;
			for (size_t k = 0; k < v->img.nr_table; k++)
				v->table[k] = base + v->img.table[k];
		}
		v->mv.fn = (nl_driver_fn)(uintptr_t)(base + v->img.driver_off);
		v->mv.table = v->table;
		v->mv.expect_per_iter = v->img.sum_per_iter;
	}
	return 0;
}

/* ---- measuring ----------------------------------------------------------- */

static int group_read(void *g, uint64_t *vals)
{
	bool rdpmc;

	return nl_group_read_now(g, vals, &rdpmc);
}

static void progress(void *p, double done)
{
	struct ctx *c = p;

	if (c->o->progress)
		c->o->progress(c->o->progress_ctx, c->what, c->done_before + c->share * done);
}

struct pass_out {
	size_t nr;			/* events of this pass */
	unsigned ev[NL_GROUP_MAX];	/* event list index per member */
	double *vals[NL_GROUP_MAX];	/* [variant * reps + rep] */
	double running_pct;
};

static int measure(struct ctx *c, struct nl_workload_run *w, struct nl_mvar *mv, size_t nr,
		   const struct nl_mvar *clock, struct pass_out *passes, size_t *nr_passes)
{
	const size_t reps = c->o->method.reps;
	size_t np = c->have_events ? c->plan.nr : 1;
	struct activate_ctx act = { .w = w };
	struct nl_method m = c->o->method;
	int err = 0;

	if (c->o->placement == NL_PLACE_SHARED) {
		m.activate = activate_shared;
		m.activate_ctx = &act;
	}
	m.progress = progress;
	m.progress_ctx = c;
	m.stop = c->o->stop;
	m.clock = clock;
	m.clock_cycles_per_iter = CLOCK_CHAIN;
	*nr_passes = np;
	c->share /= (double)np;
	for (size_t p = 0; p < np && !err; p++) {
		struct nl_group g = { 0 };
		struct nl_reader rd = { 0 };
		struct pass_out *po = &passes[p];

		memset(po, 0, sizeof(*po));
		po->running_pct = 100;
		if (c->have_events) {
			const struct nl_pass *pass = &c->plan.pass[p];
			struct nl_group_opts go = { .pid = 0, .cpu = -1, .pinned = true,
						    .mmap = pass->hw };

			err = nl_group_open(&g, &c->evs, pass, &go, c->d);
			if (err)
				return err;
			rd.nr = (unsigned)g.nr;
			rd.read = group_read;
			rd.ctx = &g;
			po->nr = g.nr;
			for (size_t k = 0; k < g.nr; k++) {
				po->ev[k] = g.ev[k];
				rd.sum[k] = !c->evs.ev[g.ev[k]].hw;
				po->vals[k] = calloc(nr * reps, sizeof(double));
				if (!po->vals[k])
					err = -ENOMEM;
			}
			for (size_t i = 0; i < nr && !err; i++)
				for (size_t k = 0; k < g.nr; k++)
					mv[i].events[k] = po->vals[k] + i * reps;
			if (!err && p == 0) {
				double ns;
				bool rdpmc;

				nl_group_reset(&g);
				nl_group_enable(&g);
				if (!nl_group_read_cost(&g, 1000, &ns, &rdpmc)) {
					c->b->env.read_cost_ns = ns;
					c->b->env.read_rdpmc = rdpmc;
				}
			}
			if (!err) {
				nl_group_reset(&g);
				err = nl_group_enable(&g);
			}
			m.reader = &rd;
		}
		if (!err)
			err = nl_method_run(&m, mv, nr, c->d);
		if (c->have_events) {
			struct nl_group_values gv;

			nl_group_disable(&g);
			if (!err && !nl_group_read(&g, &gv, c->d) && nl_values_multiplexed(&gv))
				po->running_pct = nl_values_running_pct(&gv);
			nl_group_close(&g);
		}
		/* later passes keep n: their runs must match the first pass's */
		c->done_before += c->share;
	}
	return err;
}

/* cycles_per_call [tsc] and friends from the TSC, the clock probe and the passes. */
static int build_figures(struct ctx *c, struct nl_workload_run *w, const struct pass_out *passes,
			 size_t np)
{
	const size_t R = c->o->method.reps;
	const bool sled = w->kind == NL_WL_SLED;
	const char *unit = sled ? "nop" : "call", *uname = sled ? "NOP" : "call";
	double ratio_sum = 0;
	bool hw_cycles = false;
	char key[96], ukey[64];

	for (size_t r = 0; r < R; r++)
		ratio_sum += w->v[0].mv.cycles[r] / w->v[0].mv.ticks[r];
	w->core_ratio = ratio_sum / (double)R;
	for (size_t p = 0; p < np; p++)
		for (size_t k = 0; k < passes[p].nr; k++)
			if (c->plan.home[passes[p].ev[k]] == p &&
			    nl_event_is_cycles(&c->evs.ev[passes[p].ev[k]]))
				hw_cycles = true;

	for (size_t i = 0; i < w->nr_v; i++) {
		struct nl_variant *v = &w->v[i];
		double units = per_unit(&v->img, w->kind);
		struct nl_figure *f;
		int err = 0;

		/* cycles: hardware when counted, else TSC ticks at the clock measured next to them */
		if (!hw_cycles) {
			snprintf(key, sizeof(key), "cycles_per_%s", unit);
			snprintf(ukey, sizeof(ukey), "cycles/%s", uname);
			f = add_fig(v, key, ukey, NL_SRC_TSC, R);
			for (size_t r = 0; f && r < R; r++)
				f->runs[r] = v->mv.cycles[r] / units;
			v->primary = (int)v->nr_figs - 1;
			err |= finish_fig(f);
		}
		/* hardware and software events */
		for (size_t p = 0; p < np; p++) {
			for (size_t k = 0; k < passes[p].nr; k++) {
				const struct nl_event *ev = &c->evs.ev[passes[p].ev[k]];
				bool cyc = nl_event_is_cycles(ev), ins = nl_event_is_instructions(ev);
				bool miss = is_miss_event(ev->name);

				if (c->plan.home[passes[p].ev[k]] != p)
					continue;	/* an anchor repeated in a later pass */
				if (!ev->hw) {
					key_of_event(ev->name, ukey, sizeof(ukey));
					snprintf(key, sizeof(key), "%s_per_repetition", ukey);
					f = add_fig(v, key, "events/repetition", NL_SRC_SW, R);
				} else if (cyc || ins) {
					snprintf(key, sizeof(key), "%s_per_%s",
						 cyc ? "cycles" : "instructions", unit);
					snprintf(ukey, sizeof(ukey), "%s/%s", cyc ? "cycles" : "insns", uname);
					f = add_fig(v, key, ukey, NL_SRC_HW, R);
				} else {
					key_of_event(ev->name, ukey, sizeof(ukey));
					snprintf(key, sizeof(key), miss ? "%s_per_1000_%ss" : "%s_per_%s",
						 ukey, unit);
					snprintf(ukey, sizeof(ukey), miss ? "events/1000 %ss" : "events/%s",
						 uname);
					f = add_fig(v, key, ukey, NL_SRC_HW, R);
				}
				if (!f)
					return -ENOMEM;
				for (size_t r = 0; r < R; r++) {
					double x = passes[p].vals[k][i * R + r];

					f->runs[r] = !ev->hw ? x : x / units * (miss ? 1000 : 1);
				}
				f->running_pct = passes[p].running_pct;
				f->scaled = passes[p].running_pct < 100;
				if (cyc)
					v->primary = (int)v->nr_figs - 1;
				err |= finish_fig(f);
			}
		}
		snprintf(key, sizeof(key), "ticks_per_%s", unit);
		snprintf(ukey, sizeof(ukey), "TSC ticks/%s", uname);
		f = add_fig(v, key, ukey, NL_SRC_TSC, R);
		for (size_t r = 0; f && r < R; r++)
			f->runs[r] = v->mv.ticks[r] / units;
		err |= finish_fig(f);
		snprintf(key, sizeof(key), "ns_per_%s", unit);
		snprintf(ukey, sizeof(ukey), "ns/%s", uname);
		f = add_fig(v, key, ukey, NL_SRC_TSC, R);
		for (size_t r = 0; f && r < R; r++)
			f->runs[r] = v->mv.ticks[r] / units / c->clk.tsc_hz * 1e9;
		err |= finish_fig(f);
		if (sled) {
			/* a "NOP" is one copy of the catalogue entry, whatever it decodes to */
			const struct nl_figure *cy = &v->figs[v->primary];
			const struct nl_nop *nop = v->spec.entry.nop;

			f = add_fig(v, "nops_per_cycle", "NOPs/cycle", cy->source, R);
			for (size_t r = 0; f && r < R; r++)
				f->runs[r] = 1.0 / cy->runs[r];
			err |= finish_fig(f);
			f = add_fig(v, "insns_per_cycle", "instructions/cycle", cy->source, R);
			for (size_t r = 0; f && r < R; r++)
				f->runs[r] = nop->nr_insns / cy->runs[r];
			err |= finish_fig(f);
			f = add_fig(v, "bytes_per_cycle", "bytes/cycle", cy->source, R);
			for (size_t r = 0; f && r < R; r++)
				f->runs[r] = nop->len / cy->runs[r];
			err |= finish_fig(f);
		}
		if (!c->have_events) {
			/* no perf software events here: the kernel's rusage accounting stands in */
			f = add_fig(v, "context_switches_per_repetition", "events/repetition",
				    NL_SRC_SW, R);
			for (size_t r = 0; f && r < R; r++)
				f->runs[r] = v->mv.ctx_switches[r];
			err |= finish_fig(f);
		}
		if (err)
			return err < 0 ? err : -EINVAL;
	}
	return 0;
}

/* entry_cycles_per_call = this variant minus `none`, repetition by repetition. */
static int entry_figures(struct nl_workload_run *w)
{
	const struct nl_variant *none = NULL;

	if (w->kind == NL_WL_SLED)
		return 0;
	for (size_t i = 0; i < w->nr_v; i++)
		if (w->v[i].spec.entry.kind == NL_ENTRY_NONE)
			none = &w->v[i];
	if (!none || none->primary < 0)
		return 0;
	for (size_t i = 0; i < w->nr_v; i++) {
		struct nl_variant *v = &w->v[i];
		const struct nl_figure *base = &none->figs[none->primary], *mine;
		unsigned len = nl_entry_len(&v->spec.entry), insns = nl_entry_insns(&v->spec.entry);
		struct nl_figure *f;

		if (v == none || v->primary < 0 || v->spec.nr_funcs != none->spec.nr_funcs ||
		    v->spec.offset != none->spec.offset)
			continue;
		mine = &v->figs[v->primary];
		f = add_fig(v, "entry_cycles_per_call", "cycles/call", mine->source, mine->n);
		if (!f)
			return -ENOMEM;
		for (size_t r = 0; r < f->n; r++)
			f->runs[r] = mine->runs[r] - base->runs[r];
		if (finish_fig(f))
			return -EINVAL;
		if (v->spec.entry.kind != NL_ENTRY_NOP)
			continue;
		const struct nl_figure *ec = f;

		f = add_fig(v, "entry_cycles_per_byte", "cycles/byte", ec->source, ec->n);
		if (!f)
			return -ENOMEM;
		for (size_t r = 0; r < f->n; r++)
			f->runs[r] = ec->runs[r] / len;
		if (finish_fig(f))
			return -EINVAL;
		ec = &v->figs[v->nr_figs - 2];
		f = add_fig(v, "entry_cycles_per_insn", "cycles/instruction", ec->source, ec->n);
		if (!f)
			return -ENOMEM;
		for (size_t r = 0; r < f->n; r++)
			f->runs[r] = ec->runs[r] / insns;
		if (finish_fig(f))
			return -EINVAL;
	}
	return 0;
}

static void fmt_p(double p, char *buf, size_t size)
{
	if (p < 0.001)
		snprintf(buf, size, "p < 0.001");
	else
		snprintf(buf, size, "p = %.3f", p);
}

static void verdicts(struct ctx *c, struct nl_workload_run *w)
{
	const struct nl_variant *base;

	if (w->baseline < 0)
		return;
	base = &w->v[w->baseline];
	for (size_t i = 0; i < w->nr_v; i++) {
		struct nl_variant *v = &w->v[i];
		struct nl_compare *cmp = &v->cmp;
		char p[32];

		if ((int)i == w->baseline || v->primary < 0 || base->primary < 0)
			continue;
		if (nl_compare(&base->figs[base->primary].sum, &v->figs[v->primary].sum,
			       c->o->threshold_pct, cmp))
			continue;
		v->has_cmp = true;
		fmt_p(cmp->p, p, sizeof(p));
		if (cmp->verdict == NL_VERDICT_NONE) {
			v->word = NL_WORD_SAME;
			snprintf(v->verdict, sizeof(v->verdict),
				 "no significant difference (%+.2f%%, 95%% CI %+.2f%% .. %+.2f%%, %s)",
				 cmp->delta_pct, cmp->ci95_lo, cmp->ci95_hi, p);
		} else if (!cmp->practical) {
			v->word = NL_WORD_SAME;
			snprintf(v->verdict, sizeof(v->verdict),
				 "no practical difference: %.2f%% %s, under the %g%% threshold (%s)",
				 fabs(cmp->delta_pct), cmp->delta_pct > 0 ? "slower" : "faster",
				 c->o->threshold_pct, p);
		} else {
			bool slower = cmp->delta_pct > 0;
			double lo = fabs(slower ? cmp->ci95_lo : cmp->ci95_hi);
			double hi = fabs(slower ? cmp->ci95_hi : cmp->ci95_lo);

			v->word = slower ? NL_WORD_SLOWER : NL_WORD_FASTER;
			snprintf(v->verdict, sizeof(v->verdict),
				 "%s is %.1f%% %s than %s (95%% CI %.1f%% .. %.1f%%), %s", v->name,
				 fabs(cmp->delta_pct), slower ? "slower" : "faster", base->name, lo, hi,
				 p);
		}
	}
}

static int simulate(struct ctx *c, struct nl_workload_run *w)
{
	struct nl_sim_opts so = { .l1i_size = c->cpu.l1i.size_kib * 1024u,
				  .l1i_ways = c->cpu.l1i.fully_assoc ? 0 : c->cpu.l1i.ways,
				  .l1i_line = c->cpu.l1i.line, .iters = 10,
				  .valgrind = c->o->valgrind };
	const bool sled = w->kind == NL_WL_SLED;
	bool hw_insns = false;
	char key[64], unit[48];

	if (!c->cpu.l1i.known || c->cpu.l1i.fully_assoc)
		return nl_fail(c->d, -NL_E_UNSUPPORTED, "--sim cachegrind needs the L1i geometry, and "
			       "this CPU %s", c->cpu.l1i.known ? "reports a fully associative L1i" :
			       "does not report it");
	for (size_t i = 0; i < w->nr_v && !hw_insns; i++)
		hw_insns = nl_variant_figure(&w->v[i], sled ? "instructions_per_nop" :
							      "instructions_per_call") != NULL;
	for (size_t i = 0; i < w->nr_v; i++) {
		struct nl_variant *v = &w->v[i];
		double units = per_unit(&v->img, w->kind);
		struct nl_sim_result r;
		struct nl_figure *f;
		int err;

		c->what = v->name;
		progress(c, 0);
		err = nl_sim_cachegrind(&v->img, &so, &r, c->d);
		if (err)
			return err;
		snprintf(key, sizeof(key), "l1i_misses_per_1000_%ss%s", sled ? "nop" : "call",
			 nl_variant_figure(v, sled ? "l1i_misses_per_1000_nops" :
						     "l1i_misses_per_1000_calls") ? "_sim" : "");
		snprintf(unit, sizeof(unit), "misses/1000 %ss", sled ? "NOP" : "call");
		f = add_fig(v, key, unit, NL_SRC_SIM, 1);
		if (!f)
			return -ENOMEM;
		f->runs[0] = r.i1_misses_per_iter / units * 1000;
		f->deterministic = true;
		finish_fig(f);
		snprintf(key, sizeof(key), "instructions_per_%s%s", sled ? "nop" : "call",
			 hw_insns ? "_sim" : "");
		snprintf(unit, sizeof(unit), "insns/%s", sled ? "NOP" : "call");
		f = add_fig(v, key, unit, NL_SRC_SIM, 1);
		if (!f)
			return -ENOMEM;
		f->runs[0] = r.insns_per_iter / units;
		f->deterministic = true;
		finish_fig(f);
	}
	return 0;
}

static int run_workload(struct ctx *c, struct nl_workload_run *w)
{
	const size_t R = c->o->method.reps;
	size_t nr = w->nr_v, np = 0;
	struct nl_mvar *mv = calloc(nr, sizeof(*mv));
	struct pass_out passes[NL_PASSES_MAX];
	struct nl_mvar clock = { 0 };
	uint64_t t0 = nl_mono_raw_ns();
	int err;

	memset(passes, 0, sizeof(passes));
	if (!mv)
		return -ENOMEM;
	err = load_workload(c, w);
	for (size_t i = 0; i < nr && !err; i++) {
		mv[i] = w->v[i].mv;
		mv[i].ticks = calloc(R, sizeof(double));
		mv[i].cycles = calloc(R, sizeof(double));
		mv[i].ctx_switches = calloc(R, sizeof(double));
		mv[i].faults = calloc(R, sizeof(double));
		if (!mv[i].ticks || !mv[i].cycles || !mv[i].ctx_switches || !mv[i].faults)
			err = -ENOMEM;
	}
	if (!err) {
		/*
		 * The clock probe runs in every round next to each variant, from
		 * its own buffer; a quarter of a sample is plenty for 0.1%: 100
		 * adds take 100 cycles, about 60 TSC ticks.
		 */
		clock.fn = nl_codebuf_driver(&c->probe_cb, &c->probe_img);
		clock.table = (void *const *)(uintptr_t)1;
		clock.expect_per_iter = c->probe_img.sum_per_iter;
		clock.iters = (uint64_t)(c->o->method.sample_ticks / 4 / 60) + 16;
		c->what = w->name;
		err = measure(c, w, mv, nr, &clock, passes, &np);
	}
	if (err == -EINTR) {
		/*
		 * Stopped: keep the repetitions every pass completed.  Statistics
		 * need two; with fewer the workload reports nothing rather than
		 * a figure without an error bar.
		 */
		unsigned done = nr ? mv[0].reps_done : 0;

		/*
		 * With several passes, earlier ones completed every repetition and
		 * the first `done` of each array hold the stopped pass's values.
		 */
		c->b->interrupted = true;
		if (done >= 2) {
			c->b->opts.method.reps = done;
			w->partial = true;
			err = 0;
		} else {
			w->seconds = (double)(nl_mono_raw_ns() - t0) / 1e9;
			err = -EINTR;
		}
	}
	if (!err) {
		w->measured = true;
		w->reps = c->b->opts.method.reps;
	}
	/* the TSC rate for ns figures: calibrated over everything measured so far */
	while (!err && nl_clock_calibrate_end(&c->clk) == -EAGAIN)
		;
	for (size_t i = 0; i < w->nr_v && !err; i++)
		w->v[i].mv = mv[i];
	if (!err)
		err = build_figures(c, w, passes, np);
	if (!err)
		err = entry_figures(w);
	if (!err && c->o->sim_cachegrind)
		err = simulate(c, w);
	if (!err)
		verdicts(c, w);
	w->seconds = (double)(nl_mono_raw_ns() - t0) / 1e9;
	for (size_t i = 0; i < nr; i++) {
		free(mv[i].ticks);
		free(mv[i].cycles);
		free(mv[i].ctx_switches);
		free(mv[i].faults);
		w->v[i].mv.ticks = w->v[i].mv.cycles = NULL;
		w->v[i].mv.ctx_switches = w->v[i].mv.faults = NULL;
	}
	for (size_t p = 0; p < NL_PASSES_MAX; p++)
		for (size_t k = 0; k < NL_GROUP_MAX; k++)
			free(passes[p].vals[k]);
	free(mv);
	return err;
}

static int emit(struct ctx *c)
{
	struct nl_bench *b = c->b;
	size_t nr = 0, k = 0;
	struct nl_elf_part *parts;
	struct nl_elf_emit em = { 0 };
	int err;

	for (size_t i = 0; i < b->nr_w; i++)
		nr += b->w[i].nr_v;
	parts = calloc(nr, sizeof(*parts));
	if (!parts)
		return -ENOMEM;
	for (size_t i = 0; i < b->nr_w; i++) {
		struct nl_workload_run *w = &b->w[i];
		size_t span = 0;

		for (size_t j = 0; j < w->nr_v; j++)
			if (w->v[j].img.size > span)
				span = w->v[j].img.size;
		span = (span + HUGE_SPAN - 1) / HUGE_SPAN * HUGE_SPAN;
		for (size_t j = 0; j < w->nr_v; j++, k++) {
			struct nl_elf_part *p = &parts[k];

			p->img = &w->v[j].img;
			/*
			 * Shared placement ran every variant at one address; the file
			 * cannot overlap them, so variant j sits j 2 MiB-multiples
			 * higher, which keeps every offset modulo 2 MiB as it ran.
			 */
			p->addr = c->o->placement == NL_PLACE_SHARED ? w->emit_addr + j * span :
				  (uintptr_t)w->v[j].cb.base;
			if (nr == 1) {
				snprintf(p->section, sizeof(p->section), ".text");
			} else {
				snprintf(p->section, sizeof(p->section), ".text.%s.%s", w->name,
					 w->v[j].name);
				snprintf(p->prefix, sizeof(p->prefix), "%s.%s.", w->name, w->v[j].name);
			}
			for (char *s = p->section; *s; s++)
				if (*s == ' ')
					*s = '_';
			for (char *s = p->prefix; *s; s++)
				if (*s == ' ')
					*s = '_';
		}
	}
	em.parts = parts;
	em.nr = nr;
	err = nl_emit_elf(c->o->emit_elf, &em, c->d);
	free(parts);
	return err;
}

static void environment(struct ctx *c)
{
	struct nl_bench_env *e = &c->b->env;
	const struct nl_workload_run *w0 = c->b->nr_w ? &c->b->w[0] : NULL;

	e->tsc_hz = c->clk.tsc_hz;
	if (w0)
		e->core_hz = w0->core_ratio * c->clk.tsc_hz;
	nl_freq_note(&c->clk, e->cpu_pinned, e->freq, sizeof(e->freq));
	if (e->core_hz > 0) {
		size_t n = strlen(e->freq);

		snprintf(e->freq + n, sizeof(e->freq) - n, "; core ~%.2f GHz by a 1-cycle add chain",
			 e->core_hz / 1e9);
	}
	if (c->pmu.hw_usable && c->have_events) {
		e->hw = true;
		snprintf(e->counters, sizeof(e->counters),
			 "hardware counters (%s, %zu pass%s, never multiplexed); read by %s in %.0f ns",
			 c->pmu.core_pmu[0] ? c->pmu.core_pmu : c->pmu.sysfs_pmu, c->plan.nr,
			 c->plan.nr == 1 ? "" : "es", e->read_rdpmc ? "rdpmc" : "read()",
			 e->read_cost_ns);
	} else if (c->have_events) {
		snprintf(e->counters, sizeof(e->counters),
			 "no hardware PMU (%s); time from the TSC (lfence; rdtsc; lfence), software "
			 "events from perf_event_open, read by read() in %.0f ns",
			 e->hw_reason[0] ? e->hw_reason : "not used", e->read_cost_ns);
	} else {
		snprintf(e->counters, sizeof(e->counters),
			 "no hardware PMU (%s); time from the TSC (lfence; rdtsc; lfence), context "
			 "switches from getrusage", e->hw_reason[0] ? e->hw_reason : "not used");
	}
	snprintf(e->pages, sizeof(e->pages), "%s",
		 w0 && w0->huge ? "2 MiB (transparent huge pages)" :
		 use_huge(c) ? "4 KiB (2 MiB-aligned; no huge page granted)" : "4 KiB");
	snprintf(e->placement, sizeof(e->placement), "%s",
		 c->o->placement == NL_PLACE_SHARED ? "shared: every variant runs at one address" :
						       "separate: one buffer per variant");
}

int nl_bench_run(struct nl_bench *b, const struct nl_bench_opts *o, struct nl_diag *d)
{
	struct ctx c = { .b = b, .o = o, .d = d };
	uint64_t t0 = nl_mono_raw_ns();
	int err, cpu;

	memset(b, 0, sizeof(*b));
	b->opts = *o;
	b->reps_asked = o->method.reps;
	c.o = &b->opts;
	err = nl_clock_init(&c.clk, d);
	if (!err)
		err = nl_cpu_identify(&c.cpu, d);
	if (err)
		return err;
	nl_clock_calibrate_begin(&c.clk);
	describe_cpu(&c);
	err = plan_events(&c);
	if (!err)
		err = plan_workloads(&c);
	if (!err)
		err = nl_gen_clock_probe(&c.probe_img, CLOCK_CHAIN, d);
	if (!err)
		err = nl_codebuf_load(&c.probe_cb, &c.probe_img, d);
	if (err)
		goto out;
	if (o->cpu >= 0) {
		cpu = nl_pin_cpu(o->cpu, d);
		snprintf(b->env.cpu_choice, sizeof(b->env.cpu_choice), "given");
	} else {
		cpu = pick_cpu(&c, b->env.cpu_choice, sizeof(b->env.cpu_choice));
	}
	if (cpu < 0) {
		err = cpu;
		goto out;
	}
	b->env.cpu_pinned = cpu;
	for (size_t i = 0; i < b->nr_w && !err && !b->interrupted; i++) {
		c.done_before = (double)i / (double)b->nr_w;
		c.share = 1.0 / (double)b->nr_w;
		err = run_workload(&c, &b->w[i]);
	}
	/* a stop request ends the run, not in error: what was measured is reported */
	if (err == -EINTR)
		err = 0;
	if (!err && o->emit_elf && !b->interrupted)
		err = emit(&c);
	if (!err)
		environment(&c);
out:
	nl_codebuf_unmap(&c.probe_cb);
	nl_image_free(&c.probe_img);
	b->seconds = (double)(nl_mono_raw_ns() - t0) / 1e9;
	return err;
}

void nl_bench_free(struct nl_bench *b)
{
	for (size_t i = 0; i < b->nr_w; i++) {
		struct nl_workload_run *w = &b->w[i];

		for (size_t j = 0; j < w->nr_v; j++) {
			struct nl_variant *v = &w->v[j];

			for (size_t k = 0; k < v->nr_figs; k++)
				free(v->figs[k].runs);
			nl_image_free(&v->img);
			nl_codebuf_unmap(&v->cb);
			free(v->table);
		}
		nl_codebuf_unmap(&w->shared);
		free(w->v);
	}
	free(b->w);
	memset(b, 0, sizeof(*b));
}
