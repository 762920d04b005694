// SPDX-License-Identifier: MIT
/*
 * Regions: real text sections, and symbol-delimited ranges found
 * generically from their delimiter pairs (in vmlinux every .entry.text,
 * .noinstr.text, ... is merged into .text and only __X_start/__X_end,
 * __start_X/__stop_X or _sX/_eX mark it).  Then the figures of each:
 * alignment, lines and pages, the foreign code at its edges, padding
 * inside and fill around it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout_priv.h"

uint64_t nl_align_of(uint64_t addr)
{
	if (!addr)
		return NL_ALIGN_CAP;
	uint64_t a = addr & -addr;

	return a > NL_ALIGN_CAP ? NL_ALIGN_CAP : a;
}

uint64_t nl_units_touched(uint64_t start, uint64_t end, uint64_t unit)
{
	if (end <= start)
		return 0;
	return (end - 1) / unit - start / unit + 1;
}

char *nl_region_key(const char *name, char *buf, size_t size)
{
	size_t o = 0;

	if (!size)
		return buf;
	while (*name == '.')
		name++;
	for (; *name && o + 1 < size; name++)
		buf[o++] = (*name == '.' || *name == '-') ? '_' : *name;
	buf[o] = '\0';
	return buf;
}

const char *nl_fill_kind_name(enum nl_fill_kind k)
{
	static const char *const names[] = {
		[NL_FILL_NONE] = "none", [NL_FILL_INT3] = "int3", [NL_FILL_NOP] = "nop",
		[NL_FILL_ZERO] = "zero", [NL_FILL_MIXED] = "mixed", [NL_FILL_UNKNOWN] = "unknown",
	};
	return (unsigned)k <= NL_FILL_UNKNOWN ? names[k] : "?";
}

/* ---- delimiter pairs ---- */

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

/*
 * Which range a delimiter names: "__entry_text_start" -> ("entry_text", start),
 * "__start___ex_table" -> ("__ex_table", start), "__end_rodata" ->
 * ("rodata", end), "_etext" -> ("text", end).
 */
static bool pair_key(const char *name, char *key, size_t size, bool *is_start)
{
	size_t len = strlen(name), klen;
	const char *k;

	if (!strncmp(name, "__pfx_", 6) || !strncmp(name, "__cfi_", 6))
		return false;	/* the padding of a function, whatever it is called */
	if (!strncmp(name, "__start_", 8) && len > 8) {
		k = name + 8, klen = len - 8, *is_start = true;
	} else if (!strncmp(name, "__stop_", 7) && len > 7) {
		k = name + 7, klen = len - 7, *is_start = false;
	} else if (!strncmp(name, "__end_", 6) && len > 6) {
		k = name + 6, klen = len - 6, *is_start = false;
	} else if (!strncmp(name, "__", 2) && len > 8 && ends_with(name, len, "_start") &&
		   ends_with(name, len - 6, "text")) {
		/*
		 * __X_start/__X_end only for X ending in "text" (__entry_text_start,
		 * __sched_text_start): kallsyms has no sizes, and plenty of functions
		 * are called __foo_start (__traceiter_workqueue_execute_start).
		 */
		k = name + 2, klen = len - 8, *is_start = true;
	} else if (!strncmp(name, "__", 2) && len > 6 && ends_with(name, len, "_end") &&
		   ends_with(name, len - 4, "text")) {
		k = name + 2, klen = len - 6, *is_start = false;
	} else if ((!strncmp(name, "_s", 2) || !strncmp(name, "_e", 2)) && len > 2 &&
		   ends_with(name, len, "text")) {
		/* _stext/_etext, _sinittext/_einittext */
		k = name + 2, klen = len - 2, *is_start = name[1] == 's';
	} else {
		return false;
	}
	if (!klen || klen >= size)
		return false;
	memcpy(key, k, klen);
	key[klen] = '\0';
	return true;
}

struct pair_cand {
	char key[128];
	bool is_start;
	size_t idx;
};

