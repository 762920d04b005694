// SPDX-License-Identifier: MIT
/*
 * Layout rules: the line format (good lines, and bad ones with the line
 * number in the message) and every rule kind in both directions, holding
 * and failing, on the hand-built models of test_layout_models.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "noplab/rules.h"
#include "test_layout_models.h"

struct parse_row {
	int line;
	const char *text;
	int err;		/* 0 or -NL_E_FORMAT */
	const char *msg;	/* substring of the error, or NULL */
	size_t nr;		/* rules when it parses */
	enum nl_rule_kind kind;	/* of the first rule */
	uint64_t value, unit;
};

static const struct parse_row parse_rows[] = {
	{ SRC_LINE, "region entry_text align 2M\n", 0, NULL, 1, NL_RULE_ALIGN, 2u << 20, 0 },
	{ SRC_LINE, "region entry_text align 0x40", 0, NULL, 1, NL_RULE_ALIGN, 64, 0 },
	{ SRC_LINE, "  region\tentry_text   end-align 4KiB  # trailing comment\n", 0, NULL, 1,
	  NL_RULE_END_ALIGN, 4096, 0 },
	{ SRC_LINE, "# only comments\n\n   \n# and blanks\n", 0, NULL, 0, 0, 0, 0 },
	{ SRC_LINE, "region e max-size 1G", 0, NULL, 1, NL_RULE_MAX_SIZE, 1u << 30, 0 },
	{ SRC_LINE, "region e max-pages 1 2M", 0, NULL, 1, NL_RULE_MAX_PAGES, 1, 2u << 20 },
	{ SRC_LINE, "region e max-pages 3", 0, NULL, 1, NL_RULE_MAX_PAGES, 3, 4096 },
	{ SRC_LINE, "region e max-lines 107", 0, NULL, 1, NL_RULE_MAX_LINES, 107, 64 },
	{ SRC_LINE, "region e exclusive-lines", 0, NULL, 1, NL_RULE_EXCLUSIVE, 0, 64 },
	{ SRC_LINE, "region e exclusive-pages 2M", 0, NULL, 1, NL_RULE_EXCLUSIVE, 0, 2u << 20 },
	{ SRC_LINE, "region e exclusive 2M after", 0, NULL, 1, NL_RULE_EXCLUSIVE, 0, 2u << 20 },
	{ SRC_LINE, "region irqentry_text inside entry_text", 0, NULL, 1, NL_RULE_INSIDE, 0, 0 },
	{ SRC_LINE, "functions align 16\nftrace-site no-straddle 64 in e\njcc max 0 in e\n", 0,
	  NULL, 3, NL_RULE_FUNC_ALIGN, 16, 0 },
	{ SRC_LINE, "optional region cpuidle_text present", 0, NULL, 1, NL_RULE_PRESENT, 0, 0 },
	/* malformed: the message names the source and the line */
	{ SRC_LINE, "region e align 3", -NL_E_FORMAT, "t.rules:1: align: 3 is not a power of two", 0,
	  0, 0, 0 },
	{ SRC_LINE, "region e present\n\nregoin e present\n", -NL_E_FORMAT,
	  "t.rules:3: unknown rule 'regoin'", 0, 0, 0, 0 },
	{ SRC_LINE, "region e", -NL_E_FORMAT, "t.rules:1: region e: missing condition", 0, 0, 0, 0 },
	{ SRC_LINE, "region e sparkles", -NL_E_FORMAT, "unknown condition 'sparkles'", 0, 0, 0, 0 },
	{ SRC_LINE, "region e max-pages 1 8K", -NL_E_FORMAT, "page size '8K'", 0, 0, 0, 0 },
	{ SRC_LINE, "region e max-pages lots", -NL_E_FORMAT, "'lots' is not a count", 0, 0, 0, 0 },
	{ SRC_LINE, "region e align 2Q", -NL_E_FORMAT, "'2Q' is not a size", 0, 0, 0, 0 },
	{ SRC_LINE, "jcc max", -NL_E_FORMAT, "jcc max: missing count", 0, 0, 0, 0 },
	{ SRC_LINE, "jcc max 0 in", -NL_E_FORMAT, "expected 'in REGION'", 0, 0, 0, 0 },
	{ SRC_LINE, "jcc min 0", -NL_E_FORMAT, "expected 'jcc max N", 0, 0, 0, 0 },
	{ SRC_LINE, "functions align 16 extra", -NL_E_FORMAT, "expected 'in REGION'", 0, 0, 0, 0 },
	{ SRC_LINE, "region e exclusive 64 sideways", -NL_E_FORMAT, "'before' or 'after'", 0, 0, 0,
	  0 },
	{ SRC_LINE, "region e present now", -NL_E_FORMAT, "unexpected 'now'", 0, 0, 0, 0 },
	{ SRC_LINE, "optional", -NL_E_FORMAT, "'optional' needs a rule", 0, 0, 0, 0 },
	{ SRC_LINE, "ftrace-site straddles 64", -NL_E_FORMAT, "no-straddle", 0, 0, 0, 0 },
};

