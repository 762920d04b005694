// SPDX-License-Identifier: MIT
/*
 * Workload generators: every image is decoded with the nops/ recognizer and
 * with Capstone, loaded into the W^X buffer, and run: the driver and every
 * single function must return their checksums.
 */
#include <stdlib.h>
#include <string.h>

#include "nltest.h"
#include "noplab/codebuf.h"
#include "noplab/codegen.h"
#include "noplab/insn.h"

struct gen_row {
	int line;
	enum nl_workload wl;
	const char *entry;
	unsigned funcs, align, offset, stride;
	const char *fill;
	enum nl_driver driver;
	enum nl_order order;
	bool endbr;
	unsigned copies;	/* sled */
	unsigned cold;		/* layout */
	bool packed;
	int err;		/* expected nl_gen result */
};

#define D NL_DRIVER_DIRECT
#define I NL_DRIVER_INDIRECT
#define SEQ NL_ORDER_SEQ
#define RND NL_ORDER_RANDOM

static const struct gen_row rows[] = {
	{ SRC_LINE, NL_WL_CALLS, "p6:5", 16, 64, 0, 0, "int3", D, SEQ, false, 0, 0, false, 0 },
	{ SRC_LINE, NL_WL_CALLS, "k8:5", 33, 64, 0, 0, "int3", I, RND, false, 0, 0, false, 0 },
	{ SRC_LINE, NL_WL_CALLS, "k8:atomic5", 20, 32, 7, 0, "p6", D, RND, true, 0, 0, false, 0 },
	{ SRC_LINE, NL_WL_CALLS, "single:5", 8, 16, 0, 0, "single", I, SEQ, false, 0, 0, false, 0 },
	/* 32-bit-only forms write ESI / EAX: the generated code must not care */
	{ SRC_LINE, NL_WL_CALLS, "generic:5", 12, 64, 0, 0, "int3", D, SEQ, false, 0, 0, false, 0 },
	{ SRC_LINE, NL_WL_CALLS, "k7:5", 12, 64, 0, 0, "k8", I, RND, false, 0, 0, false, 0 },
	{ SRC_LINE, NL_WL_CALLS, "x86_nops:5/32", 5, 64, 0, 0, "int3", I, SEQ, false, 0, 0, false, 0 },
	{ SRC_LINE, NL_WL_CALLS, "none", 10, 64, 0, 0, "int3", D, SEQ, true, 0, 0, false, 0 },
	{ SRC_LINE, NL_WL_CALLS, "call", 10, 64, 0, 0, "int3", D, RND, true, 0, 0, false, 0 },
	{ SRC_LINE, NL_WL_CALLS, "call", 9, 64, 0, 0, "x86_nops", I, SEQ, false, 0, 0, false, 0 },
	{ SRC_LINE, NL_WL_CALLS, "jmp:5", 6, 64, 0, 0, "gas", D, SEQ, false, 0, 0, false, 0 },
	{ SRC_LINE, NL_WL_CALLS, "x86_nops:11", 7, 16, 3, 0, "llvm", D, SEQ, true, 0, 0, false, 0 },
	{ SRC_LINE, NL_WL_CALLS, "ibt_poison:osp", 4, 8, 0, 0, "int3", D, SEQ, false, 0, 0, false, 0 },
	{ SRC_LINE, NL_WL_CALLS, "p6:5", 1, 4096, 100, 0, "int3", D, SEQ, false, 0, 0, false, 0 },
	{ SRC_LINE, NL_WL_SWEEP, "p6:5", 8, 64, 63, 128, "int3", D, SEQ, false, 0, 0, false, 0 },
	{ SRC_LINE, NL_WL_SWEEP, "k8:5", 8, 64, 59, 128, "int3", I, RND, true, 0, 0, false, 0 },
	{ SRC_LINE, NL_WL_LAYOUT, "p6:5", 6, 64, 0, 0, "int3", D, SEQ, false, 0, 256, true, 0 },
	{ SRC_LINE, NL_WL_LAYOUT, "p6:5", 6, 64, 0, 0, "int3", D, RND, false, 0, 256, false, 0 },
	{ SRC_LINE, NL_WL_LAYOUT, "call", 4, 64, 0, 0, "p6", I, SEQ, false, 0, 4096, false, 0 },
	{ SRC_LINE, NL_WL_SLED, "p6:5", 0, 64, 0, 0, "int3", D, SEQ, false, 100, 0, false, 0 },
	{ SRC_LINE, NL_WL_SLED, "k8:5", 0, 64, 0, 0, "int3", D, SEQ, false, 37, 0, false, 0 },
	{ SRC_LINE, NL_WL_SLED, "generic:5", 0, 64, 0, 0, "int3", D, SEQ, false, 9, 0, false, 0 },
	{ SRC_LINE, NL_WL_SLED, "jmp:8", 0, 64, 0, 0, "int3", D, SEQ, false, 9, 0, false, 0 },
	/* refused */
	{ SRC_LINE, NL_WL_CALLS, "p6:5", 4, 64, 64, 0, "int3", D, SEQ, false, 0, 0, false, -NL_E_USAGE },
	{ SRC_LINE, NL_WL_CALLS, "p6:5", 4, 48, 0, 0, "int3", D, SEQ, false, 0, 0, false, -NL_E_USAGE },
	{ SRC_LINE, NL_WL_CALLS, "p6:5", 0, 64, 0, 0, "int3", D, SEQ, false, 0, 0, false, -NL_E_USAGE },
	{ SRC_LINE, NL_WL_CALLS, "p6:5", 4, 64, 60, 64, "int3", D, SEQ, false, 0, 0, false, -NL_E_USAGE },
	{ SRC_LINE, NL_WL_CALLS, "p6:5", 4, 64, 0, 96, "int3", D, SEQ, false, 0, 0, false, -NL_E_USAGE },
	{ SRC_LINE, NL_WL_LAYOUT, "p6:5", 4, 64, 0, 0, "int3", D, SEQ, false, 0, 100, false, -NL_E_USAGE },
	{ SRC_LINE, NL_WL_SLED, "none", 0, 64, 0, 0, "int3", D, SEQ, false, 8, 0, false, -NL_E_USAGE },
	{ SRC_LINE, NL_WL_SLED, "p6:5", 0, 64, 0, 0, "int3", D, SEQ, false, 0, 0, false, -NL_E_USAGE },
};

