// SPDX-License-Identifier: MIT
/*
 * Generated code as an ELF64 executable, so objdump and `noplab scan` can
 * audit exactly the bytes that ran, at the addresses they ran at.  This is
 * the only bench file that uses libelf.
 *
 * The layout is ours (ELF_F_LAYOUT): each code part's file offset is its
 * address modulo the page size, which is what a loader needs, and what lets
 * valgrind run the stand-alone variant for --sim cachegrind.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "noplab/bench.h"

#define PAGE 4096u

struct strtab {
	char *buf;
	size_t len, cap;
};

static size_t str_add(struct strtab *t, const char *a, const char *b)
{
	size_t la = strlen(a), lb = b ? strlen(b) : 0, at = t->len;

	if (t->len + la + lb + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		char *p;

		while (cap < t->len + la + lb + 1)
			cap *= 2;
		p = realloc(t->buf, cap);
		if (!p)
			return (size_t)-1;
		t->buf = p;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, a, la);
	if (lb)
		memcpy(t->buf + t->len + la, b, lb);
	t->buf[t->len + la + lb] = '\0';
	t->len += la + lb + 1;
	return at;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

struct out {
	Elf *e;
	struct nl_diag *d;
	int err;
};

static Elf_Scn *new_section(struct out *o, const char *what)
{
	Elf_Scn *s = elf_newscn(o->e);

	if (!s && !o->err)
		o->err = nl_fail(o->d, -EIO, "elf_newscn (%s): %s", what, elf_errmsg(-1));
	return s;
}

static void set_data(struct out *o, Elf_Scn *s, void *buf, size_t size, Elf_Type type,
		     size_t align)
{
	Elf_Data *data;

	if (o->err || !s)
		return;
	data = elf_newdata(s);
	if (!data) {
		o->err = nl_fail(o->d, -EIO, "elf_newdata: %s", elf_errmsg(-1));
		return;
	}
	data->d_buf = buf;
	data->d_size = size;
	data->d_type = type;
	data->d_align = align;
	data->d_off = 0;
	data->d_version = EV_CURRENT;
}

static void set_shdr(struct out *o, Elf_Scn *s, const GElf_Shdr *sh)
{
	if (!o->err && s && !gelf_update_shdr(s, (GElf_Shdr *)sh))
		o->err = nl_fail(o->d, -EIO, "gelf_update_shdr: %s", elf_errmsg(-1));
}

static size_t count_syms(const struct nl_elf_emit *e)
{
	size_t n = 1;	/* the null symbol */

	for (size_t i = 0; i < e->nr; i++)
		n += e->parts[i].img->nr_syms + 1;	/* + a section symbol */
	return n;
}

