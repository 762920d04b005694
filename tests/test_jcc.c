// SPDX-License-Identifier: MIT
/*
 * The branch alignment (JCC erratum) audit: the decoder's fusion facts, hand
 * encoded units, thread-split invariance, and an independent oracle that
 * reads objdump's listing of gcc output built with and without
 * -Wa,-mbranches-within-32B-boundaries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nltest.h"
#include "noplab/insn.h"
#include "noplab/jcc.h"

/* ---- the decoder's fusion facts ---- */

struct fuse_row {
	int line;
	const char *bytes;
	int mode;
	enum nl_fuse_kind fuse;
	int cond;
};

static const struct fuse_row fuse_rows[] = {
	{ SRC_LINE, "48 39 c8", 64, NL_FUSE_CMP_ADD_SUB, -1 },		/* cmp %rcx,%rax */
	{ SRC_LINE, "39 07", 64, NL_FUSE_CMP_ADD_SUB, -1 },		/* cmp %eax,(%rdi) */
	{ SRC_LINE, "3b 07", 64, NL_FUSE_CMP_ADD_SUB, -1 },		/* cmp (%rdi),%eax */
	{ SRC_LINE, "83 3f 01", 64, NL_FUSE_NONE, -1 },			/* cmpl $1,(%rdi): mem+imm */
	{ SRC_LINE, "83 f8 01", 64, NL_FUSE_CMP_ADD_SUB, -1 },		/* cmp $1,%eax */
	{ SRC_LINE, "3d 00 01 00 00", 64, NL_FUSE_CMP_ADD_SUB, -1 },	/* cmp $0x100,%eax */
	{ SRC_LINE, "3b 05 10 00 00 00", 64, NL_FUSE_NONE, -1 },	/* cmp 0x10(%rip),%eax */
	{ SRC_LINE, "3b 05 10 00 00 00", 32, NL_FUSE_CMP_ADD_SUB, -1 },	/* absolute in 32-bit */
	{ SRC_LINE, "85 c0", 64, NL_FUSE_TEST_AND, -1 },		/* test %eax,%eax */
	{ SRC_LINE, "85 07", 64, NL_FUSE_TEST_AND, -1 },		/* test %eax,(%rdi) */
	{ SRC_LINE, "f6 07 01", 64, NL_FUSE_NONE, -1 },			/* testb $1,(%rdi) */
	{ SRC_LINE, "a8 01", 64, NL_FUSE_TEST_AND, -1 },		/* test $1,%al */
	{ SRC_LINE, "f7 c1 00 01 00 00", 64, NL_FUSE_TEST_AND, -1 },	/* test $0x100,%ecx */
	{ SRC_LINE, "21 07", 64, NL_FUSE_NONE, -1 },			/* and %eax,(%rdi) */
	{ SRC_LINE, "23 07", 64, NL_FUSE_TEST_AND, -1 },		/* and (%rdi),%eax */
	{ SRC_LINE, "83 e0 0f", 64, NL_FUSE_TEST_AND, -1 },		/* and $15,%eax */
	{ SRC_LINE, "01 07", 64, NL_FUSE_NONE, -1 },			/* add %eax,(%rdi) */
	{ SRC_LINE, "03 07", 64, NL_FUSE_CMP_ADD_SUB, -1 },		/* add (%rdi),%eax */
	{ SRC_LINE, "48 83 e8 01", 64, NL_FUSE_CMP_ADD_SUB, -1 },	/* sub $1,%rax */
	{ SRC_LINE, "83 2f 01", 64, NL_FUSE_NONE, -1 },			/* subl $1,(%rdi) */
	{ SRC_LINE, "ff c0", 64, NL_FUSE_INC_DEC, -1 },			/* inc %eax */
	{ SRC_LINE, "ff 0f", 64, NL_FUSE_NONE, -1 },			/* decl (%rdi) */
	{ SRC_LINE, "2e ff c0", 64, NL_FUSE_INC_DEC, -1 },		/* cs inc %eax (gas padding) */
	{ SRC_LINE, "48", 32, NL_FUSE_INC_DEC, -1 },			/* dec %eax, 32-bit */
	{ SRC_LINE, "89 c0", 64, NL_FUSE_NONE, -1 },			/* mov: never */
	{ SRC_LINE, "74 00", 64, NL_FUSE_NONE, 0x4 },			/* je */
	{ SRC_LINE, "0f 8c 00 00 00 00", 64, NL_FUSE_NONE, 0xc },	/* jl rel32 */
	{ SRC_LINE, "70 00", 64, NL_FUSE_NONE, 0x0 },			/* jo */
	{ SRC_LINE, "e3 00", 64, NL_FUSE_NONE, -1 },			/* jrcxz: no condition code */
	{ SRC_LINE, "e2 00", 64, NL_FUSE_NONE, -1 },			/* loop */
};