static void spec_of(const struct gen_row *r, struct nl_gen_spec *s)
{
	nl_gen_spec_default(s, r->wl);
	if (nl_entry_parse(r->entry, &s->entry, NULL))
		row_fail(r, "entry %s does not parse", r->entry);
	s->nr_funcs = r->funcs;
	s->align = r->align;
	s->offset = r->offset;
	s->stride = r->stride;
	s->fill = (enum nl_nop_family)nl_nop_family_by_name(r->fill);
	s->driver = r->driver;
	s->order = r->order;
	s->seed = 42;
	s->endbr = r->endbr;
	s->copies = r->copies;
	s->cold_bytes = r->cold;
	s->packed = r->packed;
}

/* Walk the entry sequence with the recognizer: the catalogue bytes, instruction by instruction. */
static void check_entry_recognized(const struct gen_row *r, const struct nl_gen_spec *s,
				   const uint8_t *p, size_t avail)
{
	const struct nl_nop *nop = s->entry.nop;
	unsigned insns = 0, wrong_mode = 0;
	size_t pos = 0;

	if (avail < nop->len || memcmp(p, nop->bytes, nop->len))
		row_fail(r, "entry bytes differ from catalogue %s", nop->name);
	if (nop->flags & NL_NOPF_JUMP)
		return;	/* a jump over int3, not a NOP the recognizer names */
	while (pos < nop->len) {
		struct nl_nop_id id;
		enum nl_nop_kind k = nl_nop_recognize(p + pos, nop->len - pos, NL_MODE_64, &id);

		if (!nl_nop_is_nop(k) && (nop->nop64 || k != NL_NOPK_WRONG_MODE))
			row_fail(r, "%s: recognizer says kind %d at +%zu", nop->name, k, pos);
		wrong_mode += k == NL_NOPK_WRONG_MODE;
		if (!id.len)
			row_fail(r, "%s: recognizer length 0", nop->name);
		pos += id.len;
		insns++;
	}
	if (!nop->nop64 && !wrong_mode)
		row_fail(r, "%s: the recognizer finds no 32-bit-only form in it", nop->name);
	if (pos != nop->len || insns != nop->nr_insns)
		row_fail(r, "%s: %u instructions over %zu bytes, catalogue says %u over %u", nop->name,
			 insns, pos, nop->nr_insns, nop->len);
}

static int decode_at(struct nl_decoder *dec, const struct nl_image *img, size_t off,
		     struct nl_insn *in)
{
	return nl_decode(dec, img->code + off, img->size - off, off, in);
}

