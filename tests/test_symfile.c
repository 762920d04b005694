// SPDX-License-Identifier: MIT
/* Symbol files: System.map, /proc/kallsyms (with modules) and nm output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nltest.h"
#include "noplab/symfile.h"

struct sf_row {
	int line;
	const char *text;
	size_t nr, bad;
	bool all_zero;
	/* the entry with the lowest address */
	uint64_t addr;
	char type;
	const char *name, *module;
};

static const struct sf_row rows[] = {
	{ SRC_LINE, "ffffffff81000000 T _text\nffffffff81000000 T startup_64\n", 2, 0, false,
	  0xffffffff81000000ull, 'T', "_text", NULL },
	/* sorted by address, ties in file order */
	{ SRC_LINE, "ffffffff81000010 t b\nffffffff81000000 t a\n", 2, 0, false,
	  0xffffffff81000000ull, 't', "a", NULL },
	/* kallsyms: a module column, tabs */
	{ SRC_LINE, "ffffffffc0a01000 t ext4_fill_super\t[ext4]\n", 1, 0, false,
	  0xffffffffc0a01000ull, 't', "ext4_fill_super", "ext4" },
	/* kallsyms read without privileges */
	{ SRC_LINE, "0000000000000000 T x\n0000000000000000 t y\n", 2, 0, true, 0, 'T', "x", NULL },
	/* junk lines are counted and skipped */
	{ SRC_LINE, "garbage\n\nffffffff81000000 T ok\nzz T bad\nffff T\n", 1, 3, false,
	  0xffffffff81000000ull, 'T', "ok", NULL },
	/* 32-bit map, no newline at the end */
	{ SRC_LINE, "c1000000 T _stext\nc1000010 T do_one", 2, 0, false, 0xc1000000ull, 'T',
	  "_stext", NULL },
	/* more than 16 hex digits is not an address */
	{ SRC_LINE, "11111111111111111 T long\n", 0, 1, false, 0, 0, NULL, NULL },
	/* an unterminated module bracket is a bad line */
	{ SRC_LINE, "ffffffffc0000000 t f [mod\n", 0, 1, false, 0, 0, NULL, NULL },
	{ SRC_LINE, "", 0, 0, false, 0, 0, NULL, NULL },
};

static void test_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct sf_row *r = &rows[i];
		struct nl_symfile *sf;
		struct nl_diag d;

		nl_diag_init(&d);
		if (nl_symfile_parse(r->text, strlen(r->text), &sf, &d))
			row_fail(r, "parse failed: %s", d.msg);
		if (sf->nr != r->nr || sf->nr_bad_lines != r->bad || sf->all_zero != r->all_zero)
			row_fail(r, "%zu entries %zu bad all_zero %d", sf->nr, sf->nr_bad_lines,
				 sf->all_zero);
		if (r->nr) {
			const struct nl_symfile_entry *e = &sf->entries[0];

			if (e->addr != r->addr || e->type != r->type || strcmp(e->name, r->name) ||
			    (r->module ? !e->module || strcmp(e->module, r->module) : e->module != NULL))
				row_fail(r, "first entry %llx %c %s [%s]", (unsigned long long)e->addr,
					 e->type, e->name, e->module ? e->module : "");
			if (nl_symfile_find(sf, r->name) != e)
				row_fail(r, "find(%s) did not return the first entry", r->name);
		}
		for (size_t k = 1; k < sf->nr; k++)
			if (sf->entries[k].addr < sf->entries[k - 1].addr)
				row_fail(r, "not sorted at %zu", k);
		assert_null(nl_symfile_find(sf, "no_such_symbol"));
		nl_symfile_free(sf);
	}
}

/* A text that is not NUL-terminated is read only within its length. */
static void test_parse_bounded(void **state)
{
	const char text[] = "ffffffff81000000 T abc\nffffffff81000010 T defXXXX";
	struct nl_symfile *sf;
	struct nl_diag d;

	(void)state;
	nl_diag_init(&d);
	assert_int_equal(nl_symfile_parse(text, strlen(text) - 4, &sf, &d), 0);
	assert_int_equal(sf->nr, 2);
	assert_string_equal(sf->entries[1].name, "def");
	nl_symfile_free(sf);
}

/* nm is the oracle: its own output, read back */
static void test_read_nm(void **state)
{
	char *dir = nltest_tmpdir("symfile"), cmd[1024], path[512], *out = NULL;
	struct nl_symfile *sf;
	struct nl_diag d;
	size_t lines = 0;

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/map", dir);
	/* the noplab binary is built here, so it has a symbol table */
	snprintf(cmd, sizeof(cmd), "nm -n '%s' > '%s' && cat '%s'", nltest_noplab(), path, path);
	assert_int_equal(nltest_run(cmd, &out), 0);
	for (char *p = out; *p; p++)
		lines += *p == '\n';
	nl_diag_init(&d);
	assert_int_equal(nl_symfile_read(path, &sf, &d), 0);
	/* undefined symbols ("U name", no address) are the only lines nm writes that we skip */
	size_t undef = 0;

	for (char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		undef += l[0] == ' ';
	assert_int_equal(sf->nr + sf->nr_bad_lines, lines);
	assert_int_equal(sf->nr_bad_lines, undef);
	assert_true(sf->nr > 100);
	nl_symfile_free(sf);
	free(out);

	nl_diag_init(&d);
	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(nl_symfile_read(path, &sf, &d), -2 /* -ENOENT */);
	assert_non_null(strstr(d.msg, "missing"));
	nltest_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_bounded),
		cmocka_unit_test(test_read_nm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
