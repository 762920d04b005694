/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_ANALYZER_ELF_PRIV_H
#define NOPLAB_ANALYZER_ELF_PRIV_H

/* What struct nl_elf keeps behind its priv pointer: internal to analyzer/. */

#include <libelf.h>
#include <pthread.h>

#include "load.h"
#include "noplab/elf.h"
#include "noplab/symfile.h"

struct nl_reloc_list {
	struct nl_reloc *v;	/* sorted by offset */
	size_t nr;
};

struct nl_elf_private {
	Elf *e;
	struct nl_blob blob;
	char *path;
	struct nl_reloc_list *relocs;	/* indexed by target section */
	struct nl_reloc *reloc_store;
	struct nl_section **by_addr;	/* allocated, non-empty sections sorted by address */
	size_t nr_by_addr;
	pthread_mutex_t lock;		/* guards the lazy name index */
	unsigned lookups;		/* by-name lookups so far: a few go linear */
	uint64_t *name_hash;		/* hash << 32 | (symbol index + 1); 0 = empty */
	size_t hash_mask;
	struct nl_symfile *symfile;	/* owns the names of --symbols entries */
	size_t nr_elf_symbols;		/* symbols[0 .. this) come from the ELF file */
	uint64_t max_records;		/* symbols + relocations allowed (nl_elf_opts) */
};

#endif
