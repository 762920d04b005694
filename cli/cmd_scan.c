// SPDX-License-Identifier: MIT
/* noplab scan: the static census of ELF files, as text or JSON. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "noplab/elf.h"
#include "noplab/scan.h"

#define TOP_SEQUENCES 12
#define SHOW_STRAY 10

struct scan_cli_opts {
	bool json, functions;
	const char *output;
	const char *symbols;
	unsigned threads;
	uint64_t max_decompressed;	/* 0: the library's default bounds */
	uint64_t max_records;		/* 0: NL_ELF_MAX_RECORDS */
};

static void scan_usage(FILE *f)
{
	fprintf(f,
		"usage: noplab scan [--json] [-o FILE] [--functions] [--symbols FILE]\n"
		"                   [--max-decompressed SIZE] [--max-records N] FILE...\n\n"
		"Find every function-entry ftrace site, prologue decoration, padding run and\n"
		"alignment in x86 / x86-64 ELF files: objects, kernel modules (also .ko.xz,\n"
		".ko.zst, .ko.gz), vmlinux, executables and shared libraries.\n\n"
		"  --functions      list every function: class, site, encoding, alignment\n"
		"  --symbols FILE   symbols from a System.map or /proc/kallsyms-style file, added\n"
		"                   to the file's own (for a stripped vmlinux)\n"
		"  --threads N      worker threads (default: all CPUs for large inputs)\n"
		"  --max-decompressed SIZE\n"
		"                   refuse a compressed module that inflates past SIZE (K/M/G);\n"
		"                   default 1G, and at most 64x the compressed size beyond 64M\n"
		"  --max-records N  refuse a file with more than N symbols + relocations\n"
		"                   (K/M suffixes; default 16M)\n"
		"  --json           one JSON document per file (and a total for several);\n"
		"  -o FILE          write the JSON to FILE\n\n"
		"Exit status: 0 ok, 2 usage error, 3 a file is missing or malformed.\n");
}

/* ---- helpers ---- */

static char *th(uint64_t v, char *buf)
{
	return cli_thousands(v, buf, 32);
}

static const char *pct(uint64_t a, uint64_t b, char *buf)
{
	if (!b)
		snprintf(buf, 16, "%7s", "-");
	else
		snprintf(buf, 16, "%6.2f%%", 100.0 * (double)a / (double)b);
	return buf;
}

static json_t *addr_json(uint64_t a)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, a);
	return json_string(buf);
}

static const char *type_name(const struct nl_elf *elf)
{
	switch (elf->eh.e_type) {
	case ET_REL: return "ET_REL";
	case ET_EXEC: return "ET_EXEC";
	case ET_DYN: return "ET_DYN";
	}
	return "?";
}

static const char *site_kind_name(enum nl_site_kind k)
{
	switch (k) {
	case NL_SITE_CALL: return "call";
	case NL_SITE_NOP5: return "nop5";
	case NL_SITE_PATCHABLE: return "patchable";
	default: return "none";
	}
}

static const char *where_name(enum nl_site_where w)
{
	switch (w) {
	case NL_WHERE_AT_ENTRY: return "at_entry";
	case NL_WHERE_AFTER_ENDBR: return "after_endbr";
	case NL_WHERE_IN_BODY: return "in_body";
	default: return "outside_functions";
	}
}

static const char *deco_name(enum nl_deco_kind k)
{
	switch (k) {
	case NL_DECO_PFX: return "pfx";
	case NL_DECO_CFI: return "cfi";
	case NL_DECO_PATCHABLE: return "patchable";
	default: return "none";
	}
}

static const char *pad_kind_name(enum nl_pad_kind k)
{
	switch (k) {
	case NL_PAD_NOP: return "nop";
	case NL_PAD_INT3: return "int3";
	case NL_PAD_JMP: return "jmp";
	case NL_PAD_ZERO: return "zero";
	default: return "code";
	}
}

/* ---- JSON ---- */

