// SPDX-License-Identifier: MIT
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "noplab/version.h"

int cli_exit_for(int err)
{
	switch (-err) {
	case 0:
		return NL_EXIT_OK;
	case NL_E_USAGE:
	case NL_E_EVENT:
		return NL_EXIT_USAGE;
	case NL_E_NOPMU:
		return NL_EXIT_ENV;
	case NL_E_FORMAT:
	case NL_E_UNSUPPORTED:
	case NL_E_LIMIT:
	case NL_E_DECODE:
	case ENOENT:
	case EACCES:
	case EISDIR:
	case ENOTDIR:
	case EIO:
		return NL_EXIT_INPUT;
	}
	return NL_EXIT_ENV;
}

int cli_error(const char *cmd, const char *what, int err, const struct nl_diag *d)
{
	const char *detail = d && d->msg[0] ? d->msg : nl_strerror(err);

	if (what && what[0])
		fprintf(stderr, "noplab %s: %s: %s\n", cmd, what, detail);
	else
		fprintf(stderr, "noplab %s: %s\n", cmd, detail);
	return cli_exit_for(err);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "noplab %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'noplab %s --help'.\n", cmd);
	return NL_EXIT_USAGE;
}

static void stderr_sink(void *ctx, enum nl_log_level level, const char *msg)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };

	fprintf(stderr, "noplab %s: %s: %s\n", (const char *)ctx, names[level], msg);
}

void cli_diag_init(struct nl_diag *d, const char *cmd, bool verbose)
{
	nl_diag_init(d);
	d->sink = stderr_sink;
	d->sink_ctx = (void *)cmd;
	d->verbosity = verbose ? NL_LOG_DEBUG : NL_LOG_WARN;
}

static void file_sink(void *ctx, enum nl_log_level level, const char *msg)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };
	const struct cli_sink *c = ctx;

	if (c->path)
		fprintf(stderr, "noplab %s: %s: %s: %s\n", c->cmd, c->path, names[level], msg);
	else
		fprintf(stderr, "noplab %s: %s: %s\n", c->cmd, names[level], msg);
}

void cli_diag_init_file(struct nl_diag *d, struct cli_sink *ctx, const char *cmd,
			const char *path, bool verbose)
{
	cli_diag_init(d, cmd, verbose);
	ctx->cmd = cmd;
	ctx->path = path;
	d->sink = file_sink;
	d->sink_ctx = ctx;
}

int cli_parse_bytes(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (shift && end[0] == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int cli_limit_opt(const char *cmd, const char *opt, const char *arg, uint64_t *out)
{
	if (!cli_parse_bytes(arg, out) && *out)
		return NL_EXIT_OK;
	return cli_usage_error(cmd, "bad --%s '%s' (%s)", opt, arg,
			       strcmp(opt, "max-records") ? "bytes, or K/M/G" : "a count, or K/M");
}

json_t *cli_json_doc(const char *command)
{
	return json_pack("{s:s, s:s, s:s}", "tool", "noplab", "version", NOPLAB_VERSION,
			 "command", command);
}

int cli_json_write(json_t *doc, const char *path, const char *cmd)
{
	int ret = 0;
	const size_t flags = JSON_INDENT(2) | JSON_PRESERVE_ORDER;

	if (!doc)
		return cli_error(cmd, "JSON", -ENOMEM, NULL);
	if (!path || !strcmp(path, "-")) {
		if (json_dumpf(doc, stdout, flags) || fputc('\n', stdout) == EOF)
			ret = cli_error(cmd, "stdout", -EIO, NULL);
	} else if (json_dump_file(doc, path, flags)) {
		ret = cli_error(cmd, path, -errno ? -errno : -EIO, NULL);
	}
	json_decref(doc);
	return ret;
}

char *cli_hex(const uint8_t *p, size_t len, char *buf, size_t size)
{
	size_t used = 0;

	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < len && used + 4 <= size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%02x", i ? " " : "", p[i]);
	return buf;
}

char *cli_thousands(uint64_t v, char *buf, size_t size)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
	size_t o = 0;

	for (int i = 0; i < n && o + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	if (size)
		buf[o < size ? o : size - 1] = '\0';
	return buf;
}

/*
 * A signal handler can talk to the program only through a volatile
 * sig_atomic_t: this is the one accepted mutable global of the front end.
 */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

const volatile sig_atomic_t *cli_stop_begin(struct cli_stop *s)
{
	struct sigaction sa;

	/* no SA_RESTART: waits in the libraries must see the signal */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	stop_signal = 0;
	sigaction(SIGINT, &sa, &s->old_int);
	sigaction(SIGTERM, &sa, &s->old_term);
	return &stop_signal;
}

int cli_stop_end(struct cli_stop *s)
{
	sigaction(SIGINT, &s->old_int, NULL);
	sigaction(SIGTERM, &s->old_term, NULL);
	return (int)stop_signal;
}

void cli_stop_reraise(int sig)
{
	if (!sig)
		return;
	fflush(NULL);
	signal(sig, SIG_DFL);
	raise(sig);
}
