// SPDX-License-Identifier: MIT
/*
 * The ELF model.  Validation follows libbpf's bpf_object__elf_init() order:
 * kind, class, byte order, machine, section count against e_shnum, the
 * section-name table, then every offset and size against the file, entry
 * sizes before any division, every sh_link/sh_info/st_shndx before it is
 * used as an index.  libelf checks some of this and silently accepts the
 * rest (a truncated section table reads as zero sections, a zero entsize
 * divides by zero), so each check is made here, once, with a message that
 * names the section.  After nl_elf_open() returns, every pointer in the
 * model is in bounds and nothing needs libelf again.
 */
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "elf_priv.h"

static pthread_once_t libelf_once = PTHREAD_ONCE_INIT;
static unsigned libelf_version;

static void libelf_init(void)
{
	libelf_version = elf_version(EV_CURRENT);
}

/* a + b <= limit, without overflow */
static bool fits(uint64_t off, uint64_t len, uint64_t limit)
{
	return off <= limit && len <= limit - off;
}

/* ---- header ---- */

static int check_ident(const uint8_t *buf, size_t size, struct nl_diag *d)
{
	if (size < EI_NIDENT || memcmp(buf, ELFMAG, SELFMAG))
		return nl_fail(d, -NL_E_FORMAT, "not an ELF file");
	if (buf[EI_CLASS] != ELFCLASS32 && buf[EI_CLASS] != ELFCLASS64)
		return nl_fail(d, -NL_E_FORMAT, "unknown ELF class %u", buf[EI_CLASS]);
	if (buf[EI_DATA] != ELFDATA2LSB)
		return nl_fail(d, -NL_E_FORMAT, "ELF byte order %u is not little-endian x86",
			       buf[EI_DATA]);
	if (size < (buf[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return nl_fail(d, -NL_E_FORMAT, "truncated ELF header (%zu bytes)", size);
	return 0;
}

static int read_header(struct nl_elf *elf, const uint8_t *buf, size_t size, struct nl_diag *d)
{
	Elf *e = elf->priv->e;
	bool is64 = buf[EI_CLASS] == ELFCLASS64;

	if (elf_kind(e) != ELF_K_ELF)
		return nl_fail(d, -NL_E_FORMAT, "not an ELF file");
	if (!gelf_getehdr(e, &elf->eh))
		return nl_fail(d, -NL_E_FORMAT, "bad ELF header: %s", elf_errmsg(-1));
	switch (elf->eh.e_machine) {
	case EM_X86_64: elf->mode = NL_MODE_64; break;
	case EM_386: elf->mode = NL_MODE_32; break;
	default:
		return nl_fail(d, -NL_E_UNSUPPORTED, "machine %u is not x86 (EM_386, EM_X86_64)",
			       elf->eh.e_machine);
	}
	switch (elf->eh.e_type) {
	case ET_REL: elf->is_rel = true; break;
	case ET_EXEC: case ET_DYN: break;
	default:
		return nl_fail(d, -NL_E_UNSUPPORTED, "ELF type %u is not ET_REL, ET_EXEC or ET_DYN",
			       elf->eh.e_type);
	}
	/* libelf reads a truncated section table as zero sections: compare */
	size_t shnum = 0;

	if (elf_getshdrnum(e, &shnum))
		return nl_fail(d, -NL_E_FORMAT, "bad section count: %s", elf_errmsg(-1));
	if (!elf->eh.e_shoff || !shnum)
		return nl_fail(d, -NL_E_FORMAT, elf->eh.e_shnum ? "section header table truncated"
								 : "no section headers");
	if (elf->eh.e_shnum && shnum != elf->eh.e_shnum)
		return nl_fail(d, -NL_E_FORMAT, "section header table truncated: %zu of %u sections",
			       shnum, elf->eh.e_shnum);
	if (elf->eh.e_shentsize != (is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)))
		return nl_fail(d, -NL_E_FORMAT, "section header size %u, expected %zu",
			       elf->eh.e_shentsize, is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr));
	if (shnum > size / elf->eh.e_shentsize ||
	    !fits(elf->eh.e_shoff, (uint64_t)shnum * elf->eh.e_shentsize, size))
		return nl_fail(d, -NL_E_FORMAT, "section header table (%zu entries at 0x%llx) past end of file",
			       shnum, (unsigned long long)elf->eh.e_shoff);
	elf->nr_sections = shnum;
	return 0;
}

/* ---- sections ---- */

static int read_sections(struct nl_elf *elf, const uint8_t *buf, size_t size, struct nl_diag *d)
{
	Elf *e = elf->priv->e;
	size_t shstrndx;
	const char *shstr = NULL;
	uint64_t shstrsz = 0;

	elf->sections = calloc(elf->nr_sections, sizeof(*elf->sections));
	if (!elf->sections)
		return nl_fail_errno(d, -ENOMEM, "section table");
	for (size_t i = 0; i < elf->nr_sections; i++) {
		struct nl_section *s = &elf->sections[i];
		Elf_Scn *scn = elf_getscn(e, i);

		s->idx = (unsigned)i;
		s->name = "";
		if (!scn || !gelf_getshdr(scn, &s->sh))
			return nl_fail(d, -NL_E_FORMAT, "section %zu: bad header: %s", i,
				       elf_errmsg(-1));
		if (s->sh.sh_type != SHT_NOBITS && s->sh.sh_size &&
		    !fits(s->sh.sh_offset, s->sh.sh_size, size))
			return nl_fail(d, -NL_E_FORMAT,
				       "section %zu data past end of file (offset 0x%llx, size 0x%llx, file 0x%zx)",
				       i, (unsigned long long)s->sh.sh_offset,
				       (unsigned long long)s->sh.sh_size, size);
		if (s->sh.sh_link >= elf->nr_sections)
			return nl_fail(d, -NL_E_FORMAT, "section %zu: sh_link %u out of range", i,
				       s->sh.sh_link);
	}

	/* "ELF is corrupted/truncated, avoid calling elf_strptr" (libbpf) */
	if (elf_getshdrstrndx(e, &shstrndx))
		return nl_fail(d, -NL_E_FORMAT, "bad section name table index: %s", elf_errmsg(-1));
	if (shstrndx >= elf->nr_sections || !shstrndx)
		return nl_fail(d, -NL_E_FORMAT, "section name table index %zu out of range", shstrndx);
	const struct nl_section *ss = &elf->sections[shstrndx];

	if (ss->sh.sh_type != SHT_STRTAB || !ss->sh.sh_size ||
	    buf[ss->sh.sh_offset + ss->sh.sh_size - 1])
		return nl_fail(d, -NL_E_FORMAT, "section %zu: bad section name table", shstrndx);
	shstr = (const char *)buf + ss->sh.sh_offset;
	shstrsz = ss->sh.sh_size;

	for (size_t i = 0; i < elf->nr_sections; i++) {
		struct nl_section *s = &elf->sections[i];

		/* the table ends in NUL, so any in-range offset is a terminated string */
		if (s->sh.sh_name < shstrsz)
			s->name = shstr + s->sh.sh_name;
		if (s->sh.sh_type != SHT_NOBITS && s->sh.sh_size) {
			s->data = buf + s->sh.sh_offset;
			s->size = s->sh.sh_size;
		}
		/*
		 * The gABI forbids compressing what is loaded: the bytes would be a
		 * Chdr and a deflate stream, not the code or data the checks read.
		 */
		if ((s->sh.sh_flags & SHF_ALLOC) && (s->sh.sh_flags & SHF_COMPRESSED))
			return nl_fail(d, -NL_E_FORMAT,
				       "section %zu (%s): SHF_COMPRESSED on an allocated section", i,
				       s->name);
		s->exec = (s->sh.sh_flags & SHF_EXECINSTR) && s->data &&
			  !(s->sh.sh_flags & SHF_COMPRESSED);
	}
	return 0;
}

/* ET_REL has no addresses: lay allocated sections out in order, as a linker would. */
static int assign_addresses(struct nl_elf *elf, struct nl_diag *d)
{
	uint64_t base = 0;
	uint64_t top = elf->eh.e_ident[EI_CLASS] == ELFCLASS64 ? UINT64_MAX : UINT32_MAX;

	for (size_t i = 0; i < elf->nr_sections; i++) {
		struct nl_section *s = &elf->sections[i];

		if (!elf->is_rel) {
			s->addr = s->sh.sh_addr;
			/* every consumer computes addr + size: it must not wrap */
			if ((s->sh.sh_flags & SHF_ALLOC) && s->addr <= top &&
			    s->sh.sh_size > top - s->addr)
				return nl_fail(d, -NL_E_FORMAT,
					       "section %zu (%s): address 0x%llx + size 0x%llx wraps past "
					       "the end of the address space", i, s->name,
					       (unsigned long long)s->addr,
					       (unsigned long long)s->sh.sh_size);
			continue;
		}
		if (!(s->sh.sh_flags & SHF_ALLOC))
			continue;
		uint64_t align = s->sh.sh_addralign;

		/* non-power-of-two or absurd alignments are treated as 1 */
		if (!align || (align & (align - 1)) || align > (1ull << 32))
			align = 1;
		base = (base + align - 1) & ~(align - 1);
		s->addr = base;
		if (s->sh.sh_size > UINT64_MAX / 2 - base)
			return nl_fail(d, -NL_E_FORMAT, "section %zu: size 0x%llx overflows", i,
				       (unsigned long long)s->sh.sh_size);
		base += s->sh.sh_size;
	}
	return 0;
}

static int cmp_sec_addr(const void *a, const void *b)
{
	const struct nl_section *x = *(struct nl_section *const *)a;
	const struct nl_section *y = *(struct nl_section *const *)b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int index_sections(struct nl_elf *elf, struct nl_diag *d)
{
	struct nl_elf_private *p = elf->priv;

	p->by_addr = calloc(elf->nr_sections, sizeof(*p->by_addr));
	if (!p->by_addr)
		return nl_fail_errno(d, -ENOMEM, "section index");
	for (size_t i = 0; i < elf->nr_sections; i++) {
		struct nl_section *s = &elf->sections[i];

		/* .tbss overlaps whatever follows it and holds no bytes */
		if (!(s->sh.sh_flags & SHF_ALLOC) || !s->sh.sh_size ||
		    ((s->sh.sh_flags & SHF_TLS) && s->sh.sh_type == SHT_NOBITS))
			continue;
		p->by_addr[p->nr_by_addr++] = s;
	}
	qsort(p->by_addr, p->nr_by_addr, sizeof(*p->by_addr), cmp_sec_addr);
	return 0;
}

/* ---- symbols ---- */

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

/* Lookups by name want the defined, global one when several share a name. */
static int sym_rank(const struct nl_symbol *s)
{
	int r = 0;

	if (s->sec || s->sym.st_shndx == SHN_ABS)
		r += 4;
	if (s->bind == STB_GLOBAL)
		r += 2;
	else if (s->bind == STB_WEAK)
		r += 1;
	return r;
}

static int build_name_hash(struct nl_elf *elf)
{
	struct nl_elf_private *p = elf->priv;
	size_t n = 16;
	uint64_t *t;

	while (n < elf->nr_symbols * 2)
		n <<= 1;
	t = calloc(n, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < elf->nr_symbols; i++) {
		const struct nl_symbol *s = &elf->symbols[i];
		uint32_t hv;

		if (!s->name[0])
			continue;
		hv = name_hash(s->name);
		/* the stored hash keeps strcmp off the slots of other names */
		for (size_t h = hv & (n - 1);; h = (h + 1) & (n - 1)) {
			uint64_t slot = t[h];
			const struct nl_symbol *o = &elf->symbols[(uint32_t)slot - 1];

			if (!slot) {
				t[h] = (uint64_t)hv << 32 | ((uint32_t)i + 1);
				break;
			}
			if ((uint32_t)(slot >> 32) == hv && !strcmp(o->name, s->name)) {
				if (sym_rank(s) > sym_rank(o))
					t[h] = (uint64_t)hv << 32 | ((uint32_t)i + 1);
				break;
			}
		}
	}
	p->name_hash = t;
	p->hash_mask = n - 1;
	return 0;
}

static struct nl_section *find_symtab(const struct nl_elf *elf)
{
	struct nl_section *dyn = NULL;

	for (size_t i = 1; i < elf->nr_sections; i++) {
		if (elf->sections[i].sh.sh_type == SHT_SYMTAB)
			return &elf->sections[i];
		if (elf->sections[i].sh.sh_type == SHT_DYNSYM && !dyn)
			dyn = &elf->sections[i];
	}
	return dyn;
}

/*
 * A function must lie inside the section it names: the checks take a
 * function's bytes from that section and its size as the extent to decode.
 * Only code in allocated sections is read.  A symbol at the very end, sized
 * 0, is legal (end markers); data and NOTYPE symbols are not checked, as
 * ld gives linker-script symbols (_end, __bss_stop) the nearest section
 * even when the value lies past it.
 */
static int check_func_extent(const struct nl_elf *elf, const struct nl_symbol *s,
			     struct nl_diag *d)
{
	const struct nl_section *sec = s->sec;
	uint64_t start = elf->is_rel ? 0 : sec->sh.sh_addr;

	if ((s->type != STT_FUNC && s->type != STT_GNU_IFUNC) || !(sec->sh.sh_flags & SHF_ALLOC))
		return 0;
	if (s->sym.st_value >= start &&
	    fits(s->sym.st_value - start, s->sym.st_size, sec->sh.sh_size))
		return 0;
	return nl_fail(d, -NL_E_FORMAT,
		       "symbol %u (%s): 0x%llx+0x%llx lies outside section %u (%s) at 0x%llx+0x%llx",
		       s->idx, s->name, (unsigned long long)s->sym.st_value,
		       (unsigned long long)s->sym.st_size, sec->idx, sec->name,
		       (unsigned long long)start, (unsigned long long)sec->sh.sh_size);
}

static int read_symbols(struct nl_elf *elf, struct nl_diag *d)
{
	struct nl_section *st = find_symtab(elf);
	bool is64 = elf->eh.e_ident[EI_CLASS] == ELFCLASS64;
	size_t entsize = is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	Elf_Data *data, *xdata = NULL;
	const struct nl_section *str, *xs = NULL;
	size_t nr;
	int err;

	if (!st) {
		elf->symbol_source = "none";
		return 0;
	}
	if (st->sh.sh_entsize != entsize)
		return nl_fail(d, -NL_E_FORMAT, "section %u (%s): symbol entry size %llu, expected %zu",
			       st->idx, st->name, (unsigned long long)st->sh.sh_entsize, entsize);
	if (!st->data)
		return nl_fail(d, -NL_E_FORMAT, "section %u (%s): symbol table has no data", st->idx,
			       st->name);
	str = &elf->sections[st->sh.sh_link];
	if (str->sh.sh_type != SHT_STRTAB || !str->data || str->data[str->size - 1])
		return nl_fail(d, -NL_E_FORMAT, "section %u (%s): string table %u (%s) is invalid",
			       st->idx, st->name, str->idx, str->name);
	nr = st->size / entsize;
	data = elf_getdata(elf_getscn(elf->priv->e, st->idx), NULL);
	if (!data || data->d_size < nr * entsize)
		return nl_fail(d, -NL_E_FORMAT, "section %u (%s): cannot read symbols: %s", st->idx,
			       st->name, elf_errmsg(-1));

	for (size_t i = 1; i < elf->nr_sections; i++) {
		const struct nl_section *s = &elf->sections[i];

		if (s->sh.sh_type == SHT_SYMTAB_SHNDX && s->sh.sh_link == st->idx)
			xs = s;
	}
	if (xs) {
		if (xs->sh.sh_entsize != sizeof(Elf32_Word) || xs->size / sizeof(Elf32_Word) < nr)
			return nl_fail(d, -NL_E_FORMAT, "section %u (%s): extended index table too small",
				       xs->idx, xs->name);
		xdata = elf_getdata(elf_getscn(elf->priv->e, xs->idx), NULL);
		if (!xdata || xdata->d_size < nr * sizeof(Elf32_Word))
			return nl_fail(d, -NL_E_FORMAT, "section %u (%s): cannot read: %s", xs->idx,
				       xs->name, elf_errmsg(-1));
	}

	if (nr > elf->priv->max_records)
		return nl_fail(d, -NL_E_LIMIT, "section %u (%s): %zu symbols, more than the cap of "
			       "%llu records (--max-records)", st->idx, st->name, nr,
			       (unsigned long long)elf->priv->max_records);
	elf->symbols = calloc(nr ? nr : 1, sizeof(*elf->symbols));
	if (!elf->symbols)
		return nl_fail_errno(d, -ENOMEM, "%zu symbols", nr);
	nl_prefault(elf->symbols, nr * sizeof(*elf->symbols));
	for (size_t i = 0; i < nr; i++) {
		struct nl_symbol *s = &elf->symbols[i];
		Elf32_Word xndx = 0;
		unsigned shndx;

		if (is64 && !xdata && data->d_type == ELF_T_SYM) {
			/* GElf_Sym is Elf64_Sym: copy it from the translated data directly */
			memcpy(&s->sym, (const Elf64_Sym *)data->d_buf + i, sizeof(s->sym));
		} else if (!gelf_getsymshndx(data, xdata, (int)i, &s->sym, &xndx)) {
			return nl_fail(d, -NL_E_FORMAT, "section %u (%s): symbol %zu unreadable: %s",
				       st->idx, st->name, i, elf_errmsg(-1));
		}
		s->idx = (unsigned)i;
		/* like an unterminated table: a broken file, not a nameless symbol */
		if (s->sym.st_name >= str->size)
			return nl_fail(d, -NL_E_FORMAT,
				       "symbol %zu: name offset %u past string table %u (%s) of %llu bytes",
				       i, s->sym.st_name, str->idx, str->name,
				       (unsigned long long)str->size);
		s->name = (const char *)str->data + s->sym.st_name;
		s->type = GELF_ST_TYPE(s->sym.st_info);
		s->bind = GELF_ST_BIND(s->sym.st_info);
		s->size = s->sym.st_size;
		shndx = s->sym.st_shndx;
		if (shndx == SHN_XINDEX) {
			if (!xdata)
				return nl_fail(d, -NL_E_FORMAT,
					       "symbol %zu (%s) uses SHN_XINDEX without an extended index table",
					       i, s->name);
			shndx = xndx;
		} else if (shndx >= SHN_LORESERVE || shndx == SHN_UNDEF) {
			s->addr = shndx == SHN_ABS ? s->sym.st_value : 0;
			continue;
		}
		if (shndx >= elf->nr_sections)
			return nl_fail(d, -NL_E_FORMAT, "symbol %zu (%s): section index %u out of range",
				       i, s->name, shndx);
		s->sec = &elf->sections[shndx];
		s->addr = elf->is_rel ? s->sec->addr + s->sym.st_value : s->sym.st_value;
		if ((err = check_func_extent(elf, s, d)))
			return err;
	}
	elf->nr_symbols = nr;
	elf->symbol_source = st->sh.sh_type == SHT_SYMTAB ? ".symtab" : ".dynsym";
	return 0;
}

static char symfile_type(char t, const struct nl_section *sec, unsigned char *stt)
{
	switch (t) {
	case 'T': case 't': case 'W': case 'w': case 'V': case 'v': case 'i':
		*stt = sec && sec->exec ? STT_FUNC : STT_NOTYPE;
		break;
	case 'D': case 'd': case 'R': case 'r': case 'B': case 'b': case 'G': case 'g':
	case 'S': case 's':
		*stt = STT_OBJECT;
		break;
	default:
		*stt = STT_NOTYPE;
	}
	if (t == 'W' || t == 'w' || t == 'V' || t == 'v')
		return STB_WEAK;
	return (t >= 'A' && t <= 'Z') ? STB_GLOBAL : STB_LOCAL;
}

/* System.map / kallsyms entries go after the ELF's own symbols, flagged from_map. */
static int add_symfile(struct nl_elf *elf, const char *path, struct nl_diag *d)
{
	struct nl_symfile *sf;
	struct nl_symbol *ns;
	int err = nl_symfile_read(path, &sf, d);

	if (err)
		return err;
	elf->priv->symfile = sf;
	if (sf->all_zero)
		return nl_fail(d, -NL_E_FORMAT, "%s: every address is 0 (kallsyms read without privileges?)",
			       path);
	if (!sf->nr)
		return nl_fail(d, -NL_E_FORMAT, "%s: no symbols", path);
	if (sf->nr > elf->priv->max_records - elf->nr_symbols)
		return nl_fail(d, -NL_E_LIMIT, "%s: %zu symbols after the file's %zu: more than the "
			       "cap of %llu records (--max-records)", path, sf->nr, elf->nr_symbols,
			       (unsigned long long)elf->priv->max_records);
	ns = realloc(elf->symbols, (elf->nr_symbols + sf->nr) * sizeof(*ns));
	if (!ns)
		return nl_fail_errno(d, -ENOMEM, "%s: symbols", path);
	elf->symbols = ns;
	for (size_t i = 0; i < sf->nr; i++) {
		const struct nl_symfile_entry *e = &sf->entries[i];
		struct nl_symbol *s = &elf->symbols[elf->nr_symbols + i];

		memset(s, 0, sizeof(*s));
		s->idx = (unsigned)(elf->nr_symbols + i);
		s->name = e->name;
		s->addr = e->addr;
		s->sec = e->type == 'A' || e->type == 'a' || e->type == 'U' ? NULL
			: nl_find_section_by_addr(elf, e->addr);
		s->bind = symfile_type(e->type, s->sec, &s->type);
		s->sym.st_value = e->addr;
		s->sym.st_info = GELF_ST_INFO(s->bind, s->type);
		s->sym.st_shndx = s->sec ? (uint16_t)(s->sec->idx < SHN_LORESERVE ? s->sec->idx
										   : SHN_XINDEX)
					 : SHN_ABS;
		s->from_map = true;
	}
	elf->nr_symbols += sf->nr;
	if (!elf->priv->nr_elf_symbols)
		elf->symbol_source = "symbol file";
	else
		elf->symbol_source = ".symtab + symbol file";
	return 0;
}

/* ---- relocations (ET_REL) ---- */

/*
 * Types some x86 / x86-64 ABI defines, as binutils knows them: x86-64 0..51
 * (41..42 GOTPCRELX, 43..51 the APX CODE_4/5/6 forms of binutils 2.43+),
 * i386 0..11 and 14..43 (12 and 13 were never assigned), and for both the
 * GNU vtable markers 250 and 251.  Anything else means a corrupt table: no
 * linker would know what to patch, and neither would a check reading the
 * field it names.
 */
#define R_GNU_VTINHERIT 250
#define R_GNU_VTENTRY 251

static bool known_reloc_type(enum nl_mode mode, unsigned type)
{
	if (type == R_GNU_VTINHERIT || type == R_GNU_VTENTRY)
		return true;
	if (mode == NL_MODE_64)
		return type <= 51;
	return type <= R_386_32PLT || (type >= R_386_TLS_TPOFF && type <= 43);
}

/* Bytes a relocation patches, so that "inside the section" can be checked. */
static unsigned reloc_width(enum nl_mode mode, unsigned type)
{
	if (type == R_GNU_VTINHERIT || type == R_GNU_VTENTRY)
		return 0;	/* markers for the linker's vtable GC: they patch nothing */
	if (mode == NL_MODE_64) {
		switch (type) {
		case R_X86_64_NONE: case R_X86_64_TLSDESC_CALL: return 0;
		case R_X86_64_8: case R_X86_64_PC8: return 1;
		case R_X86_64_16: case R_X86_64_PC16: return 2;
		case R_X86_64_64: case R_X86_64_GLOB_DAT: case R_X86_64_JUMP_SLOT:
		case R_X86_64_RELATIVE: case R_X86_64_DTPMOD64: case R_X86_64_DTPOFF64:
		case R_X86_64_TPOFF64: case R_X86_64_PC64: case R_X86_64_GOTOFF64:
		case R_X86_64_GOT64: case R_X86_64_GOTPCREL64: case R_X86_64_GOTPC64:
		case R_X86_64_GOTPLT64: case R_X86_64_PLTOFF64: case R_X86_64_SIZE64:
		case R_X86_64_IRELATIVE: case R_X86_64_RELATIVE64:
			return 8;
		case R_X86_64_TLSDESC: return 16;
		default: return type <= 51 ? 4 : 1;	/* 43..51: 32-bit APX GOT forms */
		}
	}
	switch (type) {
	case R_386_NONE: case R_386_TLS_DESC_CALL: return 0;
	case R_386_8: case R_386_PC8: return 1;
	case R_386_16: case R_386_PC16: return 2;
	default: return type <= 43 ? 4 : 1;
	}
}

/* SHT_REL keeps the addend in the patched bytes. */
static int64_t implicit_addend(const struct nl_section *t, uint64_t off, unsigned width)
{
	const uint8_t *p = t->data + off;

	if (width == 8) {
		uint64_t v = 0;

		for (int i = 7; i >= 0; i--)
			v = v << 8 | p[i];
		return (int64_t)v;
	}
	if (width == 4)
		return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				 (uint32_t)p[3] << 24);
	if (width == 2)
		return (int16_t)(p[0] | p[1] << 8);
	if (width == 1)
		return (int8_t)p[0];
	return 0;
}

static int cmp_reloc(const void *a, const void *b)
{
	const struct nl_reloc *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return 0;
}

static bool wanted_reloc_section(const struct nl_elf *elf, const struct nl_section *s)
{
	if (s->sh.sh_type != SHT_REL && s->sh.sh_type != SHT_RELA)
		return false;
	if (!s->sh.sh_size || !s->sh.sh_info || s->sh.sh_info >= elf->nr_sections)
		return false;
	/* relocations of debug info are many and never needed here */
	return (elf->sections[s->sh.sh_info].sh.sh_flags & SHF_ALLOC) != 0;
}

static int read_relocs(struct nl_elf *elf, struct nl_diag *d)
{
	struct nl_elf_private *p = elf->priv;
	bool is64 = elf->eh.e_ident[EI_CLASS] == ELFCLASS64;
	const struct nl_section *st = find_symtab(elf);
	size_t total = 0, *fill;

	/* linked files carry dynamic relocations only; --emit-relocs vmlinux ones are not read */
	if (!elf->is_rel)
		return 0;
	p->relocs = calloc(elf->nr_sections, sizeof(*p->relocs));
	if (!p->relocs)
		return nl_fail_errno(d, -ENOMEM, "relocation index");
	/* pass 1: check the tables and count per patched section */
	for (size_t i = 1; i < elf->nr_sections; i++) {
		const struct nl_section *s = &elf->sections[i];

		if ((s->sh.sh_type == SHT_REL || s->sh.sh_type == SHT_RELA) && s->sh.sh_size &&
		    s->sh.sh_info >= elf->nr_sections)
			return nl_fail(d, -NL_E_FORMAT, "section %zu (%s): sh_info %u out of range", i,
				       s->name, s->sh.sh_info);
		if (!wanted_reloc_section(elf, s))
			continue;
		size_t want = s->sh.sh_type == SHT_RELA ? (is64 ? sizeof(Elf64_Rela) : sizeof(Elf32_Rela))
							: (is64 ? sizeof(Elf64_Rel) : sizeof(Elf32_Rel));

		if (s->sh.sh_entsize != want)
			return nl_fail(d, -NL_E_FORMAT,
				       "section %zu (%s): relocation entry size %llu, expected %zu", i,
				       s->name, (unsigned long long)s->sh.sh_entsize, want);
		if (!st || s->sh.sh_link != st->idx)
			return nl_fail(d, -NL_E_FORMAT, "section %zu (%s): sh_link %u is not the symbol table",
				       i, s->name, s->sh.sh_link);
		p->relocs[s->sh.sh_info].nr += s->size / want;
		total += s->size / want;
	}
	if (total > p->max_records - elf->nr_symbols)
		return nl_fail(d, -NL_E_LIMIT, "%zu relocations and %zu symbols: more than the cap "
			       "of %llu records (--max-records)", total, elf->nr_symbols,
			       (unsigned long long)p->max_records);
	p->reloc_store = calloc(total ? total : 1, sizeof(*p->reloc_store));
	fill = calloc(elf->nr_sections, sizeof(*fill));
	if (!p->reloc_store || !fill) {
		free(fill);
		return nl_fail_errno(d, -ENOMEM, "%zu relocations", total);
	}
	for (size_t i = 0, at = 0; i < elf->nr_sections; i++) {
		p->relocs[i].v = p->reloc_store + at;
		at += p->relocs[i].nr;
	}

	/* pass 2: read, check every entry against its symbol table and target section */
	int err = 0;

	for (size_t i = 1; i < elf->nr_sections && !err; i++) {
		const struct nl_section *s = &elf->sections[i];

		if (!wanted_reloc_section(elf, s))
			continue;
		bool rela = s->sh.sh_type == SHT_RELA;
		size_t nr = s->size / s->sh.sh_entsize;
		const struct nl_section *t = &elf->sections[s->sh.sh_info];
		struct nl_reloc_list *list = &p->relocs[t->idx];
		Elf_Data *data = elf_getdata(elf_getscn(p->e, i), NULL);

		if (!data || data->d_size < nr * s->sh.sh_entsize) {
			err = nl_fail(d, -NL_E_FORMAT, "section %zu (%s): cannot read relocations: %s",
				      i, s->name, elf_errmsg(-1));
			break;
		}
		for (size_t k = 0; k < nr; k++) {
			struct nl_reloc *r = &list->v[fill[t->idx]];
			size_t symi;
			unsigned width;
			bool ok;

			memset(r, 0, sizeof(*r));
			if (rela) {
				ok = gelf_getrela(data, (int)k, &r->rela) != NULL;
			} else {
				GElf_Rel rel;

				ok = gelf_getrel(data, (int)k, &rel) != NULL;
				r->rela.r_offset = rel.r_offset;
				r->rela.r_info = rel.r_info;
			}
			if (!ok) {
				err = nl_fail(d, -NL_E_FORMAT, "section %zu (%s): relocation %zu unreadable",
					      i, s->name, k);
				break;
			}
			r->offset = r->rela.r_offset;
			r->type = (unsigned)GELF_R_TYPE(r->rela.r_info);
			symi = GELF_R_SYM(r->rela.r_info);
			if (!known_reloc_type(elf->mode, r->type)) {
				err = nl_fail(d, -NL_E_FORMAT,
					      "section %zu (%s): relocation %zu has unknown type %u (no %s ABI defines it)",
					      i, s->name, k, r->type,
					      elf->mode == NL_MODE_64 ? "x86-64" : "i386");
				break;
			}
			width = reloc_width(elf->mode, r->type);
			if (symi >= p->nr_elf_symbols) {
				err = nl_fail(d, -NL_E_FORMAT,
					      "section %zu (%s): relocation %zu: symbol %zu out of range",
					      i, s->name, k, symi);
				break;
			}
			if (!t->data || r->offset >= t->size || !fits(r->offset, width, t->size)) {
				err = nl_fail(d, -NL_E_FORMAT,
					      "section %zu (%s): relocation %zu at 0x%llx is outside section %u (%s) of 0x%llx bytes",
					      i, s->name, k, (unsigned long long)r->offset, t->idx,
					      t->name, (unsigned long long)t->size);
				break;
			}
			r->sym = symi ? &elf->symbols[symi] : NULL;
			r->addend = rela ? r->rela.r_addend : implicit_addend(t, r->offset, width);
			r->rela.r_addend = r->addend;
			fill[t->idx]++;
		}
	}
	free(fill);
	if (err)
		return err;
	for (size_t i = 0; i < elf->nr_sections; i++)
		if (p->relocs[i].nr > 1)
			qsort(p->relocs[i].v, p->relocs[i].nr, sizeof(struct nl_reloc), cmp_reloc);
	return 0;
}

/* ---- open / close ---- */

static int open_image(struct nl_elf *elf, const struct nl_elf_opts *opts, struct nl_diag *d)
{
	struct nl_elf_private *p = elf->priv;
	const uint8_t *buf = p->blob.data;
	size_t size = p->blob.size;
	int err;

	p->max_records = opts && opts->max_records ? opts->max_records : NL_ELF_MAX_RECORDS;
	elf->file_size = size;
	elf->compression = p->blob.comp == NL_COMP_NONE ? NULL : nl_compression_name(p->blob.comp);
	if ((err = check_ident(buf, size, d)))
		return err;
	pthread_once(&libelf_once, libelf_init);
	if (libelf_version == EV_NONE)
		return nl_fail(d, -NL_E_UNSUPPORTED, "libelf: %s", elf_errmsg(-1));
	/* libelf never writes to a native little-endian image it only reads */
	p->e = elf_memory((char *)(uintptr_t)buf, size);
	if (!p->e)
		return nl_fail(d, -NL_E_FORMAT, "libelf: %s", elf_errmsg(-1));
	if ((err = read_header(elf, buf, size, d)) || (err = read_sections(elf, buf, size, d)) ||
	    (err = assign_addresses(elf, d)) || (err = index_sections(elf, d)) ||
	    (err = read_symbols(elf, d)))
		return err;
	p->nr_elf_symbols = elf->nr_symbols;
	if (opts && opts->symbol_file && (err = add_symfile(elf, opts->symbol_file, d)))
		return err;
	if ((err = read_relocs(elf, d)))
		return err;
	return 0;
}

static int new_elf(const char *path, struct nl_elf **out, struct nl_diag *d)
{
	struct nl_elf *elf = calloc(1, sizeof(*elf));

	*out = NULL;
	if (!elf || !(elf->priv = calloc(1, sizeof(*elf->priv))) ||
	    !(elf->priv->path = strdup(path ? path : "(memory)"))) {
		if (elf)
			free(elf->priv);
		free(elf);
		return nl_fail_errno(d, -ENOMEM, "ELF model");
	}
	pthread_mutex_init(&elf->priv->lock, NULL);
	elf->path = elf->priv->path;
	*out = elf;
	return 0;
}

int nl_elf_open(const char *path, const struct nl_elf_opts *opts, struct nl_elf **out,
		struct nl_diag *d)
{
	struct nl_elf *elf;
	int err = new_elf(path, &elf, d);

	*out = NULL;
	if (err)
		return err;
	err = nl_load_file(path, opts ? opts->max_decompressed : 0, &elf->priv->blob, d);
	if (!err)
		err = open_image(elf, opts, d);
	if (err) {
		nl_elf_close(elf);
		return err;
	}
	*out = elf;
	return 0;
}

int nl_elf_open_mem(const char *name, const uint8_t *buf, size_t size,
		    const struct nl_elf_opts *opts, struct nl_elf **out, struct nl_diag *d)
{
	struct nl_elf *elf;
	int err = new_elf(name, &elf, d);

	*out = NULL;
	if (err)
		return err;
	err = nl_load_mem(buf, size, opts ? opts->max_decompressed : 0, &elf->priv->blob, d);
	if (!err)
		err = open_image(elf, opts, d);
	if (err) {
		nl_elf_close(elf);
		return err;
	}
	*out = elf;
	return 0;
}

void nl_elf_close(struct nl_elf *elf)
{
	struct nl_elf_private *p;

	if (!elf)
		return;
	p = elf->priv;
	if (p) {
		if (p->e)
			elf_end(p->e);
		nl_blob_release(&p->blob);
		free(p->relocs);
		free(p->reloc_store);
		free(p->by_addr);
		free(p->name_hash);
		nl_symfile_free(p->symfile);
		free(p->path);
		pthread_mutex_destroy(&p->lock);
		free(p);
	}
	free(elf->sections);
	free(elf->symbols);
	free(elf);
}

/* ---- lookups ---- */

struct nl_section *nl_find_section_by_name(const struct nl_elf *elf, const char *name)
{
	for (size_t i = 0; i < elf->nr_sections; i++)
		if (!strcmp(elf->sections[i].name, name))
			return &elf->sections[i];
	return NULL;
}

struct nl_section *nl_find_section_by_addr(const struct nl_elf *elf, uint64_t addr)
{
	const struct nl_elf_private *p = elf->priv;
	size_t lo = 0, hi = p->nr_by_addr;

	/* the last section starting at or below addr, then a few before it for overlaps */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->by_addr[mid]->addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = 0; k < 4 && lo > k; k++) {
		struct nl_section *s = p->by_addr[lo - 1 - k];

		if (addr - s->addr < s->sh.sh_size)
			return s;
	}
	return NULL;
}

