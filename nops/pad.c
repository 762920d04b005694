// SPDX-License-Identifier: MIT
/*
 * Padding runs: reading them (split a gap into what wrote it) and writing
 * them (compose padding the way each producer does).
 */
#include <errno.h>
#include <string.h>

#include "noplab/nops.h"

#define ASM_NOP_MAX_PRE513 8	/* ideal_nops[] had lengths 1..8 */
#define X86_NOPS_MAX64 11	/* ASM_NOP_MAX since v6.5 */
#define X86_NOPS_MAX32 8
#define GAS_MAX_NOP 11
#define GAS_MAX_NOPS 7		/* alt_patt's max_number_of_nops before it jumps */
#define LLVM_MAX_NOP 10

/* A jump whose target is exactly the end of the run, and its length. */
static unsigned jump_to_end(const uint8_t *p, size_t len)
{
	if (len >= 2 && p[0] == 0xeb && (size_t)p[1] + 2 == len)
		return 2;
	if (len >= 5 && p[0] == 0xe9) {
		uint32_t d = (uint32_t)p[1] | (uint32_t)p[2] << 8 | (uint32_t)p[3] << 16 |
			     (uint32_t)p[4] << 24;

		if ((uint64_t)d + 5 == len)
			return 5;
	}
	return 0;
}

static size_t run_of(const uint8_t *p, size_t len, uint8_t b)
{
	size_t n = 0;

	while (n < len && p[n] == b)
		n++;
	return n;
}

static void add_piece(struct nl_pad_piece *pieces, size_t max, struct nl_pad_split *out,
		      size_t off, size_t len, enum nl_pad_kind kind, const struct nl_nop_id *id)
{
	if (out->nr_pieces < max) {
		struct nl_pad_piece *pc = &pieces[out->nr_pieces];

		pc->off = (uint32_t)off;
		pc->len = (uint32_t)len;
		pc->kind = kind;
		if (id)
			pc->id = *id;
		else
			memset(&pc->id, 0, sizeof(pc->id));
	}
	out->nr_pieces++;
}

void nl_pad_split(const uint8_t *p, size_t len, enum nl_mode mode,
		  struct nl_pad_piece *pieces, size_t max, struct nl_pad_split *out)
{
	size_t pos = 0;

	memset(out, 0, sizeof(*out));
	while (pos < len) {
		const uint8_t *q = p + pos;
		size_t left = len - pos;
		struct nl_nop_id id;
		size_t n;

		if ((n = run_of(q, left, 0xcc))) {
			add_piece(pieces, max, out, pos, n, NL_PAD_INT3, NULL);
			out->int3_bytes += n;
		} else if ((n = run_of(q, left, 0x00))) {
			add_piece(pieces, max, out, pos, n, NL_PAD_ZERO, NULL);
			out->zero_bytes += n;
		} else if (jump_to_end(q, left)) {
			/* gas and the kernel's add_nop() jump over long padding */
			n = left;
			memset(&id, 0, sizeof(id));
			id.len = (uint8_t)jump_to_end(q, left);
			id.why = "jmp";
			add_piece(pieces, max, out, pos, n, NL_PAD_JMP, &id);
			out->jmp_bytes += n;
		} else if (nl_nop_recognize(q, left, mode, &id) != NL_NOPK_NONE) {
			n = id.len;
			add_piece(pieces, max, out, pos, n, NL_PAD_NOP, &id);
			out->nop_bytes += n;
			out->nr_nops++;
		} else {
			/*
			 * Padding never resumes inside code we cannot decode here,
			 * so the rest of the gap is code (or data) for the caller.
			 */
			n = left;
			add_piece(pieces, max, out, pos, n, NL_PAD_CODE, &id);
			out->code_bytes += n;
		}
		pos += n;
	}
}

static int copy_entry(const struct nl_nop *e, uint8_t *out)
{
	if (!e)
		return -EINVAL;
	memcpy(out, e->bytes, e->len);
	return e->nr_insns;
}

