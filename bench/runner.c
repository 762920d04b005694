// SPDX-License-Identifier: MIT
/*
 * Fork, count, exec, wait: the runner behind `noplab stat`.
 *
 * The child is forked first and waits on a pipe; the parent opens the
 * counter group on the child's pid with enable_on_exec and inherit, then
 * releases it.  Counting therefore starts at the exec (the runner's own
 * fork and the pipe handshake are never counted) and covers every
 * descendant the command forks.  A second close-on-exec pipe carries the
 * errno of a failed exec back, so "no such command" is an error and not a
 * run that exited 127.
 *
 * A stop request (the caller's SIGINT handler sets o->stop) interrupts the
 * child like a terminal's Ctrl-C would, kills it if it lingers, reaps it and
 * returns what completed.  The wait is race-free: the stop signals are
 * blocked except inside ppoll() on a pidfd of the child, which unblocks them
 * atomically while it sleeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "noplab/runner.h"

int nl_parse_cpu_list(const char *list, cpu_set_t *set, struct nl_diag *d)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	const char *p = list;

	CPU_ZERO(set);
	if (!list || !*list)
		return nl_fail(d, -NL_E_USAGE, "empty CPU list");
	for (;;) {
		char *end;
		long lo, hi;

		if (*p < '0' || *p > '9')
			return nl_fail(d, -NL_E_USAGE, "CPU list '%s': expected a number at '%s'", list, p);
		lo = strtol(p, &end, 10);
		hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				return nl_fail(d, -NL_E_USAGE, "CPU list '%s': bad range", list);
			hi = strtol(p, &end, 10);
			p = end;
		}
		if (hi < lo)
			return nl_fail(d, -NL_E_USAGE, "CPU list '%s': range %ld-%ld runs backwards", list,
				       lo, hi);
		if (hi >= CPU_SETSIZE || (ncpu > 0 && hi >= ncpu))
			return nl_fail(d, -NL_E_USAGE, "CPU list '%s': CPU %ld does not exist here (%ld CPUs)",
				       list, hi, ncpu);
		for (long c = lo; c <= hi; c++)
			CPU_SET((int)c, set);
		if (!*p)
			return 0;
		if (*p != ',')
			return nl_fail(d, -NL_E_USAGE, "CPU list '%s': unexpected '%c'", list, *p);
		p++;
	}
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int decode_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 255;
}

static int reap(pid_t pid, int *status)
{
	int st;

	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	*status = decode_status(st);
	return 0;
}

/* How long an interrupted command may take to exit on its SIGINT before SIGKILL. */
#define STOP_GRACE_NS 2e9

/*
 * Wait for pid.  When *stop becomes set, send it SIGINT, and SIGKILL once
 * STOP_GRACE_NS have passed; *interrupted says it happened.  Without a
 * pidfd (kernels before 5.3) the wait polls every 50 ms instead.
 */
static int wait_child(pid_t pid, const volatile sig_atomic_t *stop, int *status,
		      bool *interrupted)
{
	sigset_t block, old;
	double deadline = 0;
	bool sent = false, killed = false;
	int pfd, st, ret = 0;

	if (!stop)
		return reap(pid, status);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	for (;;) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		struct timespec ts = { 0, 50000000 }, *tsp = pfd >= 0 ? NULL : &ts;
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		if (*stop && !sent) {
			kill(pid, SIGINT);
			sent = true;
			*interrupted = true;
			deadline = now_ns() + STOP_GRACE_NS;
		}
		if (sent && !killed) {
			double left = deadline - now_ns();

			if (left <= 0) {
				kill(pid, SIGKILL);
				killed = true;
			} else if (!tsp || left < 5e7) {
				ts.tv_sec = (time_t)(left / 1e9);
				ts.tv_nsec = (long)(left - (double)ts.tv_sec * 1e9);
				tsp = &ts;
			}
		}
		/* sleeps until the child exits, a stop signal arrives, or the timeout */
		ppoll(pfd >= 0 ? &p : NULL, pfd >= 0 ? 1 : 0, tsp, &old);
	}
	if (pfd >= 0)
		close(pfd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!ret)
		*status = decode_status(st);
	return ret;
}

