/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_NOPCHECK_H
#define NOPLAB_NOPCHECK_H

/*
 * Checking catalogue entries against the general decoder: does the decoder
 * agree on instruction count, total length and NOP-ness with what the
 * catalogue documents for a mode?
 */

#include "noplab/insn.h"
#include "noplab/nops.h"

struct nl_nop_verdict {
	bool agrees;
	unsigned decoded_insns;	/* as the decoder split the bytes */
	unsigned decoded_len;	/* bytes it consumed */
	bool decoded_nop;	/* executes with no effect, by the decoder's reading */
	char text[160];		/* decoder's disassembly, "; "-separated */
	char problem[160];	/* what disagrees, empty when it agrees */
};

int nl_nop_verify(struct nl_decoder *dec, const struct nl_nop *e, enum nl_mode mode,
		  struct nl_nop_verdict *v);

#endif
