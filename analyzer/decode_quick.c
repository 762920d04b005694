// SPDX-License-Identifier: MIT
/*
 * The quick path of the decoder interface (NL_DEC_QUICK): instruction
 * length and branch class from opcode tables, for the JCC audit, which
 * needs every instruction's length but the class of only a few.  Capstone
 * 4 formats every instruction's text and so decodes ~10 MB/s; this runs
 * several times faster and answers 0 ("ask Capstone") for anything it does
 * not know for certain: VEX/EVEX/XOP, 3DNow!, 16-bit addressing, operand-size
 * prefixed relative branches, opcodes invalid in the mode.  Its lengths and
 * classes are checked against Capstone over random bytes and real code
 * (tests/test_jcc_quick.c).
 */
#include <string.h>

#include "decode_priv.h"

/* Relative branch displacement from the encoding: e8/e9/eb/7x/e0-e3/0f 8x. */
bool nl_direct_target(const uint8_t *b, unsigned len, unsigned op, uint64_t addr,
			  uint64_t *target)
{
	int64_t rel;

	if (op >= len)
		return false;
	switch (b[op]) {
	case 0xe8: case 0xe9:
		if (len - op == 5) {
			rel = (int32_t)((uint32_t)b[op + 1] | (uint32_t)b[op + 2] << 8 |
					(uint32_t)b[op + 3] << 16 | (uint32_t)b[op + 4] << 24);
			break;
		}
		if (len - op == 3) {	/* operand-size prefix in 32-bit mode: rel16 */
			rel = (int16_t)(b[op + 1] | b[op + 2] << 8);
			break;
		}
		return false;
	case 0xeb: case 0xe0: case 0xe1: case 0xe2: case 0xe3:
		rel = (int8_t)b[op + 1];
		break;
	case 0x0f:
		if (op + 1 < len && (b[op + 1] & 0xf0) == 0x80 && len - op == 6) {
			rel = (int32_t)((uint32_t)b[op + 2] | (uint32_t)b[op + 3] << 8 |
					(uint32_t)b[op + 4] << 16 | (uint32_t)b[op + 5] << 24);
			break;
		}
		return false;
	default:
		if ((b[op] & 0xf0) == 0x70) {
			rel = (int8_t)b[op + 1];
			break;
		}
		return false;
	}
	*target = addr + len + (uint64_t)rel;
	return true;
}

/*
 * Which forms of a fusible mnemonic really fuse with a following jcc, from
 * the opcode and ModRM bytes (Capstone's detail mode would tell us the
 * operands too, at a third of the decode rate).  Intel's rules, as LLVM's
 * X86 backend encodes them: cmp/test fuse unless memory+immediate;
 * add/sub/and/inc/dec need a register destination; nothing RIP-relative.
 */
enum nl_fuse_kind nl_fuse_kind(const uint8_t *b, unsigned len, unsigned op,
				   enum nl_mode mode)
{
	uint8_t o, modrm;
	bool reg_form, rip;
	unsigned ext;

	if (op >= len)
		return NL_FUSE_NONE;
	o = b[op];
	if (mode == NL_MODE_32 && o >= 0x40 && o <= 0x4f)
		return NL_FUSE_INC_DEC;
	switch (o) {
	case 0x04: case 0x05: case 0x2c: case 0x2d: case 0x3c: case 0x3d:
		return NL_FUSE_CMP_ADD_SUB;	/* al/eax, imm */
	case 0x24: case 0x25: case 0xa8: case 0xa9:
		return NL_FUSE_TEST_AND;
	}
	if (op + 1 >= len)
		return NL_FUSE_NONE;
	modrm = b[op + 1];
	reg_form = (modrm >> 6) == 3;
	rip = mode == NL_MODE_64 && (modrm >> 6) == 0 && (modrm & 7) == 5;
	ext = (modrm >> 3) & 7;
	if (rip)
		return NL_FUSE_NONE;
	switch (o) {
	case 0x38: case 0x39: case 0x3a: case 0x3b:	/* cmp r/m,r and r,r/m */
	case 0x02: case 0x03: case 0x2a: case 0x2b:	/* add/sub r, r/m */
		return NL_FUSE_CMP_ADD_SUB;
	case 0x00: case 0x01: case 0x28: case 0x29:	/* add/sub r/m, r */
		return reg_form ? NL_FUSE_CMP_ADD_SUB : NL_FUSE_NONE;
	case 0x84: case 0x85: case 0x22: case 0x23:	/* test r/m,r; and r, r/m */
		return NL_FUSE_TEST_AND;
	case 0x20: case 0x21:				/* and r/m, r */
		return reg_form ? NL_FUSE_TEST_AND : NL_FUSE_NONE;
	case 0x80: case 0x81: case 0x83:		/* group 1 with an immediate */
		if (!reg_form)
			return NL_FUSE_NONE;
		if (ext == 0 || ext == 5 || ext == 7)
			return NL_FUSE_CMP_ADD_SUB;
		return ext == 4 ? NL_FUSE_TEST_AND : NL_FUSE_NONE;
	case 0xf6: case 0xf7:				/* test r/m, imm */
		return reg_form && ext == 0 ? NL_FUSE_TEST_AND : NL_FUSE_NONE;
	case 0xfe: case 0xff:				/* inc/dec r/m */
		return reg_form && ext <= 1 ? NL_FUSE_INC_DEC : NL_FUSE_NONE;
	}
	return NL_FUSE_NONE;
}

