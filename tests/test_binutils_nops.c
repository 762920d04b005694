// SPDX-License-Identifier: MIT
/*
 * binutils as an independent oracle for the catalogue: assemble every entry
 * with as, read the instruction boundaries objdump finds, and compare them
 * with the catalogue and the recognizer.  Then compare the gas-style padding
 * nl_nop_compose() writes with what as itself writes for .p2align.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nltest.h"
#include "noplab/nops.h"

#define MAX_BOUNDS 32

struct bounds {
	unsigned nr;
	unsigned off[MAX_BOUNDS];	/* instruction starts relative to the label */
	char first_mnemonic[64];
};

/* Assemble the catalogue, then parse objdump -d into boundaries per entry label. */
static struct bounds *objdump_catalogue(const char *dir, int mode, size_t nr,
					const struct nl_nop *cat)
{
	char src[512], obj[512], cmd[2048];
	FILE *f;
	struct bounds *b = calloc(nr, sizeof(*b));
	char *out = NULL, *save = NULL;
	long cur = -1;
	unsigned long base = 0;

	snprintf(src, sizeof(src), "%s/cat%d.s", dir, mode);
	snprintf(obj, sizeof(obj), "%s/cat%d.o", dir, mode);
	f = fopen(src, "w");
	assert_non_null(f);
	fprintf(f, ".text\n");
	for (size_t i = 0; i < nr; i++) {
		fprintf(f, "e%zu:\n.byte ", i);
		for (unsigned k = 0; k < cat[i].len; k++)
			fprintf(f, "%s0x%02x", k ? "," : "", cat[i].bytes[k]);
		fprintf(f, "\n");
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd), "as --%d %s -o %s && objdump -d --insn-width=16 %s", mode, src, obj,
		 obj);
	assert_int_equal(nltest_run(cmd, &out), 0);
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long addr;
		long idx;
		char tail[256];

		if (sscanf(line, "%lx <e%ld>:", &addr, &idx) == 2) {
			cur = idx;
			base = addr;
			continue;
		}
		if (cur < 0 || (size_t)cur >= nr || sscanf(line, " %lx:\t%*[0-9a-f ]\t%255[^\n]", &addr,
							    tail) != 2)
			continue;
		struct bounds *e = &b[cur];

		if (e->nr < MAX_BOUNDS)
			e->off[e->nr] = (unsigned)(addr - base);
		if (!e->nr)
			snprintf(e->first_mnemonic, sizeof(e->first_mnemonic), "%s", tail);
		e->nr++;
	}
	free(out);
	return b;
}

/* Boundaries the recognizer finds (jumps and fill have fixed shapes). */
static unsigned our_bounds(const struct nl_nop *e, enum nl_mode mode, unsigned *off)
{
	unsigned nr = 0;

	for (unsigned pos = 0; pos < e->len && nr < MAX_BOUNDS;) {
		struct nl_nop_id id;
		unsigned len = 1;

		off[nr++] = pos;
		if ((e->flags & NL_NOPF_JUMP) && pos == 0)
			len = 2;
		else if (!(e->flags & (NL_NOPF_JUMP | NL_NOPF_FILL))) {
			nl_nop_recognize(e->bytes + pos, e->len - pos, mode, &id);
			len = id.len ? id.len : 1;
		}
		pos += len;
	}
	return nr;
}

static bool objdump_says_nop(const char *mnem)
{
	/* objdump spells NOPs as nop/nopl/nopw, possibly after data16/cs, or xchg %ax,%ax */
	return strstr(mnem, "nop") || strstr(mnem, "xchg   %ax,%ax") || strstr(mnem, "xchg %ax,%ax");
}

