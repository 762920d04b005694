// SPDX-License-Identifier: MIT
/*
 * Table-driven recognizer for NOP instructions.  It decodes only as much of
 * an instruction as NOP forms need (prefixes, 90, 0f 18..1f with ModRM/SIB,
 * and the lea/mov identities the 32-bit kernel tables use) and answers
 * "none" for everything else, so it can run over megabytes of padding far
 * faster than a general disassembler.
 */
#include <stdio.h>
#include <string.h>

#include "noplab/nops.h"

#define MAX_INSN 15

struct prefixes {
	unsigned nr;		/* legacy + REX */
	unsigned len;		/* bytes consumed */
	bool opsize, addrsize, rep, repne, lock;
	uint8_t seg;		/* last segment override, 0 if none */
	uint8_t rex;		/* 0 if none */
};

static bool is_legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0x66: case 0x67: case 0x2e: case 0x3e: case 0x26: case 0x36:
	case 0x64: case 0x65: case 0xf0: case 0xf2: case 0xf3:
		return true;
	}
	return false;
}

static void read_prefixes(const uint8_t *p, size_t avail, enum nl_mode mode, struct prefixes *px)
{
	memset(px, 0, sizeof(*px));
	while (px->len < avail && px->len < MAX_INSN) {
		uint8_t b = p[px->len];

		if (is_legacy_prefix(b)) {
			/* A REX before a legacy prefix is ignored by the CPU. */
			px->rex = 0;
			switch (b) {
			case 0x66: px->opsize = true; break;
			case 0x67: px->addrsize = true; break;
			case 0xf0: px->lock = true; break;
			case 0xf2: px->repne = true; break;
			case 0xf3: px->rep = true; break;
			default: px->seg = b; break;
			}
		} else if (mode == NL_MODE_64 && (b & 0xf0) == 0x40) {
			px->rex = b;
		} else {
			break;
		}
		px->nr++;
		px->len++;
	}
}

struct modrm {
	unsigned len;		/* ModRM + SIB + displacement */
	uint8_t mod, reg, rm;
	bool has_sib;
	uint8_t scale, index, base;
	bool disp_zero;
	bool no_base;		/* SIB base 101 with mod 00, or rm 101 with mod 00 */
	bool rip;		/* RIP-relative (64-bit mode, mod 00 rm 101) */
};

/* Returns false when the bytes run out. */
static bool read_modrm(const uint8_t *p, size_t avail, enum nl_mode mode, bool addr16,
		       struct modrm *m)
{
	unsigned disp = 0;

	memset(m, 0, sizeof(*m));
	if (avail < 1)
		return false;
	m->mod = p[0] >> 6;
	m->reg = (p[0] >> 3) & 7;
	m->rm = p[0] & 7;
	m->len = 1;
	if (m->mod == 3) {
		m->disp_zero = true;
		return true;
	}
	if (addr16) {
		if (m->mod == 1)
			disp = 1;
		else if (m->mod == 2 || (m->mod == 0 && m->rm == 6))
			disp = 2;
		m->no_base = m->mod == 0 && m->rm == 6;
	} else {
		if (m->rm == 4) {
			if (avail < 2)
				return false;
			m->has_sib = true;
			m->scale = p[1] >> 6;
			m->index = (p[1] >> 3) & 7;
			m->base = p[1] & 7;
			m->len++;
			if (m->mod == 0 && m->base == 5) {
				m->no_base = true;
				disp = 4;
			}
		} else if (m->mod == 0 && m->rm == 5) {
			m->no_base = true;
			m->rip = mode == NL_MODE_64;
			disp = 4;
		}
		if (m->mod == 1)
			disp = 1;
		else if (m->mod == 2)
			disp = 4;
	}
	if (avail < m->len + disp)
		return false;
	m->disp_zero = true;
	for (unsigned i = 0; i < disp; i++)
		if (p[m->len + i])
			m->disp_zero = false;
	m->len += disp;
	return true;
}