/* A function decodes as [endbr64][entry][mov][ret], ending exactly at its size. */
static void check_func_decoded(const struct gen_row *r, const struct nl_gen_spec *s,
			       struct nl_decoder *dec, const struct nl_image *img,
			       const struct nl_gsym *sym, size_t stub_off)
{
	size_t pos = sym->off, end = sym->off + sym->size;
	struct nl_insn in;
	int len;

	if (s->endbr) {
		len = decode_at(dec, img, pos, &in);
		if (len != 4 || in.cls != NL_INSN_ENDBR)
			row_fail(r, "%s: no endbr64 at +0", sym->name);
		pos += 4;
	}
	if (pos != sym->entry_off)
		row_fail(r, "%s: entry offset %u, want %zu", sym->name, sym->entry_off, pos);
	if (s->entry.kind == NL_ENTRY_CALL) {
		len = decode_at(dec, img, pos, &in);
		if (len != 5 || in.cls != NL_INSN_CALL || in.target != stub_off)
			row_fail(r, "%s: entry is not a call to the stub", sym->name);
		pos += 5;
	} else if (s->entry.kind == NL_ENTRY_NOP) {
		const struct nl_nop *nop = s->entry.nop;

		check_entry_recognized(r, s, img->code + pos, end - pos);
		len = decode_at(dec, img, pos, &in);
		if (nop->flags & NL_NOPF_JUMP) {
			if (len != 2 || in.cls != NL_INSN_JUMP || in.target != pos + nop->len)
				row_fail(r, "%s: %s is not a jump over its fill", sym->name, nop->name);
		} else if (nop->nop64 && in.cls != NL_INSN_NOP) {
			row_fail(r, "%s: Capstone does not see a NOP at the entry", sym->name);
		} else if (!nop->nop64 && in.cls == NL_INSN_NOP && nop->nr_insns == 1) {
			row_fail(r, "%s: Capstone sees a NOP in a 32-bit-only form", sym->name);
		}
		pos += nop->len;
	}
	len = decode_at(dec, img, pos, &in);
	if (len != 5 || img->code[pos] != 0xb8)
		row_fail(r, "%s: no mov eax, imm32 after the entry", sym->name);
	pos += 5;
	len = decode_at(dec, img, pos, &in);
	if (len != 1 || in.cls != NL_INSN_RET)
		row_fail(r, "%s: no ret", sym->name);
	if (pos + 1 != end)
		row_fail(r, "%s: ends at %zu, size says %zu", sym->name, pos + 1, end);
}

/* Bytes between symbols are exactly the fill family's padding. */
static void check_gaps(const struct gen_row *r, const struct nl_gen_spec *s,
		       const struct nl_image *img)
{
	size_t prev_end = 0;

	for (size_t i = 0; i <= img->nr_syms; i++) {
		size_t start = i < img->nr_syms ? img->syms[i].off : img->size;
		size_t gap = start - prev_end;

		if (start < prev_end)
			row_fail(r, "symbols overlap at %zu", start);
		if (gap) {
			struct nl_pad_split sp;
			uint8_t want[4096 + 64];
			const uint8_t *p = img->code + prev_end;

			nl_pad_split(p, gap, NL_MODE_64, NULL, 0, &sp);
			if (sp.code_bytes)
				row_fail(r, "gap at %zu (%zu bytes) holds %llu bytes of code", prev_end, gap,
					 (unsigned long long)sp.code_bytes);
			/* fill inside the function region is the chosen family, byte for byte */
			if (gap <= sizeof(want) && i > 0 && i < img->nr_syms &&
			    img->syms[i].kind != NL_SYM_DRIVER && img->syms[i - 1].kind != NL_SYM_STUB &&
			    img->syms[i - 1].kind != NL_SYM_DRIVER && img->syms[i].kind != NL_SYM_START) {
				if (nl_nop_compose(s->fill, NL_MODE_64, gap, want, sizeof(want)) < 0)
					row_fail(r, "compose %zu", gap);
				if (memcmp(p, want, gap))
					row_fail(r, "gap at %zu is not %s fill", prev_end,
						 nl_nop_family_name(s->fill));
			}
		}
		if (i < img->nr_syms)
			prev_end = img->syms[i].off + img->syms[i].size;
	}
}

/* The driver calls the functions in the planned order (direct) or through the table. */
static void check_driver(const struct gen_row *r, const struct nl_gen_spec *s,
			 struct nl_decoder *dec, const struct nl_image *img)
{
	const struct nl_gsym *drv = NULL;
	size_t pos, end, nr_calls = 0, nr_indirect = 0;
	struct nl_insn in;

