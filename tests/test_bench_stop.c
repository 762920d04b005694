// SPDX-License-Identifier: MIT
/*
 * noplab bench under SIGINT: the run stops after the repetition in progress,
 * reports and saves what was measured marked partial, and then ends by the
 * signal, as noplab stat does.
 */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nltest.h"

/* Start noplab bench, send SIGINT after delay_ms, return its wait status. */
static int interrupted_bench(const char *json_path, unsigned delay_ms)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(127);
		execl(nltest_noplab(), "noplab", "bench", "calls", "--funcs", "128", "-r", "1000",
		      "-o", json_path, (char *)NULL);
		_exit(127);
	}
	struct timespec ts = { delay_ms / 1000, (long)(delay_ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
	kill(pid, SIGINT);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void test_partial_results(void **state)
{
	char *dir = nltest_tmpdir("benchstop");
	char path[512];
	json_error_t jerr;
	int status;

	(void)state;
	snprintf(path, sizeof(path), "%s/partial.json", dir);
	/* 1000 repetitions take minutes: the signal always lands mid-run */
	status = interrupted_bench(path, 4000);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGINT);

	json_t *doc = json_load_file(path, 0, &jerr);

	if (!doc)
		fail_msg("no JSON after SIGINT: %s", jerr.text);
	assert_true(json_is_true(json_object_get(doc, "partial")));
	json_t *w = json_array_get(json_object_get(doc, "workloads"), 0);

	assert_non_null(w);
	assert_true(json_is_true(json_object_get(w, "partial")));
	json_int_t reps = json_integer_value(json_object_get(w, "repetitions"));

	assert_true(reps >= 2 && reps < 1000);
	/* every figure holds exactly the repetitions that completed, no zeros for the rest */
	json_t *v = json_array_get(json_object_get(w, "variants"), 0);
	json_t *runs = json_object_get(json_object_get(json_object_get(v, "figures"),
							"cycles_per_call"), "runs");

	assert_int_equal(json_array_size(runs), reps);
	for (size_t i = 0; i < json_array_size(runs); i++)
		assert_true(json_real_value(json_array_get(runs, i)) > 0);
	json_decref(doc);
	unlink(path);
	rmdir(dir);
	free(dir);
}

/* Stopped before anything was measured: no results file, and still ended by the signal. */
static void test_nothing_measured(void **state)
{
	char *dir = nltest_tmpdir("benchstop0");
	char path[512];
	int status;

	(void)state;
	snprintf(path, sizeof(path), "%s/none.json", dir);
	status = interrupted_bench(path, 30);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGINT);
	assert_int_not_equal(access(path, F_OK), 0);
	rmdir(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_partial_results),
		cmocka_unit_test(test_nothing_measured),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
