// SPDX-License-Identifier: MIT
/*
 * The binutils oracle for noplab scan (see test_scan_oracle.h).  Everything
 * here comes from parsing readelf and objdump text; nothing calls noplab.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nltest.h"
#include "noplab/scan.h"
#include "test_scan_oracle.h"

#define GROW(arr, nr, cap)                                                       \
	do {                                                                     \
		if ((nr) == (cap)) {                                             \
			(cap) = (cap) ? (cap) * 2 : 64;                          \
			(arr) = realloc((arr), (cap) * sizeof(*(arr)));          \
			assert_non_null(arr);                                    \
		}                                                                \
	} while (0)

static char *tool(const char *prog, const char *path)
{
	char cmd[1024];
	char *out = NULL;

	snprintf(cmd, sizeof(cmd), "%s '%s'", prog, path);
	if (nltest_run(cmd, &out) != 0 || !out)
		fail_msg("oracle command failed: %s", cmd);
	return out;
}

static void parse_sections(struct oracle *o, char *text)
{
	size_t cap = 0;
	char *save = NULL;

	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *rb = strchr(l, ']');
		char tok[12][96];
		int n = 0, idx;

		if (strncmp(l, "  [", 3) || !rb || sscanf(l + 3, "%d", &idx) != 1)
			continue;
		if (idx == 0) {	/* the null section has no name to split */
			GROW(o->secs, o->nr_secs, cap);
			memset(&o->secs[o->nr_secs++], 0, sizeof(o->secs[0]));
			continue;
		}
		for (char *p = strtok(rb + 1, " "); p && n < 12; p = strtok(NULL, " "))
			snprintf(tok[n++], sizeof(tok[0]), "%s", p);
		/* name type addr off size es [flags] lk inf al */
		if (n < 9)
			continue;
		GROW(o->secs, o->nr_secs, cap);
		struct or_sec *s = &o->secs[o->nr_secs];

		memset(s, 0, sizeof(*s));
		if ((size_t)idx != o->nr_secs)
			fail_msg("readelf section %d out of order", idx);
		snprintf(s->name, sizeof(s->name), "%s", tok[0]);
		snprintf(s->type, sizeof(s->type), "%s", tok[1]);
		s->addr = strtoull(tok[2], NULL, 16);
		s->off = strtoull(tok[3], NULL, 16);
		s->size = strtoull(tok[4], NULL, 16);
		s->align = strtoull(tok[n - 1], NULL, 10);
		if (n == 10) {
			s->exec = strchr(tok[6], 'X') != NULL;
			s->alloc = strchr(tok[6], 'A') != NULL;
		}
		/* the model's exec: SHF_EXECINSTR with bytes */
		if (!strcmp(s->type, "NOBITS") || !s->size)
			s->exec = false;
		o->nr_secs++;
	}
}

static void parse_symbols(struct oracle *o, char *text)
{
	size_t cap = 0;
	char *save = NULL;
	int table = 0;	/* 1 = .symtab block */
	bool have_symtab = strstr(text, "Symbol table '.symtab'") != NULL;

	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char value[32], size[32], type[16], bind[16], vis[16], ndx[16], name[160] = "";
		int num;

		if (!strncmp(l, "Symbol table '", 14)) {
			table = !strncmp(l + 14, have_symtab ? ".symtab'" : ".dynsym'", 8);
			continue;
		}
		if (!table || sscanf(l, " %d: %31s %31s %15s %15s %15s %15s %159s", &num, value, size,
				     type, bind, vis, ndx, name) < 7)
			continue;
		GROW(o->syms, o->nr_syms, cap);
		struct or_sym *s = &o->syms[o->nr_syms++];

		memset(s, 0, sizeof(*s));
		snprintf(s->name, sizeof(s->name), "%s", name);
		snprintf(s->type, sizeof(s->type), "%s", type);
		snprintf(s->bind, sizeof(s->bind), "%s", bind);
		s->value = strtoull(value, NULL, 16);
		s->size = strtoull(size, NULL, 0);
		s->shndx = isdigit((unsigned char)ndx[0]) ? atoi(ndx) : -1;
	}
}

int oracle_sec_by_name(const struct oracle *o, const char *name)
{
	for (size_t i = 0; i < o->nr_secs; i++)
		if (!strcmp(o->secs[i].name, name))
			return (int)i;
	return -1;
}

