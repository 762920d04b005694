// SPDX-License-Identifier: MIT
/*
 * noplab layout end to end: fixtures assembled and linked at test time with
 * three linker scripts (entry text at 2 MiB, at a page, off alignment and
 * sharing cache lines), the .o itself, a hand-written kallsyms file, a fake
 * /proc/kcore, rules in both directions, exit statuses, and the SVG map.
 */
#include <elf.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nltest.h"

static char *dir;

static int run(const char *args, char **out)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "%s %s", nltest_noplab(), args);
	return nltest_run(cmd, out);
}

static json_t *run_json(const char *args, int want_status)
{
	char *out, cmd[2048];
	json_error_t err;
	json_t *doc;
	int st;

	snprintf(cmd, sizeof(cmd), "layout --json %s", args);
	st = run(cmd, &out);
	if (st != want_status)
		fail_msg("noplab %s: status %d, want %d\n%s", cmd, st, want_status, out ? out : "");
	doc = json_loads(out, 0, &err);
	if (!doc)
		fail_msg("noplab %s: invalid JSON at line %d: %s", cmd, err.line, err.text);
	free(out);
	assert_string_equal(json_string_value(json_object_get(doc, "command")), "layout");
	return doc;
}

static json_t *region(json_t *doc, const char *name)
{
	json_t *regs = json_object_get(doc, "regions");

	for (size_t i = 0; i < json_array_size(regs); i++) {
		json_t *r = json_array_get(regs, i);

		if (!strcmp(json_string_value(json_object_get(r, "name")), name))
			return r;
	}
	fail_msg("no region %s", name);
	return NULL;
}

static uint64_t jaddr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	if (!s)
		fail_msg("%s is not an address string", key);
	return strtoull(s, NULL, 16);
}

static long long jint(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		fail_msg("%s is not an integer", key);
	return json_integer_value(v);
}

/* "a,b" from a JSON array of strings */
static void joined(json_t *a, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < json_array_size(a); i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? "," : "",
				      json_string_value(json_array_get(a, i)));
}

