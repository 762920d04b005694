/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_DECODE_PRIV_H
#define NOPLAB_DECODE_PRIV_H

/* Between the two halves of the decoder: Capstone's and the quick tables. */

#include "noplab/insn.h"

/* Relative branch target from the encoding (opcode at b[op]). */
bool nl_direct_target(const uint8_t *b, unsigned len, unsigned op, uint64_t addr,
		      uint64_t *target);
/* Which macro-fusion kind the instruction at b (opcode at b[op]) is. */
enum nl_fuse_kind nl_fuse_kind(const uint8_t *b, unsigned len, unsigned op, enum nl_mode mode);
/*
 * Length and class from tables; 0 when the tables are not sure (the caller
 * asks Capstone).  Classes are exact for branches, calls and returns only.
 */
int nl_decode_quick(enum nl_mode mode, const uint8_t *p, size_t avail, uint64_t addr,
		    struct nl_insn *out);

#endif
