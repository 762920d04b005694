// SPDX-License-Identifier: MIT
/*
 * Workload generators: calls, sled, layout and sweep images.  The instruction
 * encodings are spelled out byte by byte; the tests decode every image with
 * the nops/ recognizer and with Capstone, so a wrong byte here fails there.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "noplab/codegen.h"

#define PAGE 4096u
#define LINE 64u
#define MAX_FUNCS (1u << 20)
#define MAX_IMAGE (512u << 20)	/* bytes; a sweep of 64 variants stays far below */
#define MAX_COPIES (1u << 22)

static const char *const workload_names[NL_NR_WORKLOADS] = {
	[NL_WL_CALLS] = "calls", [NL_WL_SLED] = "sled", [NL_WL_LAYOUT] = "layout",
	[NL_WL_SWEEP] = "sweep",
};

const char *nl_workload_name(enum nl_workload wl)
{
	return (unsigned)wl < NL_NR_WORKLOADS ? workload_names[wl] : "?";
}

int nl_workload_by_name(const char *name)
{
	for (int i = 0; i < NL_NR_WORKLOADS; i++)
		if (!strcmp(name, workload_names[i]))
			return i;
	return -1;
}

int nl_entry_parse(const char *name, struct nl_entry *e, struct nl_diag *d)
{
	memset(e, 0, sizeof(*e));
	if (strlen(name) >= sizeof(e->name))
		return nl_fail(d, -NL_E_USAGE, "entry '%.40s...' is too long", name);
	snprintf(e->name, sizeof(e->name), "%s", name);
	if (!strcmp(name, "none")) {
		e->kind = NL_ENTRY_NONE;
		return 0;
	}
	if (!strcmp(name, "call")) {
		e->kind = NL_ENTRY_CALL;
		return 0;
	}
	e->nop = nl_nop_find(name);
	if (!e->nop)
		return nl_fail(d, -NL_E_USAGE,
			       "unknown entry '%s' (a catalogue name such as p6:5, or none, or call; "
			       "see 'noplab nops')", name);
	if (e->nop->flags & NL_NOPF_FILL)
		return nl_fail(d, -NL_E_USAGE, "entry '%s' is trap fill: it would never return",
			       name);
	e->kind = NL_ENTRY_NOP;
	return 0;
}

unsigned nl_entry_len(const struct nl_entry *e)
{
	switch (e->kind) {
	case NL_ENTRY_NOP:
		return e->nop->len;
	case NL_ENTRY_CALL:
		return 5;
	default:
		return 0;
	}
}

unsigned nl_entry_insns(const struct nl_entry *e)
{
	switch (e->kind) {
	case NL_ENTRY_NOP:
		return e->nop->nr_insns;
	case NL_ENTRY_CALL:
		return 1;
	default:
		return 0;
	}
}

bool nl_entry_clobbers(const struct nl_entry *e)
{
	return e->kind == NL_ENTRY_NOP && !e->nop->nop64;
}

void nl_gen_spec_default(struct nl_gen_spec *s, enum nl_workload wl)
{
	memset(s, 0, sizeof(*s));
	s->workload = wl;
	nl_entry_parse("p6:5", &s->entry, NULL);
	s->nr_funcs = wl == NL_WL_LAYOUT ? 128 : 256;
	s->align = LINE;
	s->fill = NL_FAM_INT3;
	s->driver = NL_DRIVER_DIRECT;
	s->order = NL_ORDER_SEQ;
	s->seed = 1;
	s->copies = 512;
	s->cold_bytes = wl == NL_WL_LAYOUT ? PAGE : 0;
	if (wl == NL_WL_SWEEP)
		s->stride = 2 * LINE;	/* every offset 0..63 fits the same slot size */
}

/* ---- byte emitter ---- */

struct emit {
	struct nl_image *img;
	int err;
};

static bool reserve(struct emit *e, size_t n)
{
	struct nl_image *img = e->img;

	if (e->err)
		return false;
	if (img->size + n > MAX_IMAGE) {
		e->err = -NL_E_LIMIT;
		return false;
	}
	if (img->size + n > img->cap) {
		size_t cap = img->cap ? img->cap : PAGE;
		uint8_t *p;

		while (cap < img->size + n)
			cap *= 2;
		p = realloc(img->code, cap);
		if (!p) {
			e->err = -ENOMEM;
			return false;
		}
		img->code = p;
		img->cap = cap;
	}
	return true;
}

