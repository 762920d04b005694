// SPDX-License-Identifier: MIT
/*
 * noplab layout: where the text regions (.entry.text and friends) sit, what
 * they share lines and pages with, the fill around them, the branch
 * alignment audit, rules that gate a build, and an SVG map.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "noplab/elf.h"
#include "noplab/kcore.h"
#include "noplab/layout.h"
#include "noplab/rules.h"
#include "noplab/scan.h"
#include "noplab/symfile.h"

#define SHOW_VIOLATIONS 20

struct layout_cli_opts {
	bool json, functions, jcc, kallsyms, live;
	const char *output, *rules, *svg, *symbols, *kcore, *file;
	unsigned threads;
	uint64_t max_decompressed;	/* 0: the library's default bounds */
	uint64_t max_records;		/* 0: NL_ELF_MAX_RECORDS */
};

static void layout_usage(FILE *f)
{
	fprintf(f,
		"usage: noplab layout [--json] [-o FILE] [--functions] [--jcc] [--rules FILE|kernel-x86_64]\n"
		"                     [--svg FILE] [--kallsyms [FILE]] [--live[=KCORE]]\n"
		"                     [--max-decompressed SIZE] [--max-records N] [FILE]\n\n"
		"Where the text regions of an ELF file sit (.entry.text, .noinstr.text, ... as\n"
		"sections in a .o/.ko, as __X_start/__X_end ranges in vmlinux): start, end, size,\n"
		"alignment, the cache lines and pages they touch, the code they share their\n"
		"first and last line and page with, functions, padding inside and fill around.\n\n"
		"  --functions        list the functions of each region (entry class, alignment)\n"
		"  --jcc              decode the text: branches that cross or end on a 32-byte\n"
		"                     boundary (the JCC erratum condition), per region and function\n"
		"  --rules R          check rules from file R, or the built-in set kernel-x86_64;\n"
		"                     exit 1 when one fails (format: see README)\n"
		"  --svg FILE         draw the address map as SVG\n"
		"  --kallsyms [FILE]  the running kernel from its symbols (default /proc/kallsyms;\n"
		"                     real addresses need root), offsets shown from _text\n"
		"  --live[=KCORE]     with --kallsyms: read the text bytes from /proc/kcore\n"
		"  --symbols FILE     add System.map symbols to a stripped ELF file\n"
		"  --threads N        decode threads for --jcc (default 2)\n"
		"  --max-decompressed SIZE\n"
		"                     refuse a compressed module that inflates past SIZE (K/M/G);\n"
		"                     default 1G, and at most 64x the compressed size beyond 64M\n"
		"  --max-records N    refuse a file with more than N symbols + relocations\n"
		"                     (K/M suffixes; default 16M)\n"
		"  --json             JSON instead of text;  -o FILE  write it to FILE\n\n"
		"Exit status: 0 ok, 1 a rule failed, 2 usage error, 3 a file is missing or\n"
		"malformed (the rules file included, with its line number).\n");
}

static char *th(uint64_t v, char *buf)
{
	return cli_thousands(v, buf, 32);
}

static json_t *addr_json(uint64_t a)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, a);
	return json_string(buf);
}

static char *size_str(uint64_t v, char *buf, size_t size)
{
	if (v >= (1ull << 30) && !(v % (1ull << 30)))
		snprintf(buf, size, "%" PRIu64 "G", v >> 30);
	else if (v >= (1ull << 20) && !(v % (1ull << 20)))
		snprintf(buf, size, "%" PRIu64 "M", v >> 20);
	else if (v >= 1024 && !(v % 1024))
		snprintf(buf, size, "%" PRIu64 "K", v >> 10);
	else
		snprintf(buf, size, "%" PRIu64, v);
	return buf;
}

/* "  (_text+0x1a87)" for kallsyms, where KASLR makes absolute addresses vary */
static const char *rel_str(const struct nl_layout_input *in, uint64_t a, char *buf, size_t size)
{
	if (!in->has_text_base || a < in->text_base) {
		buf[0] = '\0';
		return buf;
	}
	snprintf(buf, size, "_text+0x%" PRIx64, a - in->text_base);
	return buf;
}

static int depth_of(const struct nl_layout *lay, const struct nl_region *r)
{
	int d = 0;

	for (int p = r->parent; p >= 0 && d < 16; p = lay->regions[p].parent)
		d++;
	return d;
}

static const char *kind_str(enum nl_region_kind k)
{
	return k == NL_REGION_SECTION ? "section" : "range";
}

static const char *status_str(enum nl_rule_status s)
{
	return s == NL_RULE_HOLDS ? "PASS" : s == NL_RULE_FAILS ? "FAIL" : "SKIP";
}

/* ---- text ---- */