static void test_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(parse_rows) / sizeof(parse_rows[0]); i++) {
		const struct parse_row *r = &parse_rows[i];
		struct nl_rules rules;
		struct nl_diag d;
		int err;

		nl_diag_init(&d);
		err = nl_rules_parse(r->text, strlen(r->text), "t.rules", &rules, &d);
		if (err != r->err)
			row_fail(r, "'%s': error %d (%s), want %d", r->text, err, d.msg, r->err);
		if (err) {
			if (!strstr(d.msg, r->msg))
				row_fail(r, "message '%s' lacks '%s'", d.msg, r->msg);
			continue;
		}
		if (rules.nr != r->nr)
			row_fail(r, "%zu rules, want %zu", rules.nr, r->nr);
		if (r->nr && (rules.v[0].kind != r->kind || rules.v[0].value != r->value ||
			      rules.v[0].unit != r->unit))
			row_fail(r, "kind %d value %llu unit %llu", rules.v[0].kind,
				 (unsigned long long)rules.v[0].value,
				 (unsigned long long)rules.v[0].unit);
		nl_rules_release(&rules);
	}
}

static void test_parse_nul_and_builtin(void **state)
{
	struct nl_rules rules;
	struct nl_diag d;

	(void)state;
	nl_diag_init(&d);
	assert_int_equal(nl_rules_parse("region e present\n\0x", 19, "bin", &rules, &d),
			 -NL_E_FORMAT);
	assert_non_null(strstr(d.msg, "bin:2: a NUL byte"));
	/* a long rule parses; its text is cut to the field, never past it */
	{
		char line[256], a[96], b[96];

		memset(a, 'a', 95);
		a[95] = '\0';
		memset(b, 'b', 95);
		b[95] = '\0';
		snprintf(line, sizeof(line), "optional region %s inside %s", a, b);
		assert_int_equal(nl_rules_parse(line, strlen(line), "long", &rules, &d), 0);
		assert_int_equal(rules.nr, 1);
		assert_string_equal(rules.v[0].other, b);
		assert_int_equal(strlen(rules.v[0].text), sizeof(rules.v[0].text) - 1);
		assert_int_equal(strncmp(rules.v[0].text, line, sizeof(rules.v[0].text) - 1), 0);
		nl_rules_release(&rules);
	}
	/* the built-in set parses, and a name with a slash is a file */
	assert_int_equal(nl_rules_load("kernel-x86_64", &rules, &d), 0);
	assert_true(rules.nr >= 4);
	assert_string_equal(rules.source, "kernel-x86_64");
	nl_rules_release(&rules);
	assert_int_equal(nl_rules_load("./kernel-x86_64", &rules, &d), -ENOENT);
	assert_non_null(strstr(d.msg, "built-in sets: kernel-x86_64"));
}

/* ---- evaluation: every kind, holding and failing ---- */

