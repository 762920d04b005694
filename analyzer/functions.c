// SPDX-License-Identifier: MIT
/*
 * Function boundaries: what every check iterates over.  STT_FUNC sizes are
 * trusted (clamped to the section); symbols without a size (assembly, and
 * every System.map entry) end at the next boundary.  Linker-script markers
 * and labels inside sized functions would otherwise split functions or hide
 * the padding between them, so they are not functions.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "noplab/elf.h"

static bool has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

/* Linker-script and section markers: _stext, __entry_text_start, __start_mcount_loc, ... */
static bool is_marker(const char *n)
{
	static const char *const exact[] = { "_text", "_stext", "_etext", "_sinittext",
					     "_einittext", "_end", "_edata", "__bss_start",
					     "_sdata", "_einittext" };

	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(n, exact[i]))
			return true;
	if (has_prefix(n, "__start_") || has_prefix(n, "__stop_"))
		return true;
	/* __entry_text_start, __irqentry_text_end; not _start, the program entry */
	return !strncmp(n, "__", 2) && (has_suffix(n, "_start") || has_suffix(n, "_end"));
}

static bool is_decoration(const char *n)
{
	return has_prefix(n, "__pfx_") || has_prefix(n, "__cfi_");
}

enum cand_kind { CAND_NONE, CAND_FUNC, CAND_DECO };

static enum cand_kind candidate(const struct nl_symbol *s)
{
	if (!s->sec || !s->sec->exec || !s->name[0] || s->addr - s->sec->addr >= s->sec->size)
		return CAND_NONE;
	if (s->type != STT_FUNC && s->type != STT_GNU_IFUNC && s->type != STT_NOTYPE)
		return CAND_NONE;
	if (has_prefix(s->name, ".L"))
		return CAND_NONE;
	if (is_decoration(s->name))
		return CAND_DECO;
	if ((s->type == STT_NOTYPE || s->from_map) && is_marker(s->name))
		return CAND_NONE;
	return CAND_FUNC;
}

static bool sized(const struct nl_symbol *s)
{
	return (s->type == STT_FUNC || s->type == STT_GNU_IFUNC) && s->size;
}

/* Among aliases: global before weak before local, sized FUNC before the rest, then table order. */
static int rank(const struct nl_symbol *s)
{
	int r = 0;

	if (s->bind == STB_GLOBAL)
		r += 8;
	else if (s->bind == STB_WEAK)
		r += 4;
	if (sized(s))
		r += 2;
	else if (s->type == STT_FUNC)
		r += 1;
	return r;
}

/* Sort keys kept apart from the symbols: compact, so the sort stays in cache. */
struct cand {
	uint64_t addr;
	uint64_t order;		/* best-ranked alias first, then symbol table order */
	struct nl_symbol *sym;
};

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The first boundary after addr: a later function or decoration, or the section end. */
static uint64_t next_boundary(const uint64_t *bounds, size_t nr, uint64_t addr, uint64_t sec_end)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bounds[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nr && bounds[lo] < sec_end ? bounds[lo] : sec_end;
}

static void attach_prefix(const struct nl_elf *elf, struct nl_func *f)
{
	static const char *const kinds[] = { "__pfx_", "__cfi_" };
	char name[512];

	for (size_t k = 0; k < 2; k++) {
		struct nl_symbol *p;

		if (snprintf(name, sizeof(name), "%s%s", kinds[k], f->sym->name) >= (int)sizeof(name))
			continue;
		p = nl_find_symbol_by_name(elf, name);
		/* a decoration sits right before its function: within one 256-byte block */
		if (p && p->sec == f->sec && p->addr < f->addr && f->addr - p->addr <= 256 &&
		    (!f->prefix || p->addr < f->prefix->addr))
			f->prefix = p;
	}
}

int nl_elf_functions(const struct nl_elf *elf, struct nl_func **out, size_t *nr_out,
		     struct nl_diag *d)
{
	struct cand *cand = NULL;
	uint64_t *bounds = NULL, *deco = NULL;
	struct nl_func *funcs = NULL;
	size_t nr_cand = 0, nr_bounds = 0, nr = 0, nr_deco = 0;
	bool sorted = true;

