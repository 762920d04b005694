/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_FUZZ_ELF_SCAN_H
#define NOPLAB_FUZZ_ELF_SCAN_H

/*
 * The ELF model's lookups and the scan census over one opened file, shared
 * by the plain and the compressed-module harness.  Checks the invariants a
 * caller relies on (sorted lists, bytes inside the image).
 */
#include <stdbool.h>

#include "fuzz_common.h"
#include "noplab/elf.h"
#include "noplab/scan.h"

static inline void fz_elf_lookups(const struct nl_elf *elf)
{
	for (size_t i = 0; i < elf->nr_sections; i++) {
		const struct nl_section *s = &elf->sections[i];
		size_t nr = 0;
		const struct nl_reloc *rl = nl_section_relocs(elf, s, &nr);
		uint64_t avail = 0;
		const uint8_t *p;

		FZ_ASSERT(s->name != NULL);
		for (size_t k = 0; rl && k < nr; k++) {
			FZ_ASSERT(rl[k].offset < s->size);
			if (k)
				FZ_ASSERT(rl[k - 1].offset <= rl[k].offset);
		}
		if (s->size)
			nl_find_reloc_in(elf, s, s->size - 1, 1);
		nl_find_section_by_name(elf, s->name);
		if (!s->data || !s->size || !(s->sh.sh_flags & SHF_ALLOC))
			continue;
		nl_find_section_by_addr(elf, s->addr);
		p = nl_elf_bytes_at(elf, s->addr, &avail);
		if (p && avail)
			(void)*(volatile const uint8_t *)(p + avail - 1);
	}
	for (size_t i = 0; i < elf->nr_symbols; i++)
		FZ_ASSERT(elf->symbols[i].name != NULL);
	if (elf->nr_symbols)
		nl_find_symbol_by_name(elf, elf->symbols[elf->nr_symbols - 1].name);
}

static inline void fz_elf_scan(const struct nl_elf *elf)
{
	struct nl_scan_opts so = { .threads = 1 };
	struct nl_scan_result *r = NULL;
	struct nl_func *funcs = NULL;
	struct nl_scan_summary total;
	struct nl_diag d;
	size_t nr = 0;

	nl_diag_init(&d);
	fz_elf_lookups(elf);
	if (!nl_elf_functions(elf, &funcs, &nr, &d)) {
		for (size_t i = 1; i < nr; i++)
			FZ_ASSERT(funcs[i - 1].addr <= funcs[i].addr);
		free(funcs);
	}
	if (nl_scan(elf, &so, &r, &d))
		return;
	for (size_t i = 1; i < r->nr_sites; i++)
		FZ_ASSERT(r->sites[i - 1].addr <= r->sites[i].addr);
	for (size_t i = 0; i < r->nr_funcs; i++)
		FZ_ASSERT(r->fx[i].cls < NL_NR_ENTRY_CLASSES);
	/* the per-file total the front end builds from the per-section ones */
	memset(&total, 0, sizeof(total));
	for (size_t i = 0; i < r->nr_sections; i++)
		if (nl_scan_summary_add(&total, &r->sections[i].sum))
			break;
	nl_seq_hist_sort(&total.padding.seqs);
	nl_scan_summary_release(&total);
	nl_scan_free(r);
}

/*
 * Open a copy of the input as an ELF file (decompressing up to cap) and scan
 * it; a refusal must say why.  compressed: the input is a compressed stream,
 * so what opens must say so and fit the cap.
 */
static inline void fz_open_and_scan(const char *name, const uint8_t *data, size_t size,
				    uint64_t cap, bool compressed)
{
	struct nl_elf_opts eo = { .max_decompressed = cap };
	uint8_t *buf = fz_dup(data, size);
	struct nl_elf *elf = NULL;
	struct nl_diag d;

	if (!buf)
		return;
	nl_diag_init(&d);
	if (!nl_elf_open_mem(name, buf, size, &eo, &elf, &d)) {
		if (compressed) {
			FZ_ASSERT(elf->compression != NULL);
			FZ_ASSERT(elf->file_size <= cap);
		}
		fz_elf_scan(elf);
		nl_elf_close(elf);
	} else {
		FZ_ASSERT(d.msg[0]);
	}
	free(buf);
}

#endif
