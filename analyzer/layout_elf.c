// SPDX-License-Identifier: MIT
/* Layout input from the ELF model: allocated sections, symbols, ftrace sites of a .o. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "noplab/elf.h"
#include "noplab/layout.h"

static bool is_ftrace_hook(const char *name)
{
	return !strcmp(name, "__fentry__") || !strcmp(name, "mcount") ||
	       !strcmp(name, "__mcount") || !strcmp(name, "_mcount");
}

/*
 * In a .o the call to __fentry__ is e8 00 00 00 00 with a PC-relative
 * relocation on its displacement: the relocation names the site.
 */
static int rel_ftrace_sites(const struct nl_elf *elf, struct nl_layout_input *in)
{
	for (size_t s = 0; s < elf->nr_sections; s++) {
		const struct nl_section *sec = &elf->sections[s];
		const struct nl_reloc *r;
		size_t nr;

		if (!sec->exec)
			continue;
		r = nl_section_relocs(elf, sec, &nr);
		for (size_t i = 0; i < nr; i++) {
			if (!r[i].sym || !is_ftrace_hook(r[i].sym->name) || !r[i].offset)
				continue;
			if (r[i].offset - 1 >= sec->size || sec->data[r[i].offset - 1] != 0xe8)
				continue;
			if (nl_layout_add_ftrace_site(in, sec->addr + r[i].offset - 1))
				return -ENOMEM;
		}
	}
	return 0;
}

int nl_layout_input_from_elf(const struct nl_elf *elf, struct nl_layout_input *in,
			     struct nl_diag *d)
{
	int *map = calloc(elf->nr_sections ? elf->nr_sections : 1, sizeof(*map));
	int ret = 0;

	nl_layout_input_init(in, elf->path, elf->mode);
	in->is_rel = elf->is_rel;
	if (!map)
		return nl_fail_errno(d, -ENOMEM, "layout input");
	for (size_t i = 0; i < elf->nr_sections; i++) {
		const struct nl_section *s = &elf->sections[i];
		struct nl_layout_sec ls = {
			.name = s->name, .addr = s->addr, .size = s->sh.sh_size,
			.align = s->sh.sh_addralign, .data = s->data, .exec = s->exec,
		};

		map[i] = -1;
		if (!(s->sh.sh_flags & SHF_ALLOC))
			continue;
		if (s->exec && s->size < ls.size)
			ls.size = s->size;	/* never claim bytes we cannot read */
		map[i] = nl_layout_add_sec(in, &ls);
		if (map[i] < 0) {
			ret = -ENOMEM;
			break;
		}
	}
	for (size_t i = 0; i < elf->nr_symbols && !ret; i++) {
		const struct nl_symbol *s = &elf->symbols[i];
		struct nl_layout_sym ls = {
			.name = s->name, .addr = s->addr, .size = s->size, .sec = -1,
			.global = s->bind != STB_LOCAL, .kind = NL_LSYM_OTHER,
		};

		if (!s->name[0] || !strncmp(s->name, ".L", 2) || s->type == STT_SECTION ||
		    s->type == STT_FILE)
			continue;
		if (!s->sec && s->sym.st_shndx != SHN_ABS)
			continue;	/* undefined, common */
		if (s->sec) {
			ls.sec = map[s->sec->idx];
			if (ls.sec >= 0 && s->sec->exec &&
			    (s->type == STT_FUNC || s->type == STT_GNU_IFUNC || s->type == STT_NOTYPE))
				ls.kind = NL_LSYM_CODE;
		}
		if (nl_layout_add_sym(in, &ls) < 0)
			ret = -ENOMEM;
	}
	if (!ret && elf->is_rel)
		ret = rel_ftrace_sites(elf, in);
	free(map);
	if (ret) {
		nl_layout_input_release(in);
		return nl_fail_errno(d, ret, "layout input");
	}
	/* a text symbol named _text is an image marker, sized or not */
	in->has_text_base = false;
	for (size_t i = 0; i < in->nr_syms; i++)
		if (!strcmp(in->syms[i].name, "_text")) {
			in->has_text_base = true;
			in->text_base = in->syms[i].addr;
			break;
		}
	return nl_layout_prepare(in, d);
}