/* Largest first, from one family's table, up to max bytes per NOP. */
static int fill_largest_first(enum nl_nop_family fam, unsigned max, bool table32,
			      size_t len, uint8_t *out)
{
	int insns = 0;

	while (len) {
		unsigned n = len > max ? max : (unsigned)len;
		int r = copy_entry(nl_nop_find_len(fam, n, table32), out);

		if (r < 0)
			return r;
		insns += r;
		out += n;
		len -= n;
	}
	return insns;
}

static int jump_over(size_t len, uint8_t *out, uint8_t fill)
{
	if (len - 2 <= 127) {
		out[0] = 0xeb;
		out[1] = (uint8_t)(len - 2);
		memset(out + 2, fill, len - 2);
		return 2;
	}
	uint32_t d = (uint32_t)(len - 5);

	out[0] = 0xe9;
	for (int i = 0; i < 4; i++)
		out[1 + i] = (uint8_t)(d >> (8 * i));
	memset(out + 5, fill, len - 5);
	return 5;
}

int nl_nop_compose(enum nl_nop_family fam, enum nl_mode mode, size_t len,
		   uint8_t *out, size_t cap)
{
	if (len > cap)
		return -ENOSPC;
	if (len > INT32_MAX)
		return -E2BIG;
	if (!len)
		return 0;

	switch (fam) {
	case NL_FAM_SINGLE:
		memset(out, 0x90, len);
		return (int)len;
	case NL_FAM_INT3:
		memset(out, 0xcc, len);
		return (int)len;
	case NL_FAM_JMP:
		if (len == 1) {
			out[0] = 0x90;
			return 1;
		}
		jump_over(len, out, 0xcc);
		return 1 + (int)(len - (out[0] == 0xeb ? 2 : 5));
	case NL_FAM_X86_NOPS: {
		unsigned max = mode == NL_MODE_64 ? X86_NOPS_MAX64 : X86_NOPS_MAX32;

		if (len <= max)
			return copy_entry(nl_nop_find_len(fam, (unsigned)len, mode == NL_MODE_32), out);
		/* add_nop(): one instruction, so the tail is a jump over int3 */
		jump_over(len, out, 0xcc);
		return 1 + (int)(len - (out[0] == 0xeb ? 2 : 5));
	}
	case NL_FAM_P6:
	case NL_FAM_K8:
	case NL_FAM_K7:
	case NL_FAM_GENERIC:
		/* pre-5.13 add_nops(): chunks of at most ASM_NOP_MAX from ideal_nops */
		return fill_largest_first(fam, ASM_NOP_MAX_PRE513, false, len, out);
	case NL_FAM_SDM:
		return fill_largest_first(fam, 9, false, len, out);
	case NL_FAM_GAS: {
		/* tc-i386.c i386_generate_nops(): jump once count / 11 exceeds 7 */
		if (len / GAS_MAX_NOP <= GAS_MAX_NOPS)
			return fill_largest_first(fam, GAS_MAX_NOP, false, len, out);
		/* too many NOPs: gas jumps over the padding, which stays NOPs */
		unsigned j = jump_over(len, out, 0x90);
		int r = fill_largest_first(fam, GAS_MAX_NOP, false, len - j, out + j);

		return r < 0 ? r : r + 1;
	}
	case NL_FAM_LLVM: {
		/* 10-byte NOPs, then LLVM's 1..9 table, which is the SDM's */
		int insns = 0;

		while (len >= LLVM_MAX_NOP) {
			copy_entry(nl_nop_find("llvm:10"), out);
			out += LLVM_MAX_NOP;
			len -= LLVM_MAX_NOP;
			insns++;
		}
		if (len) {
			int r = copy_entry(nl_nop_find_len(NL_FAM_SDM, (unsigned)len, false), out);

			if (r < 0)
				return r;
			insns += r;
		}
		return insns;
	}
	default:
		return -EINVAL;
	}
}
