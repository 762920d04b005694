// SPDX-License-Identifier: MIT
/*
 * noplab stat under faults, end to end through the built binary:
 *  - SIGINT / SIGTERM during the runs: the running command is interrupted
 *    and reaped (killed if it ignores SIGINT), the completed runs are still
 *    reported and saved marked partial, and noplab ends by the same signal;
 *  - perf_event_open failures each give one message that says what to do:
 *    EMFILE (a low RLIMIT_NOFILE), EACCES (as `nobody` when we are root and
 *    perf_event_paranoid forbids kernel counting), ENOENT (no PMU: only where
 *    the machine has none);
 *  - an unknown event name lists the closest names libpfm4 knows (exit 2).
 * Tests that need a condition this machine lacks say so and skip.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "nltest.h"
#include "noplab/counters.h"

struct ctx {
	char *dir;
	const char *noplab;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	if (!c || !(c->dir = nltest_tmpdir("faults")) || !(c->noplab = nltest_noplab()))
		return -1;
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	if (!c)
		return 0;
	nltest_rmtree(c->dir);
	free(c);
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *path_in(const struct ctx *c, const char *name)
{
	char *p = malloc(strlen(c->dir) + strlen(name) + 2);

	assert_non_null(p);
	sprintf(p, "%s/%s", c->dir, name);
	return p;
}

/* Whole file, NUL-terminated, or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

/* Start argv with stdout to /dev/null and stderr to errpath; stdin closed to /dev/null. */
static pid_t spawn(char *const argv[], const char *errpath)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		int err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (null < 0 || err < 0)
			_exit(120);
		dup2(null, 0);
		dup2(null, 1);
		dup2(err, 2);
		/* what a terminal's shell gives a foreground job: default dispositions */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execv(argv[0], argv);
		_exit(121);
	}
	return pid;
}

/* Wait up to secs; -1 when it is still running (then it is killed). */
static int wait_for(pid_t pid, double secs, int *status)
{
	double end = now() + secs;

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 0;
		if (now() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			return -1;
		}
		usleep(10000);
	}
}

/* Lines in a file of pids the measured command appends to; waits until it has at least n. */
static bool wait_lines(const char *path, size_t n, double secs)
{
	double end = now() + secs;

	while (now() < end) {
		char *s = slurp(path);
		size_t k = count_lines(s);

		free(s);
		if (k >= n)
			return true;
		usleep(5000);
	}
	return false;
}

/* The last pid the command wrote: the process must be gone (reaped), not reparented. */
static void assert_last_child_gone(const char *pids)
{
	char *s = slurp(pids), *last;
	size_t n;
	long pid;

	assert_non_null(s);
	n = strlen(s);
	while (n && s[n - 1] == '\n')
		s[--n] = '\0';
	last = strrchr(s, '\n');
	pid = strtol(last ? last + 1 : s, NULL, 10);
	free(s);
	assert_true(pid > 0);
	/* give a reparented orphan no chance to look dead: it would still be there */
	if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		fail_msg("the measured command (pid %ld) outlived noplab stat", pid);
}

struct sig_case {
	int line;
	int sig;
	size_t runs_before;	/* completed runs to wait for before the signal (0: none) */
	bool ignore_int;	/* the command ignores SIGINT: noplab must SIGKILL it */
};