static int setup(void **state)
{
	char cmd[2048];
	const char *src = getenv("NOPLAB_SRC");

	(void)state;
	dir = nltest_tmpdir("layout");
	if (!dir || !src)
		return -1;
	snprintf(cmd, sizeof(cmd), "as %s/tests/fixtures/layout/entry.s -o %s/entry.o", src, dir);
	if (nltest_run(cmd, NULL))
		return -1;
	static const char *const variants[] = { "2m", "page", "off" };

	for (size_t i = 0; i < 3; i++) {
		snprintf(cmd, sizeof(cmd), "ld -o %s/entry-%s -T %s/tests/fixtures/layout/entry-%s.ld "
			 "%s/entry.o", dir, variants[i], src, variants[i], dir);
		if (nltest_run(cmd, NULL))
			return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	char cmd[1024];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	nltest_run(cmd, NULL);
	free(dir);
	return 0;
}

/* ---- figures of the linked fixtures ---- */

struct fig_row {
	int line;
	const char *variant;
	uint64_t start, end;
	long long align, align_end;
	bool a4k, a2m;
	long long lines, pages_4k, pages_2m;
	const char *first_line, *last_line;	/* joined neighbour names */
	const char *fill_before;		/* kind */
	long long fill_before_bytes;
	const char *fill_after;
	long long fill_after_bytes;
	long long jcc_units, jcc_affected;
};

static const struct fig_row fig_rows[] = {
	/* 2 MiB: alone in its page, int3 fill to the 2 MiB boundaries on both sides */
	{ SRC_LINE, "2m", 0x600000, 0x600080, 0x200000, 128, true, true, 2, 1, 1, "", "", "int3",
	  0x600000 - 0x400024, "int3", 0x800000 - 0x600080, 5, 2 },
	/* a page of its own, but the same 2 MiB page as after_fn */
	{ SRC_LINE, "page", 0x401000, 0x401080, 0x1000, 128, true, false, 2, 1, 1, "", "", "int3",
	  0x401000 - 0x400024, "int3", 0x402000 - 0x401080, 5, 2 },
	/* off alignment: shares its first line with before_fn, its last with after_fn */
	{ SRC_LINE, "off", 0x400fe4, 0x401064, 4, 4, false, false, 3, 2, 1, "before_fn",
	  "after_fn,__fentry__", "none", 0, "none", 0, 5, 0 },
};

static void test_figures(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(fig_rows) / sizeof(fig_rows[0]); i++) {
		const struct fig_row *r = &fig_rows[i];
		char args[1024], names[256];
		json_t *doc, *e, *pad, *fb, *fa, *jcc;

		snprintf(args, sizeof(args), "--jcc %s/entry-%s", dir, r->variant);
		doc = run_json(args, 0);
		e = region(doc, "entry_text");
		if (strcmp(json_string_value(json_object_get(e, "kind")), "range") ||
		    strcmp(json_string_value(json_object_get(e, "start_symbol")), "__entry_text_start"))
			row_fail(r, "not the __entry_text_start range");
		if (jaddr(e, "start") != r->start || jaddr(e, "end") != r->end ||
		    jint(e, "size") != (long long)(r->end - r->start))
			row_fail(r, "%#llx-%#llx", (unsigned long long)jaddr(e, "start"),
				 (unsigned long long)jaddr(e, "end"));
		if (jint(e, "align") != r->align || jint(e, "align_end") != r->align_end)
			row_fail(r, "align %lld/%lld", jint(e, "align"), jint(e, "align_end"));
		if (json_is_true(json_object_get(e, "aligned_4k")) != r->a4k ||
		    json_is_true(json_object_get(e, "aligned_2m")) != r->a2m)
			row_fail(r, "aligned_4k/2m");
		if (jint(e, "lines") != r->lines || jint(e, "pages_4k") != r->pages_4k ||
		    jint(e, "pages_2m") != r->pages_2m)
			row_fail(r, "lines %lld pages %lld/%lld", jint(e, "lines"), jint(e, "pages_4k"),
				 jint(e, "pages_2m"));
		joined(json_object_get(e, "shared_first_line_with"), names, sizeof(names));
		if (strcmp(names, r->first_line))
			row_fail(r, "first line shared with '%s'", names);
		joined(json_object_get(e, "shared_last_line_with"), names, sizeof(names));
		if (strcmp(names, r->last_line))
			row_fail(r, "last line shared with '%s'", names);
		if (jint(e, "functions") != 2)
			row_fail(r, "%lld functions", jint(e, "functions"));
		if (strcmp(json_string_value(json_object_get(e, "parent")), "text"))
			row_fail(r, "parent %s", json_string_value(json_object_get(e, "parent")));
		/* padding: 13 int3 between entry_a and entry_b, 60 nop after entry_b */
		pad = json_object_get(e, "padding");
		if (jint(pad, "bytes") != 73 || jint(pad, "int3") != 13 || jint(pad, "nop") != 60)
			row_fail(r, "padding %lld (%lld int3, %lld nop)", jint(pad, "bytes"),
				 jint(pad, "int3"), jint(pad, "nop"));
		fb = json_object_get(e, "fill_before");
		fa = json_object_get(e, "fill_after");
		if (strcmp(json_string_value(json_object_get(fb, "kind")), r->fill_before) ||
		    jint(fb, "bytes") != r->fill_before_bytes)
			row_fail(r, "fill before %s %lld", json_string_value(json_object_get(fb, "kind")),
				 jint(fb, "bytes"));
		if (strcmp(json_string_value(json_object_get(fa, "kind")), r->fill_after) ||
		    jint(fa, "bytes") != r->fill_after_bytes)
			row_fail(r, "fill after %s %lld", json_string_value(json_object_get(fa, "kind")),
				 jint(fa, "bytes"));
		jcc = json_object_get(e, "jcc");
		if (jint(jcc, "units") != r->jcc_units || jint(jcc, "affected") != r->jcc_affected)
			row_fail(r, "jcc %lld units %lld affected", jint(jcc, "units"),
				 jint(jcc, "affected"));
		json_decref(doc);
	}
}

/* The .o: .entry.text is a real section; placement is the linker's business. */
static void test_object_file(void **state)
{
	char args[1024];
	json_t *doc, *e, *regs;

	(void)state;
	snprintf(args, sizeof(args), "--functions %s/entry.o", dir);
	doc = run_json(args, 0);
	regs = json_object_get(doc, "regions");
	assert_int_equal(json_array_size(regs), 3);	/* .text .entry.text .text.after */
	e = region(doc, ".entry.text");
	assert_string_equal(json_string_value(json_object_get(e, "kind")), "section");
	assert_string_equal(json_string_value(json_object_get(e, "key")), "entry_text");
	assert_int_equal(jint(e, "size"), 0x80);
	assert_int_equal(jint(e, "align"), 4);		/* sh_addralign of .p2align 2 */
	assert_int_equal(jint(e, "functions"), 2);
	assert_int_equal(jint(json_object_get(e, "padding"), "int3"), 13);
	/* scan's entry classes come with --functions */
	json_t *fl = json_object_get(e, "function_list");

	assert_int_equal(json_array_size(fl), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(fl, 0), "name")),
			    "entry_a");
	assert_string_equal(json_string_value(json_object_get(json_array_get(fl, 0),
							      "entry_class")), "call_fentry");
	json_decref(doc);
}