static void put(struct emit *e, const void *p, size_t n)
{
	if (!reserve(e, n))
		return;
	memcpy(e->img->code + e->img->size, p, n);
	e->img->size += n;
}

#define PUT(e, ...) put(e, (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ }))

static void put32(struct emit *e, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	put(e, b, 4);
}

static void put64(struct emit *e, uint64_t v)
{
	put32(e, (uint32_t)v);
	put32(e, (uint32_t)(v >> 32));
}

static size_t here(const struct emit *e)
{
	return e->img->size;
}

static void patch32(struct emit *e, size_t at, uint32_t v)
{
	if (e->err)
		return;
	for (int i = 0; i < 4; i++)
		e->img->code[at + i] = (uint8_t)(v >> (8 * i));
}

/* rel32 of a branch whose 4-byte field is at `field` and whose target is `to` */
static uint32_t rel32(size_t field, size_t to)
{
	return (uint32_t)(int32_t)((int64_t)to - (int64_t)(field + 4));
}

/* A call or jump (opcode bytes given) to a known target. */
static void branch_to(struct emit *e, const uint8_t *op, size_t oplen, size_t to)
{
	put(e, op, oplen);
	size_t field = here(e);

	put32(e, rel32(field, to));
}

/* A forward branch; returns the field to patch with patch_here(). */
static size_t branch_fwd(struct emit *e, const uint8_t *op, size_t oplen)
{
	put(e, op, oplen);
	size_t field = here(e);

	put32(e, 0);
	return field;
}

static void patch_here(struct emit *e, size_t field)
{
	patch32(e, field, rel32(field, here(e)));
}

static const uint8_t OP_CALL[] = { 0xe8 };
static const uint8_t OP_JMP[] = { 0xe9 };
static const uint8_t OP_JZ[] = { 0x0f, 0x84 };
static const uint8_t OP_JNZ[] = { 0x0f, 0x85 };