enum model { M_KALLSYMS, M_BYTES };

struct eval_row {
	int line;
	enum model model;
	const char *rule;
	enum nl_rule_status status;
	size_t nr_violations;
	uint64_t first_addr;	/* of the first violation, when it has one */
	const char *first_sym;	/* symbol at it, or NULL */
	const char *msg;	/* substring of the first violation or of the note */
};

static const struct eval_row eval_rows[] = {
	{ SRC_LINE, M_KALLSYMS, "region entry_text present", NL_RULE_HOLDS, 0, 0, NULL,
	  "6775 bytes" },
	{ SRC_LINE, M_KALLSYMS, "region nosuch present", NL_RULE_FAILS, 1, 0, NULL,
	  "no region nosuch" },
	{ SRC_LINE, M_KALLSYMS, "optional region nosuch present", NL_RULE_SKIPPED, 0, 0, NULL,
	  "no region nosuch" },
	{ SRC_LINE, M_KALLSYMS, "region entry_text align 16", NL_RULE_HOLDS, 0, 0, NULL, NULL },
	{ SRC_LINE, M_KALLSYMS, "region entry_text align 2M", NL_RULE_FAILS, 1, K(0x10), NULL,
	  "aligned to 16 bytes, not 2 MiB" },
	{ SRC_LINE, M_KALLSYMS, "region entry_text end-align 1", NL_RULE_HOLDS, 0, 0, NULL, NULL },
	{ SRC_LINE, M_KALLSYMS, "region entry_text end-align 8", NL_RULE_FAILS, 1, K(0x1a87), NULL,
	  "ends at 0xffffffff81001a87" },
	{ SRC_LINE, M_KALLSYMS, "region entry_text max-size 6775", NL_RULE_HOLDS, 0, 0, NULL, NULL },
	{ SRC_LINE, M_KALLSYMS, "region entry_text max-size 6774", NL_RULE_FAILS, 1, K(0x10), NULL,
	  "6775 bytes, more than 6774 bytes" },
	{ SRC_LINE, M_KALLSYMS, "region entry_text max-lines 107", NL_RULE_HOLDS, 0, 0, NULL, NULL },
	{ SRC_LINE, M_KALLSYMS, "region entry_text max-lines 106", NL_RULE_FAILS, 1, K(0x10), NULL,
	  "touches 107 cache lines" },
	{ SRC_LINE, M_KALLSYMS, "region entry_text max-pages 1 2M", NL_RULE_HOLDS, 0, 0, NULL,
	  NULL },
	{ SRC_LINE, M_KALLSYMS, "region entry_text max-pages 1", NL_RULE_FAILS, 1, K(0x10), NULL,
	  "touches 2 pages of 4 KiB" },
	{ SRC_LINE, M_KALLSYMS, "region entry_text exclusive-lines", NL_RULE_FAILS, 1, K(0), NULL,
	  "with srso_alias_untrain_ret (16 bytes" },
	{ SRC_LINE, M_KALLSYMS, "region entry_text exclusive 64 after", NL_RULE_HOLDS, 0, 0, NULL,
	  NULL },
	{ SRC_LINE, M_KALLSYMS, "region entry_text exclusive 2M after", NL_RULE_FAILS, 1, K(0x1a87),
	  NULL, "after it with srso_alias_safe_ret" },
	{ SRC_LINE, M_KALLSYMS, "region irqentry_text exclusive-lines", NL_RULE_FAILS, 1, K(0xf70),
	  "common_interrupt_return", "common_interrupt_return" },
	{ SRC_LINE, M_KALLSYMS, "region irqentry_text exclusive 64 before", NL_RULE_HOLDS, 0, 0,
	  NULL, NULL },
	{ SRC_LINE, M_KALLSYMS, "region irqentry_text inside entry_text", NL_RULE_HOLDS, 0, 0, NULL,
	  NULL },
	{ SRC_LINE, M_KALLSYMS, "region entry_text inside irqentry_text", NL_RULE_FAILS, 1, K(0x10),
	  NULL, "is not inside irqentry_text" },
	{ SRC_LINE, M_KALLSYMS, "region spinlock_text inside text", NL_RULE_HOLDS, 0, 0, NULL,
	  NULL },
	{ SRC_LINE, M_KALLSYMS, "functions align 16 in irqentry_text", NL_RULE_HOLDS, 0, 0, NULL,
	  "1 functions checked" },
	{ SRC_LINE, M_KALLSYMS, "functions align 16 in entry_text", NL_RULE_FAILS, 1, K(0x18e6),
	  "__end_entry_SYSENTER_compat", "aligned to 2 bytes, not 16 bytes" },
	{ SRC_LINE, M_KALLSYMS, "ftrace-site no-straddle 64", NL_RULE_SKIPPED, 0, 0, NULL,
	  "no text bytes" },
	{ SRC_LINE, M_KALLSYMS, "jcc max 0", NL_RULE_SKIPPED, 0, 0, NULL, "no branch audit" },
	{ SRC_LINE, M_BYTES, "ftrace-site no-straddle 16", NL_RULE_FAILS, 1, B(0xbc), "f3",
	  "straddles the 16 bytes boundary at 0x4000c0" },
	{ SRC_LINE, M_BYTES, "ftrace-site no-straddle 64 in hotsec", NL_RULE_FAILS, 1, B(0xbc), "f3",
	  "straddles" },
	{ SRC_LINE, M_BYTES, "ftrace-site no-straddle 8", NL_RULE_FAILS, 2, B(0x44), "f1", NULL },
	{ SRC_LINE, M_BYTES, "ftrace-site no-straddle 128", NL_RULE_HOLDS, 0, 0, NULL,
	  "3 ftrace sites checked" },
	{ SRC_LINE, M_BYTES, "functions align 16 in hotsec", NL_RULE_FAILS, 1, B(0xbc), "f3",
	  "f3 at 0x4000bc is aligned to 4 bytes" },
	{ SRC_LINE, M_BYTES, "functions align 64 in hotsec", NL_RULE_FAILS, 2, B(0x70), "f2", NULL },
	{ SRC_LINE, M_BYTES, "jcc max 2 in hotsec", NL_RULE_HOLDS, 0, 0, NULL, "2 of 7 branch" },
	{ SRC_LINE, M_BYTES, "jcc max 1 in hotsec", NL_RULE_FAILS, 2, B(0x7e), "f2",
	  "jcc 0x40007e-0x400080 (2 bytes) ends on 0x400080" },
	{ SRC_LINE, M_BYTES, "jcc max 0", NL_RULE_FAILS, 2, B(0x7e), "f2", NULL },
	{ SRC_LINE, M_BYTES, "region hotsec exclusive-lines", NL_RULE_HOLDS, 0, 0, NULL, NULL },
	{ SRC_LINE, M_BYTES, "region hotsec exclusive-pages", NL_RULE_FAILS, 2, B(0), "a",
	  "shares the 4 KiB page at 0x400000 before it with a" },
	{ SRC_LINE, M_BYTES, "region hotsec align 64", NL_RULE_HOLDS, 0, 0, NULL, NULL },
};