static json_t *records_json(const struct nl_record_summary *m)
{
	json_t *o = json_object();

	json_object_set_new(o, "present", json_boolean(m->present));
	json_object_set_new(o, "source", m->source ? json_string(m->source) : json_null());
	json_object_set_new(o, "entries", json_integer((json_int_t)m->entries));
	json_object_set_new(o, "zero", json_integer((json_int_t)m->zero));
	json_object_set_new(o, "at_entry", json_integer((json_int_t)m->at_entry));
	json_object_set_new(o, "in_body", json_integer((json_int_t)m->in_body));
	json_object_set_new(o, "outside_functions",
			    json_integer((json_int_t)m->outside_functions));
	/* not measured without records: null, never 0 */
	json_object_set_new(o, "missing",
			    m->present ? json_integer((json_int_t)m->missing) : json_null());
	json_object_set_new(o, "not_a_site", json_integer((json_int_t)m->not_a_site));
	return o;
}

static json_t *summary_json(struct nl_scan_summary *s, bool with_records, const char *target)
{
	json_t *o = json_object(), *cls = json_object(), *seqs = json_array(), *byb = json_object();
	char hex[64], key[16];

	json_object_set_new(o, "functions", json_integer((json_int_t)s->functions));
	json_object_set_new(o, "bytes", json_integer((json_int_t)s->bytes));
	json_object_set_new(o, "size_inferred", json_integer((json_int_t)s->size_inferred));
	for (int i = 0; i < NL_NR_ENTRY_CLASSES; i++)
		json_object_set_new(cls, nl_entry_class_name(i),
				    json_integer((json_int_t)s->entry_classes[i]));
	json_object_set_new(o, "entry_classes", cls);
	json_object_set_new(o, "endbr_poison", json_integer((json_int_t)s->endbr_poison));
	json_object_set_new(
		o, "ftrace_sites",
		json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "total",
			  (json_int_t)s->sites.total, "at_entry", (json_int_t)s->sites.at_entry,
			  "after_endbr", (json_int_t)s->sites.after_endbr, "in_body",
			  (json_int_t)s->sites.in_body, "outside_functions",
			  (json_int_t)s->sites.outside_functions, "calls", (json_int_t)s->sites.calls,
			  "nop5", (json_int_t)s->sites.nop5, "patchable",
			  (json_int_t)s->sites.patchable, "target",
			  target ? json_string(target) : json_null()));
	if (with_records) {
		json_object_set_new(o, "mcount_loc", records_json(&s->mcount_loc));
		json_object_set_new(o, "patchable_entries", records_json(&s->patchable));
	}
	json_object_set_new(o, "decorations",
			    json_pack("{s:I, s:I, s:I, s:I}", "pfx", (json_int_t)s->decorations.pfx,
				      "cfi", (json_int_t)s->decorations.cfi, "patchable",
				      (json_int_t)s->decorations.patchable, "bytes",
				      (json_int_t)s->decorations.bytes));
	nl_seq_hist_sort(&s->padding.seqs);
	for (size_t i = 0; i < s->padding.seqs.nr; i++) {
		const struct nl_seq *q = &s->padding.seqs.v[i];

		json_array_append_new(seqs, json_pack("{s:s, s:I, s:s, s:s, s:I}", "bytes",
						      cli_hex(q->bytes, q->len, hex, sizeof(hex)),
						      "count", (json_int_t)q->count, "kind",
						      pad_kind_name(q->kind), "name", q->name,
						      "total_bytes", (json_int_t)q->total_bytes));
	}
	json_object_set_new(
		o, "padding",
		json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "gaps",
			  (json_int_t)s->padding.gaps, "bytes", (json_int_t)s->padding.bytes,
			  "nop_bytes", (json_int_t)s->padding.nop_bytes, "int3_bytes",
			  (json_int_t)s->padding.int3_bytes, "jmp_bytes",
			  (json_int_t)s->padding.jmp_bytes, "zero_bytes",
			  (json_int_t)s->padding.zero_bytes, "nops", (json_int_t)s->padding.nops,
			  "code_gaps", (json_int_t)s->padding.code_gaps, "code_bytes",
			  (json_int_t)s->padding.code_bytes, "sequences", seqs));
	for (int i = 0; i <= NL_ALIGN_LOG2_MAX; i++) {
		snprintf(key, sizeof(key), "%llu", 1ull << i);
		json_object_set_new(byb, key, json_integer((json_int_t)s->alignment.by_log2[i]));
	}
	json_object_set_new(o, "alignment",
			    json_pack("{s:I, s:I, s:I, s:I, s:o, s:b}", "ge16",
				      (json_int_t)s->alignment.ge16, "ge32",
				      (json_int_t)s->alignment.ge32, "ge64",
				      (json_int_t)s->alignment.ge64, "lt16",
				      (json_int_t)s->alignment.lt16, "by_bytes", byb,
				      "capped_by_section", s->alignment.rel_capped));
	json_object_set_new(o, "straddles",
			    json_pack("{s:I, s:I, s:I, s:I, s:I}", "sites",
				      (json_int_t)s->straddles.sites, "b16",
				      (json_int_t)s->straddles.b16, "b32", (json_int_t)s->straddles.b32,
				      "b64", (json_int_t)s->straddles.b64, "unknown",
				      (json_int_t)s->straddles.unknown));
	return o;
}

