// SPDX-License-Identifier: MIT
/*
 * The x86 decoder behind include/noplab/insn.h, on Capstone 4.  Detail mode
 * stays off: classification needs only the instruction id and its bytes,
 * and detail costs a third of the decode rate.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_priv.h"
#include "noplab/insn.h"

struct nl_decoder {
	csh handle;
	cs_insn *insn;
	enum nl_mode mode;
	unsigned flags;
};

int nl_decoder_open(enum nl_mode mode, unsigned flags, struct nl_decoder **out,
		    struct nl_diag *d)
{
	struct nl_decoder *dec = calloc(1, sizeof(*dec));
	cs_err err;

	if (!dec)
		return nl_fail_errno(d, -ENOMEM, "decoder");
	err = cs_open(CS_ARCH_X86, mode == NL_MODE_64 ? CS_MODE_64 : CS_MODE_32, &dec->handle);
	if (err != CS_ERR_OK) {
		free(dec);
		return nl_fail(d, -NL_E_UNSUPPORTED, "capstone: %s", cs_strerror(err));
	}
	/* options before cs_malloc: the insn buffer is sized by them */
	cs_option(dec->handle, CS_OPT_DETAIL, CS_OPT_OFF);
	dec->insn = cs_malloc(dec->handle);
	if (!dec->insn) {
		cs_close(&dec->handle);
		free(dec);
		return nl_fail_errno(d, -ENOMEM, "capstone instruction buffer");
	}
	dec->mode = mode;
	dec->flags = flags;
	*out = dec;
	return 0;
}

void nl_decoder_close(struct nl_decoder *dec)
{
	if (!dec)
		return;
	cs_free(dec->insn, 1);
	cs_close(&dec->handle);
	free(dec);
}

static unsigned count_prefixes(const uint8_t *b, unsigned len, enum nl_mode mode)
{
	unsigned n = 0;

	while (n < len) {
		uint8_t c = b[n];

		if (c == 0x66 || c == 0x67 || c == 0x2e || c == 0x3e || c == 0x26 || c == 0x36 ||
		    c == 0x64 || c == 0x65 || c == 0xf0 || c == 0xf2 || c == 0xf3 ||
		    (mode == NL_MODE_64 && (c & 0xf0) == 0x40))
			n++;
		else
			break;
	}
	return n;
}

static enum nl_insn_class classify(unsigned id)
{
	switch (id) {
	case X86_INS_NOP: return NL_INSN_NOP;
	case X86_INS_PAUSE: return NL_INSN_PAUSE;
	case X86_INS_ENDBR64: case X86_INS_ENDBR32: return NL_INSN_ENDBR;
	case X86_INS_INT3: case X86_INS_UD2: case X86_INS_UD2B: case X86_INS_UD0: case X86_INS_HLT:
		return NL_INSN_TRAP;
	case X86_INS_JMP: case X86_INS_LJMP: return NL_INSN_JUMP;
	case X86_INS_CALL: case X86_INS_LCALL: return NL_INSN_CALL;
	case X86_INS_RET: case X86_INS_RETF: case X86_INS_RETFQ: case X86_INS_IRET:
	case X86_INS_IRETD: case X86_INS_IRETQ: case X86_INS_SYSRET:
		return NL_INSN_RET;
	case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE: case X86_INS_JB: case X86_INS_JCXZ:
	case X86_INS_JECXZ: case X86_INS_JE: case X86_INS_JGE: case X86_INS_JG: case X86_INS_JLE:
	case X86_INS_JL: case X86_INS_JNE: case X86_INS_JNO: case X86_INS_JNP: case X86_INS_JNS:
	case X86_INS_JO: case X86_INS_JP: case X86_INS_JRCXZ: case X86_INS_JS: case X86_INS_LOOP:
	case X86_INS_LOOPE: case X86_INS_LOOPNE:
		return NL_INSN_JUMP_COND;
	}
	return NL_INSN_OTHER;
}

static bool is_fusible(unsigned id)
{
	switch (id) {
	case X86_INS_CMP: case X86_INS_TEST: case X86_INS_ADD: case X86_INS_SUB:
	case X86_INS_AND: case X86_INS_INC: case X86_INS_DEC:
		return true;
	}
	return false;
}

/* The tttn condition of a jcc encoding (7x rel8, 0f 8x rel32); -1 for jcxz/loop. */
static int jcc_cond(const uint8_t *b, unsigned len, unsigned op)
{
	if (op < len && (b[op] & 0xf0) == 0x70)
		return b[op] & 0x0f;
	if (op + 1 < len && b[op] == 0x0f && (b[op + 1] & 0xf0) == 0x80)
		return b[op + 1] & 0x0f;
	return -1;
}

int nl_decode(struct nl_decoder *dec, const uint8_t *p, size_t avail, uint64_t addr,
	      struct nl_insn *out)
{
	const uint8_t *code = p;
	size_t size = avail;
	uint64_t a = addr;

	if (dec->flags & NL_DEC_QUICK) {
		int n = nl_decode_quick(dec->mode, p, avail, addr, out);

		if (n > 0)
			return n;
	}
	if (!cs_disasm_iter(dec->handle, &code, &size, &a, dec->insn))
		return -NL_E_DECODE;

	const cs_insn *in = dec->insn;
	unsigned op;

	out->addr = addr;
	out->len = (uint8_t)in->size;
	out->id = in->id;
	out->nr_prefixes = (uint8_t)count_prefixes(in->bytes, in->size, dec->mode);
	out->cls = classify(in->id);
	out->fusible = is_fusible(in->id);
	op = out->nr_prefixes;
	out->fuse = out->fusible ? (uint8_t)nl_fuse_kind(in->bytes, in->size, op, dec->mode)
				 : NL_FUSE_NONE;
	out->cond = out->cls == NL_INSN_JUMP_COND ? (int8_t)jcc_cond(in->bytes, in->size, op) : -1;
	out->has_target = false;
	if (out->cls == NL_INSN_JUMP || out->cls == NL_INSN_CALL || out->cls == NL_INSN_JUMP_COND) {
		out->has_target = nl_direct_target(in->bytes, in->size, op, addr, &out->target);
		if (!out->has_target && out->cls == NL_INSN_JUMP)
			out->cls = NL_INSN_JUMP_INDIRECT;
		else if (!out->has_target && out->cls == NL_INSN_CALL)
			out->cls = NL_INSN_CALL_INDIRECT;
	}
	if (dec->flags & NL_DEC_TEXT)
		snprintf(out->text, sizeof(out->text), "%s%s%s", in->mnemonic,
			 in->op_str[0] ? " " : "", in->op_str);
	else
		out->text[0] = '\0';
	return in->size;
}

const char *nl_decoder_version(char *buf, size_t size)
{
	int major, minor;

	cs_version(&major, &minor);
	snprintf(buf, size, "capstone %d.%d", major, minor);
	return buf;
}