	for (size_t i = 0; i < img->nr_syms; i++)
		if (img->syms[i].kind == NL_SYM_DRIVER)
			drv = &img->syms[i];
	if (!drv || drv->off != img->driver_off)
		row_fail(r, "no driver symbol at the driver offset");
	end = drv->off + drv->size;
	for (pos = drv->off; pos < end;) {
		int len = decode_at(dec, img, pos, &in);

		if (len <= 0)
			row_fail(r, "driver does not decode at %zu", pos);
		if (in.cls == NL_INSN_CALL) {
			const struct nl_gsym *f = NULL;

			for (size_t k = 0; k < img->nr_syms; k++)
				if (img->syms[k].kind == NL_SYM_FUNC && img->syms[k].off == in.target)
					f = &img->syms[k];
			if (!f)
				row_fail(r, "driver calls %#llx, which is no function",
					 (unsigned long long)in.target);
			nr_calls++;
		}
		if (in.cls == NL_INSN_CALL_INDIRECT)
			nr_indirect++;
		pos += (size_t)len;
	}
	if (s->workload == NL_WL_SLED)
		return;
	if (s->driver == NL_DRIVER_DIRECT && (nr_calls != s->nr_funcs || nr_indirect))
		row_fail(r, "direct driver has %zu calls, want %u", nr_calls, s->nr_funcs);
	if (s->driver == NL_DRIVER_INDIRECT &&
	    (nr_calls || nr_indirect != 1 || img->nr_table != s->nr_funcs))
		row_fail(r, "indirect driver: %zu direct, %zu indirect, table %zu", nr_calls,
			 nr_indirect, img->nr_table);
}

static void check_sled(const struct gen_row *r, const struct nl_gen_spec *s,
		       struct nl_decoder *dec, const struct nl_image *img)
{
	size_t head = 64, nops = 0;	/* the loop head sits on the first cache line boundary */
	const struct nl_nop *nop = s->entry.nop;

	for (unsigned i = 0; i < s->copies; i++) {
		const uint8_t *p = img->code + head + (size_t)i * nop->len;

		if (memcmp(p, nop->bytes, nop->len))
			row_fail(r, "sled copy %u differs from %s", i, nop->name);
		check_entry_recognized(r, s, p, nop->len);
		nops += nop->nr_insns;
	}
	if (nops != img->nop_insns_per_iter || img->nops_per_iter != s->copies ||
	    img->nop_bytes_per_iter != (uint64_t)s->copies * nop->len)
		row_fail(r, "sled counts %llu NOP instructions per iteration, holds %zu",
			 (unsigned long long)img->nop_insns_per_iter, nops);
	check_driver(r, s, dec, img);
}

static void run_row(const struct gen_row *r, struct nl_decoder *dec)
{
	struct nl_gen_spec s;
	struct nl_image img;
	struct nl_codebuf cb;
	struct nl_diag d;
	size_t stub = 0, nr_funcs = 0;
	int err;

	nl_diag_init(&d);
	spec_of(r, &s);
	err = nl_gen(&s, &img, &d);
	if (err != r->err)
		row_fail(r, "nl_gen returned %d (%s), want %d", err, d.msg, r->err);
	if (err) {
		if (!d.msg[0])
			row_fail(r, "error without a message");
		return;
	}
	if (s.workload == NL_WL_SLED) {
		check_sled(r, &s, dec, &img);
	} else {
		for (size_t i = 0; i < img.nr_syms; i++)
			if (img.syms[i].kind == NL_SYM_STUB)
				stub = img.syms[i].off;
		for (size_t i = 0; i < img.nr_syms; i++) {
			const struct nl_gsym *sym = &img.syms[i];

			if (sym->kind != NL_SYM_FUNC && sym->kind != NL_SYM_COLD)
				continue;
			check_func_decoded(r, &s, dec, &img, sym, stub);
			if (sym->kind == NL_SYM_FUNC) {
				unsigned stride = s.stride;

				nr_funcs++;
				if (s.workload != NL_WL_LAYOUT && (sym->off - s.offset) % s.align)
					row_fail(r, "%s at %u is not at offset %u of a %u-byte slot",
						 sym->name, sym->off, s.offset, s.align);
				(void)stride;
			}
		}
		if (nr_funcs != s.nr_funcs)
			row_fail(r, "%zu functions, want %u", nr_funcs, s.nr_funcs);
		check_gaps(r, &s, &img);
		check_driver(r, &s, dec, &img);
	}

	assert_int_equal(nl_codebuf_load(&cb, &img, &d), 0);
	nl_driver_fn drv = nl_codebuf_driver(&cb, &img);

	for (uint64_t it = 0; it < 4; it++) {
		uint64_t got = drv(it, cb.table);

		if (got != nl_image_expect(&img, it))
			row_fail(r, "driver(%llu) returned %#llx, want %#llx", (unsigned long long)it,
				 (unsigned long long)got,
				 (unsigned long long)nl_image_expect(&img, it));
	}
	for (size_t i = 0; i < img.nr_syms; i++) {
		const struct nl_gsym *sym = &img.syms[i];

		if (sym->kind != NL_SYM_FUNC && sym->kind != NL_SYM_COLD)
			continue;
		uint32_t v = nl_codebuf_func(&cb, sym)();

		if (v != sym->value)
			row_fail(r, "%s returned %#x, want %#x", sym->name, v, sym->value);
	}
	nl_codebuf_unmap(&cb);
	nl_image_free(&img);
}

