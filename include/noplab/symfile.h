/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_SYMFILE_H
#define NOPLAB_SYMFILE_H

/*
 * Symbol files in the nm/System.map/kallsyms format: "ADDR TYPE NAME [MODULE]".
 * scan --symbols uses them for a stripped vmlinux; layout --kallsyms audits
 * the running kernel from /proc/kallsyms alone.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "noplab/diag.h"

struct nl_symfile_entry {
	uint64_t addr;
	char type;		/* nm letter: T t W w D d R r B b A ... */
	const char *name;
	const char *module;	/* "[ext4]" in kallsyms, without brackets; NULL for the kernel */
};

struct nl_symfile {
	struct nl_symfile_entry *entries;	/* sorted by address, then file order */
	size_t nr;
	bool all_zero;		/* every address read as 0: kallsyms without root (kptr_restrict) */
	size_t nr_bad_lines;	/* lines that did not parse, skipped */
	char *strings;		/* storage for names */
};

int nl_symfile_read(const char *path, struct nl_symfile **out, struct nl_diag *d);
/* Parse text (not necessarily NUL-terminated); used by the reader and the fuzzer. */
int nl_symfile_parse(const char *text, size_t len, struct nl_symfile **out, struct nl_diag *d);
void nl_symfile_free(struct nl_symfile *sf);

/* First entry with this exact name, or NULL (linear; callers that need many lookups sort). */
const struct nl_symfile_entry *nl_symfile_find(const struct nl_symfile *sf, const char *name);

#endif
