/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_ELF_H
#define NOPLAB_ELF_H

/*
 * The ELF model: sections, symbols and relocations of one x86 / x86-64
 * file (ET_REL, ET_EXEC, ET_DYN; ELF32 and ELF64), read through libelf from
 * an mmap'd file or an in-memory buffer (decompressed .ko.xz/.zst/.gz).
 * Plain structs mirroring ELF, each embedding the GElf record it comes from
 * (as objtool's elf.h does), plus lookups named by what they return.
 *
 * Addresses: for ET_EXEC/ET_DYN, `addr` is the virtual address.  For ET_REL
 * there are none, so each allocated section gets a synthetic base (laid out
 * in section order, aligned to sh_addralign) and `addr` is base + offset;
 * nl_section.addr holds that base.  Alignment findings in ET_REL are only
 * meaningful modulo the section's sh_addralign.
 */

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "noplab/diag.h"
#include "noplab/nops.h"

struct nl_section {
	GElf_Shdr sh;
	unsigned idx;
	const char *name;	/* never NULL: "" when the name is unreadable */
	const uint8_t *data;	/* file bytes; NULL for SHT_NOBITS or empty sections */
	uint64_t size;		/* bytes readable at data (0 for NOBITS) */
	uint64_t addr;		/* virtual address, or the synthetic base for ET_REL */
	bool exec;		/* SHF_EXECINSTR with data */
};

struct nl_symbol {
	GElf_Sym sym;
	unsigned idx;
	const char *name;	/* never NULL */
	struct nl_section *sec;	/* NULL for undefined/absolute/common */
	uint64_t addr;		/* see the note on addresses above */
	uint64_t size;
	unsigned char type;	/* STT_* */
	unsigned char bind;	/* STB_* */
	bool from_map;		/* came from a System.map / kallsyms file, not the ELF */
};

struct nl_reloc {
	GElf_Rela rela;		/* SHT_REL entries have r_addend read from the section bytes */
	uint64_t offset;	/* within the target section */
	unsigned type;		/* R_X86_64_* or R_386_* */
	struct nl_symbol *sym;	/* NULL for symbol index 0 */
	int64_t addend;
};

struct nl_elf {
	const char *path;	/* as given, for messages */
	GElf_Ehdr eh;
	enum nl_mode mode;	/* 32 for EM_386, 64 for EM_X86_64 */
	bool is_rel;		/* ET_REL: .o or .ko */

	struct nl_section *sections;
	size_t nr_sections;
	struct nl_symbol *symbols;	/* .symtab, else .dynsym, plus --symbols entries */
	size_t nr_symbols;
	const char *symbol_source;	/* ".symtab", ".dynsym", "System.map", ... */
	uint64_t file_size;		/* bytes of the ELF image (after decompression) */
	const char *compression;	/* "xz", "zstd", "gzip", or NULL for a plain file */

	struct nl_elf_private *priv;	/* libelf handle, mapping, reloc index */
};

/*
 * 16 Mi records: as symbols (72 bytes each), 1.1 GiB before any analysis.
 * Debian's 6.1 cloud vmlinux has 119,021 symbols.
 */
#define NL_ELF_MAX_RECORDS (16ull << 20)

struct nl_elf_opts {
	/*
	 * Cap on the decompressed size of a .ko.xz/.zst/.gz.  0: the default, 1 GiB
	 * and, beyond 64 MiB, at most 64 times the compressed size (a bomb is
	 * refused cheaply); nonzero: exactly this cap, no ratio bound.
	 */
	uint64_t max_decompressed;
	/*
	 * Cap on the records the model keeps for one file: symbols (ELF and
	 * --symbols) plus relocations.  Checked against the counts the section
	 * headers declare, before anything is allocated, so a file of millions of
	 * tiny symbols is refused in O(1) memory.  0: NL_ELF_MAX_RECORDS.
	 */
	uint64_t max_records;
	const char *symbol_file;	/* System.map or /proc/kallsyms format, or NULL */
};

/*
 * Open and validate a file: ELF class, machine, section table, string tables,
 * symbol/relocation entry sizes.  Compressed modules are recognised by magic
 * and decompressed in memory.  Returns 0, or -NL_E_FORMAT / -NL_E_UNSUPPORTED /
 * -errno with the problem in d->msg (the caller prefixes the path).
 */
int nl_elf_open(const char *path, const struct nl_elf_opts *opts, struct nl_elf **out,
		struct nl_diag *d);
/* The same over a buffer the caller keeps alive until nl_elf_close(). */
int nl_elf_open_mem(const char *name, const uint8_t *buf, size_t size,
		    const struct nl_elf_opts *opts, struct nl_elf **out, struct nl_diag *d);
void nl_elf_close(struct nl_elf *elf);

struct nl_section *nl_find_section_by_name(const struct nl_elf *elf, const char *name);
struct nl_section *nl_find_section_by_addr(const struct nl_elf *elf, uint64_t addr);
struct nl_symbol *nl_find_symbol_by_name(const struct nl_elf *elf, const char *name);

/* Relocations that patch bytes of sec, sorted by offset (empty for linked files). */
const struct nl_reloc *nl_section_relocs(const struct nl_elf *elf, const struct nl_section *sec,
					 size_t *nr);
/* The relocation patching [offset, offset+len) of sec, or NULL. */
const struct nl_reloc *nl_find_reloc_in(const struct nl_elf *elf, const struct nl_section *sec,
					uint64_t offset, uint64_t len);

/*
 * Dynamic relocations of a linked file (.rela.dyn, .rela.plt, .rel.*): the
 * address each one writes (a GOT slot for GLOB_DAT/JUMP_SLOT) and the name of
 * its .dynsym symbol (version suffix not included; "" for none).  This is how
 * calls through the PLT or the GOT to glibc's __fentry__/mcount are named.
 * The array belongs to the caller (free()); names point into the file image.
 */
struct nl_dynreloc {
	uint64_t addr;
	unsigned type;		/* R_X86_64_* or R_386_* */
	int64_t addend;
	const char *name;
};

int nl_elf_dynrelocs(const struct nl_elf *elf, struct nl_dynreloc **out, size_t *nr,
		     struct nl_diag *d);

/* Bytes at a virtual address, with how many are readable there; NULL if none. */
const uint8_t *nl_elf_bytes_at(const struct nl_elf *elf, uint64_t addr, uint64_t *avail);

/* ---- functions: what the checks iterate over ---- */

struct nl_func {
	struct nl_symbol *sym;
	struct nl_section *sec;
	uint64_t addr;
	uint64_t size;
	bool size_inferred;	/* size-0 or NOTYPE text symbol: ends at the next symbol */
	struct nl_symbol *prefix; /* __pfx_<name> / __cfi_<name> ending at addr, or NULL */
};

/*
 * Function list of the executable sections, sorted by address, aliases
 * (several symbols at one address) folded into the first global name.
 * __pfx_ and __cfi_ symbols are decorations, not functions: they appear as
 * the prefix of the function they precede.  Size-0 and NOTYPE symbols that
 * lie inside a sized function are labels, not functions; section markers
 * (_stext, __entry_text_start, __start_*, ...) are skipped.
 * The array belongs to the caller (free()).
 */
int nl_elf_functions(const struct nl_elf *elf, struct nl_func **out, size_t *nr,
		     struct nl_diag *d);

#endif