/* Padding from the catalogue, the way the fill family's producer writes it. */
static void fill_to(struct emit *e, size_t to, enum nl_nop_family fill)
{
	size_t n;
	int r;

	if (e->err || to <= here(e))
		return;
	n = to - here(e);
	if (!reserve(e, n))
		return;
	r = nl_nop_compose(fill, NL_MODE_64, n, e->img->code + here(e), e->img->cap - here(e));
	if (r < 0) {
		e->err = r;
		return;
	}
	e->img->size += n;
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

static struct nl_gsym *add_sym(struct emit *e, const char *name, enum nl_sym_kind kind,
			       size_t off)
{
	struct nl_image *img = e->img;
	struct nl_gsym *s;

	if (e->err)
		return NULL;
	if (img->nr_syms == img->cap_syms) {
		size_t cap = img->cap_syms ? 2 * img->cap_syms : 64;
		struct nl_gsym *p = realloc(img->syms, cap * sizeof(*p));

		if (!p) {
			e->err = -ENOMEM;
			return NULL;
		}
		img->syms = p;
		img->cap_syms = cap;
	}
	s = &img->syms[img->nr_syms++];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->kind = kind;
	s->off = (uint32_t)off;
	s->entry_off = (uint32_t)off;
	return s;
}

static void end_sym(struct emit *e, struct nl_gsym *s)
{
	if (s && !e->err)
		s->size = (uint32_t)(here(e) - s->off);
}

/* ---- pieces ---- */

static uint32_t func_value(unsigned i)
{
	/* distinct, odd, nonzero: a skipped or doubled call changes the sum */
	return (uint32_t)((i + 1u) * 0x9e3779b1u) | 1u;
}

static unsigned func_size(const struct nl_gen_spec *s)
{
	return (s->endbr ? 4u : 0u) + nl_entry_len(&s->entry) + 5u /* mov eax */ + 1u /* ret */;
}

/* [endbr64][entry][mov eax, value][ret] */
static struct nl_gsym *emit_func(struct emit *e, const struct nl_gen_spec *s, const char *name,
				 enum nl_sym_kind kind, uint32_t value, size_t stub)
{
	struct nl_gsym *sym = add_sym(e, name, kind, here(e));

	if (s->endbr)
		PUT(e, 0xf3, 0x0f, 0x1e, 0xfa);
	if (sym)
		sym->entry_off = (uint32_t)here(e);
	switch (s->entry.kind) {
	case NL_ENTRY_NOP:
		put(e, s->entry.nop->bytes, s->entry.nop->len);
		break;
	case NL_ENTRY_CALL:
		branch_to(e, OP_CALL, sizeof(OP_CALL), stub);
		break;
	case NL_ENTRY_NONE:
		break;
	}
	PUT(e, 0xb8);
	put32(e, value);
	PUT(e, 0xc3);
	if (sym)
		sym->value = value;
	end_sym(e, sym);
	return sym;
}

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Call order: a permutation of 0..n-1, identity or seeded Fisher-Yates. */
static int call_order(const struct nl_gen_spec *s, unsigned n, unsigned **out)
{
	unsigned *ord = malloc((size_t)n * sizeof(*ord));
	uint64_t st = s->seed;

	if (!ord)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		ord[i] = i;
	if (s->order == NL_ORDER_RANDOM) {
		for (unsigned i = n - 1; i > 0; i--) {
			unsigned j = (unsigned)(splitmix64(&st) % (i + 1u));
			unsigned t = ord[i];

			ord[i] = ord[j];
			ord[j] = t;
		}
	}
	*out = ord;
	return 0;
}

/*
 * The driver: uint64_t driver(uint64_t iters, void *const *table).  Only
 * callee-saved registers stay live across calls (RBX sum, R12 count, R13..R15
 * table walk), so entries that write RAX or RSI cannot disturb it.  Five or
 * three pushes leave RSP 16-byte aligned at each call, as the ABI asks.
 */
static void emit_driver(struct emit *e, const struct nl_gen_spec *s, const size_t *func_off,
			const unsigned *ord, unsigned n)
{
	struct nl_image *img = e->img;
	struct nl_gsym *sym;
	size_t jz, loop;

	fill_to(e, align_up(here(e), LINE), NL_FAM_INT3);
	img->driver_off = (uint32_t)here(e);
	sym = add_sym(e, "driver", NL_SYM_DRIVER, here(e));
	if (s->driver == NL_DRIVER_DIRECT) {
		PUT(e, 0x53, 0x41, 0x54, 0x41, 0x55);	/* push rbx; push r12; push r13 */
		PUT(e, 0x31, 0xdb);			/* xor ebx, ebx */
		PUT(e, 0x49, 0x89, 0xfc);		/* mov r12, rdi */
		PUT(e, 0x4d, 0x85, 0xe4);		/* test r12, r12 */
		jz = branch_fwd(e, OP_JZ, sizeof(OP_JZ));
		loop = here(e);
		for (unsigned i = 0; i < n; i++) {
			branch_to(e, OP_CALL, sizeof(OP_CALL), func_off[ord[i]]);
			PUT(e, 0x48, 0x01, 0xc3);	/* add rbx, rax */
		}
		PUT(e, 0x49, 0xff, 0xcc);		/* dec r12 */
		branch_to(e, OP_JNZ, sizeof(OP_JNZ), loop);
		patch_here(e, jz);
		PUT(e, 0x48, 0x89, 0xd8);		/* mov rax, rbx */
		PUT(e, 0x41, 0x5d, 0x41, 0x5c, 0x5b);	/* pop r13; pop r12; pop rbx */
		PUT(e, 0xc3);
	} else {
		size_t inner;

		PUT(e, 0x53, 0x41, 0x54, 0x41, 0x55, 0x41, 0x56, 0x41, 0x57); /* push rbx, r12..r15 */
		PUT(e, 0x31, 0xdb);			/* xor ebx, ebx */
		PUT(e, 0x49, 0x89, 0xfc);		/* mov r12, rdi */
		PUT(e, 0x49, 0x89, 0xf5);		/* mov r13, rsi */
		PUT(e, 0x4d, 0x8d, 0xbd);		/* lea r15, [r13 + 8n] */
		put32(e, 8u * n);
		PUT(e, 0x4d, 0x85, 0xe4);		/* test r12, r12 */
		jz = branch_fwd(e, OP_JZ, sizeof(OP_JZ));
		loop = here(e);
		PUT(e, 0x4d, 0x89, 0xee);		/* mov r14, r13 */
		inner = here(e);
		PUT(e, 0x41, 0xff, 0x16);		/* call [r14] */
		PUT(e, 0x48, 0x01, 0xc3);		/* add rbx, rax */
		PUT(e, 0x49, 0x83, 0xc6, 0x08);		/* add r14, 8 */
		PUT(e, 0x4d, 0x39, 0xfe);		/* cmp r14, r15 */
		branch_to(e, OP_JNZ, sizeof(OP_JNZ), inner);
		PUT(e, 0x49, 0xff, 0xcc);		/* dec r12 */
		branch_to(e, OP_JNZ, sizeof(OP_JNZ), loop);
		patch_here(e, jz);
		PUT(e, 0x48, 0x89, 0xd8);		/* mov rax, rbx */
		PUT(e, 0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d, 0x41, 0x5c, 0x5b); /* pops */
		PUT(e, 0xc3);
		if (!e->err) {
			img->table = malloc((size_t)n * sizeof(*img->table));
			if (!img->table) {
				e->err = -ENOMEM;
			} else {
				for (unsigned i = 0; i < n; i++)
					img->table[i] = (uint32_t)func_off[ord[i]];
				img->nr_table = n;
			}
		}
	}
	end_sym(e, sym);
}

static int check_slots(const struct nl_gen_spec *s, unsigned *stride, struct nl_diag *d)
{
	unsigned fs = func_size(s);

	if (!s->align || s->align > PAGE || (s->align & (s->align - 1)))
		return nl_fail(d, -NL_E_USAGE, "alignment %u is not a power of two in 1..%u",
			       s->align, PAGE);
	if (s->stride) {
		if (s->stride % s->align)
			return nl_fail(d, -NL_E_USAGE, "stride %u is not a multiple of the alignment %u",
				       s->stride, s->align);
		*stride = s->stride;
	} else {
		if (s->offset >= s->align)
			return nl_fail(d, -NL_E_USAGE, "offset %u must be below the alignment %u",
				       s->offset, s->align);
		*stride = (unsigned)align_up(s->offset + fs, s->align);
	}
	if (s->offset + fs > *stride)
		return nl_fail(d, -NL_E_USAGE,
			       "a %u-byte function at offset %u does not fit a %u-byte slot", fs,
			       s->offset, *stride);
	if (!s->nr_funcs || s->nr_funcs > MAX_FUNCS)
		return nl_fail(d, -NL_E_USAGE, "function count %u outside 1..%u", s->nr_funcs,
			       MAX_FUNCS);
	if ((uint64_t)s->nr_funcs * (*stride + s->cold_bytes) > MAX_IMAGE / 2)
		return nl_fail(d, -NL_E_LIMIT, "%u functions of %u bytes exceed the %u MiB image cap",
			       s->nr_funcs, *stride + s->cold_bytes, MAX_IMAGE >> 20);
	return 0;
}

/*
 * The stub an enabled ftrace site calls: one ret in its own cache line.  It
 * is there for every entry kind, so that all variants of a workload place
 * their functions and driver at the same offsets.
 */
static size_t emit_stub(struct emit *e)
{
	size_t at = here(e);
	/* named as the kernel names it, so `noplab scan` classifies call entries */
	struct nl_gsym *sym = add_sym(e, "__fentry__", NL_SYM_STUB, at);

	PUT(e, 0xc3);
	end_sym(e, sym);
	fill_to(e, align_up(here(e), LINE), NL_FAM_INT3);
	return at;
}

/*
 * One slot: the fill from wherever the previous function ended up to this
 * function's start (one composed run, as a linker or assembler writes it),
 * then the function.  *slot advances by one stride.
 */
static struct nl_gsym *emit_slot(struct emit *e, const struct nl_gen_spec *s, size_t *slot,
				 unsigned stride, const char *name, enum nl_sym_kind kind,
				 uint32_t value, size_t stub)
{
	struct nl_gsym *sym;

	fill_to(e, *slot + s->offset, s->fill);
	sym = emit_func(e, s, name, kind, value, stub);
	*slot += stride;
	return sym;
}

/* Cold code looks like the hot code: whole functions in the same slots, never called. */
static void emit_cold(struct emit *e, const struct nl_gen_spec *s, size_t *slot,
		      unsigned stride, size_t bytes, unsigned *nr_cold, size_t stub)
{
	size_t end = *slot + bytes;
	char name[24];

	while (*slot + stride <= end && !e->err) {
		snprintf(name, sizeof(name), "cold_%05u", *nr_cold);
		emit_slot(e, s, slot, stride, name, NL_SYM_COLD, func_value(*nr_cold + MAX_FUNCS),
			  stub);
		(*nr_cold)++;
	}
	*slot = end;
}

static int gen_calls(struct emit *e, const struct nl_gen_spec *s, struct nl_diag *d)
{
	struct nl_image *img = e->img;
	unsigned stride = 0, n = s->nr_funcs, nr_cold = 0;
	size_t *func_off = NULL, stub, slot;
	unsigned *ord = NULL;
	int err = check_slots(s, &stride, d);
	const bool layout = s->workload == NL_WL_LAYOUT;

	if (err)
		return err;
	if (layout && s->cold_bytes % s->align)
		return nl_fail(d, -NL_E_USAGE, "cold bytes %u are not a multiple of the alignment %u",
			       s->cold_bytes, s->align);
	func_off = calloc(n, sizeof(*func_off));
	if (!func_off)
		return -ENOMEM;
	err = call_order(s, n, &ord);
	if (err) {
		free(func_off);
		return err;
	}
	stub = emit_stub(e);
	/* functions start on a page so set and page indices follow from the offsets */
	fill_to(e, align_up(here(e), PAGE), NL_FAM_INT3);
	slot = here(e);
	for (unsigned i = 0; i < n && !e->err; i++) {
		char name[24];
		struct nl_gsym *sym;

		snprintf(name, sizeof(name), layout ? "hot_%04u" : "fn_%05u", i);
		func_off[i] = slot + s->offset;
		sym = emit_slot(e, s, &slot, stride, name, NL_SYM_FUNC, func_value(i), stub);
		if (sym)
			img->sum_per_iter += sym->value;
		if (layout && !s->packed)
			emit_cold(e, s, &slot, stride, s->cold_bytes, &nr_cold, stub);
	}
	if (layout && s->packed)
		emit_cold(e, s, &slot, stride, (size_t)n * s->cold_bytes, &nr_cold, stub);
	fill_to(e, slot, s->fill);
	img->hot_bytes = (uint64_t)n * func_size(s);
	emit_driver(e, s, func_off, ord, n);
	img->hot_bytes += img->nr_syms ? img->syms[img->nr_syms - 1].size : 0;
	img->calls_per_iter = n;
	img->nops_per_iter = s->entry.kind == NL_ENTRY_NOP ? n : 0;
	img->nop_insns_per_iter = (uint64_t)n * (s->entry.kind == NL_ENTRY_NOP ? s->entry.nop->nr_insns : 0);
	img->nop_bytes_per_iter = (uint64_t)n * (s->entry.kind == NL_ENTRY_NOP ? s->entry.nop->len : 0);
	free(func_off);
	free(ord);
	return e->err;
}

static int gen_sled(struct emit *e, const struct nl_gen_spec *s, struct nl_diag *d)
{
	struct nl_image *img = e->img;
	struct nl_gsym *sym;
	size_t jz, jmp, head;

	if (s->entry.kind != NL_ENTRY_NOP)
		return nl_fail(d, -NL_E_USAGE, "sled needs a catalogue NOP, not '%s'", s->entry.name);
	if (!s->copies || s->copies > MAX_COPIES)
		return nl_fail(d, -NL_E_USAGE, "copies %u outside 1..%u", s->copies, MAX_COPIES);
	img->driver_off = 0;
	sym = add_sym(e, "sled", NL_SYM_DRIVER, 0);
	PUT(e, 0x31, 0xd2);			/* xor edx, edx */
	PUT(e, 0x48, 0x85, 0xff);		/* test rdi, rdi */
	jz = branch_fwd(e, OP_JZ, sizeof(OP_JZ));
	jmp = branch_fwd(e, OP_JMP, sizeof(OP_JMP));
	/* the loop head on a cache line, so the sled's own alignment is known */
	fill_to(e, align_up(here(e), LINE), NL_FAM_INT3);
	patch_here(e, jmp);
	head = here(e);
	for (unsigned i = 0; i < s->copies && !e->err; i++)
		put(e, s->entry.nop->bytes, s->entry.nop->len);
	PUT(e, 0x48, 0xff, 0xc2);		/* inc rdx */
	PUT(e, 0x48, 0xff, 0xcf);		/* dec rdi */
	branch_to(e, OP_JNZ, sizeof(OP_JNZ), head);
	patch_here(e, jz);
	PUT(e, 0x48, 0x89, 0xd0);		/* mov rax, rdx */
	PUT(e, 0xc3);
	end_sym(e, sym);
	img->sum_per_iter = 1;
	img->calls_per_iter = 0;
	img->nops_per_iter = s->copies;
	img->nop_insns_per_iter = (uint64_t)s->copies * s->entry.nop->nr_insns;
	img->nop_bytes_per_iter = (uint64_t)s->copies * s->entry.nop->len;
	img->hot_bytes = img->size;
	return e->err;
}

int nl_gen_clock_probe(struct nl_image *img, unsigned chain, struct nl_diag *d)
{
	struct emit e = { .img = img };
	struct nl_gsym *sym;
	size_t jz, jmp, head;

	memset(img, 0, sizeof(*img));
	if (!chain || chain > 4096)
		return nl_fail(d, -NL_E_USAGE, "clock probe chain %u outside 1..4096", chain);
	sym = add_sym(&e, "clock_probe", NL_SYM_DRIVER, 0);
	PUT(&e, 0x31, 0xc0);			/* xor eax, eax */
	PUT(&e, 0x48, 0x89, 0xf2);		/* mov rdx, rsi: an addend the CPU cannot know */
	PUT(&e, 0x48, 0x85, 0xff);		/* test rdi, rdi */
	jz = branch_fwd(&e, OP_JZ, sizeof(OP_JZ));
	jmp = branch_fwd(&e, OP_JMP, sizeof(OP_JMP));
	fill_to(&e, align_up(here(&e), LINE), NL_FAM_INT3);
	patch_here(&e, jmp);
	head = here(&e);
	for (unsigned i = 0; i < chain; i++)
		PUT(&e, 0x48, 0x01, 0xd0);	/* add rax, rdx: each waits for the last */
	PUT(&e, 0x48, 0xff, 0xcf);		/* dec rdi */
	branch_to(&e, OP_JNZ, sizeof(OP_JNZ), head);
	patch_here(&e, jz);
	PUT(&e, 0xc3);
	end_sym(&e, sym);
	img->sum_per_iter = chain;
	img->hot_bytes = img->size;
	if (e.err) {
		nl_image_free(img);
		return nl_fail(d, e.err, "clock probe: %s", nl_strerror(e.err));
	}
	return 0;
}

int nl_gen(const struct nl_gen_spec *spec, struct nl_image *img, struct nl_diag *d)
{
	struct emit e = { .img = img };
	int err;

	memset(img, 0, sizeof(*img));
	switch (spec->workload) {
	case NL_WL_CALLS:
	case NL_WL_SWEEP:
	case NL_WL_LAYOUT:
		err = gen_calls(&e, spec, d);
		break;
	case NL_WL_SLED:
		err = gen_sled(&e, spec, d);
		break;
	default:
		err = nl_fail(d, -NL_E_USAGE, "unknown workload %d", (int)spec->workload);
	}
	if (!err)
		err = e.err;
	if (err) {
		if (!d || !d->msg[0])
			nl_fail(d, err, "generating the %s workload: %s",
				nl_workload_name(spec->workload), nl_strerror(err));
		nl_image_free(img);
	}
	return err;
}

void nl_image_free(struct nl_image *img)
{
	free(img->code);
	free(img->syms);
	free(img->table);
	memset(img, 0, sizeof(*img));
}

int nl_image_add_start(struct nl_image *img, uint64_t iters, uint64_t table_addr,
		       struct nl_diag *d)
{
	struct emit e = { .img = img };
	struct nl_gsym *sym;
	size_t at;

	fill_to(&e, align_up(here(&e), LINE), NL_FAM_INT3);
	at = here(&e);
	sym = add_sym(&e, "_start", NL_SYM_START, at);
	PUT(&e, 0x48, 0xbf);			/* mov rdi, iters */
	put64(&e, iters);
	PUT(&e, 0x48, 0xbe);			/* mov rsi, table */
	put64(&e, table_addr);
	branch_to(&e, OP_CALL, sizeof(OP_CALL), img->driver_off);
	PUT(&e, 0x48, 0xb9);			/* mov rcx, expected */
	put64(&e, nl_image_expect(img, iters));
	PUT(&e, 0x31, 0xff);			/* xor edi, edi */
	PUT(&e, 0x48, 0x39, 0xc8);		/* cmp rax, rcx */
	PUT(&e, 0x40, 0x0f, 0x95, 0xc7);	/* setne dil */
	PUT(&e, 0xb8, 60, 0, 0, 0);		/* mov eax, SYS_exit */
	PUT(&e, 0x0f, 0x05);			/* syscall */
	PUT(&e, 0xcc);				/* never reached */
	end_sym(&e, sym);
	if (e.err)
		return nl_fail(d, e.err, "adding _start: %s", nl_strerror(e.err));
	return (int)at;
}