/* one-byte map: bit 0 ModRM, bits 1..3 immediate kind, bit 4 ask Capstone */
enum {
	M = 1,			/* ModRM follows */
	I8 = 1 << 1,		/* imm8 / rel8 */
	IZ = 2 << 1,		/* imm16/32 by operand size */
	I16 = 3 << 1,		/* imm16 */
	IV = 4 << 1,		/* imm16/32/64 (mov r, imm) */
	ENTER = 5 << 1,		/* imm16 + imm8 */
	MOFFS = 6 << 1,		/* address-sized offset */
	IGRP = 7 << 1,		/* F6/F7: immediate only for /0 and /1 */
	IMM_MASK = 7 << 1,
	X = 1 << 4,		/* not here: Capstone */
	X64 = 1 << 5,		/* invalid or a VEX/EVEX escape in 64-bit mode */
	PFX = 1 << 6,		/* a legacy prefix */
};

static const uint8_t map1[256] = {
	/* 00 */ M, M, M, M, I8, IZ, X64, X64, M, M, M, M, I8, IZ, X64, X,
	/* 10 */ M, M, M, M, I8, IZ, X64, X64, M, M, M, M, I8, IZ, X64, X64,
	/* 20 */ M, M, M, M, I8, IZ, PFX, X64, M, M, M, M, I8, IZ, PFX, X64,
	/* 30 */ M, M, M, M, I8, IZ, PFX, X64, M, M, M, M, I8, IZ, PFX, X64,
	/* 40 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 50 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 60 */ X64, X64, X, M, PFX, PFX, PFX, PFX, IZ, M | IZ, I8, M | I8, 0, 0, 0, 0,
	/* 70 */ I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8,
	/* 80 */ M | I8, M | IZ, X64 | M | I8, M | I8, M, M, M, M, M, M, M, M, M, M, M, X,
	/* 90 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, X, 0, 0, 0, 0, 0,
	/* a0 */ MOFFS, MOFFS, MOFFS, MOFFS, 0, 0, 0, 0, I8, IZ, 0, 0, 0, 0, 0, 0,
	/* b0 */ I8, I8, I8, I8, I8, I8, I8, I8, IV, IV, IV, IV, IV, IV, IV, IV,
	/* c0 */ M | I8, M | I8, I16, 0, X, X, M | I8, M | IZ, ENTER, 0, I16, 0, 0, I8, X64, 0,
	/* d0 */ M, M, M, M, X64 | I8, X64 | I8, X, 0, M, M, M, M, M, M, M, M,
	/* e0 */ I8, I8, I8, I8, I8, I8, I8, I8, IZ, IZ, X, I8, 0, 0, 0, 0,
	/* f0 */ PFX, 0, PFX, PFX, 0, 0, M | IGRP, M | IGRP, 0, 0, 0, 0, 0, 0, M, M,
};

/*
 * 0F map: M, I8 and X as above.  Unlisted (0) means no ModRM and no
 * immediate; everything undefined or odd goes to Capstone.
 */
