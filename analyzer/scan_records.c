// SPDX-License-Identifier: MIT
/*
 * The kernel's own records of its ftrace sites, and the sites away from the
 * entries.  __mcount_loc is a section of 8-byte (4 on i386) addresses: filled
 * by relocations in .o/.ko, absolute in linked files, and in vmlinux only the
 * range __start_mcount_loc..__stop_mcount_loc inside .init.data, where
 * entries of overridden __weak functions are zero (6.15+ sorttable).
 * __patchable_function_entries has the same shape and names the first NOP of
 * each -fpatchable-function-entry area.
 *
 * Calls to the hook away from an entry are found through the relocations in
 * ET_REL, and in linked files by a byte scan for e8 rel32 whose target is the
 * hook, each confirmed by decoding from the enclosing function or gap start so
 * that bytes inside another instruction never count.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scan_int.h"

#define MAX_WALK (1u << 20)	/* bytes decoded to confirm one call site */
#define MAX_STRAY 100000

static uint64_t rd(const uint8_t *p, unsigned width)
{
	uint64_t v = 0;

	for (unsigned i = width; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* placed: the address came from a relocation, where 0 is a real ET_REL address */
static int rec_push(struct scan_records *r, size_t *cap, uint64_t a, bool placed)
{
	r->entries++;
	if (!a && !placed) {
		r->zero++;
		return 0;
	}
	if (r->nr == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		uint64_t *na = realloc(r->addr, ncap * sizeof(*na));

		if (!na)
			return -ENOMEM;
		r->addr = na;
		*cap = ncap;
	}
	r->addr[r->nr++] = a;
	return 0;
}

static int read_section(const struct nl_elf *elf, const struct nl_section *sec, unsigned width,
			struct scan_records *r, size_t *cap)
{
	if (!sec->data)
		return 0;
	for (uint64_t off = 0; off + width <= sec->size; off += width) {
		const struct nl_reloc *rel = elf->is_rel ? nl_find_reloc_in(elf, sec, off, width) : NULL;
		uint64_t a;
		bool placed = false;

		if (rel && rel->offset == off) {
			/* an undefined target cannot be placed: it counts as zero */
			placed = rel->sym && (rel->sym->sec || rel->sym->sym.st_shndx == SHN_ABS);
			a = placed ? rel->sym->addr + (uint64_t)rel->addend : 0;
		} else {
			a = rd(sec->data + off, width);
		}
		if (rec_push(r, cap, a, placed))
			return -ENOMEM;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* qsort only what is out of order: records, calls and sites mostly arrive sorted */
static void sort_u64(uint64_t *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (v[i] < v[i - 1]) {
			qsort(v, n, sizeof(*v), cmp_u64);
			return;
		}
}

static int read_kind(const struct scan_ctx *c, const char *secname, const char *start,
		     const char *stop, const char *range_source, struct scan_records *r)
{
	const struct nl_elf *elf = c->elf;
	unsigned width = elf->eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	size_t cap = 0;
	int err = 0;

	/* a .o may hold several such sections (one per function with SHF_LINK_ORDER) */
	for (size_t i = 1; i < elf->nr_sections && !err; i++) {
		if (strcmp(elf->sections[i].name, secname))
			continue;
		r->present = true;
		r->source = secname;
		err = read_section(elf, &elf->sections[i], width, r, &cap);
	}
	if (!r->present && !elf->is_rel && start) {
		const struct nl_symbol *a = nl_find_symbol_by_name(elf, start);
		const struct nl_symbol *b = nl_find_symbol_by_name(elf, stop);
		uint64_t avail = 0;
		const uint8_t *p = a && b && b->addr >= a->addr ? nl_elf_bytes_at(elf, a->addr, &avail)
							       : NULL;

		if (p && b->addr - a->addr <= avail) {
			r->present = true;
			r->source = range_source;
			for (uint64_t off = 0; off + width <= b->addr - a->addr && !err; off += width)
				err = rec_push(r, &cap, rd(p + off, width), false);
		} else if (a && b && b->addr > a->addr) {
			/* named but not readable (stripped data, NOBITS): not measured */
			r->present = false;
		}
	}
	if (err)
		return err;
	sort_u64(r->addr, r->nr);
	return 0;
}

int scan_read_records(struct scan_ctx *c, struct nl_diag *d)
{
	int err = read_kind(c, "__mcount_loc", "__start_mcount_loc", "__stop_mcount_loc",
			    "__start_mcount_loc..__stop_mcount_loc", &c->mcount);

	if (!err)
		err = read_kind(c, "__patchable_function_entries", "__start___patchable_function_entries",
				"__stop___patchable_function_entries",
				"__start___patchable_function_entries", &c->patchable);
	if (err)
		return nl_fail_errno(d, err, "ftrace records");
	return 0;
}

static int push_cand(struct scan_worker *w, uint64_t a)
{
	if (w->nr_cands == w->cap_cands) {
		size_t ncap = w->cap_cands ? w->cap_cands * 2 : 1024;
		uint64_t *nc = realloc(w->cands, ncap * sizeof(*nc));

		if (!nc)
			return -ENOMEM;
		w->cands = nc;
		w->cap_cands = ncap;
	}
	w->cands[w->nr_cands++] = a;
	return 0;
}

void scan_bytes_for_calls(struct scan_worker *w)
{
	const struct scan_ctx *c = w->c;

	for (size_t k = 0; k < w->nr_chunks && !w->err; k++) {
		const struct nl_section *sec = w->chunk_sec[k];
		const uint8_t *p = sec->data;
		uint64_t o = w->chunk_lo[k], hi = w->chunk_hi[k];

		while (o < hi) {
			const uint8_t *q = memchr(p + o, 0xe8, hi - o);

			if (!q)
				break;
			o = (uint64_t)(q - p);
			if (scan_is_hook_call_at(c, sec, o, NULL) && push_cand(w, sec->addr + o)) {
				w->err = -ENOMEM;
				return;
			}
			o++;
		}
		/* call *slot(%rip) to glibc's hook: a second, rarer pattern */
		for (o = w->chunk_lo[k]; c->got_hooks && o < hi;) {
			const uint8_t *q = memchr(p + o, 0xff, hi - o);

			if (!q)
				break;
			o = (uint64_t)(q - p);
			if (scan_is_hook_call_at(c, sec, o, NULL) && push_cand(w, sec->addr + o)) {
				w->err = -ENOMEM;
				return;
			}
			o++;
		}
	}
}

/* ---- finishing: sites away from entries, then the records against the sites ---- */

static int cmp_site(const void *a, const void *b)
{
	const struct nl_scan_site *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

static void sort_sites(struct nl_scan_result *r)
{
	for (size_t i = 1; i < r->nr_sites; i++)
		if (cmp_site(&r->sites[i - 1], &r->sites[i]) > 0) {
			qsort(r->sites, r->nr_sites, sizeof(*r->sites), cmp_site);
			return;
		}
}

static struct nl_scan_site *find_site(struct nl_scan_result *r, size_t nr_sorted, uint64_t a)
{
	size_t lo = 0, hi = nr_sorted;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->sites[mid].addr < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* a patchable run and a call can share an address only if the run is empty */
	for (; lo < nr_sorted && r->sites[lo].addr == a; lo++)
		if (r->sites[lo].kind == NL_SITE_CALL || r->sites[lo].kind == NL_SITE_NOP5)
			return &r->sites[lo];
	return NULL;
}

/* The last function starting at or before a, or -1. */
static int64_t func_at_or_before(const struct scan_ctx *c, uint64_t a)
{
	size_t lo = 0, hi = c->nr_funcs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->funcs[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int64_t)lo - 1;
}

static int64_t func_containing(const struct scan_ctx *c, uint64_t a)
{
	int64_t i = func_at_or_before(c, a);

	/* nested sized functions: look back a little */
	for (int64_t k = i; k >= 0 && k > i - 4; k--)
		if (a - c->funcs[k].addr < c->funcs[k].size)
			return k;
	return -1;
}

static int push_site(struct nl_scan_result *r, size_t *cap, const struct nl_scan_site *s)
{
	if (r->nr_sites == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		struct nl_scan_site *ns = realloc(r->sites, ncap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		r->sites = ns;
		*cap = ncap;
	}
	r->sites[r->nr_sites++] = *s;
	return 0;
}

/* Decode from start to a; true when an instruction begins exactly at a. */
static bool on_boundary(struct scan_worker *w, const struct nl_section *sec, uint64_t start,
			uint64_t a)
{
	const uint8_t *p = sec->data;
	uint64_t pos = start - sec->addr, to = a - sec->addr;

	if (to < pos || to - pos > MAX_WALK)
		return false;
	while (pos < to) {
		enum nl_insn_class cls;
		int l;

		if (p[pos] == 0xcc) {	/* linker fill can be megabytes long */
			while (pos < to && p[pos] == 0xcc)
				pos++;
			continue;
		}
		l = scan_step(w, p + pos, sec->size - pos, sec->addr + pos, &cls);
		if (l <= 0)
			return false;
		pos += (uint64_t)l;
	}
	return pos == to;
}

static int add_candidates(struct scan_ctx *c, struct scan_worker *mw, struct nl_scan_result *r,
			  size_t *cap)
{
	const struct nl_elf *elf = c->elf;
	size_t nr_sorted = r->nr_sites;

	if (elf->is_rel) {
		/* the relocation is the proof: e8 followed by a call relocation to the hook */
		for (size_t i = 0; i < elf->nr_sections; i++) {
			const struct nl_section *sec = &elf->sections[i];
			size_t nr;
			const struct nl_reloc *rel = sec->exec ? nl_section_relocs(elf, sec, &nr) : NULL;

			for (size_t k = 0; rel && k < nr; k++)
				if (rel[k].offset >= 1 &&
				    scan_is_hook_call_at(c, sec, rel[k].offset - 1, NULL) &&
				    push_cand(mw, sec->addr + rel[k].offset - 1))
					return -ENOMEM;
		}
	}
	sort_u64(mw->cands, mw->nr_cands);
	for (size_t k = 0; k < mw->nr_cands; k++) {
		uint64_t a = mw->cands[k];
		struct nl_scan_site s;
		int64_t fi;

		if ((k && mw->cands[k - 1] == a) || find_site(r, nr_sorted, a))
			continue;
		const struct nl_section *sec = nl_find_section_by_addr(elf, a);

		if (!sec || !sec->exec)
			continue;
		fi = func_containing(c, a);
		if (!elf->is_rel) {
			uint64_t start;

			if (fi >= 0) {
				start = c->funcs[fi].addr;
			} else {
				int64_t j = func_at_or_before(c, a);

				start = j >= 0 && c->funcs[j].sec == sec
						? c->funcs[j].addr + c->funcs[j].size : sec->addr;
			}
			if (!on_boundary(mw, sec, start, a))
				continue;
		}
		memset(&s, 0, sizeof(s));
		s.addr = a;
		s.kind = NL_SITE_CALL;
		s.len = (uint8_t)scan_is_hook_call_at(c, sec, a - sec->addr, NULL);
		s.func = fi;
		s.where = fi >= 0 ? NL_WHERE_IN_BODY : NL_WHERE_OUTSIDE;
		if (push_site(r, cap, &s))
			return -ENOMEM;
	}
	return 0;
}

static void stray(struct nl_scan_result *r, size_t *cap, uint64_t a)
{
	if (r->nr_stray_records >= MAX_STRAY)
		return;
	if (r->nr_stray_records == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		uint64_t *n = realloc(r->stray_records, ncap * sizeof(*n));

		if (!n)
			return;
		r->stray_records = n;
		*cap = ncap;
	}
	r->stray_records[r->nr_stray_records++] = a;
}

/* A site that only a record reveals: a call or a 5-byte NOP at that address. */
static bool site_from_record(struct scan_ctx *c, struct nl_scan_result *r, size_t *cap,
			     uint64_t a, int64_t fi)
{
	const struct nl_section *sec = nl_find_section_by_addr(c->elf, a);
	struct nl_scan_site s;
	struct nl_nop_id id;

	if (!sec || !sec->exec)
		return false;
	memset(&s, 0, sizeof(s));
	s.addr = a;
	s.len = 5;
	s.func = fi;
	s.where = fi >= 0 ? NL_WHERE_IN_BODY : NL_WHERE_OUTSIDE;
	s.listed = true;
	uint64_t off = a - sec->addr, left = sec->size - off;
	unsigned call = scan_is_hook_call_at(c, sec, off, NULL);

	if (call) {
		s.kind = NL_SITE_CALL;
		s.len = (uint8_t)call;
	}
	else if (nl_nop_is_nop(nl_nop_recognize(sec->data + off, left > 15 ? 15 : left, c->mode,
						&id)) && id.len == 5)
		s.kind = NL_SITE_NOP5;	/* s.len is 5 already */
	else
		return false;
	return push_site(r, cap, &s) == 0;
}

static void check_mcount(struct scan_ctx *c, struct nl_scan_result *r, size_t *cap,
			 size_t *stray_cap)
{
	struct nl_record_summary *m = &r->summary.mcount_loc;
	size_t nr_sorted = r->nr_sites;

	m->present = c->mcount.present;
	m->source = c->mcount.source;
	m->entries = c->mcount.entries;
	m->zero = c->mcount.zero;
	for (size_t k = 0; k < c->mcount.nr; k++) {
		uint64_t a = c->mcount.addr[k];
		struct nl_scan_site *s = find_site(r, nr_sorted, a);

		/* a site an earlier (duplicate) record revealed sits in the unsorted tail */
		if (!s && k && c->mcount.addr[k - 1] == a)
			for (size_t t = r->nr_sites; !s && t > nr_sorted; t--)
				if (r->sites[t - 1].addr == a)
					s = &r->sites[t - 1];

		if (s) {
			s->listed = true;
			if (s->func >= 0 && c->funcs[s->func].addr + c->fx[s->func].site_off == a)
				c->fx[s->func].site_listed = true;
			if (s->where == NL_WHERE_AT_ENTRY || s->where == NL_WHERE_AFTER_ENDBR)
				m->at_entry++;
			else if (s->where == NL_WHERE_IN_BODY)
				m->in_body++;
			else
				m->outside_functions++;
			continue;
		}
		int64_t fi = func_containing(c, a);

		if (fi >= 0 && (a == c->funcs[fi].addr ||
				(c->fx[fi].endbr && a == c->funcs[fi].addr + 4))) {
			m->at_entry++;
			m->not_a_site++;
			stray(r, stray_cap, a);
		} else if (fi >= 0) {
			m->in_body++;
			if (!site_from_record(c, r, cap, a, fi)) {
				m->not_a_site++;
				stray(r, stray_cap, a);
			}
		} else {
			m->outside_functions++;
			if (!site_from_record(c, r, cap, a, -1))
				m->not_a_site++;
			/* records outside functions are reported either way */
			stray(r, stray_cap, a);
		}
	}
}

static int check_patchable(struct scan_ctx *c, struct nl_scan_result *r, size_t *stray_cap)
{
	struct nl_record_summary *m = &r->summary.patchable;
	bool *matched;

	m->present = c->patchable.present;
	m->source = c->patchable.source;
	m->entries = c->patchable.entries;
	m->zero = c->patchable.zero;
	if (!c->patchable.present)
		return 0;
	matched = calloc(c->nr_funcs ? c->nr_funcs : 1, sizeof(*matched));
	if (!matched)
		return -ENOMEM;
	for (size_t k = 0; k < c->patchable.nr; k++) {
		uint64_t a = c->patchable.addr[k];
		int64_t fi = func_at_or_before(c, a), hit = -1;
		size_t next = (size_t)(fi + 1);

		/* NOPs before the label: the record precedes the next function */
		if (next < c->nr_funcs && c->fx[next].deco == NL_DECO_PATCHABLE &&
		    c->funcs[next].addr - c->fx[next].deco_len == a)
			hit = (int64_t)next;
		fi = func_containing(c, a);
		if (hit < 0 && fi >= 0 &&
		    ((c->patch_len[fi] && c->funcs[fi].addr + c->patch_off[fi] == a) ||
		     (c->fx[fi].deco == NL_DECO_PATCHABLE && c->funcs[fi].addr == a)))
			hit = fi;
		if (hit >= 0) {
			m->at_entry++;
			matched[hit] = true;
		} else if (fi >= 0 && (a == c->funcs[fi].addr ||
				       (c->fx[fi].endbr && a == c->funcs[fi].addr + 4))) {
			m->at_entry++;
			m->not_a_site++;
			stray(r, stray_cap, a);
		} else if (fi >= 0) {
			m->in_body++;
			m->not_a_site++;
			stray(r, stray_cap, a);
		} else {
			m->outside_functions++;
			stray(r, stray_cap, a);
		}
	}
	for (size_t i = 0; i < c->nr_funcs; i++) {
		bool has_area = c->fx[i].deco == NL_DECO_PATCHABLE || c->patch_len[i];

		if (has_area && !matched[i])
			m->missing++;
		if (matched[i] && c->fx[i].site == NL_SITE_PATCHABLE)
			c->fx[i].site_listed = true;
	}
	for (size_t s = 0; s < r->nr_sites; s++)
		if (r->sites[s].kind == NL_SITE_PATCHABLE && r->sites[s].func >= 0 &&
		    matched[r->sites[s].func])
			r->sites[s].listed = true;
	free(matched);
	return 0;
}

int scan_finish_sites(struct scan_ctx *c, struct scan_worker *mw, struct nl_scan_result *r,
		      struct nl_diag *d)
{
	size_t cap = r->nr_sites, stray_cap = 0;
	int err;

	sort_sites(r);
	if ((err = add_candidates(c, mw, r, &cap)))
		return nl_fail_errno(d, err, "ftrace sites");
	sort_sites(r);
	check_mcount(c, r, &cap, &stray_cap);
	if ((err = check_patchable(c, r, &stray_cap)))
		return nl_fail_errno(d, err, "patchable records");
	sort_sites(r);
	if (c->mcount.present)
		for (size_t s = 0; s < r->nr_sites; s++) {
			const struct nl_scan_site *x = &r->sites[s];

			if ((x->kind == NL_SITE_CALL || x->kind == NL_SITE_NOP5) && !x->listed &&
			    (x->where == NL_WHERE_AT_ENTRY || x->where == NL_WHERE_AFTER_ENDBR))
				r->summary.mcount_loc.missing++;
		}
	/* the hook the calls go to, as the first call names it */
	r->ftrace_target = NULL;
	for (size_t s = 0; s < r->nr_sites && !r->ftrace_target; s++) {
		const struct nl_section *sec = nl_find_section_by_addr(c->elf, r->sites[s].addr);

		if (r->sites[s].kind == NL_SITE_CALL && sec)
			scan_is_hook_call_at(c, sec, r->sites[s].addr - sec->addr, &r->ftrace_target);
	}
	sort_u64(r->stray_records, r->nr_stray_records);
	return 0;
}