static int exec_sec_by_name(const struct oracle *o, const char *name)
{
	for (size_t i = 0; i < o->nr_secs; i++)
		if (o->secs[i].exec && !strcmp(o->secs[i].name, name))
			return (int)i;
	return -1;
}

bool oracle_is_hook(const char *name)
{
	return !strcmp(name, "__fentry__") || !strcmp(name, "mcount") || !strcmp(name, "_mcount");
}

/* objdump's text: "nop", "nopl ...", "nopw ...", "xchg %ax,%ax", and the 32-bit identities */
bool oracle_is_nop(const struct or_insn *in)
{
	char reg1[16], reg2[16];
	const char *t = in->text;

	while (!strncmp(t, "data16 ", 7) || !strncmp(t, "cs ", 3) || !strncmp(t, "ds ", 3))
		t += !strncmp(t, "data16 ", 7) ? 7 : 3;
	if (!strncmp(t, "nop", 3) && (t[3] == '\0' || t[3] == ' ' || t[3] == 'l' || t[3] == 'w'))
		return true;
	if (!strcmp(t, "xchg   %ax,%ax"))
		return true;
	if (sscanf(t, "lea 0x0(%%%15[a-z],%%eiz,1),%%%15s", reg1, reg2) == 2 ||
	    sscanf(t, "lea    0x0(%%%15[a-z],%%eiz,1),%%%15s", reg1, reg2) == 2 ||
	    sscanf(t, "lea    0x0(%%%15[a-z]),%%%15s", reg1, reg2) == 2 ||
	    sscanf(t, "mov    %%%15[a-z],%%%15s", reg1, reg2) == 2)
		return in->len > 1 && !strcmp(reg1, reg2) && reg1[0] == 'e';
	return false;
}

static void parse_disasm(struct oracle *o, char *text)
{
	size_t cap = 0;
	char *save = NULL;
	int sec = -1;

	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long addr;
		char type[32], sym[160];

		if (!strncmp(l, "Disassembly of section ", 23)) {
			char name[96];

			snprintf(name, sizeof(name), "%s", l + 23);
			if (strlen(name) && name[strlen(name) - 1] == ':')
				name[strlen(name) - 1] = '\0';
			sec = exec_sec_by_name(o, name);
			continue;
		}
		if (sec < 0)
			continue;
		if (l[0] == '\t' && l[1] == '\t' &&
		    sscanf(l, " %lx: %31s %159s", &addr, type, sym) == 3) {
			/* a relocation line: attach to the instruction it patches */
			char *cut = strpbrk(sym, "+-");

			if (cut && cut != sym)
				*cut = '\0';
			for (size_t k = o->nr_insns; k-- > 0;) {
				struct or_insn *in = &o->insns[k];

				if (in->sec != sec)
					break;
				if (addr >= in->addr && addr < in->addr + in->len) {
					snprintf(in->reloc, sizeof(in->reloc), "%s", sym);
					snprintf(in->reloc_type, sizeof(in->reloc_type), "%s", type);
					in->reloc_off = addr;
					break;
				}
			}
			continue;
		}
		char *tab1 = strchr(l, '\t');

		if (!tab1 || sscanf(l, " %lx:", &addr) != 1)
			continue;
		char *tab2 = strchr(tab1 + 1, '\t');

		GROW(o->insns, o->nr_insns, cap);
		struct or_insn *in = &o->insns[o->nr_insns];

		memset(in, 0, sizeof(*in));
		in->sec = sec;
		in->addr = addr;
		if (tab2)
			*tab2 = '\0';
		in->len = (unsigned)nltest_hex(tab1 + 1, in->bytes, sizeof(in->bytes));
		if (!in->len)
			continue;
		if (tab2) {
			snprintf(in->text, sizeof(in->text), "%s", tab2 + 1);
			sscanf(in->text, "%31s", in->mnem);
		}
		char *lt = strrchr(in->text, '<'), *gt = strrchr(in->text, '>');

		if (lt && gt > lt && !memchr(lt, '+', (size_t)(gt - lt)))
			snprintf(in->target, sizeof(in->target), "%.*s", (int)(gt - lt - 1), lt + 1);
		o->nr_insns++;
	}
}

