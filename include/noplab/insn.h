/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_INSN_H
#define NOPLAB_INSN_H

/*
 * The arch-neutral instruction interface.  Checks ask this, never Capstone:
 * analyzer/decode_capstone.c is the only file that includes capstone.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "noplab/diag.h"
#include "noplab/nops.h"

enum nl_insn_class {
	NL_INSN_OTHER,
	NL_INSN_NOP,		/* Capstone's nop (any 90 / 0f 1f / hint form it knows) */
	NL_INSN_ENDBR,		/* endbr64 / endbr32 */
	NL_INSN_TRAP,		/* int3, ud2, ud0, hlt */
	NL_INSN_JUMP,		/* unconditional direct jmp */
	NL_INSN_JUMP_COND,	/* jcc, jrcxz, loop* */
	NL_INSN_JUMP_INDIRECT,
	NL_INSN_CALL,		/* direct call */
	NL_INSN_CALL_INDIRECT,
	NL_INSN_RET,		/* ret, retf, iret, sysret */
	NL_INSN_PAUSE,
};

/*
 * What a fusible instruction is, for the macro-fusion rules (Intel Sandy
 * Bridge and later; LLVM's X86 classifyFirstOpcodeInMacroFusion): which
 * condition codes it fuses with depends on the kind.
 */
enum nl_fuse_kind {
	NL_FUSE_NONE,
	NL_FUSE_TEST_AND,	/* test, and: every jcc */
	NL_FUSE_CMP_ADD_SUB,	/* cmp, add, sub: not jo/jno/js/jns/jp/jnp */
	NL_FUSE_INC_DEC,	/* inc, dec: only je/jne/jl/jge/jle/jg */
};

struct nl_insn {
	uint64_t addr;
	uint8_t len;
	uint8_t nr_prefixes;	/* legacy + REX bytes before the opcode */
	enum nl_insn_class cls;
	bool has_target;	/* a direct branch or call with a known target */
	bool fusible;		/* cmp/test/add/sub/and/inc/dec: may macro-fuse with a jcc */
	uint8_t fuse;		/* enum nl_fuse_kind: NONE for forms that never fuse (memory
				 * destination of add/sub/and/inc/dec, memory+immediate,
				 * RIP-relative), even when fusible is set */
	int8_t cond;		/* jcc (7x, 0f 8x) condition code 0..15, else -1 */
	uint64_t target;
	unsigned id;		/* decoder's instruction id, for tests and text only */
	char text[64];		/* "mnemonic operands" when NL_DEC_TEXT was asked for */
};

struct nl_decoder;

enum nl_decoder_flags {
	NL_DEC_TEXT = 1,
	/*
	 * Lengths and branch classes from opcode tables where they are certain,
	 * Capstone otherwise: several times faster, for passes that need every
	 * length but few classes (the JCC audit).  Then id and text are 0/"", and
	 * classes other than jumps, calls and returns may read NL_INSN_OTHER.
	 */
	NL_DEC_QUICK = 2,
};

int nl_decoder_open(enum nl_mode mode, unsigned flags, struct nl_decoder **out,
		    struct nl_diag *d);
void nl_decoder_close(struct nl_decoder *dec);

/*
 * Decode one instruction at p (avail bytes) located at addr.  Returns its
 * length (> 0), or -NL_E_DECODE when the bytes are not an instruction the
 * decoder knows (Capstone 4.0.2 also refuses some valid forms, e.g. 0f 1f c0).
 * One decoder per thread.
 */
int nl_decode(struct nl_decoder *dec, const uint8_t *p, size_t avail, uint64_t addr,
	      struct nl_insn *out);

const char *nl_decoder_version(char *buf, size_t size);

#endif