static void run_sig_case(const struct ctx *c, const struct sig_case *row)
{
	char *pids = path_in(c, "pids"), *err = path_in(c, "err"), *json = path_in(c, "p.json");
	char script[700], *out, *doc_text;
	char *argv[16];
	int status, k = 0;
	double t;
	pid_t pid;

	unlink(pids);
	unlink(json);
	/* each run appends its pid, then becomes the sleep (exec keeps the pid) */
	snprintf(script, sizeof(script), "echo $$ >> '%s'; %s exec sleep %s", pids,
		 row->ignore_int ? "trap '' INT;" : "", row->runs_before ? "0.2" : "30");
	argv[k++] = (char *)c->noplab;
	argv[k++] = "stat";
	argv[k++] = "-r";
	argv[k++] = "50";
	argv[k++] = "-e";
	argv[k++] = "task-clock";
	argv[k++] = "-o";
	argv[k++] = json;
	argv[k++] = "--";
	argv[k++] = "/bin/sh";
	argv[k++] = "-c";
	argv[k++] = script;
	argv[k] = NULL;
	pid = spawn(argv, err);
	/* runs_before completed runs, and the next one started */
	if (!wait_lines(pids, row->runs_before + 1, 60)) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		row_fail(row, "the command never started %zu times", row->runs_before + 1);
	}
	t = now();
	kill(pid, row->sig);
	if (wait_for(pid, 30, &status))
		row_fail(row, "noplab stat still running 30 s after signal %d", row->sig);
	t = now() - t;
	out = slurp(err);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != row->sig)
		row_fail(row, "noplab stat ended with status 0x%x, want death by signal %d; stderr:\n%s",
			 status, row->sig, out ? out : "");
	if (strstr(out ? out : "", "Sanitizer") || strstr(out ? out : "", "runtime error"))
		row_fail(row, "sanitizer report:\n%s", out);
	/* SIGINT is answered at once; a command that ignores it gets SIGKILL after 2 s */
	if (t > (row->ignore_int ? 10.0 : 5.0))
		row_fail(row, "%.1f s from the signal to the end", t);
	assert_last_child_gone(pids);

	if (!row->runs_before) {
		if (!strstr(out, "nothing to report"))
			row_fail(row, "no 'nothing to report' in:\n%s", out);
		if (access(json, F_OK) == 0)
			row_fail(row, "a JSON file was written with no completed run");
	} else {
		json_error_t jerr;
		json_t *doc, *ev;
		json_int_t measured;

		if (!strstr(out, "interrupted") || !strstr(out, "partial"))
			row_fail(row, "the report does not say it is partial:\n%s", out);
		if (!strstr(out, "Performance counter stats"))
			row_fail(row, "no report on stderr:\n%s", out);
		doc_text = slurp(json);
		if (!doc_text)
			row_fail(row, "no JSON file written");
		doc = json_loads(doc_text, 0, &jerr);
		free(doc_text);
		if (!doc)
			row_fail(row, "JSON: %s", jerr.text);
		if (!json_is_true(json_object_get(doc, "partial")))
			row_fail(row, "JSON lacks \"partial\": true");
		measured = json_integer_value(json_object_get(json_object_get(doc, "counts"),
							      "measured_runs"));
		if (measured < (json_int_t)row->runs_before || measured >= 50)
			row_fail(row, "measured_runs %lld, want %zu..49", (long long)measured,
				 row->runs_before);
		ev = json_array_get(json_object_get(doc, "events"), 0);
		if (json_integer_value(json_object_get(ev, "n")) != measured)
			row_fail(row, "events[0].n %lld != measured_runs %lld",
				 (long long)json_integer_value(json_object_get(ev, "n")),
				 (long long)measured);
		json_decref(doc);
	}
	free(out);
	free(pids);
	free(err);
	free(json);
}