/* readelf -x: the bytes of one section */
static uint8_t *section_bytes(const char *path, const char *name, size_t size)
{
	char cmd[1024];
	char *out = NULL, *save = NULL;
	uint8_t *b = calloc(size ? size : 1, 1);
	size_t got = 0;

	snprintf(cmd, sizeof(cmd), "readelf -x '%s' '%s'", name, path);
	assert_int_equal(nltest_run(cmd, &out), 0);
	for (char *l = strtok_r(out, "\n", &save); l && got < size; l = strtok_r(NULL, "\n", &save)) {
		char *p = l;
		size_t want;

		while (*p == ' ')
			p++;
		if (strncmp(p, "0x", 2))
			continue;
		strtok(p, " ");
		want = size - got < 16 ? size - got : 16;
		for (char *t = strtok(NULL, " "); t && want; t = strtok(NULL, " ")) {
			for (size_t i = 0; want && isxdigit((unsigned char)t[i]) &&
					   isxdigit((unsigned char)t[i + 1]);
			     i += 2, want--) {
				char h[3] = { t[i], t[i + 1], 0 };

				b[got++] = (uint8_t)strtoul(h, NULL, 16);
			}
		}
	}
	free(out);
	return b;
}

struct rec_out {
	struct or_loc *v;
	size_t nr, cap, entries, zero;
};

static void push_rec(struct rec_out *r, int sec, uint64_t addr, bool placed)
{
	r->entries++;
	if (!addr && !placed) {
		r->zero++;
		return;
	}
	GROW(r->v, r->nr, r->cap);
	r->v[r->nr].sec = sec;
	r->v[r->nr].addr = addr;
	r->nr++;
}

static int sec_of_addr(const struct oracle *o, uint64_t a)
{
	for (size_t i = 0; i < o->nr_secs; i++)
		if (o->secs[i].exec && a - o->secs[i].addr < o->secs[i].size)
			return (int)i;
	return -1;
}

/* __mcount_loc / __patchable_function_entries: bytes (linked) or relocations (ET_REL) */
static bool parse_records(struct oracle *o, const char *path, const char *relocs_text,
			  const char *name, struct rec_out *out)
{
	int ms = oracle_sec_by_name(o, name);
	size_t w = o->bits / 8;
	char rela[128], rel[128];
	uint8_t *bytes;

	if (ms < 0)
		return false;
	bytes = section_bytes(path, name, o->secs[ms].size);
	if (!o->rel) {
		for (size_t off = 0; off + w <= o->secs[ms].size; off += w) {
			uint64_t v = 0;

			for (size_t i = w; i-- > 0;)
				v = v << 8 | bytes[off + i];
			push_rec(out, sec_of_addr(o, v), v, false);
		}
		free(bytes);
		return true;
	}
	/* ET_REL: ".rela<name>" entries "OFF INFO TYPE VALUE SYM + ADDEND" */
	char *text = strdup(relocs_text), *save = NULL;
	bool in = false;

	snprintf(rela, sizeof(rela), "'.rela%s'", name);
	snprintf(rel, sizeof(rel), "'.rel%s'", name);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long long off, info, value;
		char type[32], sym[160], sign[4] = "";
		unsigned long long addend = 0;
		int n;

		if (!strncmp(l, "Relocation section '", 20)) {
			in = strstr(l, rela) || strstr(l, rel);
			continue;
		}
		if (!in)
			continue;
		n = sscanf(l, "%llx %llx %31s %llx %159s %3s %llx", &off, &info, type, &value, sym,
			   sign, &addend);
		if (n < 5)
			continue;
		if (n < 7) {	/* REL: the addend is in the section bytes */
			addend = 0;
			for (size_t i = w; i-- > 0;)
				addend = addend << 8 | bytes[off + i];
			strcpy(sign, "+");
		}
		int sec = oracle_sec_by_name(o, sym);
		uint64_t base = 0;

		if (sec < 0) {	/* a function symbol */
			for (size_t i = 0; i < o->nr_syms; i++)
				if (!strcmp(o->syms[i].name, sym)) {
					sec = o->syms[i].shndx;
					base = o->syms[i].value;
					break;
				}
		}
		push_rec(out, sec, sign[0] == '-' ? base - addend : base + addend, true);
	}
	free(text);
	free(bytes);
	return true;
}

static int cmp_func(const void *a, const void *b)
{
	const struct or_func *x = a, *y = b;

	if (x->sec != y->sec)
		return x->sec - y->sec;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (int)y->sized - (int)x->sized;
}

