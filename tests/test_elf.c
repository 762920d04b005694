// SPDX-License-Identifier: MIT
/*
 * The ELF model: sections, symbols and relocations against readelf/objdump
 * on fixtures built at test time; compressed modules (xz, zstd, gzip, made
 * with the command-line tools) against the plain file; and malformed input,
 * made by corrupting the fixtures in memory, which must give -NL_E_FORMAT
 * (or -NL_E_UNSUPPORTED) with one clear message, never a crash: from the
 * library, and from the command line as exit status 3 with one line.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nltest.h"
#include "noplab/elf.h"
#include "noplab/scan.h"
#include "test_scan_oracle.h"

struct fx_dir {
	char *dir;
};

static int build_fixtures(void **state)
{
	struct fx_dir *fx = calloc(1, sizeof(*fx));
	char cmd[2048];
	const char *src = getenv("NOPLAB_SRC");

	fx->dir = nltest_tmpdir("elf");
	if (!src || !fx->dir)
		return -1;
	snprintf(cmd, sizeof(cmd), "sh '%s/tests/fixtures/scan/build.sh' '%s' >/dev/null 2>&1", src,
		 fx->dir);
	if (nltest_run(cmd, NULL) != 0)
		return -1;
	*state = fx;
	return 0;
}

static int remove_fixtures(void **state)
{
	struct fx_dir *fx = *state;
	if (!fx)
		return 0;
	nltest_rmtree(fx->dir);
	free(fx);
	return 0;
}

static char *fixture(void **state, const char *name)
{
	const struct fx_dir *fx = *state;
	char *p = malloc(strlen(fx->dir) + strlen(name) + 2);

	sprintf(p, "%s/%s", fx->dir, name);
	return p;
}

static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)n + 1);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return b;
}

/* ---- the model against readelf and objdump ---- */

struct model_row {
	int line;
	const char *file;
};

static const struct model_row model_rows[] = {
	{ SRC_LINE, "base.o" },	  { SRC_LINE, "m32.o" },    { SRC_LINE, "fsect.o" },
	{ SRC_LINE, "patch.o" },  { SRC_LINE, "mod.ko" },   { SRC_LINE, "base.exe" },
	{ SRC_LINE, "m32.exe" },  { SRC_LINE, "deco.exe" }, { SRC_LINE, "m32mcount.o" },
};