static void print_neigh(const char *label, const struct nl_neigh *n, const struct nl_region *r,
			bool line)
{
	printf("  %-22s 0x%016" PRIx64 "  ", label, n->unit_start);
	if (r->empty) {
		printf("-\n");
		return;
	}
	if (!n->nr_names) {
		printf("exclusive\n");
		return;
	}
	printf("shared with ");
	for (size_t i = 0; i < n->nr_names && i < NL_NEIGH_MAX; i++)
		printf("%s%s", i ? ", " : "", n->names[i]);
	if (n->nr_names > NL_NEIGH_MAX)
		printf(" and %zu more", n->nr_names - NL_NEIGH_MAX);
	printf(" (%" PRIu64 " of its %u bytes)\n", n->foreign_bytes, line ? NL_LINE : NL_PAGE_4K);
}

static void print_fill(const char *label, const struct nl_fill *f, bool after,
		       const struct nl_layout_input *in)
{
	char a[32], b[32];
	uint64_t n = f->to - f->from;

	printf("  %-22s ", label);
	if (f->kind == NL_FILL_NONE || (!n && f->kind != NL_FILL_UNKNOWN)) {
		printf("none\n");
		return;
	}
	if (f->kind == NL_FILL_UNKNOWN) {
		if (!n)
			printf("unknown (no bytes)\n");
		else
			printf("%s bytes without symbols %s 0x%" PRIx64 " (aligned to %s); "
			       "contents unknown: no bytes%s\n", th(n, a), after ? "up to" : "from",
			       after ? f->to : f->from, size_str(f->to_align, b, sizeof(b)),
			       in->from_symfile ? " (--live reads them)" : "");
		return;
	}
	printf("%s bytes of %s %s 0x%" PRIx64 " (aligned to %s)\n", th(n, a),
	       nl_fill_kind_name(f->kind), after ? "up to" : "from", after ? f->to : f->from,
	       size_str(f->to_align, b, sizeof(b)));
}

static void print_jcc_counts(const char *label, const struct nl_jcc_counts *c)
{
	char a[32], b[32], d[32];

	printf("  %-22s %s units, %s fused, %s cross or end on a 32-byte boundary", label,
	       th(c->units, a), th(c->fused, b), th(c->affected, d));
	if (c->units)
		printf(" (%.2f%%)", 100.0 * (double)c->affected / (double)c->units);
	printf("\n");
}

/* A function is listed under the innermost region holding it, once. */
static bool in_child(const struct nl_layout *lay, const struct nl_region *r, uint64_t addr)
{
	for (size_t i = 0; i < lay->nr_regions; i++) {
		const struct nl_region *c = &lay->regions[i];

		if (c->parent >= 0 && &lay->regions[c->parent] == r && addr >= c->start &&
		    addr < c->end)
			return true;
	}
	return false;
}

static void print_function_rows(const struct nl_layout *lay, const struct nl_region *r)
{
	char a[32], b[32];
	size_t own = 0;

	for (size_t i = 0; i < r->nr_funcs; i++)
		own += !in_child(lay, r, lay->funcs[r->func_first + i].addr);
	if (!own)
		return;
	printf("  %-40s %-18s %10s %6s  %-22s %s\n", "FUNCTION", "ADDRESS", "SIZE", "ALIGN",
	       "ENTRY", lay->jcc_done ? "JCC UNITS/AFFECTED" : "");
	for (size_t i = 0; i < r->nr_funcs; i++) {
		const struct nl_layout_func *f = &lay->funcs[r->func_first + i];

		if (in_child(lay, r, f->addr))
			continue;
		printf("  %-40s 0x%016" PRIx64 " %9s%s %6s  %-22s", f->name, f->addr, th(f->size, a),
		       f->size_inferred ? "~" : " ", size_str(nl_layout_func_align(lay, f), b, sizeof(b)),
		       f->entry_class ? f->entry_class : "-");
		if (f->jcc_known)
			printf(" %" PRIu64 "/%" PRIu64, f->jcc.units, f->jcc.affected);
		printf("\n");
		if (!f->jcc_known || !f->jcc.affected)
			continue;
		/* the affected units of this function, from the sorted list */
		printf("  %-40s   crossing:", "");
		for (size_t k = 0; k < lay->jcc.nr_affected; k++) {
			const struct nl_jcc_unit *u = &lay->jcc.affected[k];

			if (u->addr < f->addr || u->addr >= f->addr + f->size)
				continue;
			printf(" +0x%" PRIx64 " %s/%u", u->addr - f->addr, nl_jcc_kind_name(u->kind),
			       u->len);
		}
		printf("\n");
	}
}

