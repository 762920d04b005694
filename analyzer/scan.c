// SPDX-License-Identifier: MIT
/*
 * noplab scan: the pipeline.  ELF model -> function list -> (in parallel)
 * entry class, decorations, alignment and the gap before each function ->
 * sites away from entries and the kernel's records -> summaries per section
 * and per file.  Workers own disjoint function ranges and write only their
 * own slots; everything they share is read-only, so no locks are needed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load.h"
#include "scan_int.h"

#define PARALLEL_MIN_FUNCS 2048
#define PARALLEL_MIN_BYTES (1u << 20)
#define MAX_THREADS 8

const char *nl_entry_class_name(enum nl_entry_class c)
{
	static const char *const names[NL_NR_ENTRY_CLASSES] = {
		[NL_ENTRY_CALL_FENTRY] = "call_fentry",
		[NL_ENTRY_NOP5] = "nop5",
		[NL_ENTRY_ENDBR_CALL_FENTRY] = "endbr+call_fentry",
		[NL_ENTRY_ENDBR_NOP5] = "endbr+nop5",
		[NL_ENTRY_ENDBR] = "endbr",
		[NL_ENTRY_PATCHABLE] = "patchable",
		[NL_ENTRY_ENDBR_PATCHABLE] = "endbr+patchable",
		[NL_ENTRY_OTHER] = "other",
	};

	return (unsigned)c < NL_NR_ENTRY_CLASSES ? names[c] : "?";
}

/* ---- summaries ---- */

static void add_records(struct nl_record_summary *d, const struct nl_record_summary *s)
{
	d->present |= s->present;
	if (!d->source)
		d->source = s->source;
	d->entries += s->entries;
	d->zero += s->zero;
	d->at_entry += s->at_entry;
	d->in_body += s->in_body;
	d->outside_functions += s->outside_functions;
	d->missing += s->missing;
	d->not_a_site += s->not_a_site;
}

int nl_scan_summary_add(struct nl_scan_summary *d, const struct nl_scan_summary *s)
{
	d->functions += s->functions;
	d->size_inferred += s->size_inferred;
	d->bytes += s->bytes;
	for (int i = 0; i < NL_NR_ENTRY_CLASSES; i++)
		d->entry_classes[i] += s->entry_classes[i];
	d->endbr_poison += s->endbr_poison;
	d->sites.total += s->sites.total;
	d->sites.at_entry += s->sites.at_entry;
	d->sites.after_endbr += s->sites.after_endbr;
	d->sites.in_body += s->sites.in_body;
	d->sites.outside_functions += s->sites.outside_functions;
	d->sites.calls += s->sites.calls;
	d->sites.nop5 += s->sites.nop5;
	d->sites.patchable += s->sites.patchable;
	add_records(&d->mcount_loc, &s->mcount_loc);
	add_records(&d->patchable, &s->patchable);
	d->decorations.pfx += s->decorations.pfx;
	d->decorations.cfi += s->decorations.cfi;
	d->decorations.patchable += s->decorations.patchable;
	d->decorations.bytes += s->decorations.bytes;
	d->padding.gaps += s->padding.gaps;
	d->padding.bytes += s->padding.bytes;
	d->padding.nop_bytes += s->padding.nop_bytes;
	d->padding.int3_bytes += s->padding.int3_bytes;
	d->padding.jmp_bytes += s->padding.jmp_bytes;
	d->padding.zero_bytes += s->padding.zero_bytes;
	d->padding.nops += s->padding.nops;
	d->padding.code_gaps += s->padding.code_gaps;
	d->padding.code_bytes += s->padding.code_bytes;
	for (size_t i = 0; i < s->padding.seqs.nr; i++) {
		const struct nl_seq *q = &s->padding.seqs.v[i];

		if (scan_seq_add(&d->padding.seqs, q, q->count, q->total_bytes))
			return -ENOMEM;
	}
	d->alignment.ge16 += s->alignment.ge16;
	d->alignment.ge32 += s->alignment.ge32;
	d->alignment.ge64 += s->alignment.ge64;
	d->alignment.lt16 += s->alignment.lt16;
	for (int i = 0; i <= NL_ALIGN_LOG2_MAX; i++)
		d->alignment.by_log2[i] += s->alignment.by_log2[i];
	d->alignment.rel_capped |= s->alignment.rel_capped;
	d->straddles.sites += s->straddles.sites;
	d->straddles.b16 += s->straddles.b16;
	d->straddles.b32 += s->straddles.b32;
	d->straddles.b64 += s->straddles.b64;
	d->straddles.unknown += s->straddles.unknown;
	return 0;
}

