/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_TEST_LAYOUT_MODELS_H
#define NOPLAB_TEST_LAYOUT_MODELS_H

/*
 * Hand-built layout inputs shared by the region and rule tests:
 *   kallsyms_618()  symbols only, the live 6.18 x86-64 layout (kernel-facts.md 6.2)
 *   bytes_model()   a linked text with bytes, sized functions, padding, ftrace sites
 *   rel_model()     a .o: synthetic addresses, section alignment, per-function sections
 */

#include <string.h>

#include "nltest.h"
#include "noplab/layout.h"

#define K(off) (0xffffffff81000000ull + (off))

struct model_sym {
	uint64_t addr;
	const char *name;
	uint64_t size;
	enum nl_lsym_kind kind;
	int sec;
};

static inline void model_add_syms(struct nl_layout_input *in, const struct model_sym *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct nl_layout_sym s = { .name = v[i].name, .addr = v[i].addr, .size = v[i].size,
					   .sec = v[i].sec, .kind = v[i].kind, .global = true };

		assert_true(nl_layout_add_sym(in, &s) >= 0);
	}
}

static const struct model_sym kallsyms_syms[] = {
	{ K(0x0), "srso_alias_untrain_ret", 0, NL_LSYM_CODE, -1 },
	{ K(0x0), "_stext", 0, NL_LSYM_CODE, -1 },
	{ K(0x0), "_text", 0, NL_LSYM_CODE, -1 },
	{ K(0x10), "__entry_text_start", 0, NL_LSYM_CODE, -1 },
	{ K(0x80), "entry_SYSCALL_64", 0, NL_LSYM_CODE, -1 },
	{ K(0x300), "irq_entries_start", 0, NL_LSYM_CODE, -1 },
	{ K(0x300), "__irqentry_text_start", 0, NL_LSYM_CODE, -1 },
	{ K(0xf70), "common_interrupt_return", 0, NL_LSYM_CODE, -1 },
	{ K(0xf70), "__irqentry_text_end", 0, NL_LSYM_CODE, -1 },
	/* an __end_X with no __start_X: a label, not a delimiter */
	{ K(0x18e6), "__end_entry_SYSENTER_compat", 0, NL_LSYM_CODE, -1 },
	{ K(0x1a70), "__pfx_paravirt_ret0", 0, NL_LSYM_CODE, -1 },
	{ K(0x1a80), "paravirt_ret0", 0, NL_LSYM_CODE, -1 },
	{ K(0x1a87), "__entry_text_end", 0, NL_LSYM_CODE, -1 },
	{ K(0x104104), "srso_alias_safe_ret", 0, NL_LSYM_CODE, -1 },
	{ K(0x200000), "__pfx_run_init_process", 0, NL_LSYM_CODE, -1 },
	{ K(0x200000), "__split_text_end", 0, NL_LSYM_CODE, -1 },
	{ K(0x200000), "__split_text_start", 0, NL_LSYM_CODE, -1 },
	{ K(0x200000), "__unlikely_text_start", 0, NL_LSYM_CODE, -1 },
	{ K(0x200010), "run_init_process", 0, NL_LSYM_CODE, -1 },
	{ K(0x248000), "__unlikely_text_end", 0, NL_LSYM_CODE, -1 },
	{ K(0x248000), "__hot_text_start", 0, NL_LSYM_CODE, -1 },
	{ K(0x248010), "hot_func", 0, NL_LSYM_CODE, -1 },
	{ K(0x250000), "__hot_text_end", 0, NL_LSYM_CODE, -1 },
	/* a sized function whose name looks like a delimiter stays a function */
	{ K(0x250010), "__kvm_start", 0x40, NL_LSYM_CODE, -1 },
	{ K(0x125a5f0), "__noinstr_text_start", 0, NL_LSYM_CODE, -1 },
	{ K(0x125a600), "noinstr_func", 0, NL_LSYM_CODE, -1 },
	{ K(0x1261960), "__cpuidle_text_start", 0, NL_LSYM_CODE, -1 },
	{ K(0x1261960), "default_idle", 0, NL_LSYM_CODE, -1 },
	{ K(0x1262705), "__cpuidle_text_end", 0, NL_LSYM_CODE, -1 },
	{ K(0x1262705), "__noinstr_text_end", 0, NL_LSYM_CODE, -1 },
	{ K(0x1265800), "__sched_text_start", 0, NL_LSYM_CODE, -1 },
	{ K(0x1265800), "schedule", 0, NL_LSYM_CODE, -1 },
	{ K(0x126e522), "__sched_text_end", 0, NL_LSYM_CODE, -1 },
	{ K(0x126e530), "__lock_text_start", 0, NL_LSYM_CODE, -1 },
	{ K(0x126e530), "_raw_spin_lock", 0, NL_LSYM_CODE, -1 },
	{ K(0x126ffb1), "__lock_text_end", 0, NL_LSYM_CODE, -1 },
	{ K(0x1276f48), "_etext", 0, NL_LSYM_CODE, -1 },
	/* data delimiters: a pair, but not text */
	{ K(0x1400000), "__start_rodata", 0, NL_LSYM_OTHER, -1 },
	{ K(0x1500000), "__end_rodata", 0, NL_LSYM_OTHER, -1 },
};