static void print_region(const struct nl_layout *lay, const struct nl_region *r,
			 const struct layout_cli_opts *o)
{
	const struct nl_layout_input *in = lay->in;
	char a[32], b[32], c[32], rel[48];

	printf("\n%s (%s", r->name, kind_str(r->kind));
	if (r->kind == NL_REGION_RANGE)
		printf(" [%s, %s)", r->start_sym, r->end_sym);
	if (r->sec >= 0 && r->kind == NL_REGION_RANGE)
		printf(" in %s", in->secs[r->sec].name);
	if (r->parent >= 0)
		printf(", inside %s", lay->regions[r->parent].name);
	printf(")%s\n", r->empty ? "  EMPTY" : "");
	printf("  %-22s 0x%016" PRIx64 "%s%s\n", "start", r->start, in->has_text_base ? "  " : "",
	       rel_str(in, r->start, rel, sizeof(rel)));
	printf("  %-22s 0x%016" PRIx64 "%s%s\n", "end", r->end, in->has_text_base ? "  " : "",
	       rel_str(in, r->end, rel, sizeof(rel)));
	printf("  %-22s %s bytes\n", "size", th(r->size, a));
	printf("  %-22s start %s, end %s; 4 KiB aligned: %s, 2 MiB aligned: %s%s\n", "alignment",
	       size_str(r->align_start, a, sizeof(a)), size_str(r->align_end, b, sizeof(b)),
	       r->align_start >= NL_PAGE_4K ? "yes" : "no", r->align_start >= NL_PAGE_2M ? "yes" : "no",
	       in->is_rel ? " (a .o: as far as sh_addralign promises)" : "");
	printf("  %-22s %s cache line%s, %s page%s of 4 KiB, %s of 2 MiB\n", "touches",
	       th(r->lines, a), r->lines == 1 ? "" : "s", th(r->pages_4k, b),
	       r->pages_4k == 1 ? "" : "s", th(r->pages_2m, c));
	if (in->is_rel && r->kind == NL_REGION_SECTION) {
		printf("  %-22s decided by the linker (a .o)\n", "neighbours");
	} else {
		print_neigh("first cache line", &r->first_line, r, true);
		if (r->last_line.unit_start != r->first_line.unit_start || r->empty)
			print_neigh("last cache line", &r->last_line, r, true);
		else
			printf("  %-22s the same line\n", "last cache line");
		print_neigh("first 4 KiB page", &r->first_page, r, false);
		if (r->last_page.unit_start != r->first_page.unit_start || r->empty)
			print_neigh("last 4 KiB page", &r->last_page, r, false);
		else
			printf("  %-22s the same page\n", "last 4 KiB page");
	}
	printf("  %-22s %s\n", "functions", th(r->nr_funcs, a));
	if (!r->padding.known)
		printf("  %-22s unknown (symbols without sizes)\n", "padding inside");
	else if (!r->padding.bytes_known)
		printf("  %-22s %s bytes between functions (no bytes to classify)\n", "padding inside",
		       th(r->padding.bytes, a));
	else
	{
		char p1[32], p2[32], p3[32], p4[32], p5[32], p6[32];

		printf("  %-22s %s bytes: %s nop, %s int3, %s zero, %s jmp, %s other (%s in "
		       "__pfx_/__cfi_ preambles)\n", "padding inside", th(r->padding.bytes, a),
		       th(r->padding.nop, p1), th(r->padding.int3, p2), th(r->padding.zero, p3),
		       th(r->padding.jmp, p4), th(r->padding.other, p5), th(r->padding.prefix, p6));
	}
	if (r->kind == NL_REGION_RANGE) {
		print_fill("fill before", &r->fill_before, false, in);
		print_fill("fill after", &r->fill_after, true, in);
	}
	if (r->jcc_known)
		print_jcc_counts("branch alignment", &r->jcc);
	if (o->functions)
		print_function_rows(lay, r);
}

static void print_rules(const struct nl_rules *rules, const struct nl_rule_result *res, size_t nr,
			const struct nl_layout_input *in)
{
	size_t pass = 0, fail = 0, skip = 0;
	char rel[48];

	printf("\nRules (%s)\n", rules->source);
	for (size_t i = 0; i < nr; i++) {
		const struct nl_rule_result *r = &res[i];

		printf("  %s  %-44s %s\n", status_str(r->status), r->rule->text, r->note);
		pass += r->status == NL_RULE_HOLDS;
		fail += r->status == NL_RULE_FAILS;
		skip += r->status == NL_RULE_SKIPPED;
		for (size_t k = 0; k < r->nr_v && k < SHOW_VIOLATIONS; k++) {
			const struct nl_violation *v = &r->v[k];

			if (v->has_addr && v->symbol)
				printf("          0x%016" PRIx64 " %s+0x%" PRIx64 "%s%s: %s\n", v->addr,
				       v->symbol, v->sym_off, in->has_text_base ? " " : "",
				       rel_str(in, v->addr, rel, sizeof(rel)), v->msg);
			else if (v->has_addr)
				printf("          0x%016" PRIx64 "%s%s: %s\n", v->addr,
				       in->has_text_base ? " " : "", rel_str(in, v->addr, rel, sizeof(rel)),
				       v->msg);
			else
				printf("          %s\n", v->msg);
		}
		if (r->nr_v > SHOW_VIOLATIONS)
			printf("          ... and %zu more (--json lists them all)\n",
			       r->nr_v - SHOW_VIOLATIONS);
	}
	printf("rules: %zu pass, %zu fail, %zu skipped\n", pass, fail, skip);
}

struct run_info {
	const char *what;	/* "ELF64 x86-64 ET_EXEC", "kallsyms" */
	double seconds;		/* analysis time */
};