static void test_fuse_facts(void **state)
{
	struct nl_decoder *d64, *d32;

	(void)state;
	assert_int_equal(nl_decoder_open(NL_MODE_64, 0, &d64, NULL), 0);
	assert_int_equal(nl_decoder_open(NL_MODE_32, 0, &d32, NULL), 0);
	for (size_t i = 0; i < sizeof(fuse_rows) / sizeof(fuse_rows[0]); i++) {
		const struct fuse_row *r = &fuse_rows[i];
		uint8_t b[16];
		size_t n = nltest_hex(r->bytes, b, sizeof(b));
		struct nl_insn in;
		int len = nl_decode(r->mode == 64 ? d64 : d32, b, n, 0x1000, &in);

		if (len != (int)n)
			row_fail(r, "%s: length %d, want %zu", r->bytes, len, n);
		if (in.fuse != r->fuse)
			row_fail(r, "%s: fuse kind %d, want %d", r->bytes, in.fuse, r->fuse);
		if (in.cond != r->cond)
			row_fail(r, "%s: cond %d, want %d", r->bytes, in.cond, r->cond);
	}
	nl_decoder_close(d64);
	nl_decoder_close(d32);
}

struct pair_row {
	int line;
	enum nl_fuse_kind first;
	int cond;
	bool fuses;
};

static const struct pair_row pair_rows[] = {
	{ SRC_LINE, NL_FUSE_TEST_AND, 0x0, true },	/* test + jo */
	{ SRC_LINE, NL_FUSE_TEST_AND, 0xa, true },	/* test + jp */
	{ SRC_LINE, NL_FUSE_CMP_ADD_SUB, 0x2, true },	/* cmp + jb */
	{ SRC_LINE, NL_FUSE_CMP_ADD_SUB, 0x7, true },	/* cmp + ja */
	{ SRC_LINE, NL_FUSE_CMP_ADD_SUB, 0x8, false },	/* cmp + js */
	{ SRC_LINE, NL_FUSE_CMP_ADD_SUB, 0x1, false },	/* cmp + jno */
	{ SRC_LINE, NL_FUSE_CMP_ADD_SUB, 0xf, true },	/* cmp + jg */
	{ SRC_LINE, NL_FUSE_INC_DEC, 0x5, true },	/* dec + jne */
	{ SRC_LINE, NL_FUSE_INC_DEC, 0xe, true },	/* dec + jle */
	{ SRC_LINE, NL_FUSE_INC_DEC, 0x2, false },	/* inc + jb: inc leaves CF */
	{ SRC_LINE, NL_FUSE_INC_DEC, 0x6, false },	/* inc + jbe */
	{ SRC_LINE, NL_FUSE_NONE, 0x4, false },
	{ SRC_LINE, NL_FUSE_TEST_AND, -1, false },	/* test + loop */
};

static void test_fuse_pairs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(pair_rows) / sizeof(pair_rows[0]); i++) {
		const struct pair_row *r = &pair_rows[i];
		struct nl_insn a = { .fuse = (uint8_t)r->first, .fusible = r->first != NL_FUSE_NONE };
		struct nl_insn j = { .cls = NL_INSN_JUMP_COND, .cond = (int8_t)r->cond };

		if (nl_jcc_fuses(&a, &j) != r->fuses)
			row_fail(r, "fuses %d, want %d", !r->fuses, r->fuses);
	}
}

/* ---- hand-encoded units ---- */

struct unit_row {
	int line;
	uint64_t addr;
	const char *bytes;
	uint64_t cuts[4];
	size_t nr_cuts;
	uint64_t units, fused, affected;
	uint64_t first_affected;	/* address of the first affected unit, when any */
	enum nl_jcc_kind first_kind;
};

#define CC10 "cc cc cc cc cc cc cc cc cc cc "

