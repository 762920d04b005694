/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_DIAG_H
#define NOPLAB_DIAG_H

/*
 * Error codes and the diagnostics record every library function fills.
 *
 * Library functions return 0 or a negative code: either -errno (from the C
 * library or a system call) or one of the -NL_E_* codes below.  The detail
 * ("section 7 data past end of file") goes into a caller-owned struct nl_diag;
 * only the front end prints it, prefixed with the file it concerns.  Warnings
 * that must not stop the work go through the diag's sink callback, which is
 * the one log sink of the project; without a sink they are dropped.
 */

#include <stdarg.h>
#include <stddef.h>

enum nl_error {
	NL_E_BASE = 4096,
	NL_E_FORMAT,	/* input file is malformed or not what it claims to be */
	NL_E_UNSUPPORTED, /* valid input we do not handle (machine, class...) */
	NL_E_NOPMU,	/* no usable hardware performance counters */
	NL_E_EVENT,	/* unknown or unencodable event name */
	NL_E_USAGE,	/* bad option value given by the caller */
	NL_E_LIMIT,	/* a resource cap was reached (size, count) */
	NL_E_DECODE,	/* bytes could not be decoded */
	NL_E_MAX
};

enum nl_log_level { NL_LOG_ERROR, NL_LOG_WARN, NL_LOG_INFO, NL_LOG_DEBUG };

typedef void (*nl_log_fn)(void *ctx, enum nl_log_level level, const char *msg);

struct nl_diag {
	char msg[512];		/* the last error, empty when none */
	nl_log_fn sink;		/* optional: receives warnings and info */
	void *sink_ctx;
	enum nl_log_level verbosity; /* messages above this level are dropped */
};

void nl_diag_init(struct nl_diag *d);

/* Record an error and return err (which must be negative), for `return nl_fail(...)`. */
int nl_fail(struct nl_diag *d, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Like nl_fail, appending ": <strerror(-err)>" for -errno codes. */
int nl_fail_errno(struct nl_diag *d, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void nl_log(struct nl_diag *d, enum nl_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Text for a negative code: strerror() for -errno, a fixed phrase for -NL_E_*. */
const char *nl_strerror(int err);

#endif