static void print_text(const struct nl_layout *lay, const struct layout_cli_opts *o,
		       const struct run_info *ri, const struct nl_rules *rules,
		       const struct nl_rule_result *res, size_t nr_res)
{
	const struct nl_layout_input *in = lay->in;
	uint64_t text = 0;
	size_t nsec = 0;
	char a[32], b[32], c[32], d[32];

	for (size_t i = 0; i < in->nr_secs; i++)
		if (in->secs[i].exec) {
			text += in->secs[i].size;
			nsec++;
		}
	printf("%s: %s, %zu executable section%s (%s bytes), %s functions, %zu regions\n",
	       in->path, ri->what, nsec, nsec == 1 ? "" : "s", th(text, a), th(lay->nr_funcs, b),
	       lay->nr_regions);
	if (in->has_text_base)
		printf("_text at 0x%" PRIx64 "%s\n", in->text_base,
		       in->from_symfile ? " (addresses move with KASLR; offsets from _text do not)" : "");
	if (in->from_symfile)
		printf("text bytes: %s\n", in->bytes_live ? "read from the running kernel (kcore)"
							  : "none (symbols only)");

	printf("\n  %-28s %-8s %-18s %-18s %12s %6s %9s %6s %4s %8s\n", "REGION", "KIND", "START",
	       "END", "SIZE", "ALIGN", "LINES", "4K", "2M", "FUNCS");
	for (size_t i = 0; i < lay->nr_regions; i++) {
		const struct nl_region *r = &lay->regions[i];
		int dep = depth_of(lay, r);
		char name[64];

		snprintf(name, sizeof(name), "%*s%s", 2 * dep, "", r->name);
		printf("  %-28s %-8s 0x%016" PRIx64 " 0x%016" PRIx64 " %12s %6s %9s %6s %4" PRIu64
		       " %8zu%s\n", name, kind_str(r->kind), r->start, r->end, th(r->size, a),
		       size_str(r->align_start, b, sizeof(b)), th(r->lines, c), th(r->pages_4k, d),
		       r->pages_2m, r->nr_funcs, r->empty ? "  (empty)" : "");
	}
	for (size_t i = 0; i < lay->nr_regions; i++) {
		const struct nl_region *r = &lay->regions[i], *p;

		p = r->parent >= 0 ? &lay->regions[r->parent] : NULL;
		if (p && p->start == r->start && p->end == r->end && !o->functions) {
			printf("\n%s (%s [%s, %s)): the same bytes as %s\n", r->name, kind_str(r->kind),
			       r->start_sym ? r->start_sym : "", r->end_sym ? r->end_sym : "", p->name);
			continue;
		}
		print_region(lay, r, o);
	}
	if (lay->jcc_done) {
		const struct nl_jcc_result *j = &lay->jcc;

		printf("\nBranch alignment (JCC erratum: a branch unit that crosses or ends on a 32-byte "
		       "boundary)\n");
		print_jcc_counts("all text", &j->total);
		for (int k = 0; k < NL_JCC_NR_KINDS; k++)
			printf("    %-20s %12s units %12s affected\n", nl_jcc_kind_name(k),
			       th(j->total.kind_units[k], a), th(j->total.kind_affected[k], b));
		printf("  %-22s %s instructions, %s bytes decoded, %s bytes of int3/nop fill skipped, "
		       "%s undecodable; %.3f s on %u thread%s\n", "decoded", th(j->insns, a),
		       th(j->bytes, b), th(j->fill_skipped, c), th(j->decode_errors, d), ri->seconds,
		       j->threads_used, j->threads_used == 1 ? "" : "s");
	}
	if (rules)
		print_rules(rules, res, nr_res, in);
}

/* ---- JSON ---- */

static json_t *names_json(const struct nl_neigh *n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n->nr_names && i < NL_NEIGH_MAX; i++)
		json_array_append_new(a, json_string(n->names[i]));
	return a;
}

static json_t *neigh_json(const struct nl_neigh *n)
{
	return json_pack("{s:o, s:I, s:o, s:I}", "start", addr_json(n->unit_start), "foreign_bytes",
			 (json_int_t)n->foreign_bytes, "symbols", names_json(n), "nr_symbols",
			 (json_int_t)n->nr_names);
}

static json_t *fill_json(const struct nl_fill *f)
{
	if (f->kind == NL_FILL_UNKNOWN && f->from == f->to)
		return json_null();
	return json_pack("{s:o, s:o, s:I, s:s, s:I}", "from", addr_json(f->from), "to",
			 addr_json(f->to), "bytes", (json_int_t)(f->to - f->from), "kind",
			 nl_fill_kind_name(f->kind), "boundary", (json_int_t)f->to_align);
}

static json_t *jcc_json(const struct nl_jcc_counts *c)
{
	json_t *kinds = json_object();

	for (int k = 0; k < NL_JCC_NR_KINDS; k++)
		json_object_set_new(kinds, nl_jcc_kind_name(k),
				    json_pack("{s:I, s:I}", "units", (json_int_t)c->kind_units[k],
					      "affected", (json_int_t)c->kind_affected[k]));
	return json_pack("{s:I, s:I, s:I, s:o}", "units", (json_int_t)c->units, "fused",
			 (json_int_t)c->fused, "affected", (json_int_t)c->affected, "by_kind", kinds);
}

