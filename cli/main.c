// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "noplab/nops.h"
#include "noplab/version.h"

static const struct cli_cmd commands[] = {
	{ "nops", "list and verify the x86 NOP catalogue", cmd_nops },
	{ "cpu", "identify the CPU, its L1i/iTLB, the kernel's NOP choice, counters", cmd_cpu },
	{ "bench", "measure NOP encodings and code layout in generated code, with verdicts", cmd_bench },
	{ "stat", "count a command like perf stat: dry runs, no multiplexing, saved runs", cmd_stat },
	{ "diff", "compare two stat/bench/perf stat results: Welch's test and a verdict", cmd_diff },
	{ "scan", "ftrace sites, entry decorations, padding and alignment in ELF files", cmd_scan },
	{ "layout", "where .entry.text and friends sit: lines, pages, neighbours, rules, JCC", cmd_layout },
	{ "plot", "charts of a bench result: SVG, PNG or PDF", cmd_plot },
	{ "report", "bench and stat results as one self-contained HTML page, with diffs", cmd_report },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: noplab <command> [options]\n\n"
		   "How x86 code padding and layout change what a CPU does with it.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'noplab <command> --help' describes each command.\n"
		   "Exit status: 0 ok, 1 findings, 2 usage error, 3 bad input file,\n"
		   "4 measurement environment unusable.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return NL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return NL_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("noplab %s\n", NOPLAB_VERSION);
		return NL_EXIT_OK;
	}
	/* Build the catalogue before any command starts threads. */
	nl_nop_catalogue(NULL);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "noplab: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return NL_EXIT_USAGE;
}
