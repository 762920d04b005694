/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_CLI_H
#define NOPLAB_CLI_H

/* The front end: the only place that prints results or exits. */

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "noplab/diag.h"

/* Exit statuses, documented in README.md */
enum nl_exit {
	NL_EXIT_OK = 0,
	NL_EXIT_FINDINGS = 1,	/* findings, rule violations, verify disagreements */
	NL_EXIT_USAGE = 2,
	NL_EXIT_INPUT = 3,	/* an input file is missing, unreadable or malformed */
	NL_EXIT_ENV = 4,	/* the measurement environment is unusable */
};

struct cli_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
};

/* Map a library error to an exit status. */
int cli_exit_for(int err);

/* Print "noplab <cmd>: <what>: <diag or strerror>" to stderr; returns the exit status. */
int cli_error(const char *cmd, const char *what, int err, const struct nl_diag *d);
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The diag sink that prints warnings to stderr as "noplab <cmd>: warning: ..." */
void cli_diag_init(struct nl_diag *d, const char *cmd, bool verbose);

/*
 * The same sink for work on one file: "noplab <cmd>: <path>: warning: ...",
 * as errors name it, so that with several files each warning says which one.
 * ctx lives as long as d; set ctx->path to move on to another file (NULL: none).
 */
struct cli_sink {
	const char *cmd;
	const char *path;
};
void cli_diag_init_file(struct nl_diag *d, struct cli_sink *ctx, const char *cmd,
			const char *path, bool verbose);

/* "64M", "1G", "512K", "4096" (binary multiples, optional "iB"/"B") -> bytes; 0 or -1. */
int cli_parse_bytes(const char *s, uint64_t *out);
/*
 * --max-decompressed / --max-records: a positive size or count (K/M/G) into
 * *out; NL_EXIT_OK, or the usage error's status after saying what is wrong.
 */
int cli_limit_opt(const char *cmd, const char *opt, const char *arg, uint64_t *out);

/* A JSON document with the common header: tool, version, command. */
json_t *cli_json_doc(const char *command);
/* Write the document to path, or stdout when path is NULL or "-"; steals doc. */
int cli_json_write(json_t *doc, const char *path, const char *cmd);

char *cli_hex(const uint8_t *p, size_t len, char *buf, size_t size);
/* 1234567 -> "1,234,567" */
char *cli_thousands(uint64_t v, char *buf, size_t size);

/*
 * SIGINT/SIGTERM as a stop request: cli_stop_begin() installs a handler that
 * sets the returned flag (libraries poll it between units of work);
 * cli_stop_end() restores the old handlers and returns the signal caught, 0
 * if none; cli_stop_reraise() then ends the process by that signal, after
 * the partial results are out, so a shell sees the usual status (130).
 */
struct cli_stop {
	struct sigaction old_int, old_term;
};
const volatile sig_atomic_t *cli_stop_begin(struct cli_stop *s);
int cli_stop_end(struct cli_stop *s);
void cli_stop_reraise(int sig);

int cmd_nops(int argc, char **argv);
int cmd_cpu(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_scan(int argc, char **argv);
int cmd_layout(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* noplab layout --svg: the address map (cli/render_layout_svg.c, cairo). */
struct nl_layout;
int cli_render_layout_svg(const struct nl_layout *lay, const char *path, const char *title,
			  struct nl_diag *d);

#endif