static json_t *straddle_list(uint8_t bits)
{
	json_t *a = json_array();

	for (int b = 0; b < 3; b++)
		if (bits & (1u << b))
			json_array_append_new(a, json_integer(16 << b));
	return a;
}

static json_t *functions_json(const struct nl_scan_result *r)
{
	json_t *a = json_array();

	for (size_t i = 0; i < r->nr_funcs; i++) {
		const struct nl_func *f = &r->funcs[i];
		const struct nl_scan_func *x = &r->fx[i];
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(f->sym->name));
		json_object_set_new(o, "addr", addr_json(f->addr));
		json_object_set_new(o, "size", json_integer((json_int_t)f->size));
		json_object_set_new(o, "size_inferred", json_boolean(f->size_inferred));
		json_object_set_new(o, "section", json_string(f->sec->name));
		/* in ET_REL addresses are a synthetic layout: the offset is what objdump shows */
		json_object_set_new(o, "section_offset", json_integer((json_int_t)(f->addr - f->sec->addr)));
		json_object_set_new(o, "class", json_string(nl_entry_class_name(x->cls)));
		json_object_set_new(o, "endbr", json_boolean(x->endbr));
		json_object_set_new(o, "endbr_poison", json_boolean(x->endbr_poison));
		if (x->site != NL_SITE_NONE)
			json_object_set_new(
				o, "site",
				json_pack("{s:s, s:i, s:i, s:s, s:o, s:b, s:o}", "kind",
					  site_kind_name(x->site), "offset", (int)x->site_off, "len",
					  (int)x->site_len, "encoding", x->encoding, "target",
					  x->site_target ? json_string(x->site_target) : json_null(),
					  "listed", x->site_listed, "straddles",
					  straddle_list(x->straddles)));
		else
			json_object_set_new(o, "site", json_null());
		json_object_set_new(o, "align", json_integer((json_int_t)x->align));
		if (x->deco != NL_DECO_NONE)
			json_object_set_new(o, "decoration",
					    json_pack("{s:s, s:i}", "kind", deco_name(x->deco), "bytes",
						      (int)x->deco_len));
		else
			json_object_set_new(o, "decoration", json_null());
		json_object_set_new(o, "gap_after",
				    json_pack("{s:I, s:I}", "padding", (json_int_t)x->gap_pad, "code",
					      (json_int_t)x->gap_code));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *file_json(const char *path, const struct nl_elf *elf, struct nl_scan_result *r,
			 const struct scan_cli_opts *o)
{
	json_t *doc = cli_json_doc("scan"), *secs = json_array();

	json_object_set_new(doc, "file", json_string(path));
	json_object_set_new(
		doc, "elf",
		json_pack("{s:i, s:s, s:s, s:o, s:I, s:s, s:I}", "class",
			  elf->eh.e_ident[EI_CLASS] == ELFCLASS64 ? 64 : 32, "machine",
			  elf->mode == NL_MODE_64 ? "x86-64" : "i386", "type", type_name(elf),
			  "compression", elf->compression ? json_string(elf->compression) : json_null(),
			  "size", (json_int_t)elf->file_size, "symbols", elf->symbol_source,
			  "nr_symbols", (json_int_t)elf->nr_symbols));
	json_object_set_new(doc, "threads", json_integer((json_int_t)r->threads));
	json_object_set_new(doc, "summary", summary_json(&r->summary, true, r->ftrace_target));
	for (size_t i = 0; i < r->nr_sections; i++) {
		struct nl_scan_section *s = &r->sections[i];

		json_array_append_new(
			secs, json_pack("{s:s, s:o, s:I, s:I, s:I, s:o}", "name", s->name, "addr",
					addr_json(s->sec->addr), "size", (json_int_t)s->size,
					"align", (json_int_t)s->sec->sh.sh_addralign, "sections",
					(json_int_t)s->nr_sections, "summary",
					summary_json(&s->sum, false, r->ftrace_target)));
	}
	json_object_set_new(doc, "sections", secs);
	if (o->functions) {
		json_t *sites = json_array(), *stray = json_array();

		json_object_set_new(doc, "functions", functions_json(r));
		/* sites away from an entry: the function list cannot show them */
		for (size_t i = 0; i < r->nr_sites; i++) {
			const struct nl_scan_site *s = &r->sites[i];

			if (s->where != NL_WHERE_IN_BODY && s->where != NL_WHERE_OUTSIDE)
				continue;
			json_array_append_new(sites,
					      json_pack("{s:o, s:s, s:s, s:b, s:o}", "addr",
							addr_json(s->addr), "kind", site_kind_name(s->kind),
							"where", where_name(s->where), "listed",
							s->listed, "function",
							s->func >= 0 ? json_string(r->funcs[s->func].sym->name)
								     : json_null()));
		}
		for (size_t i = 0; i < r->nr_stray_records; i++)
			json_array_append_new(stray, addr_json(r->stray_records[i]));
		json_object_set_new(doc, "other_sites", sites);
		json_object_set_new(doc, "stray_records", stray);
	}
	return doc;
}

/* ---- text ---- */

static void print_records(const char *title, const struct nl_record_summary *m)
{
	char a[32], p[16];

	if (!m->present) {
		printf("\n%s: none\n", title);
		return;
	}
	printf("\n%-36s %12s entries (%s)\n", title, th(m->entries, a), m->source);
	printf("  %-34s %12s\n", "zero (skipped)", th(m->zero, a));
	printf("  %-34s %12s %s\n", "at a function entry", th(m->at_entry, a),
	       pct(m->at_entry, m->entries - m->zero, p));
	printf("  %-34s %12s %s\n", "inside a function body", th(m->in_body, a),
	       pct(m->in_body, m->entries - m->zero, p));
	printf("  %-34s %12s %s\n", "outside every function", th(m->outside_functions, a),
	       pct(m->outside_functions, m->entries - m->zero, p));
	printf("  %-34s %12s\n", "not at a call/NOP site", th(m->not_a_site, a));
	printf("  %-34s %12s\n", "entry sites no record lists", th(m->missing, a));
}

static void print_summary(struct nl_scan_summary *s, const char *target)
{
	char a[32], b[32], p[16];
	uint64_t nf = s->functions;

	printf("  %-34s %12s  (%s bytes, %s sizes inferred)\n", "functions", th(nf, a),
	       th(s->bytes, b), th(s->size_inferred, p));
	printf("\nEntry classes %33s %8s\n", "functions", "%");
	for (int i = 0; i < NL_NR_ENTRY_CLASSES; i++)
		printf("  %-34s %12s %s\n", nl_entry_class_name(i), th(s->entry_classes[i], a),
		       pct(s->entry_classes[i], nf, p));
	if (s->endbr_poison)
		printf("  %-34s %12s\n", "(ENDBR poison NOPs)", th(s->endbr_poison, a));

	printf("\n%-36s %12s\n", "ftrace sites", th(s->sites.total, a));
	if (target)
		printf("  %-34s %12s\n", "hook called", target);
	printf("  %-34s %12s %s\n", "at entry", th(s->sites.at_entry, a),
	       pct(s->sites.at_entry, s->sites.total, p));
	printf("  %-34s %12s %s\n", "after ENDBR", th(s->sites.after_endbr, a),
	       pct(s->sites.after_endbr, s->sites.total, p));
	printf("  %-34s %12s %s\n", "inside a function body", th(s->sites.in_body, a),
	       pct(s->sites.in_body, s->sites.total, p));
	printf("  %-34s %12s %s\n", "outside every function", th(s->sites.outside_functions, a),
	       pct(s->sites.outside_functions, s->sites.total, p));
	printf("  %-34s %12s / %s / %s\n", "calls / NOP5 / patchable NOP runs", th(s->sites.calls, a),
	       th(s->sites.nop5, b), th(s->sites.patchable, p));

	print_records("__mcount_loc", &s->mcount_loc);
	print_records("__patchable_function_entries", &s->patchable);

	printf("\nDecorations before the entry\n");
	printf("  %-34s %12s\n", "__pfx_ padding", th(s->decorations.pfx, a));
	printf("  %-34s %12s\n", "kCFI preambles", th(s->decorations.cfi, a));
	printf("  %-34s %12s\n", "patchable NOPs before the label", th(s->decorations.patchable, a));
	printf("  %-34s %12s\n", "bytes", th(s->decorations.bytes, a));

	printf("\nPadding between functions\n");
	printf("  %-34s %12s\n", "gaps with padding", th(s->padding.gaps, a));
	printf("  %-34s %12s\n", "padding bytes", th(s->padding.bytes, a));
	printf("  %-34s %12s %s\n", "  in NOPs", th(s->padding.nop_bytes, a),
	       pct(s->padding.nop_bytes, s->padding.bytes, p));
	printf("  %-34s %12s %s\n", "  in int3 fill", th(s->padding.int3_bytes, a),
	       pct(s->padding.int3_bytes, s->padding.bytes, p));
	printf("  %-34s %12s %s\n", "  in jumps over fill", th(s->padding.jmp_bytes, a),
	       pct(s->padding.jmp_bytes, s->padding.bytes, p));
	printf("  %-34s %12s %s\n", "  in zero fill", th(s->padding.zero_bytes, a),
	       pct(s->padding.zero_bytes, s->padding.bytes, p));
	printf("  %-34s %12s  (%s bytes, not counted as padding)\n", "gaps holding code",
	       th(s->padding.code_gaps, a), th(s->padding.code_bytes, b));
	nl_seq_hist_sort(&s->padding.seqs);
	if (s->padding.seqs.nr) {
		printf("  most frequent pieces %14s %12s  %-32s %s\n", "", "count", "bytes", "name");
		for (size_t i = 0; i < s->padding.seqs.nr && i < TOP_SEQUENCES; i++) {
			const struct nl_seq *q = &s->padding.seqs.v[i];
			char hex[64];

			printf("  %-34s %12s  %-32s %s\n", "", th(q->count, a),
			       cli_hex(q->bytes, q->len, hex, sizeof(hex)), q->name);
		}
		if (s->padding.seqs.nr > TOP_SEQUENCES)
			printf("  %-34s %12s  (more in --json)\n", "",
			       th(s->padding.seqs.nr - TOP_SEQUENCES, a));
	}

	printf("\nFunction alignment%s\n",
	       s->alignment.rel_capped ? " (ET_REL: at most the section's alignment)" : "");
	printf("  %-34s %12s %s\n", ">= 64 bytes", th(s->alignment.ge64, a),
	       pct(s->alignment.ge64, nf, p));
	printf("  %-34s %12s %s\n", ">= 32 bytes", th(s->alignment.ge32, a),
	       pct(s->alignment.ge32, nf, p));
	printf("  %-34s %12s %s\n", ">= 16 bytes", th(s->alignment.ge16, a),
	       pct(s->alignment.ge16, nf, p));
	printf("  %-34s %12s %s\n", "< 16 bytes", th(s->alignment.lt16, a),
	       pct(s->alignment.lt16, nf, p));

	printf("\nSites straddling a boundary %19s\n", th(s->straddles.sites, a));
	printf("  %-34s %12s %s\n", "16-byte", th(s->straddles.b16, a),
	       pct(s->straddles.b16, s->straddles.sites, p));
	printf("  %-34s %12s %s\n", "32-byte", th(s->straddles.b32, a),
	       pct(s->straddles.b32, s->straddles.sites, p));
	printf("  %-34s %12s %s\n", "64-byte", th(s->straddles.b64, a),
	       pct(s->straddles.b64, s->straddles.sites, p));
	if (s->straddles.unknown)
		printf("  %-34s %12s\n", "unknown (section aligned < 64)", th(s->straddles.unknown, a));
}

static void print_functions(const struct nl_scan_result *r)
{
	bool rel = r->elf->is_rel;

	printf("\n%-18s %8s %5s %-18s %5s %-22s %-14s %s\n", rel ? "SECTION OFFSET" : "ADDRESS",
	       "SIZE", "ALIGN", "CLASS", "SITE", "ENCODING", "DECORATION", "NAME");
	for (size_t i = 0; i < r->nr_funcs; i++) {
		const struct nl_func *f = &r->funcs[i];
		const struct nl_scan_func *x = &r->fx[i];
		char site[16] = "-", deco[24] = "-";

		if (x->site != NL_SITE_NONE)
			snprintf(site, sizeof(site), "+%u%s", x->site_off,
				 x->straddles ? "!" : "");
		if (x->deco != NL_DECO_NONE)
			snprintf(deco, sizeof(deco), "%s:%u", deco_name(x->deco), x->deco_len);
		char where[48];

		/* objdump shows section offsets for a .o/.ko: so do we */
		if (rel)
			snprintf(where, sizeof(where), "%s+0x%" PRIx64, f->sec->name, f->addr - f->sec->addr);
		else
			snprintf(where, sizeof(where), "0x%016" PRIx64, f->addr);
		printf("%-18s %8" PRIu64 "%s %5" PRIu64 " %-18s %5s %-22s %-14s %s\n",
		       where, f->size, f->size_inferred ? "~" : " ", x->align,
		       nl_entry_class_name(x->cls), site, x->site == NL_SITE_NONE ? "-" : x->encoding,
		       deco, f->sym->name);
	}
	for (size_t i = 0; i < r->nr_sites; i++) {
		const struct nl_scan_site *s = &r->sites[i];

		if (s->where == NL_WHERE_IN_BODY || s->where == NL_WHERE_OUTSIDE)
			printf("site 0x%016" PRIx64 " %-9s %-17s %s%s\n", s->addr,
			       site_kind_name(s->kind), where_name(s->where),
			       s->func >= 0 ? r->funcs[s->func].sym->name : "-",
			       s->listed ? " (listed)" : "");
	}
}

static void print_file(const char *path, const struct nl_elf *elf, struct nl_scan_result *r,
		       const struct scan_cli_opts *o)
{
	char a[32], b[32];

	printf("%s: ELF%d %s %s%s%s, %s bytes, symbols: %s (%s)\n", path,
	       elf->eh.e_ident[EI_CLASS] == ELFCLASS64 ? 64 : 32,
	       elf->mode == NL_MODE_64 ? "x86-64" : "i386", type_name(elf),
	       elf->compression ? ", decompressed from " : "",
	       elf->compression ? elf->compression : "", th(elf->file_size, a), elf->symbol_source,
	       th(elf->nr_symbols, b));
	if (!r->nr_funcs && !elf->nr_symbols)
		printf("  note: no symbol table (stripped?): --symbols System.map gives the functions\n");
	print_summary(&r->summary, r->ftrace_target);
	if (r->nr_stray_records) {
		printf("\nRecords outside functions or not at a site (first %d):", SHOW_STRAY);
		for (size_t i = 0; i < r->nr_stray_records && i < SHOW_STRAY; i++)
			printf(" 0x%" PRIx64, r->stray_records[i]);
		printf("\n");
	}
	if (r->nr_sections) {
		printf("\n%-24s %10s %10s %10s %10s %10s %10s\n", "SECTION", "FUNCTIONS", "SITES",
		       "PAD GAPS", "PAD BYTES", "CODE GAPS", "ALIGN>=16");
		for (size_t i = 0; i < r->nr_sections; i++) {
			const struct nl_scan_summary *s = &r->sections[i].sum;
			char c1[32], c2[32], c3[32], c4[32], c5[32], c6[32];

			printf("%-24s %10s %10s %10s %10s %10s %10s\n", r->sections[i].name,
			       th(s->functions, c1), th(s->sites.total, c2), th(s->padding.gaps, c3),
			       th(s->padding.bytes, c4), th(s->padding.code_gaps, c5),
			       th(s->alignment.ge16, c6));
		}
	}
	if (o->functions)
		print_functions(r);
}

/* ---- driver ---- */

struct total {
	struct nl_scan_summary sum;
	unsigned files;
	json_t *names;
};

static int scan_one(const char *path, const struct scan_cli_opts *o, FILE *jout,
		    struct total *t, bool several)
{
	struct nl_elf_opts eo = { .symbol_file = o->symbols,
				  .max_decompressed = o->max_decompressed,
				  .max_records = o->max_records };
	struct nl_scan_opts so = { .threads = o->threads };
	struct nl_elf *elf = NULL;
	struct nl_scan_result *r = NULL;
	struct nl_diag diag;
	struct cli_sink sink;
	int err;

	/* warnings name the file, as errors do: with several files, which one */
	cli_diag_init_file(&diag, &sink, "scan", path, false);
	err = nl_elf_open(path, &eo, &elf, &diag);
	if (!err)
		err = nl_scan(elf, &so, &r, &diag);
	if (err) {
		int st = cli_error("scan", path, err, &diag);

		nl_elf_close(elf);
		return st;
	}
	if (nl_scan_summary_add(&t->sum, &r->summary)) {
		nl_scan_free(r);
		nl_elf_close(elf);
		return cli_error("scan", path, -ENOMEM, NULL);
	}
	t->files++;
	json_array_append_new(t->names, json_string(path));
	if (jout) {
		json_t *doc = file_json(path, elf, r, o);

		if (!doc || json_dumpf(doc, jout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
		    fputc('\n', jout) == EOF) {
			json_decref(doc);
			nl_scan_free(r);
			nl_elf_close(elf);
			return cli_error("scan", o->output ? o->output : "stdout", -EIO, NULL);
		}
		json_decref(doc);
	} else {
		if (several && t->files > 1)
			printf("\n");
		print_file(path, elf, r, o);
	}
	nl_scan_free(r);
	nl_elf_close(elf);
	return NL_EXIT_OK;
}

int cmd_scan(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },	     { "output", required_argument, NULL, 'o' },
		{ "functions", no_argument, NULL, 'f' },   { "symbols", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' }, { "help", no_argument, NULL, 'h' },
		{ "max-decompressed", required_argument, NULL, 'M' },
		{ "max-records", required_argument, NULL, 'R' }, { NULL, 0, NULL, 0 }
	};
	struct scan_cli_opts o = { 0 };
	struct total t;
	FILE *jout = NULL;
	int c, bad, status = NL_EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jo:fs:t:h", longopts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'j': o.json = true; break;
		case 'o': o.output = optarg; o.json = true; break;
		case 'f': o.functions = true; break;
		case 's': o.symbols = optarg; break;
		case 't':
			o.threads = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !o.threads || o.threads > 64)
				return cli_usage_error("scan", "bad --threads '%s' (1..64)", optarg);
			break;
		case 'M':
			if ((bad = cli_limit_opt("scan", "max-decompressed", optarg, &o.max_decompressed)))
				return bad;
			break;
		case 'R':
			if ((bad = cli_limit_opt("scan", "max-records", optarg, &o.max_records)))
				return bad;
			break;
		case 'h': scan_usage(stdout); return NL_EXIT_OK;
		default: scan_usage(stderr); return NL_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return cli_usage_error("scan", "no input file");
	if (o.json) {
		jout = o.output && strcmp(o.output, "-") ? fopen(o.output, "w") : stdout;
		if (!jout)
			return cli_error("scan", o.output, -errno, NULL);
	}
	memset(&t, 0, sizeof(t));
	t.names = json_array();
	bool several = argc - optind > 1;

	for (int i = optind; i < argc; i++) {
		int st = scan_one(argv[i], &o, jout, &t, several);

		if (st != NL_EXIT_OK && (status == NL_EXIT_OK || st == NL_EXIT_INPUT))
			status = st;
	}
	if (several && t.files) {
		if (jout) {
			json_t *doc = cli_json_doc("scan");

			json_object_set_new(doc, "total", json_true());
			json_object_set_new(doc, "files", json_incref(t.names));
			json_object_set_new(doc, "summary", summary_json(&t.sum, true, NULL));
			if (json_dumpf(doc, jout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
			    fputc('\n', jout) == EOF)
				status = cli_error("scan", o.output ? o.output : "stdout", -EIO, NULL);
			json_decref(doc);
		} else {
			char a[32];

			printf("\ntotal: %s files\n", th(t.files, a));
			print_summary(&t.sum, NULL);
		}
	}
	json_decref(t.names);
	nl_scan_summary_release(&t.sum);
	if (jout && jout != stdout && fclose(jout))
		status = cli_error("scan", o.output, -errno, NULL);
	return status;
}
