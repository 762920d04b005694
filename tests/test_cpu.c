// SPDX-License-Identifier: MIT
/* CPU identification from replayed CPUID dumps and a fake sysfs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nltest.h"
#include "noplab/cpu.h"

struct cpuid_rec {
	uint32_t leaf, sub;
	uint32_t r[4];
};

struct dump {
	const struct cpuid_rec *recs;
	size_t nr;
};

static void replay(void *ctx, uint32_t leaf, uint32_t sub, uint32_t regs[4])
{
	const struct dump *d = ctx;

	memset(regs, 0, 4 * sizeof(regs[0]));
	for (size_t i = 0; i < d->nr; i++)
		if (d->recs[i].leaf == leaf && d->recs[i].sub == sub) {
			memcpy(regs, d->recs[i].r, 4 * sizeof(regs[0]));
			return;
		}
}

/* Recorded on the project's VM: AMD family 1Ah (Zen 5) under bhyve, leaf 0x8000001d hidden. */
static const struct cpuid_rec zen5_vm[] = {
	{ 0x00000000, 0, { 0x0000000d, 0x68747541, 0x444d4163, 0x69746e65 } },
	{ 0x00000001, 0, { 0x00b00f21, 0x5dfe0800, 0xfed83203, 0x178bfbff } },
	{ 0x80000000, 0, { 0x80000021, 0x68747541, 0x444d4163, 0x69746e65 } },
	{ 0x80000002, 0, { 0x6469784f, 0x69562065, 0x61757472, 0x7554206c } },
	{ 0x80000003, 0, { 0x2d6e6972, 0x656b696c, 0x6f725020, 0x73736563 } },
	{ 0x80000004, 0, { 0x2020726f, 0x20202020, 0x20202020, 0x00202020 } },
	{ 0x80000005, 0, { 0xff60ff40, 0xff60ff40, 0x300c0140, 0x20080140 } },
	{ 0x40000000, 0, { 0x40000000, 0x76796862, 0x68622065, 0x20657679 } },
};

/*
 * Sandy Bridge-EP (Xeon E5-2689 class, family 6 model 0x2d), from the Intel SDM
 * leaf 4 encoding of its 32 KiB 8-way L1i; no leaf 0x18 (max leaf 0xd).
 */
static const struct cpuid_rec snb_ep[] = {
	{ 0x00000000, 0, { 0x0000000d, 0x756e6547, 0x6c65746e, 0x49656e69 } },
	{ 0x00000001, 0, { 0x000206d7, 0x00200800, 0x1fbee3ff, 0xbfebfbff } },
	{ 0x00000004, 0, { 0x1c004121, 0x01c0003f, 0x0000003f, 0x00000000 } },
	{ 0x00000004, 1, { 0x1c004122, 0x01c0003f, 0x0000003f, 0x00000000 } },
	{ 0x00000004, 2, { 0x1c004143, 0x01c0003f, 0x000001ff, 0x00000000 } },
	{ 0x80000000, 0, { 0x80000008, 0, 0, 0 } },
};

static void test_zen5_vm(void **state)
{
	struct dump d = { zen5_vm, sizeof(zen5_vm) / sizeof(zen5_vm[0]) };
	struct nl_cpu cpu;
	struct nl_cpu_sig sig;
	struct nl_nop_choice ch;

	(void)state;
	assert_int_equal(nl_cpu_identify_with(replay, &d, NULL, NULL, &cpu, NULL), 0);
	assert_string_equal(cpu.vendor_id, "AuthenticAMD");
	assert_int_equal(cpu.vendor, NL_VENDOR_AMD);
	assert_int_equal(cpu.family, 0x1a);
	assert_int_equal(cpu.model, 0x02);
	assert_int_equal(cpu.stepping, 1);
	assert_string_equal(cpu.brand, "Oxide Virtual Turin-like Processor");
	assert_true(cpu.hypervisor);
	assert_string_equal(cpu.hypervisor_id, "bhyve bhyve");
	assert_true(cpu.nopl);
	assert_true(cpu.l1i.known);
	assert_int_equal(cpu.l1i.size_kib, 32);
	assert_int_equal(cpu.l1i.ways, 8);
	assert_int_equal(cpu.l1i.line, 64);
	assert_int_equal(cpu.l1i.sets, 64);
	assert_string_equal(cpu.l1i.source, "cpuid 0x80000005");
	assert_true(cpu.itlb.known);
	assert_int_equal(cpu.itlb.entries_4k, 64);
	assert_int_equal(cpu.itlb.ways_4k, 0);	/* fully associative */
	assert_int_equal(cpu.itlb.entries_2m, 64);
	nl_cpu_signature(&cpu, &sig);
	nl_kernel_ideal_nops(&sig, NL_MODE_64, &ch);
	assert_int_equal(ch.family, NL_FAM_P6);
}