static bool marker(const char *n)
{
	size_t l = strlen(n);

	return !strncmp(n, "__start_", 8) || !strncmp(n, "__stop_", 7) ||
	       (!strncmp(n, "__", 2) && ((l > 6 && !strcmp(n + l - 6, "_start")) ||
				(l > 4 && !strcmp(n + l - 4, "_end"))));
}

static void build_funcs(struct oracle *o)
{
	size_t cap = 0, n = 0;

	for (size_t i = 0; i < o->nr_syms; i++) {
		const struct or_sym *s = &o->syms[i];
		bool func = !strcmp(s->type, "FUNC");
		bool asmsym = !strcmp(s->type, "NOTYPE") && strcmp(s->bind, "LOCAL") && !marker(s->name);

		if (s->shndx < 0 || (size_t)s->shndx >= o->nr_secs || !o->secs[s->shndx].exec ||
		    !(func || asmsym) || !s->name[0] || !strncmp(s->name, "__pfx_", 6) ||
		    !strncmp(s->name, "__cfi_", 6) ||
		    s->value - o->secs[s->shndx].addr >= o->secs[s->shndx].size)
			continue;
		GROW(o->funcs, o->nr_funcs, cap);
		struct or_func *f = &o->funcs[o->nr_funcs++];

		memset(f, 0, sizeof(*f));
		snprintf(f->name, sizeof(f->name), "%s", s->name);
		f->sec = s->shndx;
		f->addr = s->value;
		f->size = s->size;
		f->sized = func && s->size;
	}
	qsort(o->funcs, o->nr_funcs, sizeof(*o->funcs), cmp_func);
	/* one per address: the sized one sorts first */
	for (size_t i = 0; i < o->nr_funcs; i++)
		if (!n || o->funcs[n - 1].sec != o->funcs[i].sec || o->funcs[n - 1].addr != o->funcs[i].addr)
			o->funcs[n++] = o->funcs[i];
	o->nr_funcs = n;
	for (size_t i = 0; i < n; i++) {
		struct or_func *f = &o->funcs[i];
		const struct or_sec *s = &o->secs[f->sec];

		if (!f->sized) {
			uint64_t end = s->addr + s->size;

			if (i + 1 < n && o->funcs[i + 1].sec == f->sec)
				end = o->funcs[i + 1].addr;
			f->size = end - f->addr;
		}
		/* objdump lists sections in index order, each by address: search */
		size_t lo = 0, hi = o->nr_insns;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct or_insn *in = &o->insns[mid];

			if (in->sec < f->sec || (in->sec == f->sec && in->addr < f->addr))
				lo = mid + 1;
			else
				hi = mid;
		}
		f->insn0 = lo;
		for (size_t k = f->insn0; k < o->nr_insns && o->insns[k].sec == f->sec &&
					  o->insns[k].addr < f->addr + f->size; k++)
			f->ninsn++;
	}
}

void oracle_load(const char *path, struct oracle *o)
{
	char *secs, *syms, *dis, *rel, *hdr;

	memset(o, 0, sizeof(*o));
	hdr = tool("readelf -hW", path);
	o->rel = strstr(hdr, "REL (Relocatable file)") != NULL;
	o->bits = strstr(hdr, "ELF64") ? 64 : 32;
	free(hdr);
	secs = tool("readelf -SW", path);
	parse_sections(o, secs);
	free(secs);
	syms = tool("readelf -sW", path);
	parse_symbols(o, syms);
	free(syms);
	dis = tool("objdump -drz --insn-width=16", path);
	parse_disasm(o, dis);
	free(dis);
	rel = tool("readelf -rW", path);
	for (const char *p = rel; (p = strstr(p, " contains ")); p++)
		o->nr_relocs_total += strtoul(p + 10, NULL, 10);
	build_funcs(o);
	struct rec_out m = { 0 }, p = { 0 };

	o->has_mcount = parse_records(o, path, rel, "__mcount_loc", &m);
	o->mcount = m.v;
	o->nr_mcount = m.nr;
	o->mcount_entries = m.entries;
	o->mcount_zero = m.zero;
	o->has_patchable = parse_records(o, path, rel, "__patchable_function_entries", &p);
	o->patch = p.v;
	o->nr_patch = p.nr;
	free(rel);
}

void oracle_free(struct oracle *o)
{
	free(o->secs);
	free(o->syms);
	free(o->insns);
	free(o->funcs);
	free(o->mcount);
	free(o->patch);
	memset(o, 0, sizeof(*o));
}