static const struct unit_row unit_rows[] = {
	/* je at 0x101e..0x1020 ends on the boundary: affected */
	{ SRC_LINE, 0x101e, "74 00", { 0 }, 0, 1, 0, 1, 0x101e, NL_JCC_JCC },
	/* je at 0x101d..0x101f: inside the chunk */
	{ SRC_LINE, 0x101d, "74 00", { 0 }, 0, 1, 0, 0, 0, 0 },
	/* je rel32 at 0x101c..0x1022 crosses */
	{ SRC_LINE, 0x101c, "0f 84 00 00 00 00", { 0 }, 0, 1, 0, 1, 0x101c, NL_JCC_JCC },
	/* cmp (0x101c..0x101f) + jne (..0x1021): the pair crosses, the jne alone would too */
	{ SRC_LINE, 0x101c, "48 39 c8 75 00", { 0 }, 0, 1, 1, 1, 0x101c, NL_JCC_FUSED },
	/* cmp ends on the boundary, jne after it: the fused pair crosses */
	{ SRC_LINE, 0x101d, "48 39 c8 75 00", { 0 }, 0, 1, 1, 1, 0x101d, NL_JCC_FUSED },
	/* same bytes with cmpl $1,(%rdi): no fusion, the jne alone is inside */
	{ SRC_LINE, 0x101d, "83 3f 01 75 00", { 0 }, 0, 1, 0, 0, 0, 0 },
	/* inc + jb do not fuse */
	{ SRC_LINE, 0x101d, "ff c0 90 72 00", { 0 }, 0, 1, 0, 0, 0, 0 },
	{ SRC_LINE, 0x101e, "ff c0 72 00", { 0 }, 0, 1, 0, 0, 0, 0 },
	/* dec + jne fuse across the boundary */
	{ SRC_LINE, 0x101e, "ff c8 75 00", { 0 }, 0, 1, 1, 1, 0x101e, NL_JCC_FUSED },
	/* a cut between cmp and jne: they still fuse (adjacent, as in a fall-through) */
	{ SRC_LINE, 0x101d, "48 39 c8 75 00", { 0x1020 }, 1, 1, 1, 1, 0x101d, NL_JCC_FUSED },
	/* call rel32 0x101c..0x1021, ret at 0x103f ends on 0x1040 */
	{ SRC_LINE, 0x101c, "e8 00 00 00 00 " CC10 CC10 CC10 "c3", { 0 }, 0, 2, 0, 2, 0x101c,
	  NL_JCC_CALL },
	/* indirect jmp and call, 2 bytes each, inside one chunk */
	{ SRC_LINE, 0x1000, "ff e0 ff d0", { 0 }, 0, 2, 0, 0, 0, 0 },
	/* int3 and 0x90 runs are skipped, a jmp after them still counted */
	{ SRC_LINE, 0x1000, "90 90 90 cc cc cc cc eb 00", { 0 }, 0, 1, 0, 0, 0, 0 },
	/*
	 * A long instruction (mov $imm64) runs over a cut at 0x1003: decoding
	 * restarts at the cut, where c3 c3 are two rets, as objdump shows it.
	 */
	{ SRC_LINE, 0x1000, "48 b8 00 c3 c3 00 00 00 00 00", { 0x1003 }, 1, 2, 0, 0, 0, 0 },
};

static void test_units(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(unit_rows) / sizeof(unit_rows[0]); i++) {
		const struct unit_row *r = &unit_rows[i];
		uint8_t b[128];
		size_t n = nltest_hex(r->bytes, b, sizeof(b));
		struct nl_jcc_text t = { r->addr, b, n };
		struct nl_jcc_opts o = { .mode = NL_MODE_64, .cuts = r->cuts, .nr_cuts = r->nr_cuts,
					 .list = true, .threads = 1 };
		struct nl_jcc_result res;

		if (nl_jcc_audit(&t, 1, &o, &res, NULL))
			row_fail(r, "audit failed");
		if (res.total.units != r->units || res.total.fused != r->fused ||
		    res.total.affected != r->affected)
			row_fail(r, "units %llu fused %llu affected %llu, want %llu %llu %llu",
				 (unsigned long long)res.total.units,
				 (unsigned long long)res.total.fused,
				 (unsigned long long)res.total.affected,
				 (unsigned long long)r->units, (unsigned long long)r->fused,
				 (unsigned long long)r->affected);
		if (res.nr_affected != r->affected)
			row_fail(r, "%zu listed", res.nr_affected);
		if (r->affected && (res.affected[0].addr != r->first_affected ||
				    res.affected[0].kind != r->first_kind))
			row_fail(r, "first affected %#llx kind %u",
				 (unsigned long long)res.affected[0].addr, res.affected[0].kind);
		nl_jcc_result_release(&res);
	}
}

/* ---- splitting between threads changes nothing ---- */