static json_t *func_json(const struct nl_layout *lay, const struct nl_layout_func *f)
{
	json_t *o = json_pack("{s:s, s:o, s:I, s:b, s:I}", "name", f->name, "addr",
			      addr_json(f->addr), "size", (json_int_t)f->size, "size_inferred",
			      f->size_inferred, "align", (json_int_t)nl_layout_func_align(lay, f));

	json_object_set_new(o, "entry_class", f->entry_class ? json_string(f->entry_class)
							      : json_null());
	if (f->jcc_known) {
		json_t *j = jcc_json(&f->jcc), *at = json_array();

		for (size_t k = 0; k < lay->jcc.nr_affected && f->jcc.affected; k++) {
			const struct nl_jcc_unit *u = &lay->jcc.affected[k];

			if (u->addr >= f->addr && u->addr < f->addr + f->size)
				json_array_append_new(at, json_pack("{s:o, s:s, s:i, s:b}", "addr",
								    addr_json(u->addr), "kind",
								    nl_jcc_kind_name(u->kind), "len",
								    u->len, "ends_on_boundary",
								    u->ends_on_boundary));
		}
		json_object_set_new(j, "affected_units", at);
		json_object_set_new(o, "jcc", j);
	}
	return o;
}

static json_t *region_json(const struct nl_layout *lay, const struct nl_region *r,
			   const struct layout_cli_opts *o)
{
	const struct nl_layout_input *in = lay->in;
	json_t *j = json_pack("{s:s, s:s, s:s, s:o, s:o, s:I, s:b}", "name", r->name, "kind",
			      kind_str(r->kind), "key", r->key, "start", addr_json(r->start), "end",
			      addr_json(r->end), "size", (json_int_t)r->size, "empty", r->empty);

	if (r->kind == NL_REGION_RANGE) {
		json_object_set_new(j, "start_symbol", json_string(r->start_sym));
		json_object_set_new(j, "end_symbol", json_string(r->end_sym));
	}
	if (in->has_text_base && r->start >= in->text_base) {
		json_object_set_new(j, "start_offset", addr_json(r->start - in->text_base));
		json_object_set_new(j, "end_offset", addr_json(r->end - in->text_base));
	}
	json_object_set_new(j, "section", r->sec >= 0 ? json_string(in->secs[r->sec].name)
						      : json_null());
	json_object_set_new(j, "parent", r->parent >= 0 ? json_string(lay->regions[r->parent].name)
							: json_null());
	json_object_set_new(j, "align", json_integer((json_int_t)r->align_start));
	json_object_set_new(j, "align_end", json_integer((json_int_t)r->align_end));
	json_object_set_new(j, "aligned_4k", json_boolean(r->align_start >= NL_PAGE_4K));
	json_object_set_new(j, "aligned_2m", json_boolean(r->align_start >= NL_PAGE_2M));
	json_object_set_new(j, "lines", json_integer((json_int_t)r->lines));
	json_object_set_new(j, "pages_4k", json_integer((json_int_t)r->pages_4k));
	json_object_set_new(j, "pages_2m", json_integer((json_int_t)r->pages_2m));
	json_object_set_new(j, "shared_first_line_with", names_json(&r->first_line));
	json_object_set_new(j, "shared_last_line_with", names_json(&r->last_line));
	json_object_set_new(j, "shared_first_page_with", names_json(&r->first_page));
	json_object_set_new(j, "shared_last_page_with", names_json(&r->last_page));
	json_object_set_new(j, "neighbours",
			    json_pack("{s:o, s:o, s:o, s:o}", "first_line", neigh_json(&r->first_line),
				      "last_line", neigh_json(&r->last_line), "first_page",
				      neigh_json(&r->first_page), "last_page",
				      neigh_json(&r->last_page)));
	json_object_set_new(j, "functions", json_integer((json_int_t)r->nr_funcs));
	if (!r->padding.known)
		json_object_set_new(j, "padding", json_null());
	else if (!r->padding.bytes_known)
		json_object_set_new(j, "padding", json_pack("{s:I}", "bytes",
							    (json_int_t)r->padding.bytes));
	else
		json_object_set_new(j, "padding",
				    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "bytes",
					      (json_int_t)r->padding.bytes, "nop",
					      (json_int_t)r->padding.nop, "int3",
					      (json_int_t)r->padding.int3, "zero",
					      (json_int_t)r->padding.zero, "jmp",
					      (json_int_t)r->padding.jmp, "other",
					      (json_int_t)r->padding.other, "prefix",
					      (json_int_t)r->padding.prefix));
	if (r->kind == NL_REGION_RANGE) {
		json_object_set_new(j, "fill_before", fill_json(&r->fill_before));
		json_object_set_new(j, "fill_after", fill_json(&r->fill_after));
	}
	if (r->jcc_known)
		json_object_set_new(j, "jcc", jcc_json(&r->jcc));
	if (o->functions) {
		json_t *fl = json_array();

		for (size_t i = 0; i < r->nr_funcs; i++)
			if (!in_child(lay, r, lay->funcs[r->func_first + i].addr))
				json_array_append_new(fl, func_json(lay, &lay->funcs[r->func_first + i]));
		json_object_set_new(j, "function_list", fl);
	}
	return j;
}