static void check_model(void **state, const struct model_row *row)
{
	char *path = fixture(state, row->file);
	struct oracle o;
	struct nl_elf *elf;
	struct nl_diag d;
	size_t relocs = 0;

	oracle_load(path, &o);
	nl_diag_init(&d);
	if (nl_elf_open(path, NULL, &elf, &d))
		row_fail(row, "%s: %s", row->file, d.msg);
	if (elf->nr_sections != o.nr_secs)
		row_fail(row, "%s: %zu sections, readelf %zu", row->file, elf->nr_sections, o.nr_secs);
	if (elf->is_rel != o.rel || (int)elf->mode != o.bits)
		row_fail(row, "%s: rel %d mode %d", row->file, elf->is_rel, elf->mode);
	for (size_t i = 1; i < o.nr_secs; i++) {
		const struct nl_section *s = &elf->sections[i];

		if (strcmp(s->name, o.secs[i].name) || s->sh.sh_size != o.secs[i].size ||
		    s->exec != o.secs[i].exec || s->sh.sh_offset != o.secs[i].off)
			row_fail(row, "%s: section %zu %s size %llu exec %d, readelf %s %llu %d", row->file,
				 i, s->name, (unsigned long long)s->sh.sh_size, s->exec,
				 o.secs[i].name, (unsigned long long)o.secs[i].size, o.secs[i].exec);
		if (!o.rel && s->addr != o.secs[i].addr)
			row_fail(row, "%s: %s at 0x%llx, readelf 0x%llx", row->file, s->name,
				 (unsigned long long)s->addr, (unsigned long long)o.secs[i].addr);
		/* ET_REL: a synthetic layout that keeps each section's alignment */
		if (o.rel && o.secs[i].alloc && o.secs[i].align > 1 && s->addr % o.secs[i].align)
			row_fail(row, "%s: %s placed at 0x%llx, not %llu-aligned", row->file, s->name,
				 (unsigned long long)s->addr, (unsigned long long)o.secs[i].align);
		if (s->exec && nl_find_section_by_addr(elf, s->addr) != s && s->size)
			row_fail(row, "%s: section by address 0x%llx is not %s", row->file,
				 (unsigned long long)s->addr, s->name);
		size_t nr;

		nl_section_relocs(elf, s, &nr);
		relocs += nr;
	}
	if (elf->nr_symbols != o.nr_syms)
		row_fail(row, "%s: %zu symbols, readelf %zu", row->file, elf->nr_symbols, o.nr_syms);
	for (size_t i = 0; i < o.nr_syms; i++) {
		const struct nl_symbol *s = &elf->symbols[i];

		if (s->sym.st_value != o.syms[i].value || s->size != o.syms[i].size ||
		    (s->type != STT_SECTION && strcmp(s->name, o.syms[i].name)))
			row_fail(row, "%s: symbol %zu %s 0x%llx/%llu, readelf %s 0x%llx/%llu", row->file,
				 i, s->name, (unsigned long long)s->sym.st_value,
				 (unsigned long long)s->size, o.syms[i].name,
				 (unsigned long long)o.syms[i].value, (unsigned long long)o.syms[i].size);
		if (!strcmp(o.syms[i].type, "FUNC") && !strcmp(o.syms[i].bind, "GLOBAL")) {
			const struct nl_symbol *byname = nl_find_symbol_by_name(elf, s->name);

			if (byname != s)
				row_fail(row, "%s: lookup of %s found another symbol", row->file, s->name);
		}
	}
	/* fixtures have no debug info: readelf's relocations are all the model's */
	if (relocs != (o.rel ? o.nr_relocs_total : 0))
		row_fail(row, "%s: %zu relocations, readelf %zu", row->file, relocs,
			 o.nr_relocs_total);
	/* objdump's relocation lines land on the same relocation and symbol */
	for (size_t k = 0; k < o.nr_insns; k++) {
		const struct or_insn *in = &o.insns[k];
		const struct nl_section *s = &elf->sections[in->sec];
		uint64_t avail;
		const uint8_t *b = nl_elf_bytes_at(elf, s->addr + (in->addr - o.secs[in->sec].addr),
						   &avail);

		if (!b || avail < in->len || memcmp(b, in->bytes, in->len))
			row_fail(row, "%s: bytes at %s+0x%llx differ from objdump", row->file, s->name,
				 (unsigned long long)(in->addr - o.secs[in->sec].addr));
		if (!in->reloc[0])
			continue;
		const struct nl_reloc *r = nl_find_reloc_in(elf, s, in->reloc_off - o.secs[in->sec].addr, 1);

		if (!r || (r->sym && r->sym->type != STT_SECTION && strcmp(r->sym->name, in->reloc)))
			row_fail(row, "%s: relocation at %s+0x%llx: %s, objdump %s", row->file, s->name,
				 (unsigned long long)in->reloc_off,
				 r && r->sym ? r->sym->name : "none", in->reloc);
	}
	nl_elf_close(elf);
	oracle_free(&o);
	free(path);
}

static void test_model_vs_readelf(void **state)
{
	for (size_t i = 0; i < sizeof(model_rows) / sizeof(model_rows[0]); i++)
		check_model(state, &model_rows[i]);
}

/* ---- compressed modules ---- */

static void scan_counts(const char *path, const struct nl_elf_opts *eo, size_t *secs, size_t *syms,
			uint64_t *funcs, uint64_t *sites, const char **comp)
{
	struct nl_elf *elf;
	struct nl_scan_result *r;
	struct nl_diag d;

	nl_diag_init(&d);
	if (nl_elf_open(path, eo, &elf, &d))
		fail_msg("%s: %s", path, d.msg);
	assert_int_equal(nl_scan(elf, NULL, &r, &d), 0);
	*secs = elf->nr_sections;
	*syms = elf->nr_symbols;
	*funcs = r->summary.functions;
	*sites = r->summary.sites.total;
	*comp = elf->compression;
	nl_scan_free(r);
	nl_elf_close(elf);
}