static void assert_same(const struct nl_jcc_result *a, const struct nl_jcc_result *b,
			const char *what)
{
	if (memcmp(&a->total, &b->total, sizeof(a->total)))
		fail_msg("%s: totals differ (%llu/%llu affected)", what,
			 (unsigned long long)a->total.affected, (unsigned long long)b->total.affected);
	if (a->nr_bins != b->nr_bins || memcmp(a->bins, b->bins, a->nr_bins * sizeof(*a->bins)))
		fail_msg("%s: bins differ", what);
	if (a->nr_affected != b->nr_affected)
		fail_msg("%s: %zu vs %zu affected listed", what, a->nr_affected, b->nr_affected);
	for (size_t i = 0; i < a->nr_affected; i++)
		if (a->affected[i].addr != b->affected[i].addr ||
		    a->affected[i].kind != b->affected[i].kind ||
		    a->affected[i].len != b->affected[i].len)
			fail_msg("%s: affected[%zu] %#llx vs %#llx", what, i,
				 (unsigned long long)a->affected[i].addr,
				 (unsigned long long)b->affected[i].addr);
	if (a->insns != b->insns || a->fill_skipped != b->fill_skipped)
		fail_msg("%s: %llu vs %llu instructions", what, (unsigned long long)a->insns,
			 (unsigned long long)b->insns);
}

/* A fused pair whose jcc is exactly where the two-thread split lands. */
static void test_split_pair(void **state)
{
	uint8_t b[64];
	uint64_t cuts[] = { 0x2021 };
	struct nl_jcc_text t = { 0x2000, b, sizeof(b) };
	struct nl_jcc_opts o = { .mode = NL_MODE_64, .cuts = cuts, .nr_cuts = 1, .list = true };
	struct nl_jcc_result one, two;

	(void)state;
	/* 30 bytes of nopl (0f 1f 00), cmp %rcx,%rax at 0x201e, jne at 0x2021, then nopl */
	for (size_t i = 0; i < sizeof(b); i += 3) {
		b[i] = 0x0f;
		if (i + 1 < sizeof(b))
			b[i + 1] = 0x1f;
		if (i + 2 < sizeof(b))
			b[i + 2] = 0x00;
	}
	memcpy(b + 30, "\x48\x39\xc8\x75\x00", 5);
	for (size_t i = 35; i + 3 <= sizeof(b); i += 3)
		memcpy(b + i, "\x0f\x1f\x00", 3);
	b[62] = b[63] = 0x90;
	o.threads = 1;
	assert_int_equal(nl_jcc_audit(&t, 1, &o, &one, NULL), 0);
	o.threads = 2;
	assert_int_equal(nl_jcc_audit(&t, 1, &o, &two, NULL), 0);
	assert_int_equal(two.threads_used, 2);
	assert_int_equal(one.total.fused, 1);
	assert_int_equal(one.total.affected, 1);	/* 0x201e..0x2023 crosses 0x2020 */
	assert_int_equal(one.affected[0].addr, 0x201e);
	assert_int_equal(one.affected[0].kind, NL_JCC_FUSED);
	assert_same(&one, &two, "split pair");
	/* the pair's unit is binned with its cmp, before the cut */
	assert_int_equal(two.bins[0].fused, 1);
	assert_int_equal(two.bins[1].kind_units[NL_JCC_JCC], 0);
	nl_jcc_result_release(&one);
	nl_jcc_result_release(&two);
}

/*
 * Splits in the middle of instructions (a stripped file has no cuts): 10-byte
 * blocks of mov $imm64 whose immediates read as jcc/ret/cmp+jne when decoded
 * off by a few bytes, cmp+jne+nop5, and call+nop5.  Aligned, only the real
 * branches count; every thread count must find exactly those.
 */
static void test_split_anywhere(void **state)
{
	const size_t n = 48 * 1024;
	uint8_t *b = malloc(n);
	uint64_t want_units = 0, want_fused = 0;
	uint32_t seed = 7;
	struct nl_jcc_result one;
	struct nl_jcc_text t = { 0x10000, b, n };
	struct nl_jcc_opts o = { .mode = NL_MODE_64, .list = true, .threads = 1 };

	(void)state;
	assert_non_null(b);
	memset(b, 0x90, n);
	for (size_t i = 0; i + 10 <= n; i += 10) {
		seed = seed * 1103515245u + 12345u;
		switch ((seed >> 16) % 3) {
		case 0:
			memcpy(b + i, "\x48\xb8\x74\x00\xc3\x48\x39\xc8\x75\x00", 10);
			break;
		case 1:
			memcpy(b + i, "\x48\x39\xc8\x75\x05\x0f\x1f\x44\x00\x00", 10);
			want_units++;
			want_fused++;
			break;
		default:
			memcpy(b + i, "\xe8\x00\x00\x00\x00\x0f\x1f\x44\x00\x00", 10);
			want_units++;
			break;
		}
	}
	assert_int_equal(nl_jcc_audit(&t, 1, &o, &one, NULL), 0);
	assert_int_equal(one.total.units, want_units);
	assert_int_equal(one.total.fused, want_fused);
	for (unsigned th = 2; th <= 6; th++) {
		struct nl_jcc_result many;
		char what[32];

		o.threads = th;
		assert_int_equal(nl_jcc_audit(&t, 1, &o, &many, NULL), 0);
		if (many.threads_used < 2)
			fail_msg("%u threads: the text was not split", th);
		snprintf(what, sizeof(what), "%u threads", th);
		assert_same(&one, &many, what);
		nl_jcc_result_release(&many);
	}
	nl_jcc_result_release(&one);
	free(b);
}