static json_t *rules_json(const struct nl_rule_result *res, size_t nr)
{
	json_t *a = json_array();

	for (size_t i = 0; i < nr; i++) {
		const struct nl_rule_result *r = &res[i];
		json_t *v = json_array();

		for (size_t k = 0; k < r->nr_v; k++) {
			const struct nl_violation *x = &r->v[k];
			json_t *jx = json_pack("{s:s}", "message", x->msg);

			json_object_set_new(jx, "addr", x->has_addr ? addr_json(x->addr) : json_null());
			json_object_set_new(jx, "symbol", x->symbol ? json_string(x->symbol)
								    : json_null());
			if (x->symbol)
				json_object_set_new(jx, "offset", json_integer((json_int_t)x->sym_off));
			json_array_append_new(v, jx);
		}
		json_t *jr = json_pack("{s:s, s:i}", "rule", r->rule->text, "line", r->rule->line);

		json_object_set_new(jr, "ok", r->status == NL_RULE_SKIPPED
						      ? json_null()
						      : json_boolean(r->status == NL_RULE_HOLDS));
		json_object_set_new(jr, "status", json_string(r->status == NL_RULE_HOLDS ? "pass" :
							      r->status == NL_RULE_FAILS ? "fail" :
											   "skip"));
		json_object_set_new(jr, "note", json_string(r->note));
		json_object_set_new(jr, "violations", v);
		json_array_append_new(a, jr);
	}
	return a;
}

static json_t *doc_json(const struct nl_layout *lay, const struct layout_cli_opts *o,
			const struct run_info *ri, const struct nl_rules *rules,
			const struct nl_rule_result *res, size_t nr_res)
{
	const struct nl_layout_input *in = lay->in;
	json_t *doc = cli_json_doc("layout"), *secs = json_array(), *regs = json_array();

	json_object_set_new(doc, "file", json_string(in->path));
	json_object_set_new(doc, "source", json_string(in->from_symfile ? "kallsyms" : "elf"));
	json_object_set_new(doc, "format", json_string(ri->what));
	json_object_set_new(doc, "mode", json_integer(in->mode));
	json_object_set_new(doc, "text_base", in->has_text_base ? addr_json(in->text_base)
								: json_null());
	json_object_set_new(doc, "bytes", json_string(in->bytes_live ? "kcore" :
						      in->from_symfile ? "none" : "file"));
	for (size_t i = 0; i < in->nr_secs; i++) {
		const struct nl_layout_sec *s = &in->secs[i];

		if (s->exec)
			json_array_append_new(secs, json_pack("{s:s, s:o, s:o, s:I, s:I}", "name",
							      s->name, "start", addr_json(s->addr),
							      "end", addr_json(s->addr + s->size),
							      "size", (json_int_t)s->size, "align",
							      (json_int_t)s->align));
	}
	json_object_set_new(doc, "sections", secs);
	json_object_set_new(doc, "functions", json_integer((json_int_t)lay->nr_funcs));
	for (size_t i = 0; i < lay->nr_regions; i++)
		json_array_append_new(regs, region_json(lay, &lay->regions[i], o));
	json_object_set_new(doc, "regions", regs);
	if (lay->jcc_done) {
		const struct nl_jcc_result *j = &lay->jcc;
		json_t *jj = jcc_json(&j->total);

		json_object_set_new(jj, "boundary", json_integer(32));
		json_object_set_new(jj, "instructions", json_integer((json_int_t)j->insns));
		json_object_set_new(jj, "bytes_decoded", json_integer((json_int_t)j->bytes));
		json_object_set_new(jj, "fill_skipped", json_integer((json_int_t)j->fill_skipped));
		json_object_set_new(jj, "decode_errors", json_integer((json_int_t)j->decode_errors));
		json_object_set_new(jj, "threads", json_integer(j->threads_used));
		json_object_set_new(doc, "jcc", jj);
	}
	if (rules) {
		json_object_set_new(doc, "rules_source", json_string(rules->source));
		json_object_set_new(doc, "rules", rules_json(res, nr_res));
	}
	return doc;
}

/* ---- driver ---- */

struct session {
	struct nl_elf *elf;
	struct nl_symfile *sf;
	struct nl_scan_result *scan;
	struct nl_layout_input in;
	bool in_ready;
	struct nl_layout *lay;
	struct nl_rules rules;
	bool have_rules;
	struct nl_rule_result *res;
	size_t nr_res;
	char what[64];
};

static void session_end(struct session *s)
{
	nl_rule_results_free(s->res, s->nr_res);
	if (s->have_rules)
		nl_rules_release(&s->rules);
	nl_layout_free(s->lay);
	if (s->in_ready)
		nl_layout_input_release(&s->in);
	nl_scan_free(s->scan);
	nl_symfile_free(s->sf);
	nl_elf_close(s->elf);
}