void nl_scan_summary_release(struct nl_scan_summary *s)
{
	free(s->padding.seqs.v);
	memset(&s->padding.seqs, 0, sizeof(s->padding.seqs));
}

static int cmp_seq(const void *a, const void *b)
{
	const struct nl_seq *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->total_bytes != y->total_bytes)
		return x->total_bytes > y->total_bytes ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return memcmp(x->bytes, y->bytes, x->len);
}

void nl_seq_hist_sort(struct nl_seq_hist *h)
{
	if (h->nr > 1)
		qsort(h->v, h->nr, sizeof(*h->v), cmp_seq);
}

/* ---- workers ---- */

static struct nl_scan_summary *sec_acc(struct scan_worker *w, const struct nl_section *sec)
{
	int g = w->c->group_of[sec->idx];

	if (w->nr_secs && w->secs[w->nr_secs - 1].group == g)
		return &w->secs[w->nr_secs - 1].sum;
	if (w->nr_secs == w->cap_secs) {
		size_t ncap = w->cap_secs ? w->cap_secs * 2 : 8;
		struct scan_sec_acc *n = realloc(w->secs, ncap * sizeof(*n));

		if (!n)
			return NULL;
		w->secs = n;
		w->cap_secs = ncap;
	}
	memset(&w->secs[w->nr_secs], 0, sizeof(w->secs[0]));
	w->secs[w->nr_secs].group = g;
	return &w->secs[w->nr_secs++].sum;
}