#define LINEAR_LOOKUPS 8	/* a scan asks for three names: no index needed for them */

struct nl_symbol *nl_find_symbol_by_name(const struct nl_elf *elf, const char *name)
{
	struct nl_elf_private *p = elf->priv;
	struct nl_symbol *best = NULL;
	const uint64_t *t;
	size_t mask;

	if (!name[0])
		return NULL;
	pthread_mutex_lock(&p->lock);
	if (!p->name_hash && ++p->lookups > LINEAR_LOOKUPS)
		build_name_hash((struct nl_elf *)elf);	/* on failure, stay linear */
	t = p->name_hash;
	mask = p->hash_mask;
	pthread_mutex_unlock(&p->lock);

	if (!t) {
		/* the same choice the index makes: best rank, then table order */
		for (size_t i = 0; i < elf->nr_symbols; i++) {
			struct nl_symbol *s = &elf->symbols[i];

			if (s->name[0] == name[0] && !strcmp(s->name, name) &&
			    (!best || sym_rank(s) > sym_rank(best)))
				best = s;
		}
		return best;
	}
	uint32_t hv = name_hash(name);

	for (size_t h = hv & mask;; h = (h + 1) & mask) {
		uint64_t slot = t[h];

		if (!slot)
			return NULL;
		if ((uint32_t)(slot >> 32) == hv && !strcmp(elf->symbols[(uint32_t)slot - 1].name, name))
			return &elf->symbols[(uint32_t)slot - 1];
	}
}