static void test_sandy_bridge_ep(void **state)
{
	struct dump d = { snb_ep, sizeof(snb_ep) / sizeof(snb_ep[0]) };
	struct nl_cpu cpu;
	struct nl_cpu_sig sig;
	struct nl_nop_choice ch;

	(void)state;
	assert_int_equal(nl_cpu_identify_with(replay, &d, NULL, NULL, &cpu, NULL), 0);
	assert_int_equal(cpu.vendor, NL_VENDOR_INTEL);
	assert_int_equal(cpu.family, 6);
	assert_int_equal(cpu.model, 0x2d);
	assert_int_equal(cpu.stepping, 7);
	assert_false(cpu.hypervisor);
	assert_true(cpu.nopl);
	assert_true(cpu.l1i.known);
	assert_int_equal(cpu.l1i.size_kib, 32);
	assert_int_equal(cpu.l1i.ways, 8);
	assert_int_equal(cpu.l1i.sets, 64);
	assert_string_equal(cpu.l1i.source, "cpuid 4");
	assert_false(cpu.itlb.known);
	nl_cpu_signature(&cpu, &sig);
	nl_kernel_ideal_nops(&sig, NL_MODE_64, &ch);
	assert_int_equal(ch.family, NL_FAM_K8);
	assert_string_equal(ch.ftrace_nop->name, "k8:atomic5");
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* sysfs, when the kernel has it, wins over CPUID leaves a hypervisor may have zeroed. */
static void test_sysfs_overrides(void **state)
{
	struct dump d = { zen5_vm, sizeof(zen5_vm) / sizeof(zen5_vm[0]) };
	char *root = nltest_tmpdir("sysfs");
	char dir[512], cmd[600];
	struct nl_cpu cpu;

	(void)state;
	assert_non_null(root);
	snprintf(dir, sizeof(dir), "%s/devices/system/cpu/cpu0/cache/index1", root);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s %s/../index0", dir, dir);
	assert_int_equal(system(cmd), 0);
	write_file(dir, "level", "1\n");
	write_file(dir, "type", "Instruction\n");
	write_file(dir, "size", "64K\n");
	write_file(dir, "ways_of_associativity", "4\n");
	write_file(dir, "coherency_line_size", "64\n");
	write_file(dir, "number_of_sets", "256\n");
	snprintf(dir, sizeof(dir), "%s/devices/system/cpu/cpu0/cache/index0", root);
	write_file(dir, "level", "1\n");
	write_file(dir, "type", "Data\n");
	assert_int_equal(nl_cpu_identify_with(replay, &d, root, NULL, &cpu, NULL), 0);
	assert_string_equal(cpu.l1i.source, "sysfs");
	assert_int_equal(cpu.l1i.size_kib, 64);
	assert_int_equal(cpu.l1i.ways, 4);
	assert_int_equal(cpu.l1i.sets, 256);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
	free(root);
}

/* The real machine: whatever it is, identification succeeds and is self-consistent. */
static void test_native(void **state)
{
	struct nl_cpu cpu;
	struct nl_diag d;

	(void)state;
	nl_diag_init(&d);
	assert_int_equal(nl_cpu_identify(&cpu, &d), 0);
	assert_int_equal(strlen(cpu.vendor_id), 12);
	assert_true(cpu.family >= 6);
	if (cpu.l1i.known && cpu.l1i.ways && cpu.l1i.sets)
		assert_int_equal(cpu.l1i.size_kib * 1024, cpu.l1i.ways * cpu.l1i.line * cpu.l1i.sets);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zen5_vm),
		cmocka_unit_test(test_sandy_bridge_ep),
		cmocka_unit_test(test_sysfs_overrides),
		cmocka_unit_test(test_native),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