static int push_entry_site(struct scan_worker *w, size_t i, const struct nl_scan_func *fx)
{
	const struct nl_func *f = &w->c->funcs[i];
	struct nl_scan_site *s;

	if (w->nr_sites == w->cap_sites) {
		size_t ncap = w->cap_sites ? w->cap_sites * 2 : 256;
		struct nl_scan_site *n = realloc(w->sites, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		w->sites = n;
		w->cap_sites = ncap;
	}
	s = &w->sites[w->nr_sites++];
	memset(s, 0, sizeof(*s));
	s->addr = f->addr + fx->site_off;
	s->kind = fx->site;
	s->len = fx->site_len;
	s->where = fx->endbr ? NL_WHERE_AFTER_ENDBR : NL_WHERE_AT_ENTRY;
	s->func = (int64_t)i;
	return 0;
}

static void *worker_trim(void *arg)
{
	struct scan_worker *w = arg;
	struct nl_func *funcs = w->c->funcs;

	for (size_t i = w->lo; i < w->hi; i++)
		if (funcs[i].size_inferred)
			funcs[i].size = scan_trim_tail(w, &funcs[i]);
	return NULL;
}

static void count_function(struct nl_scan_summary *sum, const struct nl_func *f,
			   const struct nl_scan_func *fx, bool rel)
{
	sum->functions++;
	sum->bytes += f->size;
	sum->size_inferred += f->size_inferred;
	sum->entry_classes[fx->cls]++;
	sum->endbr_poison += fx->endbr_poison;
	switch (fx->deco) {
	case NL_DECO_PFX: sum->decorations.pfx++; break;
	case NL_DECO_CFI: sum->decorations.cfi++; break;
	case NL_DECO_PATCHABLE: sum->decorations.patchable++; break;
	default: break;
	}
	sum->decorations.bytes += fx->deco_len;
	scan_count_align(sum, fx->align, rel);
}

static void *worker_main(void *arg)
{
	struct scan_worker *w = arg;
	const struct scan_ctx *c = w->c;

	for (size_t i = w->lo; i < w->hi && !w->err; i++) {
		const struct nl_func *f = &c->funcs[i];
		struct nl_scan_func *fx = &c->fx[i];
		struct nl_scan_summary *sum = sec_acc(w, f->sec);

		if (!sum) {
			w->err = -ENOMEM;
			break;
		}
		scan_classify(c, i, fx, &c->patch_off[i], &c->patch_len[i]);
		scan_decoration(c, i, fx);
		fx->align = scan_align_of(c->elf, f->sec, f->addr);
		count_function(sum, f, fx, c->elf->is_rel);
		if (fx->site != NL_SITE_NONE && push_entry_site(w, i, fx)) {
			w->err = -ENOMEM;
			break;
		}
		/* the gap between the previous function (or its covered end) and this one's decoration */
		if (i > 0 && c->funcs[i - 1].sec == f->sec) {
			uint64_t lo = c->region_start[i], hi = f->addr - fx->deco_len;

			if (hi > lo && scan_gap(w, f->sec->data + (lo - f->sec->addr), hi - lo, sum,
						&c->gap_pad[i], &c->gap_code[i])) {
				w->err = -ENOMEM;
				break;
			}
		}
	}
	if (!w->err)
		scan_bytes_for_calls(w);
	return NULL;
}

static void run_workers(struct scan_worker *w, unsigned n, void *(*fn)(void *))
{
	pthread_t tid[MAX_THREADS];
	bool started[MAX_THREADS] = { false };

	for (unsigned t = 1; t < n; t++)
		started[t] = pthread_create(&tid[t], NULL, fn, &w[t]) == 0;
	fn(&w[0]);
	for (unsigned t = 1; t < n; t++) {
		if (started[t])
			pthread_join(tid[t], NULL);
		else
			fn(&w[t]);	/* no thread: do its share here */
	}
}

static void worker_release(struct scan_worker *w)
{
	free(w->sites);
	free(w->cands);
	for (size_t i = 0; i < w->nr_secs; i++)
		nl_scan_summary_release(&w->secs[i].sum);
	free(w->secs);
	free(w->pieces);
	free(w->chunk_sec);
	free(w->chunk_lo);
	free(w->chunk_hi);
	nl_decoder_close(w->dec);
	memset(w, 0, sizeof(*w));
}

static unsigned pick_threads(const struct nl_scan_opts *o, const struct nl_elf *elf,
			     size_t nr_funcs)
{
	uint64_t text = 0;
	long cpus;

	if (o && o->threads)
		return o->threads > MAX_THREADS ? MAX_THREADS : o->threads;
	for (size_t i = 0; i < elf->nr_sections; i++)
		if (elf->sections[i].exec)
			text += elf->sections[i].size;
	if (nr_funcs < PARALLEL_MIN_FUNCS && text < PARALLEL_MIN_BYTES)
		return 1;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 1)
		cpus = 1;
	return cpus > MAX_THREADS ? MAX_THREADS : (unsigned)cpus;
}

/* Each worker gets 1/n of every executable section for the call byte scan. */
static int assign_chunks(const struct scan_ctx *c, struct scan_worker *w, unsigned n)
{
	const struct nl_elf *elf = c->elf;
	size_t nr_exec = 0;

	if (elf->is_rel || !c->nr_hooks)
		return 0;
	for (size_t i = 0; i < elf->nr_sections; i++)
		nr_exec += elf->sections[i].exec;
	for (unsigned t = 0; t < n; t++) {
		w[t].chunk_sec = calloc(nr_exec + 1, sizeof(*w[t].chunk_sec));
		w[t].chunk_lo = calloc(nr_exec + 1, sizeof(*w[t].chunk_lo));
		w[t].chunk_hi = calloc(nr_exec + 1, sizeof(*w[t].chunk_hi));
		if (!w[t].chunk_sec || !w[t].chunk_lo || !w[t].chunk_hi)
			return -ENOMEM;
	}
	for (size_t i = 0; i < elf->nr_sections; i++) {
		const struct nl_section *s = &elf->sections[i];

		if (!s->exec)
			continue;
		for (unsigned t = 0; t < n; t++) {
			uint64_t lo = s->size / n * t, hi = t + 1 == n ? s->size : s->size / n * (t + 1);

			if (hi <= lo)
				continue;
			w[t].chunk_sec[w[t].nr_chunks] = s;
			w[t].chunk_lo[w[t].nr_chunks] = lo;
			w[t].chunk_hi[w[t].nr_chunks] = hi;
			w[t].nr_chunks++;
		}
	}
	return 0;
}