long oracle_func_containing(const struct oracle *o, int sec, uint64_t addr)
{
	for (size_t i = 0; i < o->nr_funcs; i++)
		if (o->funcs[i].sec == sec && addr - o->funcs[i].addr < o->funcs[i].size)
			return (long)i;
	return -1;
}

long oracle_func_at(const struct oracle *o, int sec, uint64_t addr)
{
	for (size_t i = 0; i < o->nr_funcs; i++)
		if (o->funcs[i].sec == sec && o->funcs[i].addr == addr)
			return (long)i;
	return -1;
}

/* ---- the oracle's entry class of one function, by the scan's rules ---- */


bool oracle_hook_call(const struct oracle *o, const struct or_insn *in)
{
	char name[128];

	if (strcmp(in->mnem, "call"))
		return false;
	if (o->rel)
		return in->bytes[0] == 0xe8 && in->reloc[0] && oracle_is_hook(in->reloc) &&
		       (strstr(in->reloc_type, "PLT32") || strstr(in->reloc_type, "PC32"));
	/* call <__fentry__>, call <__fentry__@plt>, call *slot(%rip) # <__fentry__@GLIBC_2.13> */
	if (in->bytes[0] != 0xe8 && !(o->bits == 64 && in->bytes[0] == 0xff && in->bytes[1] == 0x15))
		return false;
	snprintf(name, sizeof(name), "%s", in->target);
	name[strcspn(name, "@")] = '\0';
	return oracle_is_hook(name);
}

void oracle_classify(const struct oracle *o, const struct or_func *f, struct or_entry *e)
{
	size_t k = f->insn0, end = f->insn0 + f->ninsn, start;
	unsigned nops = 0, nop_bytes = 0;
	bool patch, nop5;

	memset(e, 0, sizeof(*e));
	e->endbr = k < end && !strncmp(o->insns[k].mnem, "endbr", 5);
	/* the kernel's poison over a sealed ENDBR: 66 0f 1f 00 or 0f 1f 40 d6 */
	if (k < end && o->insns[k].len == 4 &&
	    (!memcmp(o->insns[k].bytes, "\x66\x0f\x1f\x00", 4) ||
	     !memcmp(o->insns[k].bytes, "\x0f\x1f\x40\xd6", 4)))
		e->endbr = true;
	if (e->endbr)
		k++;
	start = k;
	while (k < end && oracle_is_nop(&o->insns[k])) {
		nops++;
		nop_bytes += o->insns[k].len;
		k++;
	}
	/* a patchable area has a record from after the previous function to the entry */
	patch = false;
	if (nops) {
		long me = f - o->funcs;
		uint64_t lo = o->secs[f->sec].addr, hi = o->insns[start].addr;

		if (me > 0 && o->funcs[me - 1].sec == f->sec && o->funcs[me - 1].sized)
			lo = o->funcs[me - 1].addr + o->funcs[me - 1].size;
		for (size_t i = 0; i < o->nr_patch && !patch; i++)
			patch = o->patch[i].sec == f->sec && o->patch[i].addr >= lo &&
				o->patch[i].addr <= hi;
	}
	nop5 = nops == 1 && nop_bytes == 5 && !patch;
	if (nop5) {
		e->site_kind = NL_SITE_NOP5;
		e->site = o->insns[start].addr;
		e->site_len = 5;
	} else {
		size_t at = patch ? k : start;

		if (at < end && oracle_hook_call(o, &o->insns[at])) {
			e->site_kind = NL_SITE_CALL;
			e->site = o->insns[at].addr;
			e->site_len = o->insns[at].len;
		} else if (patch) {
			e->site_kind = NL_SITE_PATCHABLE;
			e->site = o->insns[start].addr;
			e->site_len = nop_bytes;
		}
	}
	if (patch)
		e->cls = e->endbr ? NL_ENTRY_ENDBR_PATCHABLE : NL_ENTRY_PATCHABLE;
	else if (e->site_kind == NL_SITE_CALL)
		e->cls = e->endbr ? NL_ENTRY_ENDBR_CALL_FENTRY : NL_ENTRY_CALL_FENTRY;
	else if (nop5)
		e->cls = e->endbr ? NL_ENTRY_ENDBR_NOP5 : NL_ENTRY_NOP5;
	else
		e->cls = e->endbr ? NL_ENTRY_ENDBR : NL_ENTRY_OTHER;
}

