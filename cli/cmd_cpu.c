// SPDX-License-Identifier: MIT
/* noplab cpu: what this CPU is, what the kernel would pad it with, what can be counted. */
#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "noplab/counters.h"
#include "noplab/cpu.h"

static void cpu_usage(FILE *f)
{
	fprintf(f, "usage: noplab cpu [--json] [-o FILE]\n\n"
		   "Vendor, family/model/stepping, brand, hypervisor, NOPL, the L1 instruction\n"
		   "cache and iTLB, the NOP table pre-v5.13 kernels would pick for this CPU, and\n"
		   "whether hardware counters can be used here.\n");
}

static void tlb_str(char *buf, size_t size, unsigned entries, unsigned ways)
{
	if (!entries)
		snprintf(buf, size, "none reported");
	else if (!ways)
		snprintf(buf, size, "%u entries, fully associative", entries);
	else
		snprintf(buf, size, "%u entries, %u-way", entries, ways);
}

static const char *counters_status(const struct nl_pmu_probe *p, char *buf, size_t size)
{
	if (p->hw_usable)
		snprintf(buf, size, "available");
	else
		snprintf(buf, size, "unavailable: %s (%s)", nl_strerror(p->hw_err),
			 nl_perf_open_hint(p->hw_err));
	return buf;
}

static const char *core_pmu_status(const struct nl_pmu_probe *p, const struct nl_cpu *cpu,
				   char *buf, size_t size)
{
	if (!p->pfm_ok)
		snprintf(buf, size, "libpfm4 failed to initialise: %s", p->pfm_error);
	else if (p->core_pmu[0])
		snprintf(buf, size, "%s (%s), %u counters + %u fixed", p->core_pmu, p->core_pmu_desc,
			 p->nr_counters, p->nr_fixed);
	else
		snprintf(buf, size,
			 "unknown to libpfm4 (family 0x%x model 0x%x): only generic perf:: events encode",
			 cpu->family, cpu->model);
	return buf;
}

static void print_choice(const char *label, const struct nl_nop_choice *ch)
{
	char hex[48];

	printf("  %-26s %-9s ftrace NOP %-16s %-16s %s\n", label, nl_nop_family_name(ch->family),
	       ch->ftrace_nop->name, cli_hex(ch->ftrace_nop->bytes, ch->ftrace_nop->len, hex,
					      sizeof(hex)), ch->reason);
}

static json_t *choice_json(const struct nl_nop_choice *ch)
{
	char hex[48];

	return json_pack("{s:s, s:s, s:s, s:s}", "table", nl_nop_family_name(ch->family),
			 "ftrace_nop", ch->ftrace_nop->name, "ftrace_nop_bytes",
			 cli_hex(ch->ftrace_nop->bytes, ch->ftrace_nop->len, hex, sizeof(hex)),
			 "reason", ch->reason);
}