const struct nl_reloc *nl_section_relocs(const struct nl_elf *elf, const struct nl_section *sec,
					 size_t *nr)
{
	const struct nl_elf_private *p = elf->priv;

	if (!p->relocs || !sec || sec->idx >= elf->nr_sections) {
		*nr = 0;
		return NULL;
	}
	*nr = p->relocs[sec->idx].nr;
	return *nr ? p->relocs[sec->idx].v : NULL;
}

const struct nl_reloc *nl_find_reloc_in(const struct nl_elf *elf, const struct nl_section *sec,
					uint64_t offset, uint64_t len)
{
	size_t nr, lo = 0, hi;
	const struct nl_reloc *v = nl_section_relocs(elf, sec, &nr);

	if (!v || !len)
		return NULL;
	hi = nr;
	while (lo < hi) {	/* first relocation at or after offset */
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < nr && v[lo].offset - offset < len)
		return &v[lo];
	return NULL;
}

const uint8_t *nl_elf_bytes_at(const struct nl_elf *elf, uint64_t addr, uint64_t *avail)
{
	const struct nl_section *s = nl_find_section_by_addr(elf, addr);

	if (!s || !s->data || addr - s->addr >= s->size) {
		if (avail)
			*avail = 0;
		return NULL;
	}
	if (avail)
		*avail = s->size - (addr - s->addr);
	return s->data + (addr - s->addr);
}