static uint8_t map2_entry(uint8_t op, unsigned mandatory)
{
	switch (op) {
	case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b:
	case 0x30: case 0x31: case 0x32: case 0x33: case 0x34: case 0x35:
	case 0x77: case 0xa0: case 0xa1: case 0xa2: case 0xa8: case 0xa9: case 0xaa:
	case 0xc8: case 0xc9: case 0xca: case 0xcb: case 0xcc: case 0xcd: case 0xce: case 0xcf:
		return 0;
	case 0x80: case 0x81: case 0x82: case 0x83: case 0x84: case 0x85: case 0x86: case 0x87:
	case 0x88: case 0x89: case 0x8a: case 0x8b: case 0x8c: case 0x8d: case 0x8e: case 0x8f:
		return IZ;	/* jcc rel32 (an operand-size prefix was sent to Capstone) */
	case 0x70: case 0x71: case 0x72: case 0x73: case 0xa4: case 0xac: case 0xba:
	case 0xc2: case 0xc4: case 0xc5: case 0xc6:
		return M | I8;
	case 0x78: case 0x79:
		/* vmread/vmwrite; with 66/F2 they are SSE4a extrq/insertq with immediates */
		return mandatory ? X : M;
	case 0x00: case 0x01: case 0x02: case 0x03: case 0x0d:
	case 0x10: case 0x11: case 0x12: case 0x13: case 0x14: case 0x15: case 0x16: case 0x17:
	case 0x18: case 0x19: case 0x1a: case 0x1b: case 0x1c: case 0x1d: case 0x1e: case 0x1f:
	case 0x28: case 0x29: case 0x2a: case 0x2b:
	case 0x2c: case 0x2d: case 0x2e: case 0x2f:
	case 0x40: case 0x41: case 0x42: case 0x43: case 0x44: case 0x45: case 0x46: case 0x47:
	case 0x48: case 0x49: case 0x4a: case 0x4b: case 0x4c: case 0x4d: case 0x4e: case 0x4f:
	case 0x50: case 0x51: case 0x52: case 0x53: case 0x54: case 0x55: case 0x56: case 0x57:
	case 0x58: case 0x59: case 0x5a: case 0x5b: case 0x5c: case 0x5d: case 0x5e: case 0x5f:
	case 0x60: case 0x61: case 0x62: case 0x63: case 0x64: case 0x65: case 0x66: case 0x67:
	case 0x68: case 0x69: case 0x6a: case 0x6b: case 0x6c: case 0x6d: case 0x6e: case 0x6f:
	case 0x74: case 0x75: case 0x76: case 0x7c: case 0x7d: case 0x7e: case 0x7f:
	case 0x90: case 0x91: case 0x92: case 0x93: case 0x94: case 0x95: case 0x96: case 0x97:
	case 0x98: case 0x99: case 0x9a: case 0x9b: case 0x9c: case 0x9d: case 0x9e: case 0x9f:
	case 0xa3: case 0xa5: case 0xab: case 0xad: case 0xae: case 0xaf:
	case 0xb0: case 0xb1: case 0xb2: case 0xb3: case 0xb4: case 0xb5: case 0xb6: case 0xb7:
	case 0xbb: case 0xbc: case 0xbd: case 0xbe: case 0xbf:
	case 0xc0: case 0xc1: case 0xc3: case 0xc7:
	case 0xd1: case 0xd2: case 0xd3: case 0xd4: case 0xd5: case 0xd6: case 0xd7:
	case 0xd8: case 0xd9: case 0xda: case 0xdb: case 0xdc: case 0xdd: case 0xde: case 0xdf:
	case 0xe0: case 0xe1: case 0xe2: case 0xe3: case 0xe4: case 0xe5: case 0xe6: case 0xe7:
	case 0xe8: case 0xe9: case 0xea: case 0xeb: case 0xec: case 0xed: case 0xee: case 0xef:
	case 0xf1: case 0xf2: case 0xf3: case 0xf4: case 0xf5: case 0xf6: case 0xf7:
	case 0xf8: case 0xf9: case 0xfa: case 0xfb: case 0xfc: case 0xfd: case 0xfe:
		return M;
	}
	return X;
}

/* Bytes of ModRM (and SIB, displacement) at p, 32/64-bit addressing; 0 when short. */
static unsigned modrm_len(const uint8_t *p, size_t avail, bool *rip)
{
	uint8_t m, mod, rm;
	unsigned n = 1;

	if (!avail)
		return 0;
	m = p[0];
	mod = m >> 6;
	rm = m & 7;
	*rip = false;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (avail < 2)
			return 0;
		n++;
		if (mod == 0 && (p[1] & 7) == 5)
			n += 4;
	} else if (mod == 0 && rm == 5) {
		n += 4;
		*rip = true;
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	return n;
}