/* Where the bytes before each function start: the covered end of the ones before it. */
static void compute_regions(struct scan_ctx *c)
{
	uint64_t covered = 0;

	for (size_t i = 0; i < c->nr_funcs; i++) {
		const struct nl_func *f = &c->funcs[i];

		if (!i || c->funcs[i - 1].sec != f->sec)
			covered = f->sec->addr;
		c->region_start[i] = covered < f->addr ? covered : f->addr;
		if (f->addr + f->size > covered)
			covered = f->addr + f->size;
	}
}

#define MAX_SECTION_ROWS 64

/* -ffunction-sections names one section per function: sum them by kind */
static const char *group_name(const char *n)
{
	static const char *const kinds[] = { ".text.unlikely.", ".text.hot.", ".text.startup.",
					     ".text.exit.", ".text.split." };
	static const char *const groups[] = { ".text.unlikely.*", ".text.hot.*", ".text.startup.*",
					      ".text.exit.*", ".text.split.*" };

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (!strncmp(n, kinds[k], strlen(kinds[k])))
			return groups[k];
	return !strncmp(n, ".text.", 6) ? ".text.*" : n;
}

static int make_groups(struct scan_ctx *c, struct nl_diag *d)
{
	const struct nl_elf *elf = c->elf;
	size_t nr_exec = 0;

	for (size_t i = 0; i < elf->nr_sections; i++)
		nr_exec += elf->sections[i].exec;
	c->group_of = malloc((elf->nr_sections ? elf->nr_sections : 1) * sizeof(*c->group_of));
	c->groups = calloc(nr_exec ? nr_exec : 1, sizeof(*c->groups));
	if (!c->group_of || !c->groups)
		return nl_fail_errno(d, -ENOMEM, "section groups");
	for (size_t i = 0; i < elf->nr_sections; i++) {
		const struct nl_section *s = &elf->sections[i];
		const char *name;
		size_t g;

		c->group_of[i] = -1;
		if (!s->exec)
			continue;
		name = nr_exec > MAX_SECTION_ROWS ? group_name(s->name) : s->name;
		/* groups are few when sections are many: a linear search is enough */
		for (g = 0; g < c->nr_groups; g++)
			if (nr_exec > MAX_SECTION_ROWS ? c->groups[g].name == name
						       : c->groups[g].first == s)
				break;
		if (g == c->nr_groups) {
			c->groups[g].name = name;
			c->groups[g].first = s;
			c->nr_groups++;
		}
		c->groups[g].nr_sections++;
		c->groups[g].size += s->size;
		c->group_of[i] = (int)g;
	}
	return 0;
}

static struct nl_scan_summary *result_section(struct nl_scan_result *r, ssize_t *map,
					      const struct scan_ctx *c, int g)
{
	if (map[g] < 0) {
		struct nl_scan_section *rs = &r->sections[r->nr_sections];

		map[g] = (ssize_t)r->nr_sections++;
		memset(rs, 0, sizeof(*rs));
		rs->sec = c->groups[g].first;
		rs->name = c->groups[g].name;
		rs->nr_sections = c->groups[g].nr_sections;
		rs->size = c->groups[g].size;
	}
	return &r->sections[map[g]].sum;
}

static int cmp_sections(const void *a, const void *b)
{
	const struct nl_scan_section *x = a, *y = b;

	if (x->sec->addr != y->sec->addr)
		return x->sec->addr < y->sec->addr ? -1 : 1;
	return x->sec->idx < y->sec->idx ? -1 : x->sec->idx > y->sec->idx;
}