static void build(enum model m, struct nl_layout_input *in, uint8_t *text,
		  struct nl_layout **lay)
{
	struct nl_layout_opts o = { .jcc = m == M_BYTES };

	if (m == M_KALLSYMS)
		kallsyms_618(in);
	else
		bytes_model(in, text);
	assert_int_equal(nl_layout_analyze(in, &o, lay, NULL), 0);
}

static void test_eval(void **state)
{
	static uint8_t text[0x300];
	struct nl_layout_input in[2];
	struct nl_layout *lay[2];

	(void)state;
	build(M_KALLSYMS, &in[0], NULL, &lay[0]);
	build(M_BYTES, &in[1], text, &lay[1]);
	for (size_t i = 0; i < sizeof(eval_rows) / sizeof(eval_rows[0]); i++) {
		const struct eval_row *r = &eval_rows[i];
		struct nl_rules rules;
		struct nl_rule_result *res;
		size_t nr;
		struct nl_diag d;

		nl_diag_init(&d);
		if (nl_rules_parse(r->rule, strlen(r->rule), "row", &rules, &d))
			row_fail(r, "'%s' does not parse: %s", r->rule, d.msg);
		assert_int_equal(nl_rules_eval(&rules, lay[r->model], &res, &nr, &d), 0);
		assert_int_equal(nr, 1);
		if (res->status != r->status)
			row_fail(r, "'%s': status %d, want %d (%s)", r->rule, res->status, r->status,
				 res->nr_v ? res->v[0].msg : res->note);
		if (res->nr_v != r->nr_violations)
			row_fail(r, "'%s': %zu violations, want %zu (%s)", r->rule, res->nr_v,
				 r->nr_violations, res->nr_v ? res->v[0].msg : "");
		if (r->nr_violations && r->first_addr &&
		    (!res->v[0].has_addr || res->v[0].addr != r->first_addr))
			row_fail(r, "'%s': first violation at %#llx", r->rule,
				 (unsigned long long)res->v[0].addr);
		if (r->first_sym && (!res->v[0].symbol || strcmp(res->v[0].symbol, r->first_sym)))
			row_fail(r, "'%s': symbol %s", r->rule,
				 res->v[0].symbol ? res->v[0].symbol : "none");
		if (r->msg) {
			const char *where = res->nr_v ? res->v[0].msg : res->note;

			if (!strstr(where, r->msg))
				row_fail(r, "'%s': '%s' lacks '%s'", r->rule, where, r->msg);
		}
		nl_rule_results_free(res, nr);
		nl_rules_release(&rules);
	}
	for (int m = 0; m < 2; m++) {
		nl_layout_free(lay[m]);
		nl_layout_input_release(&in[m]);
	}
}

