// SPDX-License-Identifier: MIT
/*
 * Padding between functions, alignment of starts and sites, and the ends of
 * functions whose size had to be inferred.  Gaps are split by the table
 * recognizer (nl_pad_split); the general decoder is used only to find where
 * an unsized function's last instruction ends, on a short window.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan_int.h"

#define PIECES_CHUNK 4096	/* pieces split per call; longer gaps are split again */
#define TAIL_WINDOW 48		/* bytes decoded back from an inferred function end */
#define TAIL_MAX_INSNS 64

int scan_seq_add(struct nl_seq_hist *h, const struct nl_seq *s, uint64_t count,
		 uint64_t total_bytes)
{
	for (size_t i = 0; i < h->nr; i++) {
		struct nl_seq *e = &h->v[i];

		if (e->kind == s->kind && e->len == s->len && !memcmp(e->bytes, s->bytes, s->len)) {
			e->count += count;
			e->total_bytes += total_bytes;
			return 0;
		}
	}
	if (h->nr == h->cap) {
		size_t ncap = h->cap ? h->cap * 2 : 16;
		struct nl_seq *nv = realloc(h->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		h->v = nv;
		h->cap = ncap;
	}
	h->v[h->nr] = *s;
	h->v[h->nr].count = count;
	h->v[h->nr].total_bytes = total_bytes;
	h->nr++;
	return 0;
}

static int ensure_pieces(struct scan_worker *w, size_t n)
{
	struct nl_pad_piece *np;

	if (w->cap_pieces >= n)
		return 0;
	np = realloc(w->pieces, n * sizeof(*np));
	if (!np)
		return -ENOMEM;
	w->pieces = np;
	w->cap_pieces = n;
	return 0;
}

static void set_name(struct nl_seq *k, const char *n)
{
	size_t l = strlen(n);

	if (l >= sizeof(k->name))
		l = sizeof(k->name) - 1;
	memcpy(k->name, n, l);
	k->name[l] = '\0';
}

static void piece_key(const uint8_t *p, const struct nl_pad_piece *pc, struct nl_seq *k)
{
	k->kind = pc->kind;
	switch (pc->kind) {
	case NL_PAD_NOP:
		k->len = (uint8_t)(pc->len > NL_NOP_MAX_BYTES ? NL_NOP_MAX_BYTES : pc->len);
		memcpy(k->bytes, p + pc->off, k->len);
		set_name(k, pc->id.name);
		break;
	case NL_PAD_JMP:
		/* keyed by the jump; what it skips is in total_bytes */
		k->len = pc->id.len ? pc->id.len : 2;
		memcpy(k->bytes, p + pc->off, k->len);
		set_name(k, pc->len > k->len && p[pc->off + k->len] == 0xcc ? "jmp over int3"
									    : "jmp over fill");
		break;
	case NL_PAD_INT3:
		k->len = 1;
		k->bytes[0] = 0xcc;
		set_name(k, "int3 run");
		break;
	default:
		k->len = 1;
		k->bytes[0] = 0x00;
		set_name(k, "zero run");
		break;
	}
}

int scan_gap(struct scan_worker *w, const uint8_t *p, uint64_t len, struct nl_scan_summary *sum,
	     uint64_t *pad, uint64_t *code)
{
	uint64_t pos = 0, nops = 0, by_kind[5] = { 0 };
	struct nl_seq key;

	memset(&key, 0, sizeof(key));
	*pad = 0;
	*code = 0;
	if (ensure_pieces(w, PIECES_CHUNK))
		return -ENOMEM;
	/* pieces are cut at piece boundaries, so splitting again from there is exact */
	while (pos < len) {
		struct nl_pad_split split;
		uint64_t next = len;

		nl_pad_split(p + pos, len - pos, w->c->mode, w->pieces, w->cap_pieces, &split);
		size_t n = split.nr_pieces < w->cap_pieces ? split.nr_pieces : w->cap_pieces;

		for (size_t k = 0; k < n; k++) {
			const struct nl_pad_piece *pc = &w->pieces[k];

			by_kind[pc->kind] += pc->len;
			if (pc->kind == NL_PAD_CODE)
				continue;
			if (pc->kind == NL_PAD_NOP)
				nops++;
			piece_key(p + pos, pc, &key);
			if (scan_seq_add(&sum->padding.seqs, &key, 1, pc->len))
				return -ENOMEM;
		}
		if (split.nr_pieces > w->cap_pieces)
			next = pos + w->pieces[n - 1].off + w->pieces[n - 1].len;
		pos = next;
	}
	*pad = by_kind[NL_PAD_NOP] + by_kind[NL_PAD_INT3] + by_kind[NL_PAD_JMP] +
	       by_kind[NL_PAD_ZERO];
	*code = by_kind[NL_PAD_CODE];
	sum->padding.nop_bytes += by_kind[NL_PAD_NOP];
	sum->padding.int3_bytes += by_kind[NL_PAD_INT3];
	sum->padding.jmp_bytes += by_kind[NL_PAD_JMP];
	sum->padding.zero_bytes += by_kind[NL_PAD_ZERO];
	sum->padding.nops += nops;
	sum->padding.bytes += *pad;
	if (*pad)
		sum->padding.gaps++;
	if (*code) {
		sum->padding.code_gaps++;
		sum->padding.code_bytes += *code;
	}
	return 0;
}

uint64_t scan_align_of(const struct nl_elf *elf, const struct nl_section *sec, uint64_t addr)
{
	uint64_t cap = 1ull << NL_ALIGN_LOG2_MAX, a = addr ? addr & (~addr + 1) : cap;

	if (a > cap)
		a = cap;
	/* ET_REL: the link may place the section at any multiple of its alignment */
	if (elf->is_rel) {
		uint64_t sa = sec->sh.sh_addralign ? sec->sh.sh_addralign : 1;

		if (a > sa)
			a = sa;
	}
	return a;
}

void scan_count_align(struct nl_scan_summary *sum, uint64_t align, bool rel)
{
	unsigned l = 0;

	while (l < NL_ALIGN_LOG2_MAX && (1ull << (l + 1)) <= align)
		l++;
	sum->alignment.by_log2[l]++;
	if (align >= 16)
		sum->alignment.ge16++;
	else
		sum->alignment.lt16++;
	if (align >= 32)
		sum->alignment.ge32++;
	if (align >= 64)
		sum->alignment.ge64++;
	sum->alignment.rel_capped |= rel;
}

void scan_straddle(const struct nl_elf *elf, const struct nl_section *sec, struct nl_scan_site *s)
{
	uint64_t known = elf->is_rel ? (sec->sh.sh_addralign ? sec->sh.sh_addralign : 1) : 64;

	s->straddles = 0;
	s->straddle_known = known >= 64;
	if (!s->len)
		return;
	for (unsigned b = 0; b < 3; b++) {
		uint64_t B = 16ull << b;

		if (B <= known && s->addr / B != (s->addr + s->len - 1) / B)
			s->straddles |= (uint8_t)(1u << b);
	}
}

void scan_count_site(struct nl_scan_summary *sum, const struct nl_scan_site *s)
{
	switch (s->kind) {
	case NL_SITE_CALL: sum->sites.calls++; break;
	case NL_SITE_NOP5: sum->sites.nop5++; break;
	case NL_SITE_PATCHABLE: sum->sites.patchable++; break;
	default: return;
	}
	sum->sites.total++;
	switch (s->where) {
	case NL_WHERE_AT_ENTRY: sum->sites.at_entry++; break;
	case NL_WHERE_AFTER_ENDBR: sum->sites.after_endbr++; break;
	case NL_WHERE_IN_BODY: sum->sites.in_body++; break;
	case NL_WHERE_OUTSIDE: sum->sites.outside_functions++; break;
	}
	sum->straddles.sites++;
	if (s->straddles & 1)
		sum->straddles.b16++;
	if (s->straddles & 2)
		sum->straddles.b32++;
	if (s->straddles & 4)
		sum->straddles.b64++;
	if (!s->straddle_known)
		sum->straddles.unknown++;
}

int scan_worker_decoder(struct scan_worker *w)
{
	if (w->dec)
		return 0;
	if (w->dec_err)
		return w->dec_err;
	w->dec_err = nl_decoder_open(w->c->mode, 0, &w->dec, &w->diag);
	return w->dec_err;
}

/* One instruction's length: int3 and NOPs by table, the rest by the decoder. */
int scan_step(struct scan_worker *w, const uint8_t *p, uint64_t avail, uint64_t addr,
	      enum nl_insn_class *cls)
{
	struct nl_nop_id id;
	struct nl_insn insn;
	int n;

	if (!avail)
		return -NL_E_DECODE;
	if (p[0] == 0xcc) {
		*cls = NL_INSN_TRAP;
		return 1;
	}
	if (nl_nop_is_nop(nl_nop_recognize(p, avail > 15 ? 15 : avail, w->c->mode, &id))) {
		*cls = NL_INSN_NOP;
		return id.len;
	}
	if (scan_worker_decoder(w))
		return -NL_E_DECODE;
	n = nl_decode(w->dec, p, avail > 15 ? 15 : avail, addr, &insn);
	if (n > 0)
		*cls = insn.cls;
	return n;
}

static bool is_terminator(enum nl_insn_class cls)
{
	return cls == NL_INSN_RET || cls == NL_INSN_JUMP || cls == NL_INSN_JUMP_INDIRECT ||
	       cls == NL_INSN_TRAP;
}

/*
 * An unsized function (assembly, System.map) runs to the next symbol and so
 * swallows the padding after it.  A long int3 run at the end is fill by its
 * bytes alone (no instruction holds 16 cc bytes).  Before it, decode a short
 * window: x86 decoding resynchronises within a few instructions, and the
 * window start is moved until the walk lands exactly on the end.  The padding
 * is the run of NOPs and int3 after the last ret/jmp/trap.  Returns the
 * trimmed size.
 */
uint64_t scan_trim_tail(struct scan_worker *w, const struct nl_func *f)
{
	const uint8_t *base = f->sec->data + (f->addr - f->sec->addr);
	uint64_t size = f->size, lim = size, fill = 0, win;

	while (fill < size && base[size - 1 - fill] == 0xcc)
		fill++;
	if (fill >= 16)
		lim = size - fill;
	if (lim < 2)
		return size;
	win = lim < TAIL_WINDOW ? lim : TAIL_WINDOW;
	for (unsigned attempt = 0; attempt < 4 && attempt < win; attempt++) {
		uint64_t start = lim - win + attempt, pos = start;
		uint64_t bound[TAIL_MAX_INSNS + 1];
		enum nl_insn_class cls[TAIL_MAX_INSNS];
		bool pad[TAIL_MAX_INSNS];
		unsigned n = 0;

		while (pos < lim && n < TAIL_MAX_INSNS) {
			int l = scan_step(w, base + pos, lim - pos, f->addr + pos, &cls[n]);

			if (l <= 0)
				break;
			pad[n] = cls[n] == NL_INSN_NOP || (cls[n] == NL_INSN_TRAP && base[pos] == 0xcc);
			bound[n++] = pos;
			pos += (uint64_t)l;
		}
		if (pos != lim || !n)
			continue;	/* out of step with the real boundaries: move the start */
		bound[n] = lim;
		unsigned j = n;

		while (j > 0 && pad[j - 1])
			j--;
		if (j == 0)
			return size;	/* all padding: no instruction to end after */
		if (!is_terminator(cls[j - 1]))
			return size;
		return bound[j];
	}
	return size;
}