static void test_compressed(void **state)
{
	static const char *const kinds[][2] = { { "mod.ko.xz", "xz" },
						{ "mod.ko.zst", "zstd" },
						{ "mod.ko.gz", "gzip" } };
	char *plain = fixture(state, "mod.ko");
	size_t secs, syms;
	uint64_t funcs, sites;
	const char *comp;

	scan_counts(plain, NULL, &secs, &syms, &funcs, &sites, &comp);
	assert_null(comp);
	assert_true(funcs > 0 && sites > 0);
	for (size_t i = 0; i < 3; i++) {
		char *p = fixture(state, kinds[i][0]);
		size_t s2, y2, size;
		uint64_t f2, t2;
		const char *c2;
		struct nl_elf *elf;
		struct nl_diag d;
		struct nl_elf_opts tiny = { .max_decompressed = 1024 };
		uint8_t *buf;

		scan_counts(p, NULL, &s2, &y2, &f2, &t2, &c2);
		assert_string_equal(c2, kinds[i][1]);
		assert_int_equal(s2, secs);
		assert_int_equal(y2, syms);
		assert_int_equal(f2, funcs);
		assert_int_equal(t2, sites);

		/* the cap holds: a bomb is an error, not an OOM kill */
		nl_diag_init(&d);
		assert_int_equal(nl_elf_open(p, &tiny, &elf, &d), -NL_E_LIMIT);
		assert_non_null(strstr(d.msg, "cap"));

		/* a truncated stream is malformed input, named by its format */
		buf = slurp(p, &size);
		nl_diag_init(&d);
		assert_int_equal(nl_elf_open_mem(p, buf, size / 2, NULL, &elf, &d), -NL_E_FORMAT);
		assert_non_null(strstr(d.msg, kinds[i][1]));
		/* corrupt bytes in the middle of the stream */
		for (size_t k = size / 3; k < size / 3 + 16 && k < size; k++)
			buf[k] ^= 0x5a;
		nl_diag_init(&d);
		int err = nl_elf_open_mem(p, buf, size, NULL, &elf, &d);

		assert_true(err == -NL_E_FORMAT);
		assert_true(d.msg[0] != '\0');
		free(buf);
		free(p);
	}
	free(plain);
}

/* ---- malformed input ---- */

enum mut {
	M_TRUNC,		/* keep arg bytes */
	M_TRUNC_SHTAB,		/* keep the section table up to entry arg */
	M_BYTE,			/* byte at offset arg = arg2 */
	M_EHDR,			/* header field (FLD_*) = arg2 */
	M_SHDR,			/* section sec's field = arg2 */
	M_SYMTAB,		/* the symbol table's header field = arg2 */
	M_SYM,			/* field of the first FUNC symbol = arg2 */
	M_RELOC,		/* field of the first entry of relocation section sec = arg2 */
	M_STRTAB_END,		/* the section-name table's last byte = 'x' */
	M_SYM_AT_END,		/* first FUNC symbol: value = its section's end - arg, size = arg2;
				   fld F_ST_INFO also makes it STT_NOTYPE */
};

enum fld {
	F_MACHINE, F_TYPE, F_SHENTSIZE, F_SHSTRNDX, F_SHNUM,
	F_SH_OFFSET, F_SH_SIZE, F_SH_LINK, F_SH_INFO, F_SH_ENTSIZE, F_SH_NAME, F_SH_FLAGS,
	F_ST_NAME, F_ST_SHNDX, F_ST_SIZE, F_ST_VALUE, F_ST_INFO,
	F_R_OFFSET, F_R_SYM, F_R_TYPE,
};

struct mal_row {
	int line;
	const char *file;
	enum mut mut;
	const char *sec;	/* section name for M_SHDR / M_RELOC */
	enum fld fld;
	uint64_t arg;
	int err;		/* expected result */
	const char *word;	/* the message must contain it */
	bool cli;		/* also through the command line */
	uint64_t arg2;		/* M_SYM_AT_END: the size */
};