/* The built-in set holds on the 6.18 layout, and fails when the entry text spills. */
static void test_builtin_on_618(void **state)
{
	struct nl_layout_input in;
	struct nl_layout *lay;
	struct nl_rules rules;
	struct nl_rule_result *res;
	size_t nr, fails = 0;

	(void)state;
	build(M_KALLSYMS, &in, NULL, &lay);
	assert_int_equal(nl_rules_load("kernel-x86_64", &rules, NULL), 0);
	assert_int_equal(nl_rules_eval(&rules, lay, &res, &nr, NULL), 0);
	for (size_t i = 0; i < nr; i++)
		if (res[i].status == NL_RULE_FAILS)
			fail_msg("built-in rule '%s' fails on 6.18: %s", res[i].rule->text,
				 res[i].v[0].msg);
	nl_rule_results_free(res, nr);
	nl_layout_free(lay);

	/* move __entry_text_end past the 2 MiB boundary: max-pages 1 2M must fail */
	for (size_t i = 0; i < in.nr_syms; i++)
		if (!strcmp(in.syms[i].name, "__entry_text_end"))
			in.syms[i].addr = K(0x200010);
	assert_int_equal(nl_layout_prepare(&in, NULL), 0);
	assert_int_equal(nl_layout_analyze(&in, NULL, &lay, NULL), 0);
	assert_int_equal(nl_rules_eval(&rules, lay, &res, &nr, NULL), 0);
	for (size_t i = 0; i < nr; i++)
		if (res[i].status == NL_RULE_FAILS) {
			fails++;
			assert_int_equal(res[i].rule->kind, NL_RULE_MAX_PAGES);
		}
	assert_int_equal(fails, 1);
	nl_rule_results_free(res, nr);
	nl_rules_release(&rules);
	nl_layout_free(lay);
	nl_layout_input_release(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_nul_and_builtin),
		cmocka_unit_test(test_eval),
		cmocka_unit_test(test_builtin_on_618),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