static const char *elf_type(const struct nl_elf *elf)
{
	switch (elf->eh.e_type) {
	case ET_REL: return "ET_REL";
	case ET_EXEC: return "ET_EXEC";
	case ET_DYN: return "ET_DYN";
	}
	return "?";
}

/*
 * scan knows each function's entry class and the ftrace sites (from the
 * bytes and the __mcount_loc records): hand them to the layout input.
 */
static int use_scan(struct session *s, const struct layout_cli_opts *o, struct nl_diag *d)
{
	struct nl_scan_opts so = { .threads = o->threads };
	int err = nl_scan(s->elf, &so, &s->scan, d);

	if (err)
		return err;
	s->in.nr_ftrace_sites = 0;
	s->in.ftrace_known = true;
	for (size_t i = 0; i < s->scan->nr_sites; i++) {
		const struct nl_scan_site *site = &s->scan->sites[i];

		if (site->kind != NL_SITE_CALL && site->kind != NL_SITE_NOP5)
			continue;
		if (nl_layout_add_ftrace_site(&s->in, site->addr))
			return -ENOMEM;
	}
	return nl_layout_prepare(&s->in, d);
}

static void set_entry_classes(struct session *s)
{
	struct nl_layout *lay = s->lay;
	size_t k = 0;

	if (!s->scan)
		return;
	/* both lists are sorted by address */
	for (size_t i = 0; i < s->scan->nr_funcs && k < lay->nr_funcs; i++) {
		uint64_t a = s->scan->funcs[i].addr;

		while (k < lay->nr_funcs && lay->funcs[k].addr < a)
			k++;
		if (k < lay->nr_funcs && lay->funcs[k].addr == a)
			lay->funcs[k].entry_class = nl_entry_class_name(s->scan->fx[i].cls);
	}
}

static int load_input(struct session *s, const struct layout_cli_opts *o, struct nl_diag *d,
		      struct cli_sink *sink, const char **what)
{
	int err;

	if (o->kallsyms) {
		*what = o->file;
		err = nl_symfile_read(o->file, &s->sf, d);
		if (err)
			return err;
		err = nl_layout_input_from_symfile(s->sf, o->file, &s->in, d);
		s->in_ready = true;
		if (err)
			return err;
		snprintf(s->what, sizeof(s->what), "kernel symbols (%zu)", s->sf->nr);
		if (o->live) {
			struct nl_kcore *kc;
			struct nl_diag kd;

			nl_diag_init(&kd);
			/*
			 * No kcore is an ordinary situation (containers, lockdown): say so,
			 * go on.  These warnings concern the core file, not the symbols;
			 * kcore's open errors name it themselves.
			 */
			if (nl_kcore_open(o->kcore, &kc, &kd)) {
				sink->path = NULL;
				nl_log(d, NL_LOG_WARN, "--live: %s; continuing with symbols only", kd.msg);
				sink->path = o->file;
				return 0;
			}
			/* the reader's own warnings (a section left without bytes) reach the user */
			kd.sink = d->sink;
			kd.sink_ctx = d->sink_ctx;
			kd.verbosity = d->verbosity;
			sink->path = o->kcore;
			err = nl_layout_input_read_kcore(&s->in, kc, &kd);
			nl_kcore_close(kc);
			if (err)
				nl_log(&kd, NL_LOG_WARN, "--live: %s; continuing with symbols only",
				       kd.msg);
			sink->path = o->file;
		}
		return 0;
	}
	struct nl_elf_opts eo = { .symbol_file = o->symbols,
				  .max_decompressed = o->max_decompressed,
				  .max_records = o->max_records };

	*what = o->file;
	err = nl_elf_open(o->file, &eo, &s->elf, d);
	if (err)
		return err;
	err = nl_layout_input_from_elf(s->elf, &s->in, d);
	s->in_ready = !err;
	if (err)
		return err;
	snprintf(s->what, sizeof(s->what), "ELF%d x86%s %s", s->elf->mode,
		 s->elf->mode == NL_MODE_64 ? "-64" : "", elf_type(s->elf));
	return 0;
}

static bool needs_scan(const struct layout_cli_opts *o, const struct nl_rules *r, bool have)
{
	if (o->functions)
		return true;
	for (size_t i = 0; have && i < r->nr; i++)
		if (r->v[i].kind == NL_RULE_FTRACE_NO_STRADDLE)
			return true;
	return false;
}