	*out = NULL;
	*nr_out = 0;
	cand = malloc((elf->nr_symbols ? elf->nr_symbols : 1) * sizeof(*cand));
	bounds = malloc((elf->nr_symbols ? elf->nr_symbols : 1) * sizeof(*bounds));
	deco = malloc((elf->nr_symbols ? elf->nr_symbols : 1) * sizeof(*deco));
	if (!cand || !bounds || !deco)
		goto nomem;
	nl_prefault(cand, elf->nr_symbols * sizeof(*cand));
	nl_prefault(bounds, elf->nr_symbols * sizeof(*bounds));
	for (size_t i = 0; i < elf->nr_symbols; i++) {
		struct nl_symbol *s = &elf->symbols[i];
		enum cand_kind k = candidate(s);

		if (k == CAND_NONE)
			continue;
		if (k == CAND_DECO) {
			deco[nr_deco++] = s->addr;
			continue;
		}
		cand[nr_cand].addr = s->addr;
		cand[nr_cand].order = (uint64_t)(15 - rank(s)) << 32 | s->idx;
		cand[nr_cand].sym = s;
		if (nr_cand && cmp_cand(&cand[nr_cand - 1], &cand[nr_cand]) > 0)
			sorted = false;
		nr_cand++;
	}
	/* symbol tables of linked files are often in address order already */
	if (!sorted)
		qsort(cand, nr_cand, sizeof(*cand), cmp_cand);
	if (nr_deco > 1)
		qsort(deco, nr_deco, sizeof(*deco), cmp_u64);
	/* boundaries: function starts and decorations, merged in order */
	for (size_t a = 0, b = 0; a < nr_cand || b < nr_deco;) {
		if (b >= nr_deco || (a < nr_cand && cand[a].addr <= deco[b]))
			bounds[nr_bounds++] = cand[a++].addr;
		else
			bounds[nr_bounds++] = deco[b++];
	}
	funcs = calloc(nr_cand ? nr_cand : 1, sizeof(*funcs));
	if (!funcs)
		goto nomem;
	nl_prefault(funcs, nr_cand * sizeof(*funcs));

	const struct nl_section *cur_sec = NULL;
	uint64_t covered = 0;	/* end of the furthest sized function in this section */

	for (size_t i = 0; i < nr_cand;) {
		struct nl_symbol *s = cand[i].sym;
		uint64_t size = 0;
		size_t j = i;

		/* fold aliases: the best-ranked name, the largest FUNC size */
		for (; j < nr_cand && cand[j].addr == s->addr && cand[j].sym->sec == s->sec; j++)
			if (sized(cand[j].sym) && cand[j].sym->size > size)
				size = cand[j].sym->size;
		i = j;
		if (s->sec != cur_sec) {
			cur_sec = s->sec;
			covered = 0;
		}
		/* a label inside a sized function is not a function */
		if (!size && s->addr < covered)
			continue;

		struct nl_func *f = &funcs[nr++];
		uint64_t sec_end = s->sec->addr + s->sec->size;

		f->sym = s;
		f->sec = s->sec;
		f->addr = s->addr;
		if (size) {
			/* a size running past the section is clamped, never trusted */
			f->size = size > sec_end - s->addr ? sec_end - s->addr : size;
			if (f->addr + f->size > covered)
				covered = f->addr + f->size;
		} else {
			f->size = next_boundary(bounds, nr_bounds, s->addr, sec_end) - s->addr;
			f->size_inferred = true;
		}
		if (nr_deco)
			attach_prefix(elf, f);
	}
	free(cand);
	free(bounds);
	free(deco);
	*out = funcs;
	*nr_out = nr;
	return 0;
nomem:
	free(cand);
	free(bounds);
	free(deco);
	free(funcs);
	return nl_fail_errno(d, -ENOMEM, "function list of %zu symbols", elf->nr_symbols);
}