/* A failed pipe() or fork(), with what the user can do about it. */
static int sys_fail(struct nl_diag *d, int err, const char *what)
{
	const char *hint = "";

	switch (-err) {
	case EMFILE:
		hint = " (raise the file descriptor limit: ulimit -n)";
		break;
	case ENFILE:
		hint = " (the system's open-file table is full: close files, or raise fs.file-max)";
		break;
	case EAGAIN:
		hint = " (the process limit is reached: ulimit -u)";
		break;
	case ENOMEM:
		hint = " (out of memory)";
		break;
	}
	return nl_fail(d, err, "%s: %s%s", what, strerror(-err), hint);
}

/* In the child: pin, redirect, wait for the go byte (if any), exec; report a failed exec. */
static void __attribute__((noreturn))
child(char *const *argv, const cpu_set_t *cpus, bool to_stderr, int go, int err)
{
	int e;
	char c;

	if (cpus && sched_setaffinity(0, sizeof(*cpus), cpus))
		goto fail;
	if (to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		goto fail;
	/* EOF instead of the go byte: the parent gave up (the counters did not open) */
	if (go >= 0 && read(go, &c, 1) != 1)
		_exit(127);
	execvp(argv[0], argv);
fail:
	e = errno;
	if (write(err, &e, sizeof(e)) != (ssize_t)sizeof(e))
		_exit(126);
	_exit(127);
}

/* The errno a failed exec sent back, or 0 once exec succeeded (the pipe closed). */
static int exec_error(int fd)
{
	int e = 0;
	ssize_t n;

	do
		n = read(fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(e) ? e : 0;
}

/* Fork and exec without counters: --pre, --post and dry runs. */
static int run_plain(char *const *argv, const cpu_set_t *cpus, bool to_stderr,
		     const volatile sig_atomic_t *stop, int *status, bool *interrupted,
		     struct nl_diag *d)
{
	int err[2], e, ret;
	pid_t pid;

	if (pipe2(err, O_CLOEXEC))
		return sys_fail(d, -errno, "pipe");
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(err[0]);
		close(err[1]);
		return sys_fail(d, ret, "fork");
	}
	if (pid == 0) {
		close(err[0]);
		child(argv, cpus, to_stderr, -1, err[1]);
	}
	close(err[1]);
	e = exec_error(err[0]);
	close(err[0]);
	ret = wait_child(pid, stop, status, interrupted);
	if (ret)
		return nl_fail_errno(d, ret, "waitpid");
	if (e)
		return nl_fail(d, -e, "cannot run '%s': %s", argv[0], strerror(e));
	return 0;
}

static int run_shell(const char *what, const char *cmd, bool to_stderr,
		     const volatile sig_atomic_t *stop, bool *interrupted, struct nl_diag *d)
{
	char *argv[] = { "/bin/sh", "-c", (char *)cmd, NULL };
	int status, ret = run_plain(argv, NULL, to_stderr, stop, &status, interrupted, d);

	if (ret || *interrupted)
		return ret;
	if (status)
		return nl_fail(d, -ECANCELED, "the %s command '%s' exited with status %d", what, cmd,
			       status);
	return 0;
}

/* One counted run; *interrupted: a stop cut it short, run is not filled. */
static int measured_run(const struct nl_runner_opts *o, const struct nl_event_list *l,
			const struct nl_pass *pass, struct nl_stat_run *run, bool *interrupted,
			struct nl_diag *d)
{
	struct nl_group_opts go = { .cpu = -1, .inherit = true, .enable_on_exec = true };
	int gop[2], err[2], ret, e, status = 0;
	struct nl_group g;
	double t0, t1;
	pid_t pid;

	if (pipe2(gop, O_CLOEXEC))
		return sys_fail(d, -errno, "pipe");
	if (pipe2(err, O_CLOEXEC)) {
		ret = -errno;
		close(gop[0]);
		close(gop[1]);
		return sys_fail(d, ret, "pipe");
	}
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(gop[0]);
		close(gop[1]);
		close(err[0]);
		close(err[1]);
		return sys_fail(d, ret, "fork");
	}
	if (pid == 0) {
		close(gop[1]);
		close(err[0]);
		child(o->argv, o->cpus, o->stdout_to_stderr, gop[0], err[1]);
	}
	close(gop[0]);
	close(err[1]);

	go.pid = pid;
	/* an empty pass times the command only (no counters usable at all) */
	memset(&g, 0, sizeof(g));
	ret = pass->nr ? nl_group_open(&g, l, pass, &go, d) : 0;
	if (ret || (o->stop && *o->stop)) {
		/* closing the go pipe makes the child exit without exec */
		close(gop[1]);
		close(err[0]);
		reap(pid, &status);
		if (!ret) {
			*interrupted = true;
			if (pass->nr)
				nl_group_close(&g);
		}
		return ret;
	}
	t0 = now_ns();
	if (write(gop[1], "g", 1) != 1) {
		ret = -errno;
		close(gop[1]);
		close(err[0]);
		kill(pid, SIGKILL);
		reap(pid, &status);
		nl_group_close(&g);
		return nl_fail_errno(d, ret, "starting the command");
	}
	close(gop[1]);
	e = exec_error(err[0]);
	close(err[0]);
	ret = wait_child(pid, o->stop, &status, interrupted);
	t1 = now_ns();
	if (ret || *interrupted) {
		if (pass->nr)
			nl_group_close(&g);
		return ret ? nl_fail_errno(d, ret, "waitpid") : 0;
	}
	if (e) {
		nl_group_close(&g);
		return nl_fail(d, -e, "cannot run '%s': %s", o->argv[0], strerror(e));
	}
	run->wall_ns = t1 - t0;
	run->status = status;
	if (!pass->nr)
		return 0;
	/* the events outlive the task: its final counts, descendants' included */
	ret = nl_group_read(&g, &run->v, d);
	nl_group_close(&g);
	return ret;
}