static void test_signals(void **state)
{
	static const struct sig_case rows[] = {
		{ SRC_LINE, SIGINT, 3, false },		/* partial results after 3 runs */
		{ SRC_LINE, SIGTERM, 2, false },
		{ SRC_LINE, SIGINT, 0, false },		/* during the first run: nothing to report */
		{ SRC_LINE, SIGINT, 0, true },		/* the command ignores SIGINT: SIGKILL */
		{ SRC_LINE, SIGINT, 2, true },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		run_sig_case(*state, &rows[i]);
}

/* Run a shell command line; returns its exit status, stderr in *err. */
static int sh_status(const struct ctx *c, const char *cmdline, char **err)
{
	char *errpath = path_in(c, "sh.err");
	char *cmd = malloc(strlen(cmdline) + strlen(errpath) + 64);
	int st;

	assert_non_null(cmd);
	sprintf(cmd, "%s 2>'%s' >/dev/null", cmdline, errpath);
	st = nltest_run(cmd, NULL);
	*err = slurp(errpath);
	free(cmd);
	free(errpath);
	return st;
}

/*
 * A low open-file limit: every limit that makes stat fail must fail with
 * status 4 and one line that tells the user to raise it, whichever of
 * pipe() or perf_event_open() hits it first.
 */
static void test_emfile(void **state)
{
	const struct ctx *c = *state;
	unsigned failed = 0;

	for (int n = 4; n <= 16; n++) {
		char cmd[700], *err;
		int st;

		/* the limit is set inside, after the outer shell has redirected stderr */
		snprintf(cmd, sizeof(cmd), "sh -c 'ulimit -n %d && exec \"%s\" stat -r 1 "
			 "-e task-clock,page-faults,context-switches,cpu-migrations -- true'", n,
			 c->noplab);
		st = sh_status(c, cmd, &err);
		if (st == 0 || (st == 127 && strstr(err, "error while loading shared libraries"))) {
			free(err);
			continue;	/* enough descriptors, or too few for ld.so to start it at all */
		}
		failed++;
		if (st != 4)
			fail_msg("ulimit -n %d: exit %d, want 4; stderr:\n%s", n, st, err);
		if (count_lines(err) != 1)
			fail_msg("ulimit -n %d: %zu lines on stderr, want 1:\n%s", n, count_lines(err),
				 err);
		if (!strstr(err, "ulimit -n"))
			fail_msg("ulimit -n %d: the message does not say to raise the limit:\n%s", n,
				 err);
		free(err);
	}
	if (!failed)
		fail_msg("no open-file limit from 4 to 16 made noplab stat fail: the test tests nothing");
}

static int read_int_file(const char *path, int dflt)
{
	char *s = slurp(path);
	int v = s ? atoi(s) : dflt;

	free(s);
	return v;
}

/* EACCES: kernel-mode counting as an unprivileged user, refused by perf_event_paranoid >= 2. */
static void test_eacces(void **state)
{
	const struct ctx *c = *state;
	int paranoid = read_int_file("/proc/sys/kernel/perf_event_paranoid", -9);
	char cmd[700], *err;
	int st;

	if (geteuid() != 0 || paranoid < 2 || access("/usr/bin/setpriv", X_OK)) {
		print_message("skipped: needs root, setpriv and perf_event_paranoid >= 2 (have uid %d, "
			      "paranoid %d)\n", (int)geteuid(), paranoid);
		skip();
	}
	snprintf(cmd, sizeof(cmd), "setpriv --reuid=nobody --regid=nogroup --clear-groups "
		 "sh -c 'test -x \"%s\"'", c->noplab);
	if (nltest_run(cmd, NULL) != 0) {
		print_message("skipped: user nobody cannot reach %s\n", c->noplab);
		skip();
	}
	snprintf(cmd, sizeof(cmd), "cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups "
		 "'%s' stat -r 1 --kernel -e task-clock -- true", c->noplab);
	st = sh_status(c, cmd, &err);
	if (st != 4)
		fail_msg("as nobody with --kernel: exit %d, want 4; stderr:\n%s", st, err);
	if (count_lines(err) != 1)
		fail_msg("%zu lines on stderr, want 1:\n%s", count_lines(err), err);
	if (!strstr(err, "perf_event_paranoid") || !strstr(err, "Permission denied"))
		fail_msg("the message does not say what to do:\n%s", err);
	free(err);
}

/* ENOENT: no PMU.  Hardware events are reported as not supported, with what to do. */
static void test_no_pmu(void **state)
{
	const struct ctx *c = *state;
	struct nl_pmu_probe probe;
	struct nl_diag d;
	char cmd[700], *err;
	int st;

	nl_diag_init(&d);
	nl_pmu_probe(&probe, &d);
	if (probe.hw_usable) {
		print_message("skipped: this machine has hardware counters\n");
		skip();
	}
	snprintf(cmd, sizeof(cmd), "'%s' stat -r 2 -e cycles,instructions,task-clock -- true",
		 c->noplab);
	st = sh_status(c, cmd, &err);
	if (st != 0)
		fail_msg("no PMU: exit %d, want 0 (software events still measured):\n%s", st, err);
	if (!strstr(err, nl_perf_open_hint(probe.hw_err)))
		fail_msg("the warning lacks the hint '%s':\n%s", nl_perf_open_hint(probe.hw_err), err);
	if (probe.hw_err == -ENOENT && !strstr(err, "bare metal"))
		fail_msg("the hint does not say what to do:\n%s", err);
	if (!strstr(err, "<not supported>") || !strstr(err, "task-clock"))
		fail_msg("hardware events not marked <not supported>, or no software count:\n%s", err);
	free(err);
}

/* Unknown names: exit 2, one line, the closest names libpfm4 knows. */
static void test_unknown_event(void **state)
{
	static const struct {
		int line;
		const char *events, *bad, *expect;
	} rows[] = {
		{ SRC_LINE, "cyclez", "cyclez", "cycles" },
		{ SRC_LINE, "task-clok", "task-clok", "task-clock" },
		{ SRC_LINE, "instructions,page-faultz", "page-faultz", "page-faults" },
		{ SRC_LINE, "L1-ICACHE-LOAD-MISSEZ", "L1-ICACHE-LOAD-MISSEZ", "L1-ICACHE" },
	};
	const struct ctx *c = *state;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char cmd[700], *err;
		int st;

		snprintf(cmd, sizeof(cmd), "'%s' stat -r 1 -e '%s' -- true", c->noplab, rows[i].events);
		st = sh_status(c, cmd, &err);
		if (st != 2)
			row_fail(&rows[i], "exit %d, want 2:\n%s", st, err);
		if (count_lines(err) != 1)
			row_fail(&rows[i], "%zu lines on stderr, want 1:\n%s", count_lines(err), err);
		if (!strstr(err, rows[i].bad) || !strstr(err, "closest") ||
		    !strcasestr(err, rows[i].expect))
			row_fail(&rows[i], "no 'closest ... %s' for %s:\n%s", rows[i].expect,
				 rows[i].bad, err);
		free(err);
	}
}

int main(void)
{
	/* descriptors ctest leaves open must not count against the limits test_emfile sets */
	for (int fd = 3; fd < 1024; fd++) {
		int fl = fcntl(fd, F_GETFD);

		if (fl >= 0)
			fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signals),
		cmocka_unit_test(test_emfile),
		cmocka_unit_test(test_eacces),
		cmocka_unit_test(test_no_pmu),
		cmocka_unit_test(test_unknown_event),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