int cmd_cpu(int argc, char **argv)
{
	static const struct option longopts[] = { { "json", no_argument, NULL, 'j' },
						  { "output", required_argument, NULL, 'o' },
						  { "help", no_argument, NULL, 'h' },
						  { NULL, 0, NULL, 0 } };
	bool json = false;
	const char *output = NULL;
	struct nl_diag diag;
	struct nl_cpu cpu;
	struct nl_cpu_sig sig;
	struct nl_pmu_probe pmu;
	struct nl_nop_choice old64, old32, new64, new32;
	char buf[256], buf2[256];
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jo:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'o': output = optarg; json = true; break;
		case 'h': cpu_usage(stdout); return NL_EXIT_OK;
		default: cpu_usage(stderr); return NL_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return cli_usage_error("cpu", "unexpected argument '%s'", argv[optind]);

	cli_diag_init(&diag, "cpu", false);
	err = nl_cpu_identify(&cpu, &diag);
	if (err)
		return cli_error("cpu", "CPUID", err, &diag);
	nl_pmu_probe(&pmu, &diag);
	nl_cpu_signature(&cpu, &sig);
	nl_kernel_ideal_nops(&sig, NL_MODE_64, &old64);
	nl_kernel_ideal_nops(&sig, NL_MODE_32, &old32);
	nl_kernel_fixed_nops(NL_MODE_64, &new64);
	nl_kernel_fixed_nops(NL_MODE_32, &new32);

	if (json) {
		json_t *doc = cli_json_doc("cpu");

		json_object_set_new(doc, "cpu", json_pack(
			"{s:s, s:i, s:i, s:i, s:s, s:s, s:b, s:s?, s:b, s:s}",
			"vendor", cpu.vendor_id, "family", cpu.family, "model", cpu.model,
			"stepping", cpu.stepping, "signature",
			(snprintf(buf, sizeof(buf), "0x%08x", cpu.signature), buf), "brand", cpu.brand,
			"hypervisor", cpu.hypervisor, "hypervisor_id",
			cpu.hypervisor ? cpu.hypervisor_id : NULL, "nopl", cpu.nopl, "nopl_source",
			cpu.nopl_source));
		json_object_set_new(doc, "l1i", cpu.l1i.known ? json_pack(
			"{s:i, s:i, s:b, s:i, s:i, s:s}", "size_kib", cpu.l1i.size_kib, "ways",
			cpu.l1i.ways, "fully_associative", cpu.l1i.fully_assoc, "line", cpu.l1i.line,
			"sets", cpu.l1i.sets, "source", cpu.l1i.source) : json_null());
		json_object_set_new(doc, "itlb", cpu.itlb.known ? json_pack(
			"{s:i, s:i, s:i, s:i, s:s}", "entries_4k", cpu.itlb.entries_4k, "ways_4k",
			cpu.itlb.ways_4k, "entries_2m", cpu.itlb.entries_2m, "ways_2m",
			cpu.itlb.ways_2m, "source", cpu.itlb.source) : json_null());
		json_object_set_new(doc, "kernel_nops", json_pack(
			"{s:o, s:o, s:o, s:o}", "pre_v5_13_64", choice_json(&old64), "pre_v5_13_32",
			choice_json(&old32), "v5_13_64", choice_json(&new64), "v5_13_32",
			choice_json(&new32)));
		json_object_set_new(doc, "counters", json_pack(
			"{s:b, s:s?, s:s, s:i, s:i, s:b, s:s?, s:s?, s:b}",
			"libpfm_ok", pmu.pfm_ok, "libpfm_core_pmu", pmu.core_pmu[0] ? pmu.core_pmu : NULL,
			"kernel_pmu", pmu.sysfs_pmu, "perf_event_paranoid", pmu.paranoid,
			"nmi_watchdog", pmu.nmi_watchdog, "hardware", pmu.hw_usable, "hardware_error",
			pmu.hw_usable ? NULL : nl_strerror(pmu.hw_err), "hardware_hint",
			pmu.hw_usable ? NULL : nl_perf_open_hint(pmu.hw_err), "software",
			pmu.sw_usable));
		return cli_json_write(doc, output, "cpu");
	}

	printf("CPU\n");
	printf("  %-26s %s (%s)\n", "vendor", cpu.vendor_id, nl_vendor_name(cpu.vendor));
	printf("  %-26s %u (0x%x)\n", "family", cpu.family, cpu.family);
	printf("  %-26s %u (0x%02x)\n", "model", cpu.model, cpu.model);
	printf("  %-26s %u (0x%x)\n", "stepping", cpu.stepping, cpu.stepping);
	printf("  %-26s %s\n", "brand", cpu.brand[0] ? cpu.brand : "(none)");
	printf("  %-26s %s%s%s%s\n", "hypervisor", cpu.hypervisor ? "yes" : "no",
	       cpu.hypervisor ? " (" : "", cpu.hypervisor ? cpu.hypervisor_id : "",
	       cpu.hypervisor ? ")" : "");
	printf("  %-26s %s (%s)\n", "NOPL (0f 1f /0)", cpu.nopl ? "yes" : "no", cpu.nopl_source);
	if (cpu.l1i.known)
		printf("  %-26s %u KiB, %s%u-way, %u-byte lines, %u sets (%s)\n", "L1 instruction cache",
		       cpu.l1i.size_kib, cpu.l1i.fully_assoc ? "fully associative " : "",
		       cpu.l1i.ways, cpu.l1i.line, cpu.l1i.sets, cpu.l1i.source);
	else
		printf("  %-26s not reported by CPUID or sysfs\n", "L1 instruction cache");
	if (cpu.itlb.known) {
		tlb_str(buf, sizeof(buf), cpu.itlb.entries_4k, cpu.itlb.ways_4k);
		tlb_str(buf2, sizeof(buf2), cpu.itlb.entries_2m, cpu.itlb.ways_2m);
		printf("  %-26s 4K pages: %s; 2M pages: %s (%s)\n", "L1 iTLB", buf, buf2,
		       cpu.itlb.source);
	} else {
		printf("  %-26s not reported by CPUID\n", "L1 iTLB");
	}
	printf("\nKernel NOP choice for this CPU\n");
	print_choice("pre-v5.13, 64-bit kernel", &old64);
	print_choice("pre-v5.13, 32-bit kernel", &old32);
	print_choice("v5.13+, 64-bit kernel", &new64);
	print_choice("v5.13+, 32-bit kernel", &new32);
	printf("\nCounters\n");
	printf("  %-26s %s\n", "libpfm4 core PMU", core_pmu_status(&pmu, &cpu, buf, sizeof(buf)));
	printf("  %-26s %s\n", "kernel PMU (sysfs)", pmu.sysfs_pmu[0] ? pmu.sysfs_pmu : "none");
	if (pmu.paranoid != -100)
		printf("  %-26s %d\n", "perf_event_paranoid", pmu.paranoid);
	if (pmu.nmi_watchdog >= 0)
		printf("  %-26s %s\n", "NMI watchdog", pmu.nmi_watchdog ? "on (holds one counter)" : "off");
	printf("  %-26s %s\n", "hardware counters", counters_status(&pmu, buf, sizeof(buf)));
	printf("  %-26s %s\n", "software counters",
	       pmu.sw_usable ? "available (task-clock, page-faults, context-switches)"
			     : nl_perf_open_hint(pmu.sw_err));
	return NL_EXIT_OK;
}