/* The symbols of a 6.18 kernel as /proc/kallsyms lists them: no sizes, no bytes. */
static inline void kallsyms_618(struct nl_layout_input *in)
{
	struct nl_layout_sec text = { .name = ".text", .addr = K(0), .size = 0x1276f48,
				      .exec = true };

	nl_layout_input_init(in, "kallsyms-6.18", NL_MODE_64);
	in->from_symfile = true;
	in->has_text_base = true;
	in->text_base = K(0);
	assert_int_equal(nl_layout_add_sec(in, &text), 0);
	model_add_syms(in, kallsyms_syms, sizeof(kallsyms_syms) / sizeof(kallsyms_syms[0]));
	assert_int_equal(nl_layout_prepare(in, NULL), 0);
}

#define B(off) (0x400000ull + (off))

static inline void put_hex(uint8_t *text, uint64_t off, const char *hex)
{
	nltest_hex(hex, text + off, 0x300 - off);
}

/*
 * A linked .text at 0x400000 with bytes:
 *   a            [0x000, 0x018)  then int3 to 0x040
 *   __start_hotsec = 0x040 .. __stop_hotsec = 0x100 (region "hotsec")
 *     f1         [0x040, 0x053)  endbr64, nop5 (ftrace site at 0x044), cmp+jne fused, ret
 *                [0x053, 0x060)  13 bytes of NOPs
 *     __pfx_f2   [0x060, 0x070)  16 x 90
 *     f2         [0x070, 0x0aa)  call __fentry__ (site 0x070); je at 0x07e ends on 0x080
 *                [0x0aa, 0x0bc)  18 zero bytes
 *     f3         [0x0bc, 0x0dc)  call __fentry__ at 0x0bc..0x0c1: crosses 32 and 64
 *                [0x0dc, 0x100)  int3
 *   int3 to 0x180, g [0x180, 0x1c0), int3, __fentry__ [0x200, 0x201)
 */