static const struct mal_row mal_rows[] = {
	{ SRC_LINE, "base.o", M_TRUNC, NULL, 0, 10, -NL_E_FORMAT, "not an ELF file", true },
	{ SRC_LINE, "base.o", M_TRUNC, NULL, 0, 40, -NL_E_FORMAT, "truncated ELF header", false },
	{ SRC_LINE, "m32.o", M_TRUNC, NULL, 0, 30, -NL_E_FORMAT, "truncated ELF header", false },
	{ SRC_LINE, "base.o", M_TRUNC_SHTAB, NULL, 0, 3, -NL_E_FORMAT, "section header table", true },
	{ SRC_LINE, "base.exe", M_TRUNC_SHTAB, NULL, 0, 5, -NL_E_FORMAT, "section header table", false },
	{ SRC_LINE, "m32.exe", M_TRUNC_SHTAB, NULL, 0, 1, -NL_E_FORMAT, "section header table", false },
	{ SRC_LINE, "base.o", M_BYTE, NULL, 0, 0, -NL_E_FORMAT, "not an ELF file", false },
	{ SRC_LINE, "base.o", M_BYTE, NULL, 0, EI_CLASS, -NL_E_FORMAT, "class", false },
	{ SRC_LINE, "base.o", M_BYTE, NULL, 0, EI_DATA, -NL_E_FORMAT, "byte order", false },
	{ SRC_LINE, "base.o", M_EHDR, NULL, F_MACHINE, EM_ARM, -NL_E_UNSUPPORTED, "not x86", true },
	{ SRC_LINE, "base.o", M_EHDR, NULL, F_TYPE, ET_CORE, -NL_E_UNSUPPORTED, "ELF type", false },
	{ SRC_LINE, "base.o", M_EHDR, NULL, F_SHENTSIZE, 10, -NL_E_FORMAT, "section header size", false },
	{ SRC_LINE, "base.o", M_EHDR, NULL, F_SHSTRNDX, 999, -NL_E_FORMAT, "name table", false },
	{ SRC_LINE, "base.o", M_EHDR, NULL, F_SHNUM, 999, -NL_E_FORMAT, "section", false },
	{ SRC_LINE, "base.o", M_SHDR, ".text", F_SH_OFFSET, 0x7fffffff, -NL_E_FORMAT, "past end of file", true },
	{ SRC_LINE, "m32.o", M_SHDR, ".text", F_SH_OFFSET, 0x7fffff00, -NL_E_FORMAT, "past end of file", false },
	{ SRC_LINE, "base.exe", M_SHDR, ".text", F_SH_SIZE, 0x4000000000000000ull, -NL_E_FORMAT, "past end of file", false },
	{ SRC_LINE, "base.o", M_SHDR, ".text", F_SH_SIZE, 0xffffffffffffff00ull, -NL_E_FORMAT, "past end of file", false },
	{ SRC_LINE, "base.o", M_SYMTAB, NULL, F_SH_ENTSIZE, 0, -NL_E_FORMAT, "entry size 0", true },
	{ SRC_LINE, "m32.o", M_SYMTAB, NULL, F_SH_ENTSIZE, 0, -NL_E_FORMAT, "entry size 0", false },
	{ SRC_LINE, "base.exe", M_SYMTAB, NULL, F_SH_ENTSIZE, 0, -NL_E_FORMAT, "entry size 0", false },
	{ SRC_LINE, "base.o", M_SYMTAB, NULL, F_SH_ENTSIZE, 7, -NL_E_FORMAT, "entry size 7", false },
	{ SRC_LINE, "base.o", M_SYMTAB, NULL, F_SH_LINK, 0, -NL_E_FORMAT, "string table", false },
	{ SRC_LINE, "base.o", M_SYMTAB, NULL, F_SH_LINK, 999, -NL_E_FORMAT, "sh_link", false },
	{ SRC_LINE, "base.o", M_SYMTAB, NULL, F_SH_SIZE, 0x10000000, -NL_E_FORMAT, "past end of file", false },
	{ SRC_LINE, "base.o", M_SYM, NULL, F_ST_SHNDX, 500, -NL_E_FORMAT, "section index 500", false },
	/* a name past the string table is a broken table (issue 7, F9) */
	{ SRC_LINE, "base.o", M_SYM, NULL, F_ST_NAME, 0xffffff, -NL_E_FORMAT, "name offset 16777215 past string table", true },
	{ SRC_LINE, "m32.exe", M_SYM, NULL, F_ST_NAME, 0xffffff, -NL_E_FORMAT, "name offset", false },
	/* functions outside their section (issue 7): sizes are no longer clamped silently */
	{ SRC_LINE, "base.o", M_SYM, NULL, F_ST_SIZE, 0xfffffffffffull, -NL_E_FORMAT, "outside section", true },
	{ SRC_LINE, "base.exe", M_SYM, NULL, F_ST_VALUE, 0x10, -NL_E_FORMAT, "outside section", false },
	{ SRC_LINE, "base.o", M_SYM, NULL, F_ST_VALUE, 0x100000, -NL_E_FORMAT, "outside section", true },
	{ SRC_LINE, "m32.o", M_SYM, NULL, F_ST_VALUE, 0x100000, -NL_E_FORMAT, "outside section", false },
	{ SRC_LINE, "m32.exe", M_SYM, NULL, F_ST_SIZE, 0x100000, -NL_E_FORMAT, "outside section", false },
	{ SRC_LINE, "mod.ko", M_SYM, NULL, F_ST_SIZE, 0xffffffffffffffffull, -NL_E_FORMAT, "outside section", false },
	{ SRC_LINE, "base.o", M_SYM_AT_END, NULL, F_ST_VALUE, 1, -NL_E_FORMAT, "outside section", false, 2 },
	{ SRC_LINE, "base.exe", M_SYM_AT_END, NULL, F_ST_VALUE, 0, -NL_E_FORMAT, "outside section", false, 1 },
	{ SRC_LINE, "base.exe", M_SYM_AT_END, NULL, F_ST_VALUE, -0x1000ull, -NL_E_FORMAT, "outside section", false, 0 },
	/* ... but a function at the very end (size 0, a marker) or on the last byte is legal */
	{ SRC_LINE, "base.o", M_SYM_AT_END, NULL, F_ST_VALUE, 0, 0, NULL, false, 0 },
	{ SRC_LINE, "base.o", M_SYM_AT_END, NULL, F_ST_VALUE, 1, 0, NULL, false, 1 },
	{ SRC_LINE, "base.exe", M_SYM_AT_END, NULL, F_ST_VALUE, 0, 0, NULL, false, 0 },
	{ SRC_LINE, "m32.exe", M_SYM_AT_END, NULL, F_ST_VALUE, 0, 0, NULL, false, 0 },
	/* ... and so is a NOTYPE symbol past the end: ld places _end, __bss_stop like that */
	{ SRC_LINE, "base.exe", M_SYM_AT_END, NULL, F_ST_INFO, -0x1000ull, 0, NULL, false, 0 },
	{ SRC_LINE, "base.o", M_SYM_AT_END, NULL, F_ST_INFO, -0x1000ull, 0, NULL, false, 0x10 },
	{ SRC_LINE, "base.o", M_SHDR, ".text", F_SH_NAME, 0xffffff, 0, NULL, false },
	/* SHF_COMPRESSED on loaded bytes: the gABI forbids it (issue 7, F10); elsewhere it is legal */
	{ SRC_LINE, "base.o", M_SHDR, ".text", F_SH_FLAGS, SHF_ALLOC | SHF_EXECINSTR | SHF_COMPRESSED, -NL_E_FORMAT, "SHF_COMPRESSED on an allocated section", true },
	{ SRC_LINE, "base.exe", M_SHDR, ".text", F_SH_FLAGS, SHF_ALLOC | SHF_EXECINSTR | SHF_COMPRESSED, -NL_E_FORMAT, "SHF_COMPRESSED", false },
	{ SRC_LINE, "m32.o", M_SHDR, ".data", F_SH_FLAGS, SHF_ALLOC | SHF_WRITE | SHF_COMPRESSED, -NL_E_FORMAT, "SHF_COMPRESSED", false },
	{ SRC_LINE, "base.o", M_SHDR, ".comment", F_SH_FLAGS, SHF_MERGE | SHF_STRINGS | SHF_COMPRESSED, 0, NULL, false },
	{ SRC_LINE, "base.o", M_RELOC, ".rela.text", F_R_OFFSET, 0x100000, -NL_E_FORMAT, "outside section", true },
	{ SRC_LINE, "m32.o", M_RELOC, ".rel.text", F_R_OFFSET, 0x100000, -NL_E_FORMAT, "outside section", false },
	{ SRC_LINE, "mod.ko", M_RELOC, ".rela__mcount_loc", F_R_OFFSET, 0xfffffffc, -NL_E_FORMAT, "outside section", false },
	{ SRC_LINE, "base.o", M_RELOC, ".rela.text", F_R_SYM, 100000, -NL_E_FORMAT, "out of range", false },
	/* relocation types no x86 / x86-64 ABI defines (issue 7) */
	{ SRC_LINE, "base.o", M_RELOC, ".rela.text", F_R_TYPE, 200, -NL_E_FORMAT, "unknown type 200", true },
	{ SRC_LINE, "base.o", M_RELOC, ".rela.text", F_R_TYPE, 52, -NL_E_FORMAT, "unknown type 52", false },
	{ SRC_LINE, "base.o", M_RELOC, ".rela.text", F_R_TYPE, 249, -NL_E_FORMAT, "unknown type", false },
	{ SRC_LINE, "base.o", M_RELOC, ".rela.text", F_R_TYPE, 252, -NL_E_FORMAT, "unknown type", false },
	{ SRC_LINE, "base.o", M_RELOC, ".rela.text", F_R_TYPE, 0xffffffff, -NL_E_FORMAT, "unknown type", false },
	{ SRC_LINE, "mod.ko", M_RELOC, ".rela__mcount_loc", F_R_TYPE, 100, -NL_E_FORMAT, "unknown type 100", false },
	{ SRC_LINE, "m32.o", M_RELOC, ".rel.text", F_R_TYPE, 200, -NL_E_FORMAT, "unknown type 200", false },
	{ SRC_LINE, "m32.o", M_RELOC, ".rel.text", F_R_TYPE, 12, -NL_E_FORMAT, "unknown type 12", false },
	{ SRC_LINE, "m32.o", M_RELOC, ".rel.text", F_R_TYPE, 13, -NL_E_FORMAT, "unknown type 13", false },
	{ SRC_LINE, "m32.o", M_RELOC, ".rel.text", F_R_TYPE, 44, -NL_E_FORMAT, "unknown type 44", false },
	/* ... the defined ones stay legal: the newest (APX 43..51), GNU_VTINHERIT/VTENTRY */
	{ SRC_LINE, "base.o", M_RELOC, ".rela.text", F_R_TYPE, 42, 0, NULL, false },
	{ SRC_LINE, "base.o", M_RELOC, ".rela.text", F_R_TYPE, 51, 0, NULL, false },
	{ SRC_LINE, "base.o", M_RELOC, ".rela.text", F_R_TYPE, 250, 0, NULL, false },
	{ SRC_LINE, "base.o", M_RELOC, ".rela.text", F_R_TYPE, 251, 0, NULL, false },
	{ SRC_LINE, "m32.o", M_RELOC, ".rel.text", F_R_TYPE, 11, 0, NULL, false },
	{ SRC_LINE, "m32.o", M_RELOC, ".rel.text", F_R_TYPE, 14, 0, NULL, false },
	{ SRC_LINE, "m32.o", M_RELOC, ".rel.text", F_R_TYPE, 43, 0, NULL, false },
	{ SRC_LINE, "m32.o", M_RELOC, ".rel.text", F_R_TYPE, 251, 0, NULL, false },
	{ SRC_LINE, "base.o", M_SHDR, ".rela.text", F_SH_ENTSIZE, 0, -NL_E_FORMAT, "relocation entry size 0", false },
	{ SRC_LINE, "base.o", M_SHDR, ".rela.text", F_SH_INFO, 999, -NL_E_FORMAT, "sh_info", false },
	{ SRC_LINE, "base.o", M_SHDR, ".rela.text", F_SH_LINK, 1, -NL_E_FORMAT, "not the symbol table", false },
	{ SRC_LINE, "base.o", M_STRTAB_END, NULL, 0, 0, -NL_E_FORMAT, "name table", false },
};