static int cmp_cand(const void *a, const void *b)
{
	const struct pair_cand *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	if (x->is_start != y->is_start)
		return x->is_start ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int nl_layout_find_pairs(const struct nl_layout_input *in, struct nl_sym_pair **out, size_t *nr,
			 struct nl_diag *d)
{
	struct pair_cand *c = NULL;
	struct nl_sym_pair *p = NULL;
	size_t nc = 0, np = 0, cap = 0;

	*out = NULL;
	*nr = 0;
	for (size_t i = 0; i < in->nr_syms; i++) {
		const struct nl_layout_sym *s = &in->syms[i];
		struct pair_cand pc;

		/* a sized symbol is a function, whatever it is called */
		if (s->size || !pair_key(s->name, pc.key, sizeof(pc.key), &pc.is_start))
			continue;
		if (nc == cap) {
			struct pair_cand *nc2;

			cap = cap ? cap * 2 : 32;
			nc2 = realloc(c, cap * sizeof(*c));
			if (!nc2) {
				free(c);
				return nl_fail_errno(d, -ENOMEM, "symbol pairs");
			}
			c = nc2;
		}
		pc.idx = i;
		c[nc++] = pc;
	}
	if (!nc)
		return 0;
	qsort(c, nc, sizeof(*c), cmp_cand);
	p = calloc(nc, sizeof(*p));
	if (!p) {
		free(c);
		return nl_fail_errno(d, -ENOMEM, "symbol pairs");
	}
	for (size_t i = 0; i < nc;) {
		size_t j = i;

		while (j < nc && !strcmp(c[j].key, c[i].key))
			j++;
		/* first start; first end at or after it (symbols are sorted by address) */
		if (c[i].is_start) {
			for (size_t e = i + 1; e < j; e++) {
				if (c[e].is_start)
					continue;
				if (in->syms[c[e].idx].addr < in->syms[c[i].idx].addr)
					continue;
				memcpy(p[np].key, c[i].key, sizeof(p[np].key));
				p[np].start = c[i].idx;
				p[np].end = c[e].idx;
				np++;
				break;
			}
		}
		i = j;
	}
	free(c);
	*out = p;
	*nr = np;
	return 0;
}

int nl_layout_mark_delimiters(struct nl_layout_input *in, struct nl_diag *d)
{
	struct nl_sym_pair *p;
	size_t np;
	int ret = nl_layout_find_pairs(in, &p, &np, d);

	if (ret)
		return ret;
	for (size_t i = 0; i < np; i++) {
		in->syms[p[i].start].kind = NL_LSYM_MARKER;
		in->syms[p[i].end].kind = NL_LSYM_MARKER;
	}
	free(p);
	/* _text is where the image starts, an alias of its first function */
	for (size_t i = 0; i < in->nr_syms; i++)
		if (!in->syms[i].size && !strcmp(in->syms[i].name, "_text"))
			in->syms[i].kind = NL_LSYM_MARKER;
	return 0;
}

/* ---- foreign code at the edges ---- */

static bool same_section_only(const struct nl_layout *lay)
{
	/* in a .o the linker places each section: neighbours across sections mean nothing */
	return lay->in->is_rel;
}

static const char *display_name(const struct nl_code_ext *e)
{
	const char *n = e->sym->name;

	if (e->sym->kind == NL_LSYM_PREFIX && (!strncmp(n, "__pfx_", 6) || !strncmp(n, "__cfi_", 6)))
		return n + 6;
	return n;
}

/* First code extent starting at or after addr. */
static size_t code_lower_bound(const struct nl_layout *lay, uint64_t addr)
{
	size_t lo = 0, hi = lay->nr_code;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (lay->code[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

/* The nearest NL_NEIGH_MAX foreign names, by distance from the region. */
struct near {
	const char *name;
	uint64_t dist, addr;
};

static void keep_nearest(struct near *v, size_t *n, const char *name, uint64_t dist, uint64_t addr)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp(v[i].name, name))
			return;		/* a prefix and its function read the same */
	if (*n == NL_NEIGH_MAX && dist >= v[*n - 1].dist)
		return;
	if (*n < NL_NEIGH_MAX)
		(*n)++;
	for (i = *n - 1; i > 0 && v[i - 1].dist > dist; i--)
		v[i] = v[i - 1];
	v[i] = (struct near){ name, dist, addr };
}

static int cmp_near_addr(const void *a, const void *b)
{
	const struct near *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void nl_layout_foreign(const struct nl_layout *lay, const struct nl_region *r, uint64_t lo,
		       uint64_t hi, struct nl_neigh *out)
{
	size_t i = code_lower_bound(lay, hi), nn = 0;
	struct near nv[NL_NEIGH_MAX];
	const char *last = NULL;

	memset(out, 0, sizeof(*out));
	out->unit_start = lo;
	/* walk back over every extent that could reach into [lo, hi) */
	while (i > 0) {
		const struct nl_code_ext *e = &lay->code[--i];

		if (e->start + lay->code_max_len <= lo)
			break;
		if (e->end <= lo)
			continue;
		if (e->start >= r->start && e->start < r->end)
			continue;	/* the region's own code */
		if (same_section_only(lay) && e->sym->sec != r->sec)
			continue;
		uint64_t bytes = overlap(e->start, e->end, lo, hi) -
				 overlap(e->start, e->end, r->start > lo ? r->start : lo,
					 r->end < hi ? r->end : hi);

		if (!bytes)
			continue;
		out->foreign_bytes += bytes;
		/* count names once: a __pfx_ preamble and its function are one name */
		const char *name = display_name(e);

		if (!last || strcmp(last, name))
			out->nr_names++;
		last = name;
		uint64_t dist = e->end <= r->start ? r->start - e->end :
				e->start >= r->end ? e->start - r->end : 0;

		keep_nearest(nv, &nn, name, dist, e->start);
	}
	/* in address order, as they sit in memory */
	qsort(nv, nn, sizeof(nv[0]), cmp_near_addr);
	for (size_t k = 0; k < nn; k++)
		out->names[k] = nv[k].name;
	if (out->nr_names < nn)
		out->nr_names = nn;
}

/* ---- building the regions ---- */

static int cmp_region(const void *a, const void *b)
{
	const struct nl_region *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;	/* enclosing first */
	if (x->kind != y->kind)
		return x->kind == NL_REGION_SECTION ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* .text.foo holding foo in a .o built with -ffunction-sections: not a region */
static bool is_function_section(const struct nl_layout_input *in, int sec)
{
	const char *name = in->secs[sec].name;
	size_t len = strlen(name);

	if (!in->is_rel || strncmp(name, ".text.", 6))
		return false;
	for (size_t i = 0; i < in->nr_syms; i++) {
		const struct nl_layout_sym *s = &in->syms[i];
		size_t n = strlen(s->name);

		if (s->sec == sec && s->kind == NL_LSYM_CODE && n < len && name[len - n - 1] == '.' &&
		    !strcmp(name + len - n, s->name))
			return true;
	}
	return false;
}

static int add_region(struct nl_region **v, size_t *nr, const struct nl_region *r)
{
	struct nl_region *nv = realloc(*v, (*nr + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[(*nr)++] = *r;
	return 0;
}

static uint64_t region_align(const struct nl_layout_input *in, int sec, uint64_t addr)
{
	if (in->is_rel && sec >= 0) {
		/* synthetic addresses: only the section's own alignment is promised */
		uint64_t a = in->secs[sec].align > 1 ? in->secs[sec].align : 1;
		uint64_t off = addr - in->secs[sec].addr;

		if (off && nl_align_of(off) < a)
			a = nl_align_of(off);
		return a > NL_ALIGN_CAP ? NL_ALIGN_CAP : a;
	}
	return nl_align_of(addr);
}

static void classify_fill(const uint8_t *p, uint64_t len, enum nl_mode mode,
			  struct nl_pad_split *sp)
{
	nl_pad_split(p, len, mode, NULL, 0, sp);
}

static enum nl_fill_kind fill_kind_of(const struct nl_pad_split *sp)
{
	int kinds = !!sp->int3_bytes + !!sp->nop_bytes + !!sp->zero_bytes + !!sp->jmp_bytes;

	if (!kinds)
		return NL_FILL_NONE;
	if (kinds > 1 || sp->jmp_bytes)
		return NL_FILL_MIXED;
	if (sp->int3_bytes)
		return NL_FILL_INT3;
	return sp->nop_bytes ? NL_FILL_NOP : NL_FILL_ZERO;
}

static void region_padding(const struct nl_layout *lay, struct nl_region *r)
{
	const struct nl_layout_input *in = lay->in;
	struct nl_padding *pd = &r->padding;
	uint64_t cursor = r->start;
	size_t i = code_lower_bound(lay, r->start);

	memset(pd, 0, sizeof(*pd));
	pd->known = true;
	pd->bytes_known = true;
	/* code reaching in from before the region covers its first bytes */
	for (size_t j = i; j > 0; j--) {
		const struct nl_code_ext *e = &lay->code[j - 1];

		if (e->start + lay->code_max_len <= r->start)
			break;
		if (e->sym->kind == NL_LSYM_CODE && e->end > cursor)
			cursor = e->end < r->end ? e->end : r->end;
	}
	for (;; i++) {
		bool last = i >= lay->nr_code || lay->code[i].start >= r->end;
		uint64_t gap_end = last ? r->end : lay->code[i].start;

		if (!last && lay->code[i].sym->kind != NL_LSYM_CODE) {
			/* __pfx_ preambles are padding, owned by the next function */
			pd->prefix += overlap(lay->code[i].start, lay->code[i].end, r->start, r->end);
			continue;
		}
		if (gap_end > cursor) {
			uint64_t avail;
			const uint8_t *p = nl_layout_bytes_at(in, cursor, &avail);

			pd->bytes += gap_end - cursor;
			if (p && avail >= gap_end - cursor) {
				struct nl_pad_split sp;

				classify_fill(p, gap_end - cursor, in->mode, &sp);
				pd->nop += sp.nop_bytes;
				pd->int3 += sp.int3_bytes;
				pd->zero += sp.zero_bytes;
				pd->jmp += sp.jmp_bytes;
				pd->other += sp.code_bytes;
			} else {
				pd->bytes_known = false;
			}
		}
		if (last)
			break;
		if (lay->code[i].inferred)
			pd->known = false;
		if (lay->code[i].end > cursor)
			cursor = lay->code[i].end < r->end ? lay->code[i].end : r->end;
	}
	if (!pd->known)
		pd->bytes_known = false;
}

static void region_fill_after(const struct nl_layout *lay, struct nl_region *r)
{
	const struct nl_layout_input *in = lay->in;
	struct nl_fill *f = &r->fill_after;
	size_t i = code_lower_bound(lay, r->end);
	uint64_t to = r->sec >= 0 ? in->secs[r->sec].addr + in->secs[r->sec].size : r->end;
	uint64_t avail;
	const uint8_t *p;

	f->from = r->end;
	f->kind = NL_FILL_NONE;
	if (i < lay->nr_code && lay->code[i].start < to)
		to = lay->code[i].start;
	/* foreign code running over the end: nothing between */
	for (size_t j = i; j > 0; j--) {
		const struct nl_code_ext *e = &lay->code[j - 1];

		if (e->start + lay->code_max_len <= r->end)
			break;
		if (e->end > r->end && (e->start < r->start || e->start >= r->end))
			to = r->end;
	}
	if (to <= r->end) {
		f->to = r->end;
		f->to_align = nl_align_of(f->to);
		return;
	}
	p = nl_layout_bytes_at(in, r->end, &avail);
	if (!p || avail < to - r->end) {
		f->to = to;
		f->kind = NL_FILL_UNKNOWN;
	} else {
		struct nl_pad_split sp;

		classify_fill(p, to - r->end, in->mode, &sp);
		/* fill is what comes before the first byte that is not fill */
		f->to = to - sp.code_bytes;
		f->kind = fill_kind_of(&sp);
	}
	f->to_align = nl_align_of(f->to);
}

static void region_fill_before(const struct nl_layout *lay, struct nl_region *r)
{
	const struct nl_layout_input *in = lay->in;
	struct nl_fill *f = &r->fill_before;
	uint64_t from = r->sec >= 0 ? in->secs[r->sec].addr : r->start;
	const struct nl_code_ext *prev = NULL;
	uint64_t avail;
	const uint8_t *p;

	f->to = r->start;
	f->from = r->start;
	f->kind = NL_FILL_NONE;
	if (r->kind == NL_REGION_SECTION) {
		f->to_align = nl_align_of(f->from);
		return;
	}
	for (size_t j = code_lower_bound(lay, r->start); j > 0; j--) {
		const struct nl_code_ext *e = &lay->code[j - 1];

		if (e->start + lay->code_max_len <= from)
			break;
		if (same_section_only(lay) && e->sym->sec != r->sec)
			continue;
		uint64_t end = e->end < r->start ? e->end : r->start;

		if (end >= from) {
			from = end;
			prev = e;
		}
	}
	p = NULL;
	if (from < r->start)
		p = nl_layout_bytes_at(in, from, &avail);
	else if (r->sec >= 0 && r->start > in->secs[r->sec].addr)
		p = nl_layout_bytes_at(in, r->start - 1, &avail);
	if (from < r->start) {
		if (!p || avail < r->start - from) {
			f->kind = NL_FILL_UNKNOWN;
			f->from = from;
		} else {
			struct nl_pad_piece pieces[256];
			struct nl_pad_split sp;
			size_t n;

			nl_pad_split(p, r->start - from, in->mode, pieces, 256, &sp);
			n = sp.nr_pieces;
			f->from = from;
			if (n > 256) {
				f->kind = NL_FILL_MIXED;
			} else {
				/* only the fill that touches the region counts */
				struct nl_pad_split tail = { 0 };

				while (n > 0 && pieces[n - 1].kind != NL_PAD_CODE) {
					const struct nl_pad_piece *pc = &pieces[--n];

					f->from = from + pc->off;
					if (pc->kind == NL_PAD_INT3)
						tail.int3_bytes += pc->len;
					else if (pc->kind == NL_PAD_ZERO)
						tail.zero_bytes += pc->len;
					else if (pc->kind == NL_PAD_JMP)
						tail.jmp_bytes += pc->len;
					else
						tail.nop_bytes += pc->len;
				}
				if (n > 0 && f->from == from)
					f->from = r->start;
				f->kind = fill_kind_of(&tail);
			}
		}
	} else if (prev && prev->inferred && p && r->start > prev->start) {
		/*
		 * A label's extent runs up to the region, fill included: take the run
		 * of one fill byte that ends at the region (cc, 00 or 90 read the
		 * same backwards, longer NOPs do not).
		 */
		uint64_t back = 0, lim = r->start - prev->start - 1;

		if (lim > r->start - in->secs[r->sec].addr)
			lim = r->start - in->secs[r->sec].addr;
		uint8_t b = p[0];

		if (b == 0xcc || b == 0x00 || b == 0x90) {
			while (back < lim && p[-(int64_t)back] == b)
				back++;
			f->from = r->start - back;
			f->kind = b == 0xcc ? NL_FILL_INT3 : b == 0x90 ? NL_FILL_NOP : NL_FILL_ZERO;
		}
	} else if (prev && prev->inferred && !p) {
		f->kind = NL_FILL_UNKNOWN;
	}
	f->to_align = nl_align_of(f->from);
}

static size_t func_lower_bound(const struct nl_layout *lay, uint64_t addr)
{
	size_t lo = 0, hi = lay->nr_funcs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (lay->funcs[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void region_figures(const struct nl_layout *lay, struct nl_region *r)
{
	const struct nl_layout_input *in = lay->in;
	uint64_t last = r->end ? r->end - 1 : 0;

	r->size = r->end - r->start;
	r->empty = !r->size;
	r->align_start = region_align(in, r->sec, r->start);
	r->align_end = region_align(in, r->sec, r->end);
	r->lines = nl_units_touched(r->start, r->end, NL_LINE);
	r->pages_4k = nl_units_touched(r->start, r->end, NL_PAGE_4K);
	r->pages_2m = nl_units_touched(r->start, r->end, NL_PAGE_2M);
	if (!r->empty) {
		uint64_t l0 = r->start & ~(uint64_t)(NL_LINE - 1);
		uint64_t l1 = last & ~(uint64_t)(NL_LINE - 1);
		uint64_t p0 = r->start & ~(uint64_t)(NL_PAGE_4K - 1);
		uint64_t p1 = last & ~(uint64_t)(NL_PAGE_4K - 1);

		nl_layout_foreign(lay, r, l0, l0 + NL_LINE, &r->first_line);
		nl_layout_foreign(lay, r, l1, l1 + NL_LINE, &r->last_line);
		nl_layout_foreign(lay, r, p0, p0 + NL_PAGE_4K, &r->first_page);
		nl_layout_foreign(lay, r, p1, p1 + NL_PAGE_4K, &r->last_page);
	} else {
		r->first_line.unit_start = r->last_line.unit_start = r->start & ~(uint64_t)63;
		r->first_page.unit_start = r->last_page.unit_start = r->start & ~(uint64_t)4095;
	}
	r->func_first = func_lower_bound(lay, r->start);
	r->nr_funcs = func_lower_bound(lay, r->end) - r->func_first;
	region_padding(lay, r);
	region_fill_before(lay, r);
	region_fill_after(lay, r);
}

static void find_parents(struct nl_region *v, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		int best = -1;

		for (size_t j = 0; j < nr; j++) {
			if (j == i || v[j].start > v[i].start || v[i].end > v[j].end)
				continue;
			/* equal extents: the one listed first encloses */
			if (v[j].start == v[i].start && v[j].end == v[i].end && j > i)
				continue;
			if (best < 0 || v[j].end - v[j].start < v[best].end - v[best].start ||
			    (v[j].end - v[j].start == v[best].end - v[best].start && (int)j > best))
				best = (int)j;
		}
		v[i].parent = best;
	}
}

int nl_layout_build_regions(struct nl_layout *lay, struct nl_diag *d)
{
	const struct nl_layout_input *in = lay->in;
	struct nl_region *v = NULL;
	struct nl_sym_pair *pairs = NULL;
	size_t nr = 0, np = 0;
	char key[128];
	int ret;

	if (!in->from_symfile) {
		for (size_t s = 0; s < in->nr_secs; s++) {
			const struct nl_layout_sec *sec = &in->secs[s];
			struct nl_region r = { .kind = NL_REGION_SECTION, .sec = (int)s };

			if (!sec->exec || !sec->size || is_function_section(in, (int)s))
				continue;
			r.name = strdup(sec->name);
			r.key = strdup(nl_region_key(sec->name, key, sizeof(key)));
			r.start = sec->addr;
			r.end = sec->addr + sec->size;
			if (!r.name || !r.key || add_region(&v, &nr, &r)) {
				free(r.name);
				free(r.key);
				ret = nl_fail_errno(d, -ENOMEM, "regions");
				goto fail;
			}
		}
	}
	ret = nl_layout_find_pairs(in, &pairs, &np, d);
	if (ret)
		goto fail;
	for (size_t i = 0; i < np; i++) {
		const struct nl_layout_sym *s = &in->syms[pairs[i].start];
		const struct nl_layout_sym *e = &in->syms[pairs[i].end];
		struct nl_region r = { .kind = NL_REGION_RANGE };

		r.sec = nl_layout_sec_of(in, s->addr, e->addr - s->addr);
		if (r.sec < 0)
			continue;	/* data (__start___ex_table...), not text */
		r.name = strdup(pairs[i].key);
		r.key = strdup(nl_region_key(pairs[i].key, key, sizeof(key)));
		r.start_sym = s->name;
		r.end_sym = e->name;
		r.start = s->addr;
		r.end = e->addr;
		if (!r.name || !r.key || add_region(&v, &nr, &r)) {
			free(r.name);
			free(r.key);
			ret = nl_fail_errno(d, -ENOMEM, "regions");
			goto fail;
		}
	}
	free(pairs);
	pairs = NULL;
	if (nr)
		qsort(v, nr, sizeof(*v), cmp_region);
	find_parents(v, nr);
	lay->regions = v;
	lay->nr_regions = nr;
	for (size_t i = 0; i < nr; i++)
		region_figures(lay, &v[i]);
	return 0;
fail:
	free(pairs);
	lay->regions = v;
	lay->nr_regions = nr;
	nl_layout_free_regions(lay);
	return ret;
}

void nl_layout_free_regions(struct nl_layout *lay)
{
	for (size_t i = 0; i < lay->nr_regions; i++) {
		free(lay->regions[i].name);
		free(lay->regions[i].key);
	}
	free(lay->regions);
	lay->regions = NULL;
	lay->nr_regions = 0;
}
