// SPDX-License-Identifier: MIT
/* The noplab binary: nops and cpu, their exit statuses and JSON documents. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nltest.h"

static int run(const char *args, char **out)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s %s", nltest_noplab(), args);
	return nltest_run(cmd, out);
}

static json_t *run_json(const char *args, int want_status)
{
	char *out;
	json_error_t err;
	json_t *doc;

	assert_int_equal(run(args, &out), want_status);
	doc = json_loads(out, 0, &err);
	if (!doc)
		fail_msg("noplab %s: invalid JSON at line %d: %s", args, err.line, err.text);
	free(out);
	assert_string_equal(json_string_value(json_object_get(doc, "tool")), "noplab");
	assert_non_null(json_string_value(json_object_get(doc, "version")));
	return doc;
}

static void test_nops_verify(void **state)
{
	char *out;

	(void)state;
	assert_int_equal(run("nops --verify", &out), 0);
	assert_non_null(strstr(out, " 0 disagreements"));
	assert_non_null(strstr(out, "k8:atomic5"));
	free(out);
}

static void test_nops_json(void **state)
{
	json_t *doc = run_json("nops --family k8 --length 5 --json", 0);
	json_t *entries = json_object_get(doc, "entries");

	(void)state;
	assert_string_equal(json_string_value(json_object_get(doc, "command")), "nops");
	assert_int_equal(json_array_size(entries), 2);
	json_t *k85 = json_array_get(entries, 0);

	assert_string_equal(json_string_value(json_object_get(k85, "name")), "k8:5");
	assert_string_equal(json_string_value(json_object_get(k85, "bytes")), "66 66 90 66 90");
	assert_int_equal(json_integer_value(json_object_get(k85, "insns")), 2);
	assert_true(json_is_true(json_object_get(k85, "nop64")));
	json_decref(doc);

	doc = run_json("nops --mode 64 --family generic --json", 0);
	/* only generic:1 (90) is a NOP in 64-bit mode */
	assert_int_equal(json_array_size(json_object_get(doc, "entries")), 1);
	json_decref(doc);

	doc = run_json("nops --verify --json", 0);
	json_t *v = json_object_get(doc, "verify");

	assert_int_equal(json_integer_value(json_object_get(v, "disagreements")), 0);
	assert_true(json_integer_value(json_object_get(v, "checks")) > 200);
	json_decref(doc);
}

static void test_usage_errors(void **state)
{
	(void)state;
	assert_int_equal(run("nops --family k9 2>/dev/null", NULL), 2);
	assert_int_equal(run("nops --mode 16 2>/dev/null", NULL), 2);
	assert_int_equal(run("nops --length 0 2>/dev/null", NULL), 2);
	assert_int_equal(run("nops stray 2>/dev/null", NULL), 2);
	assert_int_equal(run("frobnicate 2>/dev/null", NULL), 2);
	assert_int_equal(run("2>/dev/null", NULL), 2);
	assert_int_equal(run("--help >/dev/null", NULL), 0);
	assert_int_equal(run("cpu --bogus 2>/dev/null", NULL), 2);
}

static void test_cpu_json(void **state)
{
	json_t *doc = run_json("cpu --json", 0);
	json_t *cpu = json_object_get(doc, "cpu");
	json_t *ctr = json_object_get(doc, "counters");
	json_t *kn = json_object_get(doc, "kernel_nops");

	(void)state;
	assert_string_equal(json_string_value(json_object_get(doc, "command")), "cpu");
	assert_true(json_integer_value(json_object_get(cpu, "family")) >= 6);
	assert_non_null(json_object_get(doc, "l1i"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(kn, "v5_13_64"),
								"ftrace_nop_bytes")),
			    "0f 1f 44 00 00");
	assert_true(json_is_boolean(json_object_get(ctr, "hardware")));
	if (!json_is_true(json_object_get(ctr, "hardware")))
		assert_non_null(json_string_value(json_object_get(ctr, "hardware_hint")));
	json_decref(doc);
}

static void test_cpu_text(void **state)
{
	char *out;

	(void)state;
	assert_int_equal(run("cpu", &out), 0);
	assert_non_null(strstr(out, "hardware counters"));
	assert_non_null(strstr(out, "pre-v5.13, 64-bit kernel"));
	/* never a bare zero where a figure is unknown: it says available or why not */
	assert_true(strstr(out, "hardware counters          available") ||
		    strstr(out, "hardware counters          unavailable: "));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nops_verify),
		cmocka_unit_test(test_nops_json),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_cpu_json),
		cmocka_unit_test(test_cpu_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