/* cmp, test, add, sub, and, inc, dec: what the Capstone path calls fusible */
static bool alu_fusible_op(uint8_t o, unsigned ext)
{
	if ((o <= 0x05) || (o >= 0x20 && o <= 0x25) || (o >= 0x28 && o <= 0x2d) ||
	    (o >= 0x38 && o <= 0x3d) || o == 0x84 || o == 0x85 || o == 0xa8 || o == 0xa9)
		return true;
	switch (o) {
	case 0x80: case 0x81: case 0x83:
		return ext == 0 || ext == 4 || ext == 5 || ext == 7;
	case 0xf6: case 0xf7: case 0xfe: case 0xff:
		return ext <= 1;
	}
	return false;
}

int nl_decode_quick(enum nl_mode mode, const uint8_t *p, size_t avail, uint64_t addr,
		    struct nl_insn *out)
{
	const bool m64 = mode == NL_MODE_64;
	bool opsize = false, adsize = false, rex_w = false, rip = false;
	unsigned i = 0, mandatory = 0, npfx;
	uint8_t op, flags;
	/* declared before the 0f path's goto, which skips their assignments */
	uint8_t modrm = 0;
	unsigned ext = 0;
	size_t len;

	/* prefixes; a REX counts only right before the opcode */
	for (;;) {
		if (i >= avail || i >= 15)
			return 0;
		uint8_t b = p[i];

		if (m64 && (b & 0xf0) == 0x40) {
			rex_w = b & 8;
			i++;
			if (i < avail && (map1[p[i]] & PFX || p[i] == 0x66 || p[i] == 0x67))
				rex_w = false;	/* a legacy prefix after REX cancels it */
			continue;
		}
		if (b == 0x66) {
			opsize = true;
			mandatory = 0x66;
		} else if (b == 0x67) {
			adsize = true;
		} else if (b == 0xf2 || b == 0xf3) {
			mandatory = b;
		} else if (!(map1[b] & PFX)) {
			break;
		}
		i++;
	}
	npfx = i;
	/* 16-bit addressing changes the ModRM layout: Capstone knows it */
	if (adsize && !m64)
		return 0;
	/*
	 * lock, and the register forms of lea, mov sreg and x87 below, are valid
	 * only in some encodings; where they are not, Capstone (like the CPU)
	 * refuses them, and the audit should see what Capstone sees.
	 */
	if (memchr(p, 0xf0, npfx))
		return 0;
	op = p[i++];
	/* relative branches with 67: Capstone reads some as rel16; leave them to it */
	if (adsize && (op == 0xe8 || op == 0xe9 || op == 0xeb || (op & 0xf0) == 0x70 ||
		       (op >= 0xe0 && op <= 0xe3) || (op == 0x0f && i < avail && (p[i] & 0xf0) == 0x80)))
		return 0;
	memset(out, 0, sizeof(*out));
	out->addr = addr;
	out->nr_prefixes = (uint8_t)npfx;
	out->cond = -1;
	out->cls = NL_INSN_OTHER;

	if (op == 0x0f) {
		if (i >= avail)
			return 0;
		uint8_t op2 = p[i++];

		if (op2 == 0x38 || op2 == 0x3a) {
			bool r;
			unsigned ml = modrm_len(p + i + 1, i + 1 < avail ? avail - i - 1 : 0, &r);

			if (i >= avail || !ml)
				return 0;
			i++;	/* the third opcode byte */
			len = i + ml + (op2 == 0x3a ? 1 : 0);
		} else {
			flags = map2_entry(op2, mandatory == 0x66 || mandatory == 0xf2);
			if (flags & X)
				return 0;
			len = i;
			if (flags & M) {
				unsigned ml = modrm_len(p + i, avail - i, &rip);

				if (!ml)
					return 0;
				len += ml;
			}
			if ((flags & IMM_MASK) == I8) {
				len += 1;
			} else if ((flags & IMM_MASK) == IZ) {
				if (opsize)
					return 0;	/* jcc rel16: Intel and AMD differ */
				len += 4;
				out->cls = NL_INSN_JUMP_COND;
				out->cond = (int8_t)(op2 & 0x0f);
			}
			if (op2 == 0x07)
				out->cls = NL_INSN_RET;		/* sysret */
			else if (op2 == 0x0b)
				out->cls = NL_INSN_TRAP;		/* ud2 */
			else if (op2 == 0x1f && mandatory == 0)
				out->cls = NL_INSN_NOP;
		}
		goto done;
	}

