// SPDX-License-Identifier: MIT
/*
 * The layout pass: code extents and functions from the symbols, then the
 * regions (regions.c) and, when asked, the branch alignment audit (jcc.c)
 * binned per region and per function.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout_priv.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t u64_upper_bound(const uint64_t *v, size_t nr, uint64_t x)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool is_code(const struct nl_layout_input *in, const struct nl_layout_sym *s)
{
	return (s->kind == NL_LSYM_CODE || s->kind == NL_LSYM_PREFIX) && s->sec >= 0 &&
	       in->secs[s->sec].exec;
}

/*
 * Code symbols with their extents.  Aliases (one address, several names)
 * keep the first global name; size-0 labels inside a sized symbol are not
 * extents of their own; a size-0 symbol otherwise runs to the next code
 * symbol, delimiter or section end.
 */
static int build_code(struct nl_layout *lay, struct nl_diag *d)
{
	const struct nl_layout_input *in = lay->in;
	struct nl_code_ext *v = calloc(in->nr_syms ? in->nr_syms : 1, sizeof(*v));
	uint64_t *marks = calloc(in->nr_syms ? in->nr_syms : 1, sizeof(*marks));
	size_t n = 0, nm = 0;
	uint64_t cover_end = 0;
	int cover_sec = -1;

	if (!v || !marks) {
		free(v);
		free(marks);
		return nl_fail_errno(d, -ENOMEM, "code symbols");
	}
	for (size_t i = 0; i < in->nr_syms; i++) {
		const struct nl_layout_sym *s = &in->syms[i];

		if (s->kind == NL_LSYM_MARKER) {
			marks[nm++] = s->addr;
			continue;
		}
		if (!is_code(in, s))
			continue;
		if (n && v[n - 1].start == s->addr && v[n - 1].sym->kind == s->kind) {
			/* an alias: prefer a sized, then a global name */
			const struct nl_layout_sym *o = v[n - 1].sym;

			if ((!o->size && s->size) || (o->size == s->size && !o->global && s->global))
				v[n - 1].sym = s;
		} else if (!s->size && s->kind == NL_LSYM_CODE && s->sec == cover_sec &&
			   s->addr < cover_end) {
			continue;	/* a label inside a sized function */
		} else {
			v[n].sym = s;
			v[n].start = s->addr;
			n++;
		}
		const struct nl_layout_sym *k = v[n - 1].sym;

		if (k->size) {
			v[n - 1].end = k->addr + k->size;
			if (k->sec != cover_sec || v[n - 1].end > cover_end) {
				cover_sec = k->sec;
				cover_end = v[n - 1].end;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct nl_layout_sym *s = v[i].sym;
		const struct nl_layout_sec *sec = &in->secs[s->sec];
		uint64_t end = sec->addr + sec->size;
		size_t k;

		if (s->size)
			continue;
		for (k = i + 1; k < n && v[k].start <= s->addr; k++)
			;
		if (k < n && v[k].start < end)
			end = v[k].start;
		k = u64_upper_bound(marks, nm, s->addr);
		if (k < nm && marks[k] < end)
			end = marks[k];
		if (end < s->addr)
			end = s->addr;
		v[i].end = end;
		v[i].inferred = true;
	}
	free(marks);
	lay->code = v;
	lay->nr_code = n;
	for (size_t i = 0; i < n; i++)
		if (v[i].end - v[i].start > lay->code_max_len)
			lay->code_max_len = v[i].end - v[i].start;
	return 0;
}

static int build_funcs(struct nl_layout *lay, struct nl_diag *d)
{
	struct nl_layout_func *f = calloc(lay->nr_code ? lay->nr_code : 1, sizeof(*f));
	size_t n = 0;

	if (!f)
		return nl_fail_errno(d, -ENOMEM, "functions");
	for (size_t i = 0; i < lay->nr_code; i++) {
		const struct nl_code_ext *e = &lay->code[i];

		if (e->sym->kind != NL_LSYM_CODE)
			continue;
		f[n].name = e->sym->name;
		f[n].addr = e->start;
		f[n].size = e->end - e->start;
		f[n].size_inferred = e->inferred;
		f[n].sec = e->sym->sec;
		n++;
	}
	lay->funcs = f;
	lay->nr_funcs = n;
	return 0;
}

/* to = a - b, field by field: a range of bins from two prefix sums */
static void counts_sub(struct nl_jcc_counts *to, const struct nl_jcc_counts *a,
		       const struct nl_jcc_counts *b)
{
	to->units = a->units - b->units;
	to->fused = a->fused - b->fused;
	to->affected = a->affected - b->affected;
	for (int k = 0; k < NL_JCC_NR_KINDS; k++) {
		to->kind_units[k] = a->kind_units[k] - b->kind_units[k];
		to->kind_affected[k] = a->kind_affected[k] - b->kind_affected[k];
	}
}

/*
 * Running sums over the bins, so that any range of bins costs one
 * subtraction: nested extents (every function reaching the end of the
 * section, as a hostile or broken .size gives) would otherwise make the
 * per-function figures quadratic in the number of functions.
 */
static int build_jcc_cum(struct nl_layout *lay, struct nl_diag *d)
{
	size_t n = lay->jcc.nr_bins;
	struct nl_jcc_counts *cum = calloc(n + 1, sizeof(*cum));

	if (!cum)
		return nl_fail_errno(d, -ENOMEM, "jcc: %zu bins", n);
	for (size_t b = 0; b < n; b++) {
		cum[b + 1] = cum[b];
		nl_jcc_counts_add(&cum[b + 1], &lay->jcc.bins[b]);
	}
	lay->jcc_cum = cum;
	return 0;
}

void nl_layout_jcc_in(const struct nl_layout *lay, uint64_t start, uint64_t end,
		      struct nl_jcc_counts *out)
{
	memset(out, 0, sizeof(*out));
	if (!lay->jcc_done || !lay->jcc_cum || end <= start || !lay->jcc.nr_bins)
		return;
	/* bins[0] lies before cuts[0], bins[i + 1] is [cuts[i], cuts[i + 1]) */
	size_t b0 = u64_upper_bound(lay->cuts, lay->nr_cuts, start);
	size_t b1 = u64_upper_bound(lay->cuts, lay->nr_cuts, end - 1);

	if (b1 >= lay->jcc.nr_bins)
		b1 = lay->jcc.nr_bins - 1;
	if (b0 > b1)
		return;
	counts_sub(out, &lay->jcc_cum[b1 + 1], &lay->jcc_cum[b0]);
}

static int cmp_text(const void *a, const void *b)
{
	const struct nl_jcc_text *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int run_jcc(struct nl_layout *lay, const struct nl_layout_opts *opts, struct nl_diag *d)
{
	const struct nl_layout_input *in = lay->in;
	struct nl_jcc_text *texts = calloc(in->nr_secs ? in->nr_secs : 1, sizeof(*texts));
	size_t nt = 0, nc = 0, cap = lay->nr_code + 2 * lay->nr_regions + 1;
	uint64_t *cuts = malloc(cap * sizeof(*cuts));
	struct nl_jcc_opts jo = { .mode = in->mode, .threads = opts->threads, .list = true };
	int ret;

	if (!texts || !cuts) {
		free(texts);
		free(cuts);
		return nl_fail_errno(d, -ENOMEM, "jcc");
	}
	for (size_t s = 0; s < in->nr_secs; s++) {
		const struct nl_layout_sec *sec = &in->secs[s];

		if (sec->exec && sec->data && sec->size)
			texts[nt++] = (struct nl_jcc_text){ sec->addr, sec->data, sec->size };
	}
	qsort(texts, nt, sizeof(*texts), cmp_text);
	/* overlapping sections (rare, odd linker scripts): keep the first */
	for (size_t i = 1; i < nt; i++)
		if (texts[i].addr < texts[i - 1].addr + texts[i - 1].size) {
			nl_log(d, NL_LOG_WARN, "jcc: section at %#llx overlaps the one before; skipped",
			       (unsigned long long)texts[i].addr);
			memmove(&texts[i], &texts[i + 1], (nt - i - 1) * sizeof(*texts));
			nt--;
			i--;
		}
	for (size_t i = 0; i < lay->nr_code; i++)
		cuts[nc++] = lay->code[i].start;
	for (size_t i = 0; i < lay->nr_regions; i++) {
		cuts[nc++] = lay->regions[i].start;
		cuts[nc++] = lay->regions[i].end;
	}
	qsort(cuts, nc, sizeof(*cuts), cmp_u64);
	size_t u = 0;

	for (size_t i = 0; i < nc; i++)
		if (!u || cuts[i] != cuts[u - 1])
			cuts[u++] = cuts[i];
	jo.cuts = cuts;
	jo.nr_cuts = u;
	ret = nl_jcc_audit(texts, nt, &jo, &lay->jcc, d);
	free(texts);
	if (ret) {
		free(cuts);
		return ret;
	}
	lay->cuts = cuts;
	lay->nr_cuts = u;
	ret = build_jcc_cum(lay, d);
	if (ret)
		return ret;
	lay->jcc_done = true;
	if (lay->jcc.decode_errors)
		nl_log(d, NL_LOG_WARN, "jcc: %llu byte(s) did not decode and were skipped",
		       (unsigned long long)lay->jcc.decode_errors);
	for (size_t i = 0; i < lay->nr_regions; i++) {
		struct nl_region *r = &lay->regions[i];

		/* a region without bytes was not decoded: no figure, rather than zero */
		r->jcc_known = r->sec >= 0 && in->secs[r->sec].data;
		if (r->jcc_known)
			nl_layout_jcc_in(lay, r->start, r->end, &r->jcc);
	}
	for (size_t i = 0; i < lay->nr_funcs; i++) {
		struct nl_layout_func *f = &lay->funcs[i];

		f->jcc_known = f->sec >= 0 && in->secs[f->sec].data;
		if (f->jcc_known)
			nl_layout_jcc_in(lay, f->addr, f->addr + f->size, &f->jcc);
	}
	return 0;
}

int nl_layout_analyze(const struct nl_layout_input *in, const struct nl_layout_opts *opts,
		      struct nl_layout **out, struct nl_diag *d)
{
	struct nl_layout *lay = calloc(1, sizeof(*lay));
	int ret;

	*out = NULL;
	if (!lay)
		return nl_fail_errno(d, -ENOMEM, "layout");
	lay->in = in;
	ret = build_code(lay, d);
	if (!ret)
		ret = build_funcs(lay, d);
	if (!ret)
		ret = nl_layout_build_regions(lay, d);
	if (!ret && opts && opts->jcc)
		ret = run_jcc(lay, opts, d);
	if (ret) {
		nl_layout_free(lay);
		return ret;
	}
	*out = lay;
	return 0;
}

void nl_layout_free(struct nl_layout *lay)
{
	if (!lay)
		return;
	nl_layout_free_regions(lay);
	free(lay->code);
	free(lay->funcs);
	free(lay->cuts);
	free(lay->jcc_cum);
	nl_jcc_result_release(&lay->jcc);
	free(lay);
}

/* spinlock_text is LOCK_TEXT's range (__lock_text_start/_end) */
static const char *const aliases[][2] = {
	{ "spinlock_text", "lock_text" },
	{ "lock_text", "spinlock_text" },
};

const struct nl_region *nl_layout_find_region(const struct nl_layout *lay, const char *name)
{
	char key[128];

	for (int kind = NL_REGION_RANGE; kind >= NL_REGION_SECTION; kind--)
		for (size_t i = 0; i < lay->nr_regions; i++)
			if ((int)lay->regions[i].kind == kind && !strcmp(lay->regions[i].name, name))
				return &lay->regions[i];
	nl_region_key(name, key, sizeof(key));
	for (size_t a = 0; a <= sizeof(aliases) / sizeof(aliases[0]); a++) {
		const char *k = key;

		if (a > 0) {
			if (strcmp(aliases[a - 1][0], key))
				continue;
			k = aliases[a - 1][1];
		}
		for (int kind = NL_REGION_RANGE; kind >= NL_REGION_SECTION; kind--)
			for (size_t i = 0; i < lay->nr_regions; i++)
				if ((int)lay->regions[i].kind == kind && !strcmp(lay->regions[i].key, k))
					return &lay->regions[i];
	}
	return NULL;
}

uint64_t nl_layout_func_align(const struct nl_layout *lay, const struct nl_layout_func *f)
{
	const struct nl_layout_input *in = lay->in;

	if (in->is_rel && f->sec >= 0) {
		uint64_t a = in->secs[f->sec].align > 1 ? in->secs[f->sec].align : 1;
		uint64_t off = f->addr - in->secs[f->sec].addr;

		if (off && nl_align_of(off) < a)
			a = nl_align_of(off);
		return a > NL_ALIGN_CAP ? NL_ALIGN_CAP : a;
	}
	return nl_align_of(f->addr);
}

const struct nl_layout_func *nl_layout_func_at(const struct nl_layout *lay, uint64_t addr)
{
	size_t lo = 0, hi = lay->nr_funcs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (lay->funcs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* nested sized functions: the innermost is the latest start that still holds addr */
	while (lo > 0) {
		const struct nl_layout_func *f = &lay->funcs[--lo];

		if (addr < f->addr + f->size || (!f->size && addr == f->addr))
			return f;
		if (addr - f->addr > lay->code_max_len)
			break;
	}
	return NULL;
}

const struct nl_code_ext *nl_layout_code_at(const struct nl_layout *lay, uint64_t addr)
{
	size_t lo = 0, hi = lay->nr_code;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (lay->code[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo > 0) {
		const struct nl_code_ext *e = &lay->code[--lo];

		if (addr < e->end)
			return e;
		if (addr - e->start > lay->code_max_len)
			break;
	}
	return NULL;
}

static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
static const uint8_t endbr32[4] = { 0xf3, 0x0f, 0x1e, 0xfb };
static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

int nl_layout_ftrace_sites(const struct nl_layout *lay, uint64_t **sites, size_t *nr,
			   struct nl_diag *d)
{
	const struct nl_layout_input *in = lay->in;
	uint64_t fentry = 0;
	bool have_fentry = false, any_bytes = false;
	uint64_t *v;
	size_t n = 0;

	*sites = NULL;
	*nr = 0;
	if (in->ftrace_known) {
		v = malloc((in->nr_ftrace_sites ? in->nr_ftrace_sites : 1) * sizeof(*v));
		if (!v)
			return nl_fail_errno(d, -ENOMEM, "ftrace sites");
		if (in->nr_ftrace_sites)
			memcpy(v, in->ftrace_sites, in->nr_ftrace_sites * sizeof(*v));
		*sites = v;
		*nr = in->nr_ftrace_sites;
		return 0;
	}
	for (size_t i = 0; i < in->nr_syms; i++)
		if (!strcmp(in->syms[i].name, "__fentry__") && in->syms[i].addr) {
			fentry = in->syms[i].addr;
			have_fentry = true;
			break;
		}
	v = malloc((lay->nr_funcs ? lay->nr_funcs : 1) * sizeof(*v));
	if (!v)
		return nl_fail_errno(d, -ENOMEM, "ftrace sites");
	for (size_t i = 0; i < lay->nr_funcs; i++) {
		uint64_t a = lay->funcs[i].addr, avail;
		const uint8_t *p = nl_layout_bytes_at(in, a, &avail);

		if (!p)
			continue;
		any_bytes = true;
		if (avail >= 9 && (!memcmp(p, endbr64, 4) || !memcmp(p, endbr32, 4))) {
			p += 4;
			a += 4;
			avail -= 4;
		}
		if (avail < 5)
			continue;
		if (!memcmp(p, nop5, 5)) {
			v[n++] = a;
		} else if (p[0] == 0xe8 && have_fentry && !in->is_rel) {
			int32_t rel = (int32_t)((uint32_t)p[1] | (uint32_t)p[2] << 8 |
						(uint32_t)p[3] << 16 | (uint32_t)p[4] << 24);

			if (a + 5 + (uint64_t)(int64_t)rel == fentry)
				v[n++] = a;
		}
	}
	if (!any_bytes) {
		free(v);
		return nl_fail(d, -NL_E_UNSUPPORTED, "no text bytes to find ftrace sites in");
	}
	*sites = v;
	*nr = n;
	return 0;
}