void nl_stat_data_free(struct nl_stat_data *s)
{
	free(s->runs);
	memset(s, 0, sizeof(*s));
}

int nl_stat_run(const struct nl_runner_opts *o, const struct nl_event_list *l,
		const struct nl_plan *plan, struct nl_stat_data *out, struct nl_diag *d)
{
	unsigned dry_failed = 0;
	size_t total;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (!o->argv || !o->argv[0])
		return nl_fail(d, -NL_E_USAGE, "no command to run");
	if (!o->repeat)
		return nl_fail(d, -NL_E_USAGE, "at least one run is needed");
	if (!plan->nr)
		return nl_fail(d, -NL_E_USAGE, "no counter passes");
	if (o->repeat > 1000000 / plan->nr)
		return nl_fail(d, -NL_E_LIMIT, "%u runs x %zu passes is too many", o->repeat, plan->nr);
	total = (size_t)o->repeat * plan->nr;
	out->runs = calloc(total, sizeof(*out->runs));
	if (!out->runs)
		return -ENOMEM;

	for (unsigned rep = 0; rep < o->repeat; rep++) {
		for (unsigned p = 0; p < plan->nr; p++) {
			struct nl_stat_run *run = &out->runs[out->nr_runs];
			bool stopped = o->stop && *o->stop;
			int status = 0;

			if (!stopped && o->pre) {
				ret = run_shell("--pre", o->pre, o->stdout_to_stderr, o->stop, &stopped,
						d);
				if (ret)
					goto fail;
				out->pre += !stopped;
			}
			if (!stopped && o->dry_run) {
				ret = run_plain(o->argv, o->cpus, o->stdout_to_stderr, o->stop, &status,
						&stopped, d);
				if (ret)
					goto fail;
			}
			if (!stopped)
				ret = measured_run(o, l, &plan->pass[p], run, &stopped, d);
			if (ret)
				goto fail;
			if (stopped) {
				/* what completed stands; the cut-short step is not counted */
				out->interrupted = true;
				return 0;
			}
			if (o->dry_run) {
				out->dry++;
				/* the first failure says it; the summary counts the rest */
				if (status && !dry_failed++)
					nl_log(d, NL_LOG_WARN, "dry run %u exited with status %d", rep + 1,
					       status);
			}
			run->pass = p;
			run->rep = rep;
			out->nr_runs++;
			out->measured++;
			if (run->status && !out->failed++)
				nl_log(d, NL_LOG_WARN, "run %u (pass %u) exited with status %d", rep + 1,
				       p + 1, run->status);
			if (o->post) {
				ret = run_shell("--post", o->post, o->stdout_to_stderr, o->stop, &stopped,
						d);
				if (ret)
					goto fail;
				if (stopped) {
					out->interrupted = true;
					return 0;
				}
				out->post++;
			}
			if (o->progress)
				o->progress(o->progress_ctx, out->measured, (unsigned)total);
		}
	}
	return 0;
fail:
	nl_stat_data_free(out);
	return ret;
}