static int merge(struct scan_ctx *c, struct scan_worker *w, unsigned n, struct scan_worker *mw,
		 struct nl_scan_result *r, struct nl_diag *d)
{
	const struct nl_elf *elf = c->elf;
	ssize_t *map = malloc((c->nr_groups ? c->nr_groups : 1) * sizeof(*map));
	size_t nr_sites = 0, nr_cands = 0;
	int err = 0;

	r->sections = calloc(c->nr_groups ? c->nr_groups : 1, sizeof(*r->sections));
	if (!map || !r->sections) {
		free(map);
		return nl_fail_errno(d, -ENOMEM, "section summaries");
	}
	for (size_t i = 0; i < c->nr_groups; i++)
		map[i] = -1;
	for (unsigned t = 0; t < n; t++) {
		nr_sites += w[t].nr_sites;
		nr_cands += w[t].nr_cands;
		for (size_t k = 0; k < w[t].nr_secs && !err; k++)
			err = nl_scan_summary_add(result_section(r, map, c, w[t].secs[k].group),
						  &w[t].secs[k].sum);
	}
	r->sites = malloc((nr_sites ? nr_sites : 1) * sizeof(*r->sites));
	mw->cands = malloc((nr_cands ? nr_cands : 1) * sizeof(*mw->cands));
	nl_prefault(r->sites, nr_sites * sizeof(*r->sites));
	if (err || !r->sites || !mw->cands) {
		free(map);
		return nl_fail_errno(d, -ENOMEM, "scan results");
	}
	mw->cap_cands = nr_cands ? nr_cands : 1;
	for (unsigned t = 0; t < n; t++) {
		if (w[t].nr_sites)
			memcpy(r->sites + r->nr_sites, w[t].sites, w[t].nr_sites * sizeof(*r->sites));
		r->nr_sites += w[t].nr_sites;
		if (w[t].nr_cands)
			memcpy(mw->cands + mw->nr_cands, w[t].cands,
			       w[t].nr_cands * sizeof(*mw->cands));
		mw->nr_cands += w[t].nr_cands;
	}
	for (size_t i = 1; i < c->nr_funcs; i++) {
		if (c->funcs[i - 1].sec != c->funcs[i].sec)
			continue;
		c->fx[i - 1].gap_pad = c->gap_pad[i];
		c->fx[i - 1].gap_code = c->gap_code[i];
	}

	err = scan_finish_sites(c, mw, r, d);
	if (!err) {
		/* sites, with their straddles, into the section they lie in */
		for (size_t s = 0; s < r->nr_sites; s++) {
			struct nl_scan_site *x = &r->sites[s];
			const struct nl_section *sec = x->func >= 0 ? c->funcs[x->func].sec
								     : nl_find_section_by_addr(elf, x->addr);

			if (!sec || c->group_of[sec->idx] < 0)
				continue;
			scan_straddle(elf, sec, x);
			scan_count_site(result_section(r, map, c, c->group_of[sec->idx]), x);
			if (x->func >= 0 && c->funcs[x->func].addr + c->fx[x->func].site_off == x->addr)
				c->fx[x->func].straddles = x->straddles;
		}
		qsort(r->sections, r->nr_sections, sizeof(*r->sections), cmp_sections);
		for (size_t s = 0; s < r->nr_sections && !err; s++)
			err = nl_scan_summary_add(&r->summary, &r->sections[s].sum);
		if (err)
			err = nl_fail_errno(d, err, "summary");
	}
	free(map);
	return err;
}

int nl_scan(const struct nl_elf *elf, const struct nl_scan_opts *opts,
	    struct nl_scan_result **out, struct nl_diag *d)
{
	struct scan_ctx c;
	struct scan_worker w[MAX_THREADS], mw;
	struct nl_scan_result *r = calloc(1, sizeof(*r));
	unsigned n = 1;
	int err = 0;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	memset(w, 0, sizeof(w));
	memset(&mw, 0, sizeof(mw));
	if (!r)
		return nl_fail_errno(d, -ENOMEM, "scan");
	r->elf = elf;
	c.elf = elf;
	c.mode = elf->mode;
	if ((err = nl_elf_functions(elf, &r->funcs, &r->nr_funcs, d)))
		goto out;
	c.funcs = r->funcs;
	c.nr_funcs = r->nr_funcs;
	size_t nf = r->nr_funcs ? r->nr_funcs : 1;