int nl_emit_elf(const char *path, const struct nl_elf_emit *em, struct nl_diag *d)
{
	struct out o = { .d = d };
	struct strtab shstr = { 0 }, str = { 0 };
	size_t nr_syms = count_syms(em), si = 1, nr_local;
	GElf_Sym *syms = NULL;
	Elf64_Sym *raw = NULL;
	Elf_Scn **text = NULL, *data_scn = NULL, *symtab, *strtab, *shstrtab;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	uint64_t off;
	int fd, err;
	size_t nr_ph = em->nr + (em->data_size ? 1 : 0) + 1;

	if (!em->nr)
		return nl_fail(d, -EINVAL, "nothing to write");
	for (size_t i = 0; i < em->nr; i++)
		if (em->parts[i].addr % PAGE)
			return nl_fail(d, -EINVAL, "part %zu address %#llx is not page-aligned", i,
				       (unsigned long long)em->parts[i].addr);
	if (elf_version(EV_CURRENT) == EV_NONE)
		return nl_fail(d, -EIO, "libelf: %s", elf_errmsg(-1));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0)
		return nl_fail_errno(d, -errno, "%s", path);
	o.e = elf_begin(fd, ELF_C_WRITE, NULL);
	text = calloc(em->nr, sizeof(*text));
	syms = calloc(nr_syms, sizeof(*syms));
	raw = calloc(nr_syms, sizeof(*raw));
	if (!o.e || !text || !syms || !raw) {
		err = o.e ? -ENOMEM : nl_fail(d, -EIO, "elf_begin: %s", elf_errmsg(-1));
		goto out;
	}
	elf_flagelf(o.e, ELF_C_SET, ELF_F_LAYOUT);
	if (!gelf_newehdr(o.e, ELFCLASS64) || !gelf_newphdr(o.e, nr_ph)) {
		err = nl_fail(d, -EIO, "ELF headers: %s", elf_errmsg(-1));
		goto out;
	}
	str_add(&shstr, "", NULL);
	str_add(&str, "", NULL);

	/* code: file offset = address mod page, after the headers */
	off = align_up(sizeof(Elf64_Ehdr) + nr_ph * sizeof(Elf64_Phdr), PAGE);
	for (size_t i = 0; i < em->nr && !o.err; i++) {
		const struct nl_elf_part *p = &em->parts[i];

		text[i] = new_section(&o, p->section);
		set_data(&o, text[i], p->img->code, p->img->size, ELF_T_BYTE, PAGE);
		memset(&sh, 0, sizeof(sh));
		sh.sh_name = str_add(&shstr, p->section, NULL);
		sh.sh_type = SHT_PROGBITS;
		sh.sh_flags = SHF_ALLOC | SHF_EXECINSTR;
		sh.sh_addr = p->addr;
		sh.sh_offset = off;
		sh.sh_size = p->img->size;
		sh.sh_addralign = PAGE;
		set_shdr(&o, text[i], &sh);
		off = align_up(off + p->img->size, PAGE);
	}
	if (em->data_size && !o.err) {
		data_scn = new_section(&o, ".data");
		set_data(&o, data_scn, (void *)em->data, em->data_size, ELF_T_BYTE, 8);
		memset(&sh, 0, sizeof(sh));
		sh.sh_name = str_add(&shstr, ".data", NULL);
		sh.sh_type = SHT_PROGBITS;
		sh.sh_flags = SHF_ALLOC | SHF_WRITE;
		sh.sh_addr = em->data_addr;
		sh.sh_offset = off;
		sh.sh_size = em->data_size;
		sh.sh_addralign = 8;
		set_shdr(&o, data_scn, &sh);
		off = align_up(off + em->data_size, 8);
	}

	/* symbols: section symbols (local) first, then one STT_FUNC per function */
	for (size_t i = 0; i < em->nr; i++) {
		syms[si].st_info = GELF_ST_INFO(STB_LOCAL, STT_SECTION);
		syms[si].st_shndx = (uint16_t)(i + 1);
		syms[si].st_value = em->parts[i].addr;
		si++;
	}
	nr_local = si;
	for (size_t i = 0; i < em->nr; i++) {
		const struct nl_elf_part *p = &em->parts[i];

		for (size_t k = 0; k < p->img->nr_syms; k++) {
			const struct nl_gsym *g = &p->img->syms[k];
			size_t name = str_add(&str, p->prefix, g->name);

			if (name == (size_t)-1) {
				err = -ENOMEM;
				goto out;
			}
			syms[si].st_name = (Elf64_Word)name;
			syms[si].st_info = GELF_ST_INFO(STB_GLOBAL, STT_FUNC);
			syms[si].st_shndx = (uint16_t)(i + 1);
			syms[si].st_value = p->addr + g->off;
			syms[si].st_size = g->size;
			si++;
		}
	}
	for (size_t i = 0; i < nr_syms; i++) {
		raw[i].st_name = (Elf64_Word)syms[i].st_name;
		raw[i].st_info = syms[i].st_info;
		raw[i].st_shndx = syms[i].st_shndx;
		raw[i].st_value = syms[i].st_value;
		raw[i].st_size = syms[i].st_size;
	}
	symtab = new_section(&o, ".symtab");
	strtab = new_section(&o, ".strtab");
	shstrtab = new_section(&o, ".shstrtab");
	{
		size_t n_sym = str_add(&shstr, ".symtab", NULL);
		size_t n_str = str_add(&shstr, ".strtab", NULL);
		size_t n_shstr = str_add(&shstr, ".shstrtab", NULL);

		if (!shstr.buf || !str.buf || n_sym == (size_t)-1 || n_str == (size_t)-1 ||
		    n_shstr == (size_t)-1) {
			err = -ENOMEM;
			goto out;
		}
		set_data(&o, symtab, raw, nr_syms * sizeof(*raw), ELF_T_SYM, 8);
		memset(&sh, 0, sizeof(sh));
		sh.sh_name = n_sym;
		sh.sh_type = SHT_SYMTAB;
		sh.sh_offset = off;
		sh.sh_size = nr_syms * sizeof(*raw);
		sh.sh_entsize = sizeof(Elf64_Sym);
		sh.sh_addralign = 8;
		sh.sh_link = (Elf64_Word)(em->nr + (data_scn ? 1 : 0) + 2);	/* .strtab */
		sh.sh_info = (Elf64_Word)nr_local;
		set_shdr(&o, symtab, &sh);
		off += sh.sh_size;

		set_data(&o, strtab, str.buf, str.len, ELF_T_BYTE, 1);
		memset(&sh, 0, sizeof(sh));
		sh.sh_name = n_str;
		sh.sh_type = SHT_STRTAB;
		sh.sh_offset = off;
		sh.sh_size = str.len;
		sh.sh_addralign = 1;
		set_shdr(&o, strtab, &sh);
		off += sh.sh_size;

		set_data(&o, shstrtab, shstr.buf, shstr.len, ELF_T_BYTE, 1);
		memset(&sh, 0, sizeof(sh));
		sh.sh_name = n_shstr;
		sh.sh_type = SHT_STRTAB;
		sh.sh_offset = off;
		sh.sh_size = shstr.len;
		sh.sh_addralign = 1;
		set_shdr(&o, shstrtab, &sh);
		off += sh.sh_size;
	}
	if (o.err) {
		err = o.err;
		goto out;
	}

	/* gelf_newphdr() set e_phnum: start from what libelf holds */
	if (!gelf_getehdr(o.e, &eh)) {
		err = nl_fail(d, -EIO, "gelf_getehdr: %s", elf_errmsg(-1));
		goto out;
	}
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_ident[EI_OSABI] = ELFOSABI_SYSV;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_entry = em->entry;
	eh.e_phoff = sizeof(Elf64_Ehdr);
	eh.e_shoff = align_up(off, 8);
	eh.e_ehsize = sizeof(Elf64_Ehdr);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shstrndx = (uint16_t)elf_ndxscn(shstrtab);
	if (!gelf_update_ehdr(o.e, &eh)) {
		err = nl_fail(d, -EIO, "gelf_update_ehdr: %s", elf_errmsg(-1));
		goto out;
	}
	for (size_t i = 0; i < nr_ph; i++) {
		GElf_Phdr ph;

		memset(&ph, 0, sizeof(ph));
		if (i < em->nr) {
			GElf_Shdr tsh;

			gelf_getshdr(text[i], &tsh);
			ph.p_type = PT_LOAD;
			ph.p_flags = PF_R | PF_X;
			ph.p_offset = tsh.sh_offset;
			ph.p_vaddr = ph.p_paddr = tsh.sh_addr;
			ph.p_filesz = ph.p_memsz = tsh.sh_size;
			ph.p_align = PAGE;
		} else if (i == em->nr && data_scn) {
			GElf_Shdr dsh;

			gelf_getshdr(data_scn, &dsh);
			ph.p_type = PT_LOAD;
			ph.p_flags = PF_R | PF_W;
			ph.p_offset = dsh.sh_offset;
			ph.p_vaddr = ph.p_paddr = dsh.sh_addr;
			ph.p_filesz = ph.p_memsz = dsh.sh_size;
			ph.p_align = PAGE;
		} else {
			ph.p_type = PT_GNU_STACK;	/* no executable stack */
			ph.p_flags = PF_R | PF_W;
			ph.p_align = 16;
		}
		if (!gelf_update_phdr(o.e, (int)i, &ph)) {
			err = nl_fail(d, -EIO, "gelf_update_phdr: %s", elf_errmsg(-1));
			goto out;
		}
	}
	if (elf_update(o.e, ELF_C_WRITE) < 0) {
		err = nl_fail(d, -EIO, "writing %s: %s", path, elf_errmsg(-1));
		goto out;
	}
	err = 0;
out:
	if (o.e)
		elf_end(o.e);
	if (close(fd) && !err)
		err = nl_fail_errno(d, -errno, "%s", path);
	free(text);
	free(syms);
	free(raw);
	free(shstr.buf);
	free(str.buf);
	return err;
}
