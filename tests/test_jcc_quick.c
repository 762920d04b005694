// SPDX-License-Identifier: MIT
/*
 * The quick decoder (NL_DEC_QUICK) against Capstone: where the tables
 * answer, length, prefixes, branch class, target, condition and fusion kind
 * must be Capstone's.  Random bytes, bytes shaped like real instructions,
 * and real code (gcc's cc1, when this machine has it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/decode_priv.h"
#include "nltest.h"
#include "noplab/insn.h"

static bool is_branch(enum nl_insn_class c)
{
	return c == NL_INSN_JUMP || c == NL_INSN_JUMP_COND || c == NL_INSN_JUMP_INDIRECT ||
	       c == NL_INSN_CALL || c == NL_INSN_CALL_INDIRECT || c == NL_INSN_RET;
}

struct tally {
	uint64_t tried, answered, agreed, capstone_refused;
};

/* Compare one position; fail_msg on a disagreement. */
static void check_at(struct nl_decoder *cs, enum nl_mode mode, const uint8_t *p, size_t avail,
		     uint64_t addr, struct tally *t, const char *where)
{
	struct nl_insn q, c;
	int nq = nl_decode_quick(mode, p, avail, addr, &q), nc;
	char hex[64];

	t->tried++;
	if (nq <= 0)
		return;
	t->answered++;
	nc = nl_decode(cs, p, avail, addr, &c);
	if (nc < 0) {
		/* Capstone 4.0.2 refuses some valid forms (0f 1f c0): nothing to compare */
		t->capstone_refused++;
		return;
	}
	for (int i = 0, o = 0; i < 15 && (size_t)i < avail; i++)
		o += snprintf(hex + o, sizeof(hex) - (size_t)o, "%02x ", p[i]);
	if (nq != nc)
		fail_msg("%s %d-bit: %s: quick length %d, capstone %d (%s)", where, mode, hex, nq, nc,
			 c.text);
	if (q.nr_prefixes != c.nr_prefixes)
		fail_msg("%s: %s: %u prefixes, capstone %u", where, hex, q.nr_prefixes, c.nr_prefixes);
	if ((is_branch(q.cls) || is_branch(c.cls)) && q.cls != c.cls)
		fail_msg("%s: %s: class %d, capstone %d (%s)", where, hex, q.cls, c.cls, c.text);
	if (q.has_target != c.has_target || (q.has_target && q.target != c.target))
		fail_msg("%s: %s: target %#llx, capstone %#llx", where, hex,
			 (unsigned long long)q.target, (unsigned long long)c.target);
	if (q.cond != c.cond)
		fail_msg("%s: %s: cond %d, capstone %d", where, hex, q.cond, c.cond);
	if (q.fuse != c.fuse)
		fail_msg("%s: %s: fuse %d, capstone %d (%s)", where, hex, q.fuse, c.fuse, c.text);
	t->agreed++;
}

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Bytes shaped like code: prefixes, opcodes, ModRM/SIB forms all get their turn. */
static void shaped(uint32_t *s, uint8_t *b, size_t n, enum nl_mode mode)
{
	static const uint8_t pfx[] = { 0x66, 0x67, 0xf2, 0xf3, 0xf0, 0x2e, 0x3e, 0x26, 0x64, 0x65,
				       0x36 };
	size_t i = 0;

	for (size_t k = 0; k < n; k++)
		b[k] = (uint8_t)rnd(s);
	while (i < 3 && rnd(s) % 3 == 0)
		b[i++] = pfx[rnd(s) % sizeof(pfx)];
	if (mode == NL_MODE_64 && rnd(s) % 2)
		b[i++] = (uint8_t)(0x40 | (rnd(s) & 0xf));
	if (rnd(s) % 3 == 0)
		b[i++] = 0x0f;
	i++;	/* the opcode stays random */
	/* ModRM with interesting mod/rm combinations */
	uint8_t mod = (uint8_t)(rnd(s) % 4), rm = (uint8_t)(rnd(s) % 8);

	if (rnd(s) % 4 == 0)
		rm = 4;
	if (rnd(s) % 4 == 0)
		rm = 5;
	b[i] = (uint8_t)(mod << 6 | (rnd(s) & 0x38) | rm);
}