static inline void bytes_model(struct nl_layout_input *in, uint8_t *text)
{
	static const struct model_sym syms[] = {
		{ B(0x000), "a", 0x18, NL_LSYM_CODE, 0 },
		{ B(0x040), "__start_hotsec", 0, NL_LSYM_OTHER, 0 },
		{ B(0x040), "f1", 0x13, NL_LSYM_CODE, 0 },
		{ B(0x060), "__pfx_f2", 0x10, NL_LSYM_CODE, 0 },
		{ B(0x070), "f2", 0x3a, NL_LSYM_CODE, 0 },
		{ B(0x0bc), "f3", 0x20, NL_LSYM_CODE, 0 },
		{ B(0x100), "__stop_hotsec", 0, NL_LSYM_OTHER, 0 },
		{ B(0x180), "g", 0x40, NL_LSYM_CODE, 0 },
		{ B(0x200), "__fentry__", 1, NL_LSYM_CODE, 0 },
	};
	struct nl_layout_sec sec = { .name = ".text", .addr = B(0), .size = 0x201, .align = 64,
				     .data = text, .exec = true };

	memset(text, 0xcc, 0x300);
	for (int i = 0; i < 11; i++)
		put_hex(text, 0x000 + 2 * i, "31 c0");
	put_hex(text, 0x016, "c3");
	put_hex(text, 0x040, "f3 0f 1e fa 0f 1f 44 00 00 48 39 c8 75 02 31 c0 31 c0 c3");
	put_hex(text, 0x053, "66 0f 1f 44 00 00 0f 1f 80 00 00 00 00");
	memset(text + 0x060, 0x90, 16);
	put_hex(text, 0x070, "e8 8b 01 00 00 31 c0 31 c0 31 c0 31 c0 90 74 00");
	for (int i = 0; i < 20; i++)
		put_hex(text, 0x080 + 2 * i, "31 c0");
	put_hex(text, 0x0a8, "c3 90");
	memset(text + 0x0aa, 0x00, 0x12);
	put_hex(text, 0x0bc, "e8 3f 01 00 00");
	for (int i = 0; i < 13; i++)
		put_hex(text, 0x0c1 + 2 * i, "31 c0");
	put_hex(text, 0x0db, "c3");
	for (int i = 0; i < 31; i++)
		put_hex(text, 0x180 + 2 * i, "31 c0");
	put_hex(text, 0x1be, "c3");
	put_hex(text, 0x200, "c3");

	nl_layout_input_init(in, "bytes-model", NL_MODE_64);
	assert_int_equal(nl_layout_add_sec(in, &sec), 0);
	model_add_syms(in, syms, sizeof(syms) / sizeof(syms[0]));
	assert_int_equal(nl_layout_prepare(in, NULL), 0);
}

/*
 * A .o: .text [0x0, 0x40) with x; .entry.text at synthetic 0x40 but only
 * 16-aligned, holding e [0x40, 0x60); .text.foo holding foo (a per-function
 * section, not a region); .text.unlikely holding bar (a region).
 */
static inline void rel_model(struct nl_layout_input *in)
{
	static const struct model_sym syms[] = {
		{ 0x00, "x", 0x40, NL_LSYM_CODE, 0 },
		{ 0x40, "e", 0x20, NL_LSYM_CODE, 1 },
		{ 0x60, "foo", 0x10, NL_LSYM_CODE, 2 },
		{ 0x70, "bar", 0x10, NL_LSYM_CODE, 3 },
	};
	static const struct nl_layout_sec secs[] = {
		{ .name = ".text", .addr = 0x00, .size = 0x40, .align = 16, .exec = true },
		{ .name = ".entry.text", .addr = 0x40, .size = 0x20, .align = 16, .exec = true },
		{ .name = ".text.foo", .addr = 0x60, .size = 0x10, .align = 16, .exec = true },
		{ .name = ".text.unlikely", .addr = 0x70, .size = 0x10, .align = 1, .exec = true },
		{ .name = ".data", .addr = 0x80, .size = 0x10, .align = 8, .exec = false },
	};

	nl_layout_input_init(in, "rel-model.o", NL_MODE_64);
	in->is_rel = true;
	for (size_t i = 0; i < sizeof(secs) / sizeof(secs[0]); i++)
		assert_int_equal(nl_layout_add_sec(in, &secs[i]), (int)i);
	model_add_syms(in, syms, sizeof(syms) / sizeof(syms[0]));
	assert_int_equal(nl_layout_prepare(in, NULL), 0);
}

#endif