/* ---- dynamic relocations (linked files) ---- */

int nl_elf_dynrelocs(const struct nl_elf *elf, struct nl_dynreloc **out, size_t *nr_out,
		     struct nl_diag *d)
{
	bool is64 = elf->eh.e_ident[EI_CLASS] == ELFCLASS64;
	size_t sym_es = is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	struct nl_dynreloc *v = NULL;
	size_t nr = 0, cap = 0;

	*out = NULL;
	*nr_out = 0;
	if (elf->is_rel)
		return 0;
	for (size_t i = 1; i < elf->nr_sections; i++) {
		const struct nl_section *s = &elf->sections[i];
		bool rela = s->sh.sh_type == SHT_RELA;

		if ((s->sh.sh_type != SHT_REL && !rela) || !s->data)
			continue;
		const struct nl_section *ds = &elf->sections[s->sh.sh_link];
		size_t want = rela ? (is64 ? sizeof(Elf64_Rela) : sizeof(Elf32_Rela))
				   : (is64 ? sizeof(Elf64_Rel) : sizeof(Elf32_Rel));

		/* only relocations against the dynamic symbol table name anything */
		if (ds->sh.sh_type != SHT_DYNSYM)
			continue;
		if (s->sh.sh_entsize != want || ds->sh.sh_entsize != sym_es) {
			free(v);
			return nl_fail(d, -NL_E_FORMAT, "section %zu (%s): bad entry size", i, s->name);
		}
		const struct nl_section *str = &elf->sections[ds->sh.sh_link];

		if (str->sh.sh_type != SHT_STRTAB || !str->data || str->data[str->size - 1]) {
			free(v);
			return nl_fail(d, -NL_E_FORMAT, "section %u (%s): string table is invalid",
				       ds->idx, ds->name);
		}
		Elf_Data *rd = elf_getdata(elf_getscn(elf->priv->e, i), NULL);
		Elf_Data *sd = elf_getdata(elf_getscn(elf->priv->e, ds->idx), NULL);
		size_t n = s->size / want, nsyms = ds->size / sym_es;

		if (!rd || !sd || rd->d_size < n * want || sd->d_size < nsyms * sym_es) {
			free(v);
			return nl_fail(d, -NL_E_FORMAT, "section %zu (%s): cannot read: %s", i, s->name,
				       elf_errmsg(-1));
		}
		for (size_t k = 0; k < n; k++) {
			GElf_Rela r;
			GElf_Sym sym;
			size_t si;

			GElf_Rel rel;
			bool ok;

			memset(&r, 0, sizeof(r));
			if (rela) {
				ok = gelf_getrela(rd, (int)k, &r) != NULL;
			} else {
				ok = gelf_getrel(rd, (int)k, &rel) != NULL;
				if (ok) {
					r.r_offset = rel.r_offset;
					r.r_info = rel.r_info;
				}
			}
			if (!ok) {
				free(v);
				return nl_fail(d, -NL_E_FORMAT, "section %zu (%s): relocation %zu unreadable",
					       i, s->name, k);
			}
			if (nr == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct nl_dynreloc *nv = realloc(v, ncap * sizeof(*nv));

				if (!nv) {
					free(v);
					return nl_fail_errno(d, -ENOMEM, "dynamic relocations");
				}
				v = nv;
				cap = ncap;
			}
			struct nl_dynreloc *e = &v[nr++];

			si = GELF_R_SYM(r.r_info);
			e->addr = r.r_offset;
			e->type = (unsigned)GELF_R_TYPE(r.r_info);
			e->addend = rela ? r.r_addend : 0;
			e->name = "";
			if (si && si < nsyms && gelf_getsym(sd, (int)si, &sym) && sym.st_name < str->size)
				e->name = (const char *)str->data + sym.st_name;
		}
	}
	*out = v;
	*nr_out = nr;
	return 0;
}