static void test_random(void **state)
{
	static const enum nl_mode modes[] = { NL_MODE_64, NL_MODE_32 };

	(void)state;
	for (int m = 0; m < 2; m++) {
		struct nl_decoder *cs;
		struct tally t = { 0 };
		uint32_t seed = 0x9e3779b9u + (uint32_t)m;
		uint8_t b[16];

		assert_int_equal(nl_decoder_open(modes[m], NL_DEC_TEXT, &cs, NULL), 0);
		for (int i = 0; i < 200000; i++) {
			if (i % 2) {
				for (size_t k = 0; k < sizeof(b); k++)
					b[k] = (uint8_t)rnd(&seed);
			} else {
				shaped(&seed, b, sizeof(b), modes[m]);
			}
			check_at(cs, modes[m], b, 15, 0x401000, &t, "random");
		}
		/* the tables must actually answer, or the audit is no faster */
		if (t.answered < t.tried / 3)
			fail_msg("%d-bit: quick decoder answered %llu of %llu", modes[m],
				 (unsigned long long)t.answered, (unsigned long long)t.tried);
		printf("%d-bit random: %llu tried, %llu answered, %llu agreed, %llu refused by "
		       "capstone\n", modes[m], (unsigned long long)t.tried,
		       (unsigned long long)t.answered, (unsigned long long)t.agreed,
		       (unsigned long long)t.capstone_refused);
		nl_decoder_close(cs);
	}
}

/* Real code: every instruction boundary of gcc's cc1 .text (the first 6 MB). */
static void test_real_code(void **state)
{
	char cmd[512], *out = NULL, *dir = nltest_tmpdir("quick");
	struct nl_decoder *cs;
	struct tally t = { 0 };
	FILE *f;
	uint8_t *text;
	long n;

	(void)state;
	assert_non_null(dir);
	snprintf(cmd, sizeof(cmd), "ls /usr/lib/gcc/x86_64-linux-gnu/*/cc1 2>/dev/null | tail -1");
	if (nltest_run(cmd, &out) || !out || !out[0]) {
		free(out);
		/* the fixture of test_jcc still runs the quick path against objdump */
		printf("no cc1 here: real-code comparison skipped\n");
		free(dir);
		return;
	}
	out[strcspn(out, "\n")] = '\0';
	snprintf(cmd, sizeof(cmd), "objcopy -O binary --only-section=.text %s %s/text.bin", out,
		 dir);
	assert_int_equal(nltest_run(cmd, NULL), 0);
	snprintf(cmd, sizeof(cmd), "%s/text.bin", dir);
	f = fopen(cmd, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	if (n > 6 << 20)
		n = 6 << 20;
	fseek(f, 0, SEEK_SET);
	text = malloc((size_t)n);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	assert_int_equal(nl_decoder_open(NL_MODE_64, NL_DEC_TEXT, &cs, NULL), 0);
	for (long pos = 0; pos < n;) {
		struct nl_insn c;
		int len = nl_decode(cs, text + pos, (size_t)(n - pos), 0x1000 + (uint64_t)pos, &c);

		check_at(cs, NL_MODE_64, text + pos, (size_t)(n - pos), 0x1000 + (uint64_t)pos, &t,
			 out);
		pos += len > 0 ? len : 1;
	}
	printf("cc1: %llu instructions, quick answered %llu (%.1f%%)\n",
	       (unsigned long long)t.tried, (unsigned long long)t.answered,
	       100.0 * (double)t.answered / (double)t.tried);
	if (t.answered < t.tried * 9 / 10)
		fail_msg("quick decoder answered only %llu of %llu real instructions",
			 (unsigned long long)t.answered, (unsigned long long)t.tried);
	nl_decoder_close(cs);
	free(text);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	nltest_run(cmd, NULL);
	free(dir);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_real_code),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