/* ---- rules on the fixtures, each in both directions ---- */

struct rule_row {
	int line;
	const char *variant;
	const char *rule;
	bool ok;
	size_t nr_violations;
	const char *msg;	/* in the first violation */
};

static const struct rule_row rule_rows[] = {
	{ SRC_LINE, "2m", "region entry_text align 2M", true, 0, NULL },
	{ SRC_LINE, "page", "region entry_text align 2M", false, 1, "aligned to 4 KiB, not 2 MiB" },
	{ SRC_LINE, "page", "region entry_text align 4K", true, 0, NULL },
	{ SRC_LINE, "off", "region entry_text align 4K", false, 1, "aligned to 4 bytes" },
	{ SRC_LINE, "2m", "region entry_text exclusive-lines", true, 0, NULL },
	{ SRC_LINE, "off", "region entry_text exclusive-lines", false, 2, "with before_fn" },
	{ SRC_LINE, "2m", "region entry_text exclusive 2M after", true, 0, NULL },
	{ SRC_LINE, "page", "region entry_text exclusive 2M after", false, 1,
	  "with after_fn, __fentry__" },
	{ SRC_LINE, "page", "region entry_text max-pages 1", true, 0, NULL },
	{ SRC_LINE, "off", "region entry_text max-pages 1", false, 1, "touches 2 pages of 4 KiB" },
	{ SRC_LINE, "off", "ftrace-site no-straddle 64", true, 0, NULL },
	{ SRC_LINE, "2m", "ftrace-site no-straddle 64", false, 1, "0x60003e-0x600043 straddles" },
	{ SRC_LINE, "off", "jcc max 0 in entry_text", true, 0, NULL },
	{ SRC_LINE, "2m", "jcc max 0 in entry_text", false, 2, "jcc 0x60001e-0x600020" },
	{ SRC_LINE, "2m", "region entry_text inside text", true, 0, NULL },
	{ SRC_LINE, "2m", "region text inside entry_text", false, 1, "is not inside" },
};

static void test_rules(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rule_rows) / sizeof(rule_rows[0]); i++) {
		const struct rule_row *r = &rule_rows[i];
		char path[512], args[1024];
		FILE *f;
		json_t *doc, *res, *v;

		snprintf(path, sizeof(path), "%s/row.rules", dir);
		f = fopen(path, "w");
		assert_non_null(f);
		fprintf(f, "# row %d\n%s\n", r->line, r->rule);
		fclose(f);
		snprintf(args, sizeof(args), "--rules %s %s/entry-%s", path, dir, r->variant);
		doc = run_json(args, r->ok ? 0 : 1);
		res = json_array_get(json_object_get(doc, "rules"), 0);
		if (!res || strcmp(json_string_value(json_object_get(res, "rule")), r->rule) ||
		    jint(res, "line") != 2)
			row_fail(r, "rule not reported as written, on line 2");
		if (json_is_true(json_object_get(res, "ok")) != r->ok)
			row_fail(r, "%s: ok is %s", r->rule, r->ok ? "false" : "true");
		v = json_object_get(res, "violations");
		if (json_array_size(v) != r->nr_violations)
			row_fail(r, "%s: %zu violations", r->rule, json_array_size(v));
		if (r->msg && !strstr(json_string_value(json_object_get(json_array_get(v, 0),
									"message")), r->msg))
			row_fail(r, "%s: '%s'", r->rule,
				 json_string_value(json_object_get(json_array_get(v, 0), "message")));
		json_decref(doc);
	}
}

