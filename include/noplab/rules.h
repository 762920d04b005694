/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_RULES_H
#define NOPLAB_RULES_H

/*
 * Layout rules: a line format to gate a build on where text ended up.
 *
 *   # comment; blank lines are ignored; one rule per line
 *   [optional] region NAME present
 *   [optional] region NAME align SIZE          start aligned to SIZE
 *   [optional] region NAME end-align SIZE
 *   [optional] region NAME max-size SIZE
 *   [optional] region NAME max-lines N          64-byte cache lines touched
 *   [optional] region NAME max-pages N [4K|2M]  pages touched (default 4K)
 *   [optional] region NAME exclusive-lines      no foreign code in its first/last line
 *   [optional] region NAME exclusive-pages [4K|2M]
 *   [optional] region NAME exclusive SIZE [before|after]
 *   [optional] region NAME inside OTHER
 *   [optional] functions align SIZE [in NAME]
 *   [optional] ftrace-site no-straddle SIZE [in NAME]
 *   [optional] jcc max N [in NAME]
 *
 * SIZE: 64, 0x40, 4K, 2M, 1G (binary units; K/KiB, M/MiB, G/GiB).  NAME is a
 * region as `noplab layout` lists it (entry_text, .entry.text, ...).
 * `optional`: a rule about a region that does not exist is skipped, not failed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "noplab/diag.h"
#include "noplab/layout.h"

enum nl_rule_kind {
	NL_RULE_PRESENT,
	NL_RULE_ALIGN,
	NL_RULE_END_ALIGN,
	NL_RULE_MAX_SIZE,
	NL_RULE_MAX_LINES,
	NL_RULE_MAX_PAGES,
	NL_RULE_EXCLUSIVE,
	NL_RULE_INSIDE,
	NL_RULE_FUNC_ALIGN,
	NL_RULE_FTRACE_NO_STRADDLE,
	NL_RULE_JCC_MAX,
};

enum nl_rule_side { NL_SIDE_BEFORE = 1, NL_SIDE_AFTER = 2 };

struct nl_rule {
	enum nl_rule_kind kind;
	char text[160];		/* the rule as written, comment and extra blanks removed */
	unsigned line;
	bool optional;
	char region[96];	/* subject; "" for functions/ftrace-site/jcc without `in` */
	char other[96];		/* `inside OTHER` */
	uint64_t value;		/* the size or count */
	uint64_t unit;		/* max-pages: page size; exclusive: unit size */
	unsigned sides;		/* exclusive: enum nl_rule_side mask */
};

struct nl_rules {
	char source[256];	/* file name, or the built-in set's name */
	struct nl_rule *v;
	size_t nr;
};

/* Names of the built-in sets, NULL-terminated. */
const char *const *nl_rules_builtin_names(void);
/* The text of a built-in set, or NULL. */
const char *nl_rules_builtin(const char *name);

/*
 * Parse rules text.  A malformed line fails the whole set with -NL_E_FORMAT
 * and "SOURCE:LINE: what is wrong" in d->msg.
 */
int nl_rules_parse(const char *text, size_t len, const char *source, struct nl_rules *out,
		   struct nl_diag *d);
/* A built-in name (no '/' in it) or a file. */
int nl_rules_load(const char *arg, struct nl_rules *out, struct nl_diag *d);
void nl_rules_release(struct nl_rules *r);
/* Whether some rule needs the branch audit. */
bool nl_rules_need_jcc(const struct nl_rules *r);

enum nl_rule_status { NL_RULE_HOLDS, NL_RULE_FAILS, NL_RULE_SKIPPED };

struct nl_violation {
	uint64_t addr;
	bool has_addr;
	const char *symbol;	/* function or region delimiter at addr, or NULL */
	uint64_t sym_off;
	char msg[200];
};

struct nl_rule_result {
	const struct nl_rule *rule;
	enum nl_rule_status status;
	char note[160];		/* why skipped, or a summary */
	struct nl_violation *v;
	size_t nr_v;
};

int nl_rules_eval(const struct nl_rules *rules, const struct nl_layout *lay,
		  struct nl_rule_result **out, size_t *nr, struct nl_diag *d);
void nl_rule_results_free(struct nl_rule_result *res, size_t nr);

/* "2M", "4K", "64", "0x1000" -> bytes; -NL_E_FORMAT when not a size. */
int nl_parse_size(const char *s, uint64_t *out);

#endif