static void check_mode(int mode)
{
	size_t nr;
	const struct nl_nop *cat = nl_nop_catalogue(&nr);
	char *dir = nltest_tmpdir("binutils");
	struct bounds *b = objdump_catalogue(dir, mode, nr, cat);
	char cmd[600];

	for (size_t i = 0; i < nr; i++) {
		unsigned off[MAX_BOUNDS];
		unsigned n = our_bounds(&cat[i], (enum nl_mode)mode, off);
		bool nop = mode == 64 ? cat[i].nop64 : cat[i].nop32;

		if (n != b[i].nr || memcmp(off, b[i].off, n * sizeof(off[0])))
			fail_msg("%s, %d-bit: objdump finds %u instructions, we find %u", cat[i].name,
				 mode, b[i].nr, n);
		if (!(cat[i].flags & (NL_NOPF_JUMP | NL_NOPF_FILL)) && cat[i].nr_insns != n)
			fail_msg("%s: catalogue says %u instructions, objdump %u", cat[i].name,
				 cat[i].nr_insns, n);
		/* a NOP in this mode must not look like lea/mov; a 32-bit-only form must */
		if (!(cat[i].flags & (NL_NOPF_JUMP | NL_NOPF_FILL)) && cat[i].nr_insns == 1 &&
		    mode == 64 && nop != objdump_says_nop(b[i].first_mnemonic))
			fail_msg("%s, 64-bit: objdump says '%s'", cat[i].name, b[i].first_mnemonic);
	}
	free(b);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

static void test_boundaries_64(void **state)
{
	(void)state;
	check_mode(64);
}

static void test_boundaries_32(void **state)
{
	(void)state;
	check_mode(32);
}

/* What as writes for .p2align gaps of 1..200 bytes, against nl_nop_compose(gas). */
static void test_gas_padding(void **state)
{
	char *dir = nltest_tmpdir("gaspad");
	char src[512], obj[512], cmd[2048];
	char *out = NULL, *save = NULL;
	FILE *f;
	enum { MAXGAP = 200 };
	uint8_t *got = calloc(MAXGAP + 1, 256);
	unsigned cur = 0, fill = 0;

	(void)state;
	snprintf(src, sizeof(src), "%s/pad.s", dir);
	snprintf(obj, sizeof(obj), "%s/pad.o", dir);
	f = fopen(src, "w");
	assert_non_null(f);
	for (unsigned gap = 1; gap <= MAXGAP; gap++)
		fprintf(f, ".section .g%u,\"ax\"\n.fill %u,1,0xc3\n.p2align 8\n", gap, 256 - gap);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "as --64 %s -o %s && objdump -s %s", src, obj, obj);
	assert_int_equal(nltest_run(cmd, &out), 0);
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned g, addr;
		unsigned w[4];

		if (sscanf(line, "Contents of section .g%u:", &g) == 1) {
			cur = g;
			fill = 0;
			continue;
		}
		if (!cur || sscanf(line, " %x", &addr) != 1)
			continue;
		/* " 0000 c3c3c3c3 c3c3c3c3 ..." */
		char *p = line;

		while (isspace((unsigned char)*p))
			p++;
		p += strcspn(p, " ");
		int n = sscanf(p, " %8x %8x %8x %8x", &w[0], &w[1], &w[2], &w[3]);

		for (int k = 0; k < n; k++) {
			/* the column width tells how many bytes the last word holds */
			char word[16];

			sscanf(p, " %15s", word);
			size_t bytes = strlen(word) / 2;

			for (size_t j = 0; j < bytes && fill < 256; j++)
				got[cur * 256 + fill++] = (uint8_t)(w[k] >> (8 * (bytes - 1 - j)));
			p += strspn(p, " ");
			p += strcspn(p, " ");
		}
	}
	for (unsigned gap = 1; gap <= MAXGAP; gap++) {
		uint8_t want[256];

		assert_true(nl_nop_compose(NL_FAM_GAS, NL_MODE_64, gap, want, sizeof(want)) > 0);
		if (memcmp(got + gap * 256 + (256 - gap), want, gap))
			fail_msg("gas pads a %u-byte gap differently from nl_nop_compose(gas)", gap);
	}
	free(out);
	free(got);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boundaries_64),
		cmocka_unit_test(test_boundaries_32),
		cmocka_unit_test(test_gas_padding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
