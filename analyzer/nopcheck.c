// SPDX-License-Identifier: MIT
/*
 * Catalogue entries against the general decoder.  NOP-ness is judged from
 * the decoder's own reading (its nop id, or a lea/mov whose source is its
 * destination), never from the table recognizer it is meant to check.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "noplab/nopcheck.h"

static bool is_reg32_name(const char *r)
{
	return (r[0] == 'e' && strlen(r) == 3) ||
	       (r[0] == 'r' && r[strlen(r) - 1] == 'd' && isdigit((unsigned char)r[1]));
}

/*
 * "lea esi, [esi + eiz]" / "mov eax, eax": does the instruction copy a
 * register onto itself without changing it?  In 64-bit mode a write to a
 * 32-bit register clears the upper half, so that is a change.
 */
static bool text_is_self_copy(const char *text, enum nl_mode mode)
{
	char mnem[16], dst[16], src[64];
	char *w;

	if (sscanf(text, "%15s %15[^,], %63[^\n]", mnem, dst, src) != 3)
		return false;
	if (strcmp(mnem, "lea") && strcmp(mnem, "mov"))
		return false;
	/* reduce the source to its register: drop brackets, "+ eiz*k", "*1", "+ 0" */
	char clean[64] = "";
	size_t n = 0;

	for (const char *s = src; *s && n + 1 < sizeof(clean); s++)
		if (*s != '[' && *s != ']' && !isspace((unsigned char)*s))
			clean[n++] = *s;
	clean[n] = '\0';
	w = clean;
	char *p;

	while ((p = strstr(w, "+eiz")) || (p = strstr(w, "+riz"))) {
		char *end = p + 4;

		if (*end == '*')
			end += 2;
		memmove(p, end, strlen(end) + 1);
	}
	if ((p = strstr(w, "*1")) && (p[2] == '\0' || p[2] == '+'))
		memmove(p, p + 2, strlen(p + 2) + 1);
	if ((p = strstr(w, "+0")) && (!strcmp(p, "+0") || !strcmp(p, "+0x0")))
		*p = '\0';
	/* lea ignores segment overrides */
	if (!strcmp(mnem, "lea") && strlen(w) > 3 && w[2] == ':')
		w += 3;
	if (!strcmp(mnem, "mov") && strchr(src, '['))
		return false;
	if (mode == NL_MODE_64 && is_reg32_name(dst))
		return false;
	return !strcmp(w, dst);
}

int nl_nop_verify(struct nl_decoder *dec, const struct nl_nop *e, enum nl_mode mode,
		  struct nl_nop_verdict *v)
{
	size_t off = 0;
	bool all_nop = true, all_trap = true;
	bool jump_to_end = false;
	bool expect_nop = mode == NL_MODE_64 ? e->nop64 : e->nop32;
	unsigned expect_insns = e->nr_insns;
	size_t tlen = 0;

	memset(v, 0, sizeof(*v));
	while (off < e->len) {
		struct nl_insn in;
		int r = nl_decode(dec, e->bytes + off, e->len - off, off, &in);

		if (r <= 0) {
			snprintf(v->problem, sizeof(v->problem), "decoder stops at byte %zu", off);
			break;
		}
		int t = snprintf(v->text + tlen, sizeof(v->text) - tlen, "%s%s", off ? "; " : "",
				 in.text);

		if (t > 0 && tlen + (size_t)t < sizeof(v->text))
			tlen += (size_t)t;
		if (off == 0 && (in.cls == NL_INSN_JUMP) && in.has_target && in.target == e->len)
			jump_to_end = true;
		bool nop = in.cls == NL_INSN_NOP || text_is_self_copy(in.text, mode);

		all_nop &= nop;
		all_trap &= in.cls == NL_INSN_TRAP;
		v->decoded_insns++;
		off += (size_t)r;
	}
	v->decoded_len = (unsigned)off;

	if (e->flags & NL_NOPF_JUMP) {
		/* one executed jump, the rest is never-executed fill */
		v->decoded_nop = jump_to_end;
		if (v->decoded_insns)
			v->decoded_insns = 1;
	} else if (e->flags & NL_NOPF_FILL) {
		v->decoded_nop = false;
		expect_nop = false;
		if (!all_trap && !v->problem[0])
			snprintf(v->problem, sizeof(v->problem), "fill is not all traps");
	} else {
		v->decoded_nop = all_nop;
	}
	if (!v->problem[0]) {
		if (v->decoded_len != e->len)
			snprintf(v->problem, sizeof(v->problem), "length %u, catalogue says %u",
				 v->decoded_len, e->len);
		else if (v->decoded_insns != expect_insns)
			snprintf(v->problem, sizeof(v->problem), "%u instructions, catalogue says %u",
				 v->decoded_insns, expect_insns);
		else if (v->decoded_nop != expect_nop)
			snprintf(v->problem, sizeof(v->problem), "%s in %d-bit mode, catalogue says %s",
				 v->decoded_nop ? "a NOP" : "not a NOP", (int)mode,
				 expect_nop ? "a NOP" : "not a NOP");
	}
	v->agrees = !v->problem[0];
	return 0;
}