/* ---- fixture: gcc output, objdump as the oracle ---- */

static unsigned rnd(uint32_t *seed, unsigned n)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 16) % n;
}

static void gen_fixture(FILE *f)
{
	uint32_t seed = 12345;

#define RND(n) rnd(&seed, (n))
	fprintf(f, "typedef int (*fn_t)(int);\nint glob;\n"
		   "int leaf0(int x) { return x * 3 + 1; }\n"
		   "int leaf1(int x) { return x ^ 0x55; }\n");
	for (int i = 0; i < 240; i++) {
		fprintf(f, "__attribute__((noinline)) int f%d(int a, int b, int *p, fn_t *tab)\n{\n"
			   "\tint r = %u;\n", i, RND(100));
		if (RND(2))
			fprintf(f, "\tfor (int i = 0; i < a; i++) { if (p[i] > b + %u) r += p[i]; "
				   "else if (p[i] == %u) break; }\n", RND(9), RND(50));
		if (RND(2))
			fprintf(f, "\tswitch (a & 7) { case 0: r ^= %u; break; case 1: r += b; break; "
				   "case 2: r -= %u; break; case 3: r *= 3; break; case 4: r = tab[1](r); "
				   "break; case 5: r >>= 1; break; default: r = 0; }\n", RND(99), RND(99));
		if (RND(2))
			fprintf(f, "\tif (r < %u) r = tab[a & 1](r);\n", RND(1000));
		if (RND(2))
			fprintf(f, "\twhile (r & %u) r >>= 1;\n", 1 + RND(30));
		if (RND(3) == 0)
			fprintf(f, "\tif ((unsigned)r > %uu) r--;\n\tif (b & 1) r = -r;\n", RND(500));
		switch (RND(6)) {
		case 0:	/* mem+imm cmp: no fusion */
			fprintf(f, "\t__asm__ volatile(\"cmpl $5,(%%1)\\n\\tjne 1f\\n\\tinc %%0\\n1:\" "
				   ": \"+r\"(r) : \"r\"(p) : \"cc\", \"memory\");\n");
			break;
		case 1:	/* inc + jb: no fusion; dec + jne: fusion */
			fprintf(f, "\t__asm__ volatile(\"incl %%0\\n\\tjb 1f\\n\\tdecl %%0\\n\\tjne 1f\\n"
				   "\\tnop\\n1:\" : \"+r\"(r) : : \"cc\");\n");
			break;
		case 2:	/* RIP-relative cmp: no fusion; test mem,imm: none; and to memory: none */
			fprintf(f, "\t__asm__ volatile(\"cmpl glob(%%%%rip),%%0\\n\\tje 1f\\n"
				   "\\ttestb $1,(%%1)\\n\\tjne 1f\\n\\tandl %%0,(%%1)\\n\\tjne 1f\\n"
				   "\\taddl $1,%%0\\n\\tjs 1f\\n\\tnop\\n1:\" : \"+r\"(r) : \"r\"(p) "
				   ": \"cc\", \"memory\");\n");
			break;
		case 3:	/* cmp/sub with ja, test with jp */
			fprintf(f, "\t__asm__ volatile(\"subl $3,%%0\\n\\tja 1f\\n\\ttestl %%0,%%0\\n"
				   "\\tjp 1f\\n\\tnop\\n1:\" : \"+r\"(r) : : \"cc\");\n");
			break;
		default:
			break;
		}
		if (i > 0 && RND(2))
			fprintf(f, "\tr += f%u(a - 1, r, p, tab);\n", RND(i));
		fprintf(f, "\treturn r;\n}\n");
	}
#undef RND
}

struct oracle {
	uint64_t units, fused, affected;
	uint64_t kind_units[NL_JCC_NR_KINDS], kind_affected[NL_JCC_NR_KINDS];
	uint64_t *aff;
	size_t nr_aff;
	uint64_t *cuts;
	size_t nr_cuts;
};

