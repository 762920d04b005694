/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_LAYOUT_PRIV_H
#define NOPLAB_LAYOUT_PRIV_H

/* Between the layout passes; not part of the public interface. */

#include "noplab/layout.h"

struct nl_sym_pair {
	char key[128];
	size_t start, end;	/* indexes into in->syms */
};

/* Symbol pairs that delimit ranges (any section); the array is the caller's. */
int nl_layout_find_pairs(const struct nl_layout_input *in, struct nl_sym_pair **out, size_t *nr,
			 struct nl_diag *d);
int nl_layout_mark_delimiters(struct nl_layout_input *in, struct nl_diag *d);

/* Regions and their figures (regions.c), once lay->code and lay->funcs exist. */
int nl_layout_build_regions(struct nl_layout *lay, struct nl_diag *d);
void nl_layout_free_regions(struct nl_layout *lay);

#endif
