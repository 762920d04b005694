/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_NLTEST_H
#define NOPLAB_NLTEST_H

/*
 * Shared test helpers.  Table rows carry __LINE__ (libpfm4 validate_x86.c
 * style) so a failure names the row that broke, not the loop.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define SRC_LINE .line = __LINE__

#define row_fail(row, fmt, ...) fail_msg("row at line %d: " fmt, (row)->line, ##__VA_ARGS__)

/* Parse "0f 1f 44 00 00" into bytes; returns the count. */
size_t nltest_hex(const char *s, uint8_t *out, size_t cap);

/*
 * Run a shell command, capture stdout into a malloc'd NUL-terminated buffer.
 * Returns the exit status (or -1); *out may be NULL when nothing was read.
 */
int nltest_run(const char *cmd, char **out);

/* A fresh directory under $TMPDIR for one test's files; caller frees. */
char *nltest_tmpdir(const char *tag);
/* Remove a directory from nltest_tmpdir() with what is in it, and free the path.  0 or -1. */
int nltest_rmtree(char *dir);

/* Path of the built noplab binary (from the NOPLAB_BIN environment variable). */
const char *nltest_noplab(void);

#endif