static bool is_one_of(const char *m, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(m, *set))
			return true;
	return false;
}

/* cmp, cmpl, cmpq... -> "cmp"; anything else -> "" */
static const char *fusible_base(const char *m)
{
	static const char *const bases[] = { "cmp", "test", "add", "sub", "and", "inc", "dec",
					     NULL };

	for (const char *const *b = bases; *b; b++) {
		size_t n = strlen(*b);

		if (!strncmp(m, *b, n) && (!m[n] || (strchr("bwlq", m[n]) && !m[n + 1])))
			return *b;
	}
	return "";
}

static int jcc_group(const char *m)
{
	static const char *const elg[] = { "je", "jne", "jl", "jge", "jle", "jg", NULL };
	static const char *const ab[] = { "jb", "jae", "jbe", "ja", NULL };
	static const char *const spo[] = { "js", "jns", "jp", "jnp", "jo", "jno", NULL };

	if (is_one_of(m, elg))
		return 1;
	if (is_one_of(m, ab))
		return 2;
	if (is_one_of(m, spo))
		return 3;
	if (!strcmp(m, "jrcxz") || !strcmp(m, "jecxz") || !strncmp(m, "loop", 4))
		return 4;	/* conditional, no flags to fuse on */
	return 0;
}

/* Split AT&T operands at top-level commas; returns the count. */
static int operands(char *ops, char **v, int max)
{
	int n = 0, depth = 0;
	char *start = ops;

	if (!*ops)
		return 0;
	for (char *p = ops;; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		if ((*p == ',' && !depth) || !*p) {
			bool end = !*p;

			*p = '\0';
			if (n < max)
				v[n++] = start;
			start = p + 1;
			if (end)
				break;
		}
	}
	return n;
}

static bool is_mem(const char *op)
{
	return strchr(op, '(') || (op[0] != '%' && op[0] != '$');
}

/*
 * Fusion per Intel (as LLVM encodes it): cmp/test not mem+imm; add/sub/and
 * with a register destination; inc/dec on a register; never RIP-relative.
 * Returns 0 (none), 1 test/and, 2 cmp/add/sub, 3 inc/dec.
 */
static int oracle_fuse_kind(const char *base, char *ops)
{
	char *v[4];
	int n;
	bool mem = false, imm = false;

	if (!base[0] || strstr(ops, "(%rip)"))
		return 0;
	n = operands(ops, v, 4);
	for (int i = 0; i < n; i++) {
		if (v[i][0] == '$')
			imm = true;
		else if (is_mem(v[i]))
			mem = true;
	}
	if (!strcmp(base, "test"))
		return mem && imm ? 0 : 1;
	if (!strcmp(base, "cmp"))
		return mem && imm ? 0 : 2;
	if (!strcmp(base, "and"))
		return n && v[n - 1][0] == '%' ? 1 : 0;
	if (!strcmp(base, "add") || !strcmp(base, "sub"))
		return n && v[n - 1][0] == '%' ? 2 : 0;
	return n == 1 && v[0][0] == '%' ? 3 : 0;	/* inc, dec */
}

static bool oracle_fuses(int kind, int group)
{
	if (group == 0 || group == 4)
		return false;
	if (kind == 1)
		return true;
	if (kind == 2)
		return group == 1 || group == 2;
	return kind == 3 && group == 1;
}

static void push_u64(uint64_t **v, size_t *n, uint64_t x)
{
	*v = realloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = x;
}

static void oracle_unit(struct oracle *o, enum nl_jcc_kind kind, uint64_t start, uint64_t end)
{
	o->units++;
	o->kind_units[kind]++;
	if (kind == NL_JCC_FUSED)
		o->fused++;
	if (start / 32 != end / 32) {
		o->affected++;
		o->kind_affected[kind]++;
		push_u64(&o->aff, &o->nr_aff, start);
	}
}