static void test_rules_text_and_status(void **state)
{
	char args[1024], path[512], *out;
	FILE *f;

	(void)state;
	/* the built-in set holds on a layout like the kernel's ... */
	snprintf(args, sizeof(args), "layout --rules kernel-x86_64 %s/entry-2m", dir);
	assert_int_equal(run(args, &out), 0);
	assert_non_null(strstr(out, "PASS  region entry_text max-pages 1 2M"));
	free(out);
	/* ... and a failing rule prints its violation with address and symbol, exit 1 */
	snprintf(path, sizeof(path), "%s/fail.rules", dir);
	f = fopen(path, "w");
	fprintf(f, "region entry_text present\nregion entry_text exclusive-lines\n");
	fclose(f);
	snprintf(args, sizeof(args), "layout --rules %s %s/entry-off", path, dir);
	assert_int_equal(run(args, &out), 1);
	assert_non_null(strstr(out, "FAIL  region entry_text exclusive-lines"));
	assert_non_null(strstr(out, "0x0000000000400fc0 before_fn+0x0"));
	assert_non_null(strstr(out, "rules: 1 pass, 1 fail, 0 skipped"));
	free(out);
	/* malformed rules: exit 3, the file and line named */
	f = fopen(path, "w");
	fprintf(f, "region entry_text present\nregion entry_text allign 16\n");
	fclose(f);
	snprintf(args, sizeof(args), "layout --rules %s %s/entry-off 2>&1", path, dir);
	assert_int_equal(run(args, &out), 3);
	assert_non_null(strstr(out, "fail.rules:2: region entry_text: unknown condition 'allign'"));
	free(out);
	snprintf(args, sizeof(args), "layout --rules %s/missing.rules %s/entry-off 2>/dev/null", dir,
		 dir);
	assert_int_equal(run(args, NULL), 3);
	/* usage and input errors */
	assert_int_equal(run("layout 2>/dev/null", NULL), 2);
	assert_int_equal(run("layout --bogus x 2>/dev/null", NULL), 2);
	assert_int_equal(run("layout --threads 0 x 2>/dev/null", NULL), 2);
	assert_int_equal(run("layout /nonexistent/vmlinux 2>/dev/null", NULL), 3);
	assert_int_equal(run("layout --help >/dev/null", NULL), 0);
}

/* ---- the SVG map: well-formed XML, the region named, bytes drawn ---- */

static void test_svg(void **state)
{
	char args[1024], *out;

	(void)state;
	snprintf(args, sizeof(args), "layout --svg %s/map.svg %s/entry-off >/dev/null", dir, dir);
	assert_int_equal(run(args, NULL), 0);
	snprintf(args, sizeof(args), "xmllint --noout %s/map.svg", dir);
	assert_int_equal(nltest_run(args, NULL), 0);
	snprintf(args, sizeof(args), "cat %s/map.svg", dir);
	assert_int_equal(nltest_run(args, &out), 0);
	assert_non_null(strstr(out, "<title>noplab layout: "));
	assert_non_null(strstr(out, "region entry_text 0x400fe4-0x401064 (128 bytes)"));
	assert_non_null(strstr(out, "width=\"1400"));
	free(out);
	/* an unwritable path is an error, not a silent success */
	assert_int_equal(run("layout --svg /nonexistent/dir/map.svg /bin/true 2>/dev/null", NULL) != 0,
			 1);
}

/* ---- kallsyms ---- */