static void test_rows(void **state)
{
	struct nl_decoder *dec;

	(void)state;
	assert_int_equal(nl_decoder_open(NL_MODE_64, 0, &dec, NULL), 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		run_row(&rows[i], dec);
	nl_decoder_close(dec);
}

/* A permutation: random order calls each function once, and the seed decides the order. */
static void test_random_order(void **state)
{
	struct nl_gen_spec s;
	struct nl_image a, b;

	(void)state;
	nl_gen_spec_default(&s, NL_WL_CALLS);
	s.nr_funcs = 64;
	s.driver = NL_DRIVER_INDIRECT;
	s.order = NL_ORDER_RANDOM;
	s.seed = 7;
	assert_int_equal(nl_gen(&s, &a, NULL), 0);
	s.seed = 8;
	assert_int_equal(nl_gen(&s, &b, NULL), 0);
	assert_int_equal(a.nr_table, 64);
	assert_memory_not_equal(a.table, b.table, 64 * sizeof(*a.table));
	uint8_t seen[64] = { 0 };
	unsigned in_place = 0;

	for (size_t i = 0; i < a.nr_table; i++) {
		unsigned f = 0;

		for (size_t k = 0; k < a.nr_syms; k++) {
			if (a.syms[k].kind != NL_SYM_FUNC)
				continue;
			if (a.syms[k].off == a.table[i]) {
				seen[f]++;
				in_place += f == i;
			}
			f++;
		}
	}
	for (size_t k = 0; k < 64; k++)
		assert_int_equal(seen[k], 1);
	assert_true(in_place < 16);
	nl_image_free(&a);
	nl_image_free(&b);
}

/*
 * The register contract behind generic:5 and k7:5: every 32-bit-only
 * catalogue form is a mov/lea whose destination is ESI or EAX.  A new entry
 * writing another register would break the drivers; this fails first.
 */
static void test_clobber_contract(void **state)
{
	size_t nr;
	const struct nl_nop *cat = nl_nop_catalogue(&nr);
	unsigned checked = 0;

	(void)state;
	for (size_t i = 0; i < nr; i++) {
		const struct nl_nop *n = &cat[i];

		if (n->nop64 || (n->flags & NL_NOPF_FILL))
			continue;
		for (size_t pos = 0; pos < n->len;) {
			size_t p = pos;

			while (n->bytes[p] == 0x3e)	/* ds prefix */
				p++;
			if (n->bytes[p] == 0x90) {
				pos = p + 1;
				continue;
			}
			if (n->bytes[p] != 0x8d && n->bytes[p] != 0x89 && n->bytes[p] != 0x8b)
				fail_msg("%s: opcode %#x is not mov/lea", n->name, n->bytes[p]);
			unsigned reg = (n->bytes[p + 1] >> 3) & 7;
			unsigned rm = n->bytes[p + 1] & 7;
			/* mov r/m, r (89) writes rm; lea/mov r, r/m (8d/8b) write reg */
			unsigned dst = n->bytes[p] == 0x89 ? rm : reg;

			if (dst != 0 && dst != 6)
				fail_msg("%s writes register %u, not EAX or ESI", n->name, dst);
			struct nl_nop_id id;

			nl_nop_recognize(n->bytes + pos, n->len - pos, NL_MODE_32, &id);
			assert_true(id.len > 0);
			pos += id.len;
			checked++;
		}
	}
	assert_true(checked >= 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_random_order),
		cmocka_unit_test(test_clobber_contract),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