/* Read `objdump -d -w` of the .text of obj and count branch units from the text alone. */
static void run_oracle(const char *obj, struct oracle *o)
{
	static const char *const prefixes[] = { "cs", "ds", "es", "ss", "fs", "gs", "data16",
						"data32", "addr32", "lock", "rep", "repz", "repnz",
						"repe", "repne", "bnd", "notrack", "rex", "rex.W",
						NULL };
	char cmd[512], *out, *line, *save = NULL;
	bool prev_valid = false;
	uint64_t prev_start = 0, prev_end = 0;
	int prev_kind = 0;

	memset(o, 0, sizeof(*o));
	snprintf(cmd, sizeof(cmd), "objdump -d -w -j .text %s", obj);
	assert_int_equal(nltest_run(cmd, &out), 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long addr;
		char name[256];
		char *tab1, *tab2, *m, *ops;
		size_t nbytes = 0;

		if (sscanf(line, "%llx <%255[^>]>:", &addr, name) == 2 && line[0] != ' ') {
			push_u64(&o->cuts, &o->nr_cuts, addr);
			continue;
		}
		if (sscanf(line, " %llx:", &addr) != 1 || !(tab1 = strchr(line, '\t')))
			continue;
		tab2 = strchr(tab1 + 1, '\t');
		for (char *p = tab1 + 1; p < (tab2 ? tab2 : tab1 + strlen(tab1)); p++)
			if (p[0] != ' ' && (p == tab1 + 1 || p[-1] == ' '))
				nbytes++;
		if (!tab2)
			continue;
		m = tab2 + 1;
		/* drop prefixes objdump prints as words */
		for (;;) {
			char word[32];

			if (sscanf(m, "%31s", word) != 1 || !is_one_of(word, prefixes) ||
			    !strchr(m, ' '))
				break;
			m = strchr(m, ' ');
			while (*m == ' ')
				m++;
		}
		ops = m;
		while (*ops && *ops != ' ')
			ops++;
		if (*ops) {
			*ops++ = '\0';
			while (*ops == ' ')
				ops++;
		}
		char *hash = strchr(ops, '#');

		if (hash)
			*hash = '\0';
		for (char *e = ops + strlen(ops); e > ops && e[-1] == ' ';)
			*--e = '\0';
		char *lt = strchr(ops, '<');

		if (lt && lt > ops)
			lt[-1] = '\0';	/* "9e <f+0x9e>" */

		uint64_t start = addr, end = addr + nbytes;
		int group = jcc_group(m);
		bool indirect = ops[0] == '*';

		if (group) {
			if (prev_valid && prev_end == start && oracle_fuses(prev_kind, group))
				oracle_unit(o, NL_JCC_FUSED, prev_start, end);
			else
				oracle_unit(o, NL_JCC_JCC, start, end);
		} else if (!strcmp(m, "jmp")) {
			oracle_unit(o, indirect ? NL_JCC_JMP_INDIRECT : NL_JCC_JMP, start, end);
		} else if (!strcmp(m, "call")) {
			oracle_unit(o, indirect ? NL_JCC_CALL_INDIRECT : NL_JCC_CALL, start, end);
		} else if (!strcmp(m, "ret") || !strcmp(m, "iret") || !strcmp(m, "iretq")) {
			oracle_unit(o, NL_JCC_RET, start, end);
		}
		prev_kind = oracle_fuse_kind(fusible_base(m), ops);
		prev_valid = prev_kind != 0;
		prev_start = start;
		prev_end = end;
	}
	free(out);
}

