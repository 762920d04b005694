// SPDX-License-Identifier: MIT
/*
 * The W^X code buffer, checked from the kernel's side: /proc/self/maps must
 * show the generated code read-write while it is written and read-execute
 * afterwards, and never writable and executable at once.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nltest.h"
#include "noplab/codebuf.h"
#include "noplab/codegen.h"

/* The permission string of the mapping that holds addr, e.g. "r-xp"; "" if none. */
static void perms_of(const void *addr, char perms[5])
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uintptr_t a = (uintptr_t)addr;

	perms[0] = '\0';
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char p[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) == 3 && a >= lo && a < hi) {
			memcpy(perms, p, 5);
			break;
		}
	}
	fclose(f);
}

/* Every page of the buffer has the given permissions. */
static void expect_perms(const struct nl_codebuf *cb, const char *want)
{
	for (size_t off = 0; off < cb->size; off += 4096) {
		char p[5];

		perms_of(cb->base + off, p);
		if (strcmp(p, want))
			fail_msg("page +%#zx is '%s', want '%s'", off, p, want);
		if (p[1] == 'w' && p[2] == 'x')
			fail_msg("page +%#zx is writable and executable", off);
	}
}

static void test_maps_while_generating(void **state)
{
	struct nl_gen_spec s;
	struct nl_image img;
	struct nl_codebuf cb;

	(void)state;
	nl_gen_spec_default(&s, NL_WL_CALLS);
	s.nr_funcs = 200;	/* several pages */
	assert_int_equal(nl_gen(&s, &img, NULL), 0);
	assert_int_equal(nl_codebuf_map(&cb, img.size, NULL), 0);
	assert_true(cb.size >= img.size && cb.size % 4096 == 0);
	expect_perms(&cb, "rw-p");
	memcpy(cb.base, img.code, img.size);	/* writing: still not executable */
	expect_perms(&cb, "rw-p");
	assert_int_equal(nl_codebuf_seal(&cb, NULL), 0);
	expect_perms(&cb, "r-xp");
	assert_int_equal(nl_codebuf_driver(&cb, &img)(2, NULL), nl_image_expect(&img, 2));
	assert_int_equal(nl_codebuf_unseal(&cb, NULL), 0);
	expect_perms(&cb, "rw-p");
	nl_codebuf_unmap(&cb);

	assert_int_equal(nl_codebuf_load(&cb, &img, NULL), 0);
	expect_perms(&cb, "r-xp");
	nl_codebuf_unmap(&cb);
	nl_image_free(&img);
}

/* A write to sealed code faults: the protection is real, not a flag in our struct. */
static void test_sealed_is_read_only(void **state)
{
	struct nl_gen_spec s;
	struct nl_image img;
	struct nl_codebuf cb;
	int status;
	pid_t pid;

	(void)state;
	nl_gen_spec_default(&s, NL_WL_CALLS);
	s.nr_funcs = 4;
	assert_int_equal(nl_gen(&s, &img, NULL), 0);
	assert_int_equal(nl_codebuf_load(&cb, &img, NULL), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		volatile uint8_t *p = cb.base;

		signal(SIGSEGV, SIG_DFL);
		p[0] = 0xcc;
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGSEGV);
	nl_codebuf_unmap(&cb);
	nl_image_free(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_while_generating),
		cmocka_unit_test(test_sealed_is_read_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