static int run_layout(const struct layout_cli_opts *o)
{
	struct session s;
	struct nl_diag diag;
	struct cli_sink sink;
	struct nl_layout_opts lo = { .jcc = o->jcc, .threads = o->threads };
	struct run_info ri = { 0 };
	struct timespec t0, t1;
	const char *what = o->file;
	int err, status = NL_EXIT_OK;

	memset(&s, 0, sizeof(s));
	/* warnings name the file they concern, as errors do */
	cli_diag_init_file(&diag, &sink, "layout", o->rules, false);
	if (o->rules) {
		err = nl_rules_load(o->rules, &s.rules, &diag);
		if (err)
			return cli_error("layout", NULL, err, &diag);
		s.have_rules = true;
		lo.jcc |= nl_rules_need_jcc(&s.rules);
	}
	sink.path = o->file;
	err = load_input(&s, o, &diag, &sink, &what);
	if (!err && s.elf && needs_scan(o, &s.rules, s.have_rules))
		err = use_scan(&s, o, &diag);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!err)
		err = nl_layout_analyze(&s.in, &lo, &s.lay, &diag);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (err) {
		status = cli_error("layout", what, err, &diag);
		session_end(&s);
		return status;
	}
	if (lo.jcc && !s.lay->jcc.bytes && !s.lay->jcc.fill_skipped)
		nl_log(&diag, NL_LOG_WARN, "--jcc: no text bytes to decode%s", o->kallsyms ?
		       " (kallsyms has symbols only: --live reads the bytes from /proc/kcore)" : "");
	ri.seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ri.what = s.what;
	set_entry_classes(&s);
	if (s.have_rules) {
		err = nl_rules_eval(&s.rules, s.lay, &s.res, &s.nr_res, &diag);
		if (err) {
			status = cli_error("layout", "rules", err, &diag);
			session_end(&s);
			return status;
		}
		for (size_t i = 0; i < s.nr_res; i++)
			if (s.res[i].status == NL_RULE_FAILS)
				status = NL_EXIT_FINDINGS;
	}
	if (o->svg) {
		sink.path = o->svg;
		err = cli_render_layout_svg(s.lay, o->svg, what, &diag);
		sink.path = o->file;
		if (err) {
			int st = cli_error("layout", o->svg, err, &diag);

			session_end(&s);
			return st;
		}
	}
	if (o->json) {
		int st = cli_json_write(doc_json(s.lay, o, &ri, s.have_rules ? &s.rules : NULL, s.res,
						 s.nr_res), o->output, "layout");

		if (st)
			status = st;
	} else {
		print_text(s.lay, o, &ri, s.have_rules ? &s.rules : NULL, s.res, s.nr_res);
		if (fflush(stdout))
			status = cli_error("layout", "stdout", -EIO, NULL);
	}
	session_end(&s);
	return status;
}

int cmd_layout(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },	       { "output", required_argument, NULL, 'o' },
		{ "functions", no_argument, NULL, 'f' },     { "jcc", no_argument, NULL, 'J' },
		{ "rules", required_argument, NULL, 'r' },   { "svg", required_argument, NULL, 'S' },
		{ "kallsyms", optional_argument, NULL, 'k' }, { "live", optional_argument, NULL, 'L' },
		{ "symbols", required_argument, NULL, 's' }, { "threads", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "max-decompressed", required_argument, NULL, 'M' },
		{ "max-records", required_argument, NULL, 'R' }, { NULL, 0, NULL, 0 }
	};
	struct layout_cli_opts o = { .kcore = "/proc/kcore", .threads = 2 };
	const char *kallsyms = NULL;
	int c, bad;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jo:fJr:S:s:t:h", longopts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'j': o.json = true; break;
		case 'o': o.output = optarg; o.json = true; break;
		case 'f': o.functions = true; break;
		case 'J': o.jcc = true; break;
		case 'r': o.rules = optarg; break;
		case 'S': o.svg = optarg; break;
		case 'k': o.kallsyms = true; kallsyms = optarg; break;
		case 'L':
			o.live = true;
			if (optarg)
				o.kcore = optarg;
			break;
		case 's': o.symbols = optarg; break;
		case 't':
			o.threads = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !o.threads || o.threads > 64)
				return cli_usage_error("layout", "bad --threads '%s' (1..64)", optarg);
			break;
		case 'M':
			if ((bad = cli_limit_opt("layout", "max-decompressed", optarg, &o.max_decompressed)))
				return bad;
			break;
		case 'R':
			if ((bad = cli_limit_opt("layout", "max-records", optarg, &o.max_records)))
				return bad;
			break;
		case 'h': layout_usage(stdout); return NL_EXIT_OK;
		default: layout_usage(stderr); return NL_EXIT_USAGE;
		}
	}
	if (argc - optind > 1)
		return cli_usage_error("layout", "one input file at a time");
	if (o.live && !o.kallsyms)
		o.kallsyms = true;	/* the running kernel: its symbols come from kallsyms */
	if (o.kallsyms) {
		/* --kallsyms FILE and --kallsyms=FILE both work */
		if (kallsyms && optind < argc)
			return cli_usage_error("layout", "--kallsyms=%s and %s: which one?", kallsyms,
					       argv[optind]);
		o.file = kallsyms ? kallsyms : optind < argc ? argv[optind] : "/proc/kallsyms";
		if (o.symbols)
			return cli_usage_error("layout", "--symbols is for ELF files, not --kallsyms");
	} else {
		if (optind >= argc)
			return cli_usage_error("layout", "no input file (or --kallsyms)");
		o.file = argv[optind];
	}
	return run_layout(&o);
}