static uint8_t *read_text(const char *obj, const char *dir, size_t *len)
{
	char cmd[1024], path[512];
	FILE *f;
	uint8_t *buf;
	long n;

	snprintf(path, sizeof(path), "%s/text.bin", dir);
	snprintf(cmd, sizeof(cmd), "objcopy -O binary --only-section=.text %s %s", obj, path);
	assert_int_equal(nltest_run(cmd, NULL), 0);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

struct build {
	const char *tag;
	const char *flags;
	bool padded;		/* jcc, fused and jmp must all be clear */
	bool padded_all;	/* every unit kind must be clear */
};

static const struct build builds[] = {
	{ "plain", "", false, false },
	{ "padded", "-Wa,-mbranches-within-32B-boundaries", true, false },
	/* the option pads jcc+fused+jmp only; the erratum covers calls and rets too */
	{ "padded-all", "-Wa,-mbranches-within-32B-boundaries,"
			"-malign-branch=jcc+fused+jmp+call+ret+indirect", true, true },
};

static void audit_file(const char *obj, const char *dir, const struct oracle *orc,
		       unsigned threads, struct nl_jcc_result *res)
{
	size_t len;
	uint8_t *text = read_text(obj, dir, &len);
	struct nl_jcc_text t = { 0, text, len };
	struct nl_jcc_opts o = { .mode = NL_MODE_64, .cuts = orc->cuts, .nr_cuts = orc->nr_cuts,
				 .list = true, .threads = threads };

	assert_int_equal(nl_jcc_audit(&t, 1, &o, res, NULL), 0);
	free(text);
}

static void test_objdump_oracle(void **state)
{
	char *dir = nltest_tmpdir("jcc");
	char cmd[2048], src[512];
	FILE *f;

	(void)state;
	assert_non_null(dir);
	snprintf(src, sizeof(src), "%s/branches.c", dir);
	f = fopen(src, "w");
	assert_non_null(f);
	gen_fixture(f);
	fclose(f);
	for (size_t b = 0; b < sizeof(builds) / sizeof(builds[0]); b++) {
		const struct build *bd = &builds[b];
		char obj[512];
		struct oracle orc;
		struct nl_jcc_result one, two;

		snprintf(obj, sizeof(obj), "%s/%s.o", dir, bd->tag);
		snprintf(cmd, sizeof(cmd),
			 "gcc -c -O2 -fno-asynchronous-unwind-tables -fno-pie %s -o %s %s", bd->flags,
			 obj, src);
		assert_int_equal(nltest_run(cmd, NULL), 0);
		run_oracle(obj, &orc);
		audit_file(obj, dir, &orc, 1, &one);
		audit_file(obj, dir, &orc, 2, &two);
		assert_same(&one, &two, bd->tag);
		/* as a stripped file would be decoded: no cuts, splits anywhere */
		{
			size_t len;
			uint8_t *text = read_text(obj, dir, &len);
			struct nl_jcc_text t = { 0, text, len };
			struct nl_jcc_opts so = { .mode = NL_MODE_64, .list = true, .threads = 1 };
			struct nl_jcc_result s1, sn;

			assert_int_equal(nl_jcc_audit(&t, 1, &so, &s1, NULL), 0);
			for (unsigned th = 2; th <= 5; th++) {
				so.threads = th;
				assert_int_equal(nl_jcc_audit(&t, 1, &so, &sn, NULL), 0);
				assert_same(&s1, &sn, "stripped");
				nl_jcc_result_release(&sn);
			}
			nl_jcc_result_release(&s1);
			free(text);
		}
		if (one.total.units < 2000)
			fail_msg("%s: only %llu units: the fixture lost its branches", bd->tag,
				 (unsigned long long)one.total.units);
		if (one.total.units != orc.units || one.total.fused != orc.fused ||
		    one.total.affected != orc.affected)
			fail_msg("%s: noplab units %llu fused %llu affected %llu; objdump oracle %llu "
				 "%llu %llu", bd->tag, (unsigned long long)one.total.units,
				 (unsigned long long)one.total.fused,
				 (unsigned long long)one.total.affected, (unsigned long long)orc.units,
				 (unsigned long long)orc.fused, (unsigned long long)orc.affected);
		for (int k = 0; k < NL_JCC_NR_KINDS; k++)
			if (one.total.kind_units[k] != orc.kind_units[k] ||
			    one.total.kind_affected[k] != orc.kind_affected[k])
				fail_msg("%s: %s: noplab %llu/%llu, oracle %llu/%llu", bd->tag,
					 nl_jcc_kind_name(k),
					 (unsigned long long)one.total.kind_affected[k],
					 (unsigned long long)one.total.kind_units[k],
					 (unsigned long long)orc.kind_affected[k],
					 (unsigned long long)orc.kind_units[k]);
		assert_int_equal(one.nr_affected, orc.nr_aff);
		for (size_t i = 0; i < orc.nr_aff; i++)
			if (one.affected[i].addr != orc.aff[i])
				fail_msg("%s: affected unit %zu at %#llx, oracle %#llx", bd->tag, i,
					 (unsigned long long)one.affected[i].addr,
					 (unsigned long long)orc.aff[i]);
		if (!bd->padded && (one.total.affected < 100 || one.total.fused < 100))
			fail_msg("plain build: %llu affected, %llu fused: too few to test anything",
				 (unsigned long long)one.total.affected,
				 (unsigned long long)one.total.fused);
		if (bd->padded) {
			uint64_t a = one.total.kind_affected[NL_JCC_JCC] +
				     one.total.kind_affected[NL_JCC_FUSED] +
				     one.total.kind_affected[NL_JCC_JMP];

			if (a)
				fail_msg("%s: %llu jcc/fused/jmp units still cross", bd->tag,
					 (unsigned long long)a);
		}
		if (bd->padded_all && one.total.affected)
			fail_msg("%s: %llu units still cross (first at %#llx)", bd->tag,
				 (unsigned long long)one.total.affected,
				 (unsigned long long)one.affected[0].addr);
		nl_jcc_result_release(&one);
		nl_jcc_result_release(&two);
		free(orc.aff);
		free(orc.cuts);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	nltest_run(cmd, NULL);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fuse_facts),
		cmocka_unit_test(test_fuse_pairs),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_split_pair),
		cmocka_unit_test(test_split_anywhere),
		cmocka_unit_test(test_objdump_oracle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