static const char kallsyms_618[] =
	"ffffffff81000000 T srso_alias_untrain_ret\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000010 T __entry_text_start\n"
	"ffffffff81000080 T entry_SYSCALL_64\n"
	"ffffffff81000300 T irq_entries_start\n"
	"ffffffff81000300 T __irqentry_text_start\n"
	"ffffffff81000f70 t common_interrupt_return\n"
	"ffffffff81000f70 T __irqentry_text_end\n"
	"ffffffff81001a80 T paravirt_ret0\n"
	"ffffffff81001a87 T __entry_text_end\n"
	"ffffffff81104104 T srso_alias_safe_ret\n"
	"ffffffff81200000 T __split_text_start\n"
	"ffffffff81200000 T __split_text_end\n"
	"ffffffff81200010 t run_init_process\n"
	"ffffffff8127fa60 T __kvm_mmu_notifier_invalidate_range_start\n"
	"ffffffff8127fa90 T __kvm_mmu_notifier_invalidate_range_end\n"
	"ffffffff82276f48 T _etext\n"
	"ffffffff82400000 D __start_rodata\n"
	"ffffffffc0000000 t ext4_fill_super\t[ext4]\n";

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static void test_kallsyms(void **state)
{
	char path[512], args[1024], *out;
	json_t *doc, *e, *irq;

	(void)state;
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	write_file(path, kallsyms_618, sizeof(kallsyms_618) - 1);
	snprintf(args, sizeof(args), "--kallsyms %s", path);
	doc = run_json(args, 0);
	assert_string_equal(json_string_value(json_object_get(doc, "source")), "kallsyms");
	assert_string_equal(json_string_value(json_object_get(doc, "text_base")),
			    "0xffffffff81000000");
	assert_string_equal(json_string_value(json_object_get(doc, "bytes")), "none");
	e = region(doc, "entry_text");
	assert_string_equal(json_string_value(json_object_get(e, "start_offset")), "0x10");
	assert_string_equal(json_string_value(json_object_get(e, "end_offset")), "0x1a87");
	assert_int_equal(jint(e, "size"), 6775);
	assert_int_equal(jint(e, "align"), 16);
	assert_int_equal(jint(e, "lines"), 107);
	assert_int_equal(jint(e, "pages_4k"), 2);
	assert_int_equal(jint(e, "pages_2m"), 1);
	assert_string_equal(json_string_value(json_array_get(
				    json_object_get(e, "shared_first_line_with"), 0)),
			    "srso_alias_untrain_ret");
	assert_true(json_is_null(json_object_get(e, "padding")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(e, "fill_after"),
							      "kind")), "unknown");
	irq = region(doc, "irqentry_text");
	assert_string_equal(json_string_value(json_object_get(irq, "parent")), "entry_text");
	assert_true(json_is_true(json_object_get(region(doc, "split_text"), "empty")));
	/* functions called __X_start/_end are not regions; module symbols are skipped */
	assert_int_equal(json_array_size(json_object_get(doc, "regions")), 4);
	json_decref(doc);

	/* --kallsyms=FILE spelling, text output with offsets from _text */
	snprintf(args, sizeof(args), "layout --kallsyms=%s", path);
	assert_int_equal(run(args, &out), 0);
	assert_non_null(strstr(out, "0xffffffff81001a87  _text+0x1a87"));
	free(out);

	/* what an unprivileged read of /proc/kallsyms looks like */
	snprintf(path, sizeof(path), "%s/kallsyms-zero", dir);
	write_file(path, "0000000000000000 T _text\n0000000000000000 T _stext\n", 50);
	snprintf(args, sizeof(args), "layout --kallsyms %s 2>&1", path);
	assert_int_equal(run(args, &out), 3);
	assert_non_null(strstr(out, "need root"));
	free(out);
}

/* The running kernel, when this machine lets us read its real addresses. */
static void test_proc_kallsyms(void **state)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256];
	bool real = false, entry = false;
	json_t *doc;

	(void)state;
	if (!f) {
		printf("/proc/kallsyms not readable: checked on the hand-written file only\n");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (strtoull(line, NULL, 16))
			real = true;
		if (strstr(line, " __entry_text_start\n"))
			entry = true;
	}
	fclose(f);
	if (!real) {
		/* not root: the message must say so */
		assert_int_equal(run("layout --kallsyms >/dev/null 2>&1", NULL), 3);
		return;
	}
	doc = run_json("--kallsyms", 0);
	assert_string_equal(json_string_value(json_object_get(doc, "source")), "kallsyms");
	if (entry) {
		json_t *e = region(doc, "entry_text");

		assert_true(jint(e, "size") > 0);
		assert_int_equal(jint(e, "pages_2m"), 1);
	}
	json_decref(doc);
}

/* ---- --live against a fake kcore ---- */