static const char *const reg32[8] = { "eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi" };

/*
 * Does the lea's effective address equal the destination register with no
 * displacement?  Then it copies the register onto itself: [r], [r+0],
 * [r+eiz*k+0], or [r*1+0] with no base (the K7 7-byte form).
 */
static bool lea_is_identity(const struct modrm *m, uint8_t rex)
{
	unsigned reg = m->reg | ((rex & 4) ? 8 : 0);

	if (m->mod == 3 || !m->disp_zero || m->rip)
		return false;
	if (!m->has_sib)
		return !m->no_base && (m->rm | ((rex & 1) ? 8 : 0)) == reg;
	unsigned index = m->index | ((rex & 2) ? 8 : 0);
	unsigned base = m->base | ((rex & 1) ? 8 : 0);

	if (m->no_base)	/* [index*scale + disp32] */
		return index != 4 && m->scale == 0 && index == reg;
	/* index 100 without REX.X means "no index" (the %eiz of gas) */
	return index == 4 && base == reg;
}

static void set_none(struct nl_nop_id *id, const char *why)
{
	id->kind = NL_NOPK_NONE;
	id->why = why;
}

static const char *seg_name(uint8_t seg)
{
	switch (seg) {
	case 0x2e: return "cs_";
	case 0x3e: return "ds_";
	case 0x26: return "es_";
	case 0x36: return "ss_";
	case 0x64: return "fs_";
	case 0x65: return "gs_";
	}
	return "";
}

enum nl_nop_kind nl_nop_recognize(const uint8_t *p, size_t avail, enum nl_mode mode,
				  struct nl_nop_id *id)
{
	struct prefixes px;
	struct modrm m;
	unsigned op, len;
	bool nop_in_mode = true;	/* false: a NOP only in 32-bit mode */
	const char *form = NULL;
	char regsuffix[8] = "";

	memset(id, 0, sizeof(*id));
	if (!avail) {
		set_none(id, "no bytes");
		return id->kind;
	}
	read_prefixes(p, avail, mode, &px);
	if (px.len >= avail || px.len >= MAX_INSN) {
		set_none(id, px.len >= MAX_INSN ? "more than 14 prefixes" : "truncated");
		return id->kind;
	}
	op = px.len;
	id->nr_prefixes = (uint8_t)px.nr;

