// SPDX-License-Identifier: MIT
/*
 * The layout input model: sections and symbols from whichever source
 * (ELF, kallsyms), and the preparation every source needs (sorting,
 * sections by address, which symbols delimit regions).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "noplab/layout.h"
#include "layout_priv.h"

void nl_layout_input_init(struct nl_layout_input *in, const char *path, enum nl_mode mode)
{
	memset(in, 0, sizeof(*in));
	in->path = path;
	in->mode = mode;
}

void nl_layout_input_release(struct nl_layout_input *in)
{
	for (size_t i = 0; i < in->nr_owned; i++)
		free(in->owned[i]);
	free(in->secs);
	free(in->syms);
	free(in->ftrace_sites);
	free(in->owned);
	memset(in, 0, sizeof(*in));
}

static int grow(void **v, size_t *cap, size_t nr, size_t elem)
{
	if (nr < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 64;
	void *p = realloc(*v, ncap * elem);

	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = ncap;
	return 0;
}

int nl_layout_input_own(struct nl_layout_input *in, void *buf)
{
	void **v = realloc(in->owned, (in->nr_owned + 1) * sizeof(*v));

	if (!v) {
		free(buf);
		return -ENOMEM;
	}
	in->owned = v;
	in->owned[in->nr_owned++] = buf;
	return 0;
}

int nl_layout_add_sec(struct nl_layout_input *in, const struct nl_layout_sec *sec)
{
	if (grow((void **)&in->secs, &in->cap_secs, in->nr_secs, sizeof(*sec)))
		return -ENOMEM;
	in->secs[in->nr_secs] = *sec;
	return (int)in->nr_secs++;
}

int nl_layout_add_sym(struct nl_layout_input *in, const struct nl_layout_sym *sym)
{
	if (grow((void **)&in->syms, &in->cap_syms, in->nr_syms, sizeof(*sym)))
		return -ENOMEM;
	in->syms[in->nr_syms] = *sym;
	return (int)in->nr_syms++;
}

int nl_layout_add_ftrace_site(struct nl_layout_input *in, uint64_t addr)
{
	if (grow((void **)&in->ftrace_sites, &in->cap_ftrace_sites, in->nr_ftrace_sites,
		 sizeof(addr)))
		return -ENOMEM;
	in->ftrace_sites[in->nr_ftrace_sites++] = addr;
	in->ftrace_known = true;
	return 0;
}

int nl_layout_sec_of(const struct nl_layout_input *in, uint64_t addr, uint64_t len)
{
	for (size_t i = 0; i < in->nr_secs; i++) {
		const struct nl_layout_sec *s = &in->secs[i];

		if (!s->exec || addr < s->addr)
			continue;
		if (len ? addr + len <= s->addr + s->size && addr < s->addr + s->size
			: addr <= s->addr + s->size)
			return (int)i;
	}
	return -1;
}

const uint8_t *nl_layout_bytes_at(const struct nl_layout_input *in, uint64_t addr,
				  uint64_t *avail)
{
	for (size_t i = 0; i < in->nr_secs; i++) {
		const struct nl_layout_sec *s = &in->secs[i];

		if (s->data && addr >= s->addr && addr < s->addr + s->size) {
			*avail = s->addr + s->size - addr;
			return s->data + (addr - s->addr);
		}
	}
	*avail = 0;
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Stable by address: ties keep the file order, which names aliases predictably. */
struct sym_sort {
	struct nl_layout_sym sym;
	size_t order;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct sym_sort *x = a, *y = b;

	if (x->sym.addr != y->sym.addr)
		return x->sym.addr < y->sym.addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int nl_layout_prepare(struct nl_layout_input *in, struct nl_diag *d)
{
	struct sym_sort *tmp = NULL;

	if (in->nr_syms) {
		tmp = malloc(in->nr_syms * sizeof(*tmp));
		if (!tmp)
			return nl_fail_errno(d, -ENOMEM, "symbols");
		for (size_t i = 0; i < in->nr_syms; i++) {
			tmp[i].sym = in->syms[i];
			tmp[i].order = i;
		}
		qsort(tmp, in->nr_syms, sizeof(*tmp), cmp_sym);
		for (size_t i = 0; i < in->nr_syms; i++)
			in->syms[i] = tmp[i].sym;
		free(tmp);
	}
	for (size_t i = 0; i < in->nr_syms; i++) {
		struct nl_layout_sym *s = &in->syms[i];

		if (s->sec < 0 && (s->kind == NL_LSYM_CODE || s->kind == NL_LSYM_PREFIX))
			s->sec = nl_layout_sec_of(in, s->addr, 0);
		if (!strncmp(s->name, "__pfx_", 6) || !strncmp(s->name, "__cfi_", 6))
			if (s->kind == NL_LSYM_CODE)
				s->kind = NL_LSYM_PREFIX;
	}
	if (in->nr_ftrace_sites)
		qsort(in->ftrace_sites, in->nr_ftrace_sites, sizeof(uint64_t), cmp_u64);
	return nl_layout_mark_delimiters(in, d);
}