static const char kallsyms_small[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T startup\n"
	"ffffffff81000040 T __entry_text_start\n"
	"ffffffff81000040 T entry_a\n"
	"ffffffff81000080 T entry_b\n"
	"ffffffff810000c0 T __entry_text_end\n"
	"ffffffff81000100 T after_fn\n"
	"ffffffff81000180 T __fentry__\n"
	"ffffffff81000200 T _etext\n";

static void write_kcore(const char *path)
{
	const uint64_t base = 0xffffffff81000000ull;
	uint8_t text[0x200];
	struct {
		Elf64_Ehdr eh;
		Elf64_Phdr ph[2];
	} h;

	/* int3 fill; entries start with the NOP5 ftrace patched in at boot */
	memset(text, 0xcc, sizeof(text));
	memcpy(text + 0x00, "\x0f\x1f\x44\x00\x00\xc3", 6);
	memcpy(text + 0x40, "\x0f\x1f\x44\x00\x00\x90\x90\x90\x90\x90\x90\x90\x90\x90\x90\x90"
			    "\x90\x90\x90\x90\x90\x90\x90\x90\x90\x90\x90\x90\x90\x90\x74\x00\xc3",
	       33);	/* je at 0x5e..0x60 ends on a 32-byte boundary */
	memcpy(text + 0x80, "\xf3\x0f\x1e\xfa\x0f\x1f\x44\x00\x00\xc3", 10);
	memcpy(text + 0x100, "\xc3", 1);
	memcpy(text + 0x180, "\xc3", 1);
	memset(&h, 0, sizeof(h));
	memcpy(h.eh.e_ident, ELFMAG, SELFMAG);
	h.eh.e_ident[EI_CLASS] = ELFCLASS64;
	h.eh.e_ident[EI_DATA] = ELFDATA2LSB;
	h.eh.e_ident[EI_VERSION] = EV_CURRENT;
	h.eh.e_type = ET_CORE;
	h.eh.e_machine = EM_X86_64;
	h.eh.e_version = EV_CURRENT;
	h.eh.e_phoff = offsetof(__typeof__(h), ph);
	h.eh.e_ehsize = sizeof(Elf64_Ehdr);
	h.eh.e_phentsize = sizeof(Elf64_Phdr);
	h.eh.e_phnum = 2;
	h.ph[0].p_type = PT_NOTE;
	h.ph[1].p_type = PT_LOAD;
	h.ph[1].p_offset = sizeof(h);
	h.ph[1].p_vaddr = base;
	h.ph[1].p_filesz = h.ph[1].p_memsz = sizeof(text);

	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(&h, sizeof(h), 1, f), 1);
	assert_int_equal(fwrite(text, sizeof(text), 1, f), 1);
	fclose(f);
}

static void test_live(void **state)
{
	char ks[512], core[512], rules[512], args[2048], *out;
	json_t *doc, *e, *res;

	(void)state;
	snprintf(ks, sizeof(ks), "%s/kallsyms-small", dir);
	snprintf(core, sizeof(core), "%s/kcore", dir);
	snprintf(rules, sizeof(rules), "%s/live.rules", dir);
	write_file(ks, kallsyms_small, sizeof(kallsyms_small) - 1);
	write_kcore(core);
	write_file(rules, "ftrace-site no-straddle 64\n", 27);
	snprintf(args, sizeof(args), "--kallsyms %s --live=%s --jcc --rules %s", ks, core, rules);
	doc = run_json(args, 0);
	assert_string_equal(json_string_value(json_object_get(doc, "bytes")), "kcore");
	e = region(doc, "entry_text");
	assert_int_equal(jint(json_object_get(e, "jcc"), "affected"), 1);
	assert_int_equal(jint(json_object_get(e, "jcc"), "units"), 3);
	assert_string_equal(json_string_value(json_object_get(json_object_get(e, "fill_after"),
							      "kind")), "int3");
	/* the patched NOP5s are found in the live bytes: 3 sites, after ENDBR for entry_b */
	res = json_array_get(json_object_get(doc, "rules"), 0);
	assert_true(json_is_true(json_object_get(res, "ok")));
	assert_string_equal(json_string_value(json_object_get(res, "note")),
			    "3 ftrace sites checked");
	json_decref(doc);

	/* no kcore: a clear warning, the symbols-only audit, exit 0 */
	snprintf(args, sizeof(args), "layout --kallsyms %s --live=%s/none --json 2>&1 >/dev/null", ks,
		 dir);
	assert_int_equal(run(args, &out), 0);
	assert_non_null(strstr(out, "--live: "));
	assert_non_null(strstr(out, "continuing with symbols only"));
	free(out);
	/*
	 * text that the core covers only in part: the hole is named and found before
	 * a buffer for the whole (255 MiB here) is allocated
	 */
	snprintf(args, sizeof(args), "%s/kallsyms-hole", dir);
	write_file(args, "ffffffff81000000 T _text\nffffffff90f00000 T _etext\n", 51);
	snprintf(args, sizeof(args), "layout --kallsyms %s/kallsyms-hole --live=%s 2>&1 >/dev/null",
		 dir, core);
	assert_int_equal(run(args, &out), 0);
	assert_non_null(strstr(out, "kcore: 0xffffffff81000200 is in no PT_LOAD segment; "
				    "continuing with symbols only"));
	free(out);
	/* a file that is not a core */
	snprintf(args, sizeof(args), "layout --kallsyms %s --live=%s 2>&1 >/dev/null", ks, ks);
	assert_int_equal(run(args, &out), 0);
	assert_non_null(strstr(out, "not a little-endian ELF64 core"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figures),
		cmocka_unit_test(test_object_file),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_rules_text_and_status),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_kallsyms),
		cmocka_unit_test(test_proc_kallsyms),
		cmocka_unit_test(test_live),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