	switch (p[op]) {
	case 0x90:
		if (px.rep) {
			set_none(id, "PAUSE (f3 90)");
			return id->kind;
		}
		if (px.lock) {
			set_none(id, "lock prefix on nop (#UD)");
			return id->kind;
		}
		if (px.rex & 1) {
			set_none(id, "xchg %r8d,%eax (REX.B 90)");
			return id->kind;
		}
		len = op + 1;
		form = "nop";
		break;
	case 0x0f: {
		if (op + 1 >= avail) {
			set_none(id, "truncated");
			return id->kind;
		}
		uint8_t op2 = p[op + 1];

		if (op2 == 0x0b) {
			set_none(id, "ud2");
			return id->kind;
		}
		if (op2 == 0x0d) {
			set_none(id, "prefetch/prefetchw (0f 0d)");
			return id->kind;
		}
		if (op2 < 0x18 || op2 > 0x1f) {
			set_none(id, "not a NOP opcode");
			return id->kind;
		}
		bool addr16 = mode == NL_MODE_32 && px.addrsize;

		if (!read_modrm(p + op + 2, avail - op - 2, mode, addr16, &m)) {
			set_none(id, "truncated");
			return id->kind;
		}
		len = op + 2 + m.len;
		if (px.lock) {
			set_none(id, "lock prefix on nop (#UD)");
			return id->kind;
		}
		if (op2 == 0x1e && px.rep && p[op + 2] == 0xfa) {
			set_none(id, "endbr64");
			id->len = (uint8_t)len;
			return id->kind;
		}
		if (op2 == 0x1e && px.rep && p[op + 2] == 0xfb) {
			set_none(id, "endbr32");
			id->len = (uint8_t)len;
			return id->kind;
		}
		if (op2 == 0x1e && px.rep && m.mod == 3 && m.reg == 1) {
			set_none(id, "rdssp (CET shadow stack)");
			return id->kind;
		}
		if (op2 == 0x18 && m.mod != 3 && m.reg < 4) {
			set_none(id, "prefetch hint (0f 18 /0-3)");
			return id->kind;
		}
		if (op2 == 0x1a || op2 == 0x1b) {
			set_none(id, "MPX bound instruction (0f 1a/1b)");
			return id->kind;
		}
		if (op2 == 0x1f && m.reg == 0) {
			form = (px.rex & 8) ? "nopq" : px.opsize ? "nopw" : "nopl";
			if (m.mod == 3)
				snprintf(regsuffix, sizeof(regsuffix), "r");
		} else {
			form = "hintnop";
		}
		break;
	}
	case 0x89:
	case 0x8b:
	case 0x8d: {
		bool addr16 = mode == NL_MODE_32 && px.addrsize;

		if (!read_modrm(p + op + 1, avail - op - 1, mode, addr16, &m)) {
			set_none(id, "truncated");
			return id->kind;
		}
		len = op + 1 + m.len;
		bool identity;

		if (p[op] == 0x8d) {
			/* lea ignores segment overrides; an address-size prefix changes the sum */
			identity = !px.addrsize && lea_is_identity(&m, px.rex);
		} else {
			unsigned reg = m.reg | ((px.rex & 4) ? 8 : 0);
			unsigned rm = m.rm | ((px.rex & 1) ? 8 : 0);

			identity = m.mod == 3 && reg == rm;
		}
		if (!identity || px.lock || px.rep || px.repne) {
			set_none(id, p[op] == 0x8d ? "lea" : "mov");
			return id->kind;
		}
		/*
		 * A 32-bit destination zero-extends into the 64-bit register, so
		 * only 32-bit code (or a 64-bit or 16-bit operand) leaves state alone.
		 */
		if (mode == NL_MODE_64 && !(px.rex & 8) && !px.opsize)
			nop_in_mode = false;
		form = p[op] == 0x8d ? "lea" : "mov";
		if ((m.reg | ((px.rex & 4) ? 8 : 0)) < 8 && !(px.rex & 8) && !px.opsize)
			snprintf(regsuffix, sizeof(regsuffix), "_%s", reg32[m.reg]);
		break;
	}
	case 0xcc:
		set_none(id, "int3");
		return id->kind;
	case 0xeb:
	case 0xe9:
		set_none(id, "jmp");
		return id->kind;
	case 0xe8:
		set_none(id, "call");
		return id->kind;
	case 0xc3:
	case 0xc2:
		set_none(id, "ret");
		return id->kind;
	default:
		set_none(id, "not a NOP opcode");
		return id->kind;
	}

	if (len > MAX_INSN) {
		set_none(id, "longer than 15 bytes");
		return id->kind;
	}
	id->len = (uint8_t)len;
	id->families = nl_nop_families_of(p, len);
	id->entry = nl_nop_lookup(p, len);
	if (id->entry && id->entry->nr_insns == 1) {
		snprintf(id->name, sizeof(id->name), "%s", id->entry->canonical);
	} else {
		const char *seg = (px.seg && strcmp(form, "lea")) ? seg_name(px.seg) : "";

		snprintf(id->name, sizeof(id->name), "%s%s%u%s", seg, form, len, regsuffix);
	}
	if (!nop_in_mode) {
		id->kind = NL_NOPK_WRONG_MODE;
		id->why = "32-bit-only NOP: writing a 32-bit register clears the upper half in 64-bit mode";
	} else {
		id->kind = id->entry ? NL_NOPK_CATALOGUE : NL_NOPK_OTHER;
	}
	return id->kind;
}