struct img {
	uint8_t *b;
	size_t size;
	bool is64;
};

static uint64_t rd(const uint8_t *p, unsigned w)
{
	uint64_t v = 0;

	for (unsigned i = w; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static void wr(uint8_t *p, unsigned w, uint64_t v)
{
	for (unsigned i = 0; i < w; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t e_shoff(const struct img *m)
{
	return m->is64 ? rd(m->b + 40, 8) : rd(m->b + 32, 4);
}

static unsigned e_shnum(const struct img *m)
{
	return (unsigned)rd(m->b + (m->is64 ? 60 : 48), 2);
}

static uint8_t *shdr(const struct img *m, unsigned i)
{
	return m->b + e_shoff(m) + (uint64_t)i * (m->is64 ? 64 : 40);
}

/* offset and width of a section header field */
static void sh_field(bool is64, enum fld f, unsigned *off, unsigned *w)
{
	static const unsigned o64[][2] = { [F_SH_NAME] = { 0, 4 },    [F_SH_FLAGS] = { 8, 8 },
					   [F_SH_OFFSET] = { 24, 8 },
					   [F_SH_SIZE] = { 32, 8 },   [F_SH_LINK] = { 40, 4 },
					   [F_SH_INFO] = { 44, 4 },   [F_SH_ENTSIZE] = { 56, 8 } };
	static const unsigned o32[][2] = { [F_SH_NAME] = { 0, 4 },    [F_SH_FLAGS] = { 8, 4 },
					   [F_SH_OFFSET] = { 16, 4 },
					   [F_SH_SIZE] = { 20, 4 },   [F_SH_LINK] = { 24, 4 },
					   [F_SH_INFO] = { 28, 4 },   [F_SH_ENTSIZE] = { 36, 4 } };

	*off = is64 ? o64[f][0] : o32[f][0];
	*w = is64 ? o64[f][1] : o32[f][1];
}

static const char *sec_name_of(const struct img *m, unsigned i)
{
	unsigned strndx = (unsigned)rd(m->b + (m->is64 ? 62 : 50), 2);
	uint64_t stroff = m->is64 ? rd(shdr(m, strndx) + 24, 8) : rd(shdr(m, strndx) + 16, 4);

	return (const char *)m->b + stroff + rd(shdr(m, i), 4);
}

static int find_sec(const struct img *m, const char *name, uint32_t type)
{
	for (unsigned i = 1; i < e_shnum(m); i++)
		if ((name && !strcmp(sec_name_of(m, i), name)) ||
		    (!name && rd(shdr(m, i) + 4, 4) == type))
			return (int)i;
	fail_msg("fixture lacks section %s", name ? name : "(by type)");
	return -1;
}

static void mutate(struct img *m, const struct mal_row *r)
{
	unsigned off, w;
	int s;

	switch (r->mut) {
	case M_TRUNC:
		m->size = r->arg;
		break;
	case M_TRUNC_SHTAB:
		m->size = e_shoff(m) + r->arg * (m->is64 ? 64 : 40);
		break;
	case M_BYTE:
		m->b[r->arg] ^= 0xff;
		break;
	case M_EHDR: {
		static const unsigned e64[][2] = { [F_MACHINE] = { 18, 2 }, [F_TYPE] = { 16, 2 },
						   [F_SHENTSIZE] = { 58, 2 }, [F_SHSTRNDX] = { 62, 2 },
						   [F_SHNUM] = { 60, 2 } };
		static const unsigned e32[][2] = { [F_MACHINE] = { 18, 2 }, [F_TYPE] = { 16, 2 },
						   [F_SHENTSIZE] = { 46, 2 }, [F_SHSTRNDX] = { 50, 2 },
						   [F_SHNUM] = { 48, 2 } };
		const unsigned *e = m->is64 ? e64[r->fld] : e32[r->fld];

		wr(m->b + e[0], e[1], r->arg);
		break;
	}
	case M_SHDR:
	case M_SYMTAB:
		s = r->mut == M_SHDR ? find_sec(m, r->sec, 0) : find_sec(m, NULL, SHT_SYMTAB);
		sh_field(m->is64, r->fld, &off, &w);
		wr(shdr(m, (unsigned)s) + off, w, r->arg);
		break;
	case M_SYM: {
		int st = find_sec(m, NULL, SHT_SYMTAB);
		uint64_t so = m->is64 ? rd(shdr(m, (unsigned)st) + 24, 8) : rd(shdr(m, (unsigned)st) + 16, 4);
		uint64_t ss = m->is64 ? rd(shdr(m, (unsigned)st) + 32, 8) : rd(shdr(m, (unsigned)st) + 20, 4);
		unsigned es = m->is64 ? 24 : 16;

		for (uint64_t k = 1; k < ss / es; k++) {
			uint8_t *sym = m->b + so + k * es;
			unsigned info = m->is64 ? sym[4] : sym[12];

			if ((info & 0xf) != STT_FUNC)
				continue;
			switch (r->fld) {
			case F_ST_NAME: wr(sym, 4, r->arg); break;
			case F_ST_SHNDX: wr(sym + (m->is64 ? 6 : 14), 2, r->arg); break;
			case F_ST_SIZE: wr(sym + (m->is64 ? 16 : 8), m->is64 ? 8 : 4, r->arg); break;
			default: wr(sym + (m->is64 ? 8 : 4), m->is64 ? 8 : 4, r->arg); break;
			}
			break;
		}
		break;
	}
	case M_RELOC: {
		s = find_sec(m, r->sec, 0);
		uint64_t ro = m->is64 ? rd(shdr(m, (unsigned)s) + 24, 8) : rd(shdr(m, (unsigned)s) + 16, 4);
		uint8_t *e = m->b + ro;

		if (r->fld == F_R_OFFSET)
			wr(e, m->is64 ? 8 : 4, r->arg);
		else if (r->fld == F_R_TYPE)
			wr(e + (m->is64 ? 8 : 4), m->is64 ? 4 : 1, r->arg);	/* the low part of r_info */
		else if (m->is64)
			wr(e + 12, 4, r->arg);	/* ELF64_R_SYM: the high half of r_info */
		else
			wr(e + 5, 3, r->arg);	/* ELF32_R_SYM: r_info >> 8 */
		break;
	}
	case M_SYM_AT_END: {
		int st = find_sec(m, NULL, SHT_SYMTAB);
		uint64_t so = m->is64 ? rd(shdr(m, (unsigned)st) + 24, 8) : rd(shdr(m, (unsigned)st) + 16, 4);
		uint64_t ss = m->is64 ? rd(shdr(m, (unsigned)st) + 32, 8) : rd(shdr(m, (unsigned)st) + 20, 4);
		unsigned es = m->is64 ? 24 : 16;
		bool rel = rd(m->b + 16, 2) == ET_REL;

		for (uint64_t k = 1; k < ss / es; k++) {
			uint8_t *sym = m->b + so + k * es;
			uint8_t *info = m->is64 ? sym + 4 : sym + 12;
			unsigned shndx = (unsigned)rd(sym + (m->is64 ? 6 : 14), 2);

			if ((*info & 0xf) != STT_FUNC)
				continue;
			const uint8_t *sh = shdr(m, shndx);
			uint64_t addr = m->is64 ? rd(sh + 16, 8) : rd(sh + 12, 4);
			uint64_t size = m->is64 ? rd(sh + 32, 8) : rd(sh + 20, 4);
			uint64_t end = (rel ? 0 : addr) + size;

			wr(sym + (m->is64 ? 8 : 4), m->is64 ? 8 : 4, end - r->arg);
			wr(sym + (m->is64 ? 16 : 8), m->is64 ? 8 : 4, r->arg2);
			if (r->fld == F_ST_INFO)
				*info = (uint8_t)((*info & 0xf0) | STT_NOTYPE);
			break;
		}
		break;
	}
	case M_STRTAB_END: {
		unsigned strndx = (unsigned)rd(m->b + (m->is64 ? 62 : 50), 2);
		uint64_t so = m->is64 ? rd(shdr(m, strndx) + 24, 8) : rd(shdr(m, strndx) + 16, 4);
		uint64_t ss = m->is64 ? rd(shdr(m, strndx) + 32, 8) : rd(shdr(m, strndx) + 20, 4);

		m->b[so + ss - 1] = 'x';
		break;
	}
	}
}

/* The command line: status 3, exactly one line on stderr naming the file. */
static void check_cli(const struct mal_row *r, const char *dir, const struct img *m, size_t k)
{
	char path[1024], cmd[2048], *out = NULL, want[1100];
	FILE *f;

	snprintf(path, sizeof(path), "%s/malformed-%zu.bin", dir, k);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(m->b, 1, m->size, f), m->size);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s scan '%s' 2>&1 >/dev/null", nltest_noplab(), path);
	int st = nltest_run(cmd, &out);

	snprintf(want, sizeof(want), "noplab scan: %s: ", path);
	if (st != 3 || !out || strncmp(out, want, strlen(want)) || !strstr(out, r->word) ||
	    strchr(out, '\n') != out + strlen(out) - 1)
		row_fail(r, "%s: status %d, stderr '%s'", r->file, st, out ? out : "");
	free(out);
	remove(path);
}

static void test_malformed(void **state)
{
	const struct fx_dir *fx = *state;

	for (size_t k = 0; k < sizeof(mal_rows) / sizeof(mal_rows[0]); k++) {
		const struct mal_row *r = &mal_rows[k];
		char *path = fixture(state, r->file);
		struct img m;
		struct nl_elf *elf;
		struct nl_diag d;
		int err;

		m.b = slurp(path, &m.size);
		m.is64 = m.b[EI_CLASS] == ELFCLASS64;
		mutate(&m, r);
		nl_diag_init(&d);
		err = nl_elf_open_mem(r->file, m.b, m.size, NULL, &elf, &d);
		if (err != r->err)
			row_fail(r, "%s: result %d (%s), expected %d", r->file, err, d.msg, r->err);
		if (err && (!d.msg[0] || !strstr(d.msg, r->word)))
			row_fail(r, "%s: message '%s' lacks '%s'", r->file, d.msg, r->word);
		if (!err) {
			struct nl_scan_result *res;

			/* accepted oddities must still scan without reading out of bounds */
			if (nl_scan(elf, NULL, &res, &d))
				row_fail(r, "%s: scan failed: %s", r->file, d.msg);
			nl_scan_free(res);
			nl_elf_close(elf);
		}
		if (r->cli)
			check_cli(r, fx->dir, &m, k);
		free(m.b);
		free(path);
	}
}

/* Random corruption: any result is fine except a crash or a sanitizer report. */
static void test_corruption_does_not_crash(void **state)
{
	static const char *const files[] = { "base.o", "m32.o", "mod.ko", "base.exe", "patch.o",
					     "dyn.pie", "m32.exe" };
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned opened = 0, rejected = 0;

	for (size_t fi = 0; fi < sizeof(files) / sizeof(files[0]); fi++) {
		char *path = fixture(state, files[fi]);
		size_t size;
		uint8_t *orig = slurp(path, &size), *b = malloc(size);
		struct img m = { orig, size, orig[EI_CLASS] == ELFCLASS64 };
		uint64_t shoff = e_shoff(&m);

		for (unsigned it = 0; it < 400; it++) {
			struct nl_elf *elf;
			struct nl_diag d;
			unsigned flips;

			memcpy(b, orig, size);
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			flips = 1 + (unsigned)(x % 4);
			for (unsigned f = 0; f < flips; f++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				/* half the flips hit the headers, where structure lives */
				size_t at = (x & 1) ? (size_t)(x >> 8) % size
						    : (size_t)((x >> 8) % 64 + (((x >> 40) & 1) && shoff < size
										? shoff + (x >> 16) % (size - shoff) : 0));
				if (at < size)
					b[at] ^= (uint8_t)(x >> 32 | 1);
			}
			nl_diag_init(&d);
			if (nl_elf_open_mem(files[fi], b, size, NULL, &elf, &d)) {
				assert_true(d.msg[0] != '\0');
				rejected++;
				continue;
			}
			struct nl_scan_result *r;

			if (!nl_scan(elf, NULL, &r, &d))
				nl_scan_free(r);
			nl_elf_close(elf);
			opened++;
		}
		free(b);
		free(orig);
		free(path);
	}
	/* both paths were exercised */
	assert_true(opened > 0 && rejected > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_vs_readelf),
		cmocka_unit_test(test_compressed),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_corruption_does_not_crash),
	};
	return cmocka_run_group_tests(tests, build_fixtures, remove_fixtures);
}