	flags = map1[op];
	if ((flags & X) || (m64 && (flags & X64)))
		return 0;
	len = i;
	if (flags & M) {
		unsigned ml = modrm_len(p + i, avail - i, &rip);

		if (!ml)
			return 0;
		modrm = p[i];
		ext = (modrm >> 3) & 7;
		len += ml;
		if ((modrm >> 6) == 3 && (op == 0x8d || (op >= 0xd8 && op <= 0xdf)))
			return 0;
		if (op == 0x8c || op == 0x8e)
			return 0;
	}
	switch (flags & IMM_MASK) {
	case I8: len += 1; break;
	case IZ: len += opsize && !rex_w ? 2 : 4; break;	/* REX.W wins over 66 */
	case I16: len += 2; break;
	case IV: len += rex_w ? 8 : opsize ? 2 : 4; break;
	case ENTER: len += 3; break;
	case MOFFS: len += m64 ? (adsize ? 4 : 8) : 4; break;
	case IGRP:
		if (ext <= 1)
			len += op == 0xf6 ? 1 : opsize && !rex_w ? 2 : 4;
		break;
	}
	/* classes: what the audit counts, exactly as the Capstone path names them */
	if ((op & 0xf0) == 0x70 || (op >= 0xe0 && op <= 0xe3)) {
		if (op >= 0xe0 && adsize)
			return 0;	/* jecxz/loopl: Capstone's business */
		out->cls = NL_INSN_JUMP_COND;
		if ((op & 0xf0) == 0x70)
			out->cond = (int8_t)(op & 0x0f);
	} else if (op == 0xe8 || op == 0xe9) {
		if (opsize)
			return 0;	/* rel16 in some modes and vendors */
		out->cls = op == 0xe8 ? NL_INSN_CALL : NL_INSN_JUMP;
	} else if (op == 0xeb) {
		out->cls = NL_INSN_JUMP;
	} else if (op == 0xc3 || op == 0xc2 || op == 0xcb || op == 0xca || op == 0xcf) {
		out->cls = NL_INSN_RET;
	} else if (op == 0xff && (ext == 2 || ext == 3)) {
		if (ext == 3 && (modrm >> 6) == 3)
			return 0;	/* lcall with a register: invalid */
		out->cls = NL_INSN_CALL_INDIRECT;
	} else if (op == 0xff && (ext == 4 || ext == 5)) {
		if (ext == 5 && (modrm >> 6) == 3)
			return 0;
		out->cls = NL_INSN_JUMP_INDIRECT;
	} else if (op == 0xff && ext == 7) {
		return 0;	/* undefined */
	} else if (op == 0xfe && ext > 1) {
		return 0;
	} else if (op == 0xc6 || op == 0xc7) {
		if (ext != 0 && !(ext == 7 && modrm == 0xf8))
			return 0;	/* only mov and xabort/xbegin are defined */
	} else if (op == 0xcc) {
		out->cls = NL_INSN_TRAP;
	} else if (op == 0x90 && mandatory != 0xf3 && !(m64 && npfx && (p[npfx - 1] & 0xf1) == 0x41)) {
		out->cls = NL_INSN_NOP;
	}
done:
	if (len > 15 || len > avail)
		return 0;
	out->len = (uint8_t)len;
	if (out->cls == NL_INSN_JUMP || out->cls == NL_INSN_CALL || out->cls == NL_INSN_JUMP_COND) {
		out->has_target = nl_direct_target(p, (unsigned)len, npfx, addr, &out->target);
		if (!out->has_target)
			return 0;
	}
	if (op != 0x0f) {
		out->fusible = alu_fusible_op(op, ext) ||
			       (!m64 && op >= 0x40 && op <= 0x4f);
		if (out->fusible)
			out->fuse = (uint8_t)nl_fuse_kind(p, (unsigned)len, npfx, mode);
	}
	return (int)len;
}
