/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_TEST_SCAN_ORACLE_H
#define NOPLAB_TEST_SCAN_ORACLE_H

/*
 * binutils as the independent oracle for noplab scan: sections, symbols and
 * relocations from readelf, instructions and relocation lines from
 * objdump -dr, record sections from readelf -x.  Addresses are objdump's:
 * section offsets in ET_REL, virtual addresses in linked files.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct or_sec {
	char name[96];
	char type[24];
	uint64_t addr, off, size, align;
	bool exec, alloc;
};

struct or_sym {
	char name[160];
	char type[16], bind[16];
	uint64_t value, size;
	int shndx;		/* -1 for UND, ABS, COM */
};

struct or_insn {
	int sec;
	uint64_t addr;
	unsigned len;
	uint8_t bytes[16];
	char mnem[32];
	char text[128];		/* objdump's instruction text */
	char target[128];	/* exact symbol of a direct call/jmp target, "" otherwise */
	char reloc[128];	/* symbol of a relocation inside the instruction, "" if none */
	char reloc_type[32];
	uint64_t reloc_off;	/* address the relocation patches */
};

struct or_func {
	char name[160];
	int sec;
	uint64_t addr, size;
	bool sized;		/* STT_FUNC with a size */
	size_t insn0, ninsn;	/* objdump's instructions in [addr, addr+size) */
};

struct or_loc {
	int sec;
	uint64_t addr;
};

struct oracle {
	bool rel;
	int bits;
	struct or_sec *secs;
	size_t nr_secs;
	struct or_sym *syms;
	size_t nr_syms;
	struct or_insn *insns;
	size_t nr_insns;
	struct or_func *funcs;	/* FUNC (and global NOTYPE) in exec sections, one per address */
	size_t nr_funcs;
	struct or_loc *mcount;	/* non-zero __mcount_loc targets */
	size_t nr_mcount, mcount_entries, mcount_zero;
	struct or_loc *patch;	/* __patchable_function_entries targets */
	size_t nr_patch;
	bool has_mcount, has_patchable;
	size_t nr_relocs_total;	/* every relocation readelf lists */
};

struct or_entry {
	int cls;			/* enum nl_entry_class */
	bool endbr;
	int site_kind;		/* enum nl_site_kind */
	uint64_t site;		/* objdump address of the site */
	unsigned site_len;
};

/* Run readelf/objdump on path and fill o; fails the test on a tool error. */
void oracle_load(const char *path, struct oracle *o);
void oracle_free(struct oracle *o);

/* Index of the function whose range holds addr, or -1. */
long oracle_func_containing(const struct oracle *o, int sec, uint64_t addr);
long oracle_func_at(const struct oracle *o, int sec, uint64_t addr);
int oracle_sec_by_name(const struct oracle *o, const char *name);
bool oracle_is_nop(const struct or_insn *in);
bool oracle_is_hook(const char *name);
/* A call to the ftrace hook: by relocation in ET_REL, by target in linked files. */
bool oracle_hook_call(const struct oracle *o, const struct or_insn *in);
/* Entry class and site of a function from objdump's instructions. */
void oracle_classify(const struct oracle *o, const struct or_func *f, struct or_entry *e);

#endif
