// SPDX-License-Identifier: MIT
/*
 * The diagnostics record.  It lives in the lowest library because every
 * layer fills it and it needs nothing but libc.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "noplab/diag.h"

void nl_diag_init(struct nl_diag *d)
{
	memset(d, 0, sizeof(*d));
	d->verbosity = NL_LOG_WARN;
}

__attribute__((format(printf, 4, 0)))
static int vfail(struct nl_diag *d, int err, bool with_errno, const char *fmt, va_list ap)
{
	if (!d)
		return err;
	int n = vsnprintf(d->msg, sizeof(d->msg), fmt, ap);

	if (with_errno && n >= 0 && (size_t)n < sizeof(d->msg))
		snprintf(d->msg + n, sizeof(d->msg) - (size_t)n, ": %s", nl_strerror(err));
	return err;
}

int nl_fail(struct nl_diag *d, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(d, err, false, fmt, ap);
	va_end(ap);
	return err;
}

int nl_fail_errno(struct nl_diag *d, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(d, err, true, fmt, ap);
	va_end(ap);
	return err;
}

void nl_log(struct nl_diag *d, enum nl_log_level level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (!d || !d->sink || level > d->verbosity)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	d->sink(d->sink_ctx, level, buf);
}

const char *nl_strerror(int err)
{
	switch (-err) {
	case NL_E_FORMAT: return "malformed input";
	case NL_E_UNSUPPORTED: return "unsupported input";
	case NL_E_NOPMU: return "no usable hardware performance counters";
	case NL_E_EVENT: return "unknown event";
	case NL_E_USAGE: return "invalid argument";
	case NL_E_LIMIT: return "resource limit reached";
	case NL_E_DECODE: return "undecodable bytes";
	}
	if (err < 0 && -err < NL_E_BASE)
		return strerror(-err);
	return "unknown error";
}