	r->fx = calloc(nf, sizeof(*r->fx));
	c.fx = r->fx;
	c.region_start = calloc(nf, sizeof(*c.region_start));
	c.patch_off = calloc(nf, sizeof(*c.patch_off));
	c.patch_len = calloc(nf, sizeof(*c.patch_len));
	c.gap_pad = calloc(nf, sizeof(*c.gap_pad));
	c.gap_code = calloc(nf, sizeof(*c.gap_code));
	if (!r->fx || !c.region_start || !c.patch_off || !c.patch_len || !c.gap_pad ||
	    !c.gap_code) {
		err = nl_fail_errno(d, -ENOMEM, "findings for %zu functions", r->nr_funcs);
		goto out;
	}
	nl_prefault(r->fx, nf * sizeof(*r->fx));
	nl_prefault(c.region_start, nf * sizeof(*c.region_start));
	nl_prefault(c.gap_pad, nf * sizeof(*c.gap_pad));
	nl_prefault(c.gap_code, nf * sizeof(*c.gap_code));
	scan_resolve_hooks(&c, d);
	scan_poison_init(&c);
	if ((err = scan_read_records(&c, d)) || (err = make_groups(&c, d)))
		goto out;

	n = pick_threads(opts, elf, r->nr_funcs);
	if (n > r->nr_funcs && r->nr_funcs)
		n = (unsigned)r->nr_funcs;
	if (!n)
		n = 1;
	r->threads = n;
	for (unsigned t = 0; t < n; t++) {
		w[t].c = &c;
		w[t].lo = r->nr_funcs * t / n;
		w[t].hi = r->nr_funcs * (t + 1) / n;
		nl_diag_init(&w[t].diag);
	}
	mw.c = &c;
	nl_diag_init(&mw.diag);
	if (assign_chunks(&c, w, n)) {
		err = nl_fail_errno(d, -ENOMEM, "scan chunks");
		goto out;
	}

	/* sizes must be final before any worker looks at a neighbour's end */
	for (size_t i = 0; i < r->nr_funcs; i++) {
		if (r->funcs[i].size_inferred) {
			run_workers(w, n, worker_trim);
			break;
		}
	}
	compute_regions(&c);
	run_workers(w, n, worker_main);
	for (unsigned t = 0; t < n; t++)
		if (w[t].err && !err)
			err = nl_fail_errno(d, w[t].err, "scan worker");
	if (!err)
		err = merge(&c, w, n, &mw, r, d);
	if (!err && mw.err)
		err = nl_fail_errno(d, mw.err, "scan");
	if (!err && (mw.dec_err || w[0].dec_err))
		nl_log(d, NL_LOG_WARN, "decoder unavailable: some call sites were not confirmed");
out:
	for (unsigned t = 0; t < MAX_THREADS; t++)
		worker_release(&w[t]);
	worker_release(&mw);
	free(c.region_start);
	free(c.patch_off);
	free(c.patch_len);
	free(c.gap_pad);
	free(c.gap_code);
	free(c.mcount.addr);
	free(c.patchable.addr);
	free(c.group_of);
	free(c.groups);
	if (err) {
		nl_scan_free(r);
		return err;
	}
	*out = r;
	return 0;
}

void nl_scan_free(struct nl_scan_result *r)
{
	if (!r)
		return;
	free(r->funcs);
	free(r->fx);
	free(r->sites);
	free(r->stray_records);
	for (size_t i = 0; i < r->nr_sections; i++)
		nl_scan_summary_release(&r->sections[i].sum);
	free(r->sections);
	nl_scan_summary_release(&r->summary);
	free(r);
}
