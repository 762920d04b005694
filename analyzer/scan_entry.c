// SPDX-License-Identifier: MIT
/*
 * Entry classes and decorations: what sits at and just before each
 * function's first byte.  Only the table recognizer and fixed byte patterns
 * are used here (ENDBR, e8 rel32, NOP runs, b8 imm32): an entry is a handful
 * of bytes, and running a general decoder over 46,000 of them would cost more
 * than the whole rest of the census.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan_int.h"

static const char *const hook_names[] = { "__fentry__", "mcount", "_mcount" };

static const char *hook_name(const char *name)
{
	for (size_t i = 0; i < sizeof(hook_names) / sizeof(hook_names[0]); i++)
		if (!strcmp(name, hook_names[i]))
			return hook_names[i];
	return NULL;
}

static void add_hook(struct scan_ctx *c, uint64_t addr, const char *name, bool got)
{
	for (size_t i = 0; i < c->nr_hooks; i++)
		if (c->hooks[i].addr == addr && c->hooks[i].got == got)
			return;
	if (c->nr_hooks == SCAN_MAX_HOOKS)
		return;
	c->hooks[c->nr_hooks].addr = addr;
	c->hooks[c->nr_hooks].name = name;
	c->hooks[c->nr_hooks].got = got;
	c->got_hooks |= got;
	c->nr_hooks++;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static bool starts_with(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/*
 * PLT stubs jump through a GOT slot: jmp *disp(%rip) (ff 25) on x86-64, jmp
 * *abs32 on i386 without PIC.  A stub whose slot belongs to the hook is where
 * direct calls to the hook land in a dynamically linked program.
 */
static void plt_hooks(struct scan_ctx *c)
{
	const struct nl_elf *elf = c->elf;
	size_t nr_got = c->nr_hooks;

	for (size_t i = 0; i < elf->nr_sections; i++) {
		const struct nl_section *s = &elf->sections[i];
		uint64_t ent = s->sh.sh_entsize;

		if (!s->exec || !starts_with(s->name, ".plt"))
			continue;
		if (!ent || (ent & (ent - 1)) || ent > 64)
			ent = 16;
		for (uint64_t off = 0; off + 6 <= s->size; off++) {
			const uint8_t *p = s->data + off;
			uint64_t slot;

			if (p[0] != 0xff || p[1] != 0x25)
				continue;
			slot = c->mode == NL_MODE_64
				       ? s->addr + off + 6 + (uint64_t)(int64_t)(int32_t)le32(p + 2)
				       : le32(p + 2);
			for (size_t h = 0; h < nr_got; h++)
				if (c->hooks[h].got && c->hooks[h].addr == slot)
					add_hook(c, s->addr + (off & ~(ent - 1)), c->hooks[h].name, false);
		}
	}
}

void scan_resolve_hooks(struct scan_ctx *c, struct nl_diag *d)
{
	struct nl_dynreloc *dr = NULL;
	size_t nr = 0;

	c->nr_hooks = 0;
	if (c->elf->is_rel)
		return;	/* resolved per call site through the relocation */
	for (size_t i = 0; i < sizeof(hook_names) / sizeof(hook_names[0]); i++) {
		const struct nl_symbol *s = nl_find_symbol_by_name(c->elf, hook_names[i]);

		if (s && (s->sec || s->sym.st_shndx == SHN_ABS))
			add_hook(c, s->addr, hook_names[i], false);
	}
	/* glibc's hook in a dynamically linked program: a GOT slot, and a PLT stub */
	if (nl_elf_dynrelocs(c->elf, &dr, &nr, d)) {
		nl_log(d, NL_LOG_WARN, "dynamic relocations skipped: %s", d->msg);
		d->msg[0] = '\0';
		return;
	}
	for (size_t i = 0; i < nr; i++) {
		const char *n = hook_name(dr[i].name);
		bool slot = c->mode == NL_MODE_64
				    ? dr[i].type == R_X86_64_GLOB_DAT || dr[i].type == R_X86_64_JUMP_SLOT
				    : dr[i].type == R_386_GLOB_DAT || dr[i].type == R_386_JMP_SLOT;

		if (n && slot)
			add_hook(c, dr[i].addr, n, true);
	}
	free(dr);
	if (c->got_hooks)
		plt_hooks(c);
}

static bool is_call_reloc(enum nl_mode mode, unsigned type)
{
	if (mode == NL_MODE_64)
		return type == R_X86_64_PC32 || type == R_X86_64_PLT32;
	return type == R_386_PC32 || type == R_386_PLT32;
}

unsigned scan_is_hook_call_at(const struct scan_ctx *c, const struct nl_section *sec,
			      uint64_t off, const char **target)
{
	const uint8_t *p;
	uint64_t t;
	bool got;

	if (!sec->data || off >= sec->size || sec->size - off < 5)
		return 0;
	p = sec->data + off;
	if (c->elf->is_rel) {
		/* in ET_REL the rel32 is zero: the relocation names the target */
		const struct nl_reloc *r;
		const char *n;

		if (p[0] != 0xe8)
			return 0;
		r = nl_find_reloc_in(c->elf, sec, off + 1, 4);
		if (!r || r->offset != off + 1 || !r->sym || !is_call_reloc(c->mode, r->type))
			return 0;
		n = hook_name(r->sym->name);
		if (n && target)
			*target = n;
		return n ? 5 : 0;
	}
	if (p[0] == 0xe8) {
		t = sec->addr + off + 5 + (uint64_t)(int64_t)(int32_t)le32(p + 1);
		got = false;
	} else if (p[0] == 0xff && p[1] == 0x15 && c->got_hooks && c->mode == NL_MODE_64 &&
		   sec->size - off >= 6) {
		/* call *slot(%rip): gcc -pg in a dynamically linked program */
		t = sec->addr + off + 6 + (uint64_t)(int64_t)(int32_t)le32(p + 2);
		got = true;
	} else {
		return 0;
	}
	if (c->mode == NL_MODE_32)
		t &= 0xffffffffu;
	for (size_t i = 0; i < c->nr_hooks; i++) {
		if (c->hooks[i].addr == t && c->hooks[i].got == got) {
			if (target)
				*target = c->hooks[i].name;
			return got ? 6 : 5;
		}
	}
	return 0;
}

unsigned scan_is_hook_call(const struct scan_ctx *c, const struct nl_func *f, uint64_t off,
			   const char **target)
{
	if (off >= f->size)
		return 0;
	return scan_is_hook_call_at(c, f->sec, f->addr - f->sec->addr + off, target);
}

bool scan_records_has_in(const struct scan_records *r, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = r->nr;

	if (!r->nr || lo >= hi)
		return false;
	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (r->addr[mid] < lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a < r->nr && r->addr[a] < hi;
}

static bool is_endbr(const uint8_t *p, enum nl_mode mode)
{
	return p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e &&
	       p[3] == (mode == NL_MODE_64 ? 0xfa : 0xfb);
}

static enum nl_entry_class class_of(bool endbr, enum nl_site_kind site, bool patch)
{
	if (patch)
		return endbr ? NL_ENTRY_ENDBR_PATCHABLE : NL_ENTRY_PATCHABLE;
	if (site == NL_SITE_CALL)
		return endbr ? NL_ENTRY_ENDBR_CALL_FENTRY : NL_ENTRY_CALL_FENTRY;
	if (site == NL_SITE_NOP5)
		return endbr ? NL_ENTRY_ENDBR_NOP5 : NL_ENTRY_NOP5;
	return endbr ? NL_ENTRY_ENDBR : NL_ENTRY_OTHER;
}

/* a + b into the encoding, without printf: this runs once per function */
static void set_encoding(struct nl_scan_func *fx, const char *a, const char *b)
{
	size_t la = strlen(a), lb = b ? strlen(b) : 0, cap = sizeof(fx->encoding) - 1;

	if (la > cap)
		la = cap;
	if (lb > cap - la)
		lb = cap - la;
	memcpy(fx->encoding, a, la);
	if (lb)
		memcpy(fx->encoding + la, b, lb);
	fx->encoding[la + lb] = '\0';
}

void scan_poison_init(struct scan_ctx *c)
{
	size_t nr;
	const struct nl_nop *cat = nl_nop_catalogue(&nr);

	c->nr_poison = 0;
	for (size_t i = 0; i < nr && c->nr_poison < 4; i++)
		if (cat[i].family == NL_FAM_IBT_POISON && cat[i].len == 4)
			memcpy(c->poison[c->nr_poison++], cat[i].bytes, 4);
}

void scan_classify(const struct scan_ctx *c, size_t i, struct nl_scan_func *fx,
		   uint32_t *patch_off, uint8_t *patch_len)
{
	const struct nl_func *f = &c->funcs[i];
	const uint8_t *p = f->sec->data + (f->addr - f->sec->addr);
	uint64_t avail = f->size, pos = 0, run = 0;
	unsigned insns = 0;
	bool all90 = true;
	struct nl_nop_id first;

	memset(fx, 0, sizeof(*fx));
	*patch_off = 0;
	*patch_len = 0;
	if (avail >= 4 && is_endbr(p, c->mode)) {
		fx->endbr = true;
	} else if (avail >= 4 && p[0] != 0xe8) {
		/* the NOP the kernel seals an unused ENDBR with */
		for (size_t k = 0; k < c->nr_poison && !fx->endbr; k++)
			if (!memcmp(p, c->poison[k], 4))
				fx->endbr = fx->endbr_poison = true;
	}
	if (fx->endbr)
		pos = 4;

	/* a NOP run at the entry: an ftrace NOP5 or a patchable area */
	memset(&first, 0, sizeof(first));
	while (pos + run < avail && run < SCAN_ENTRY_RUN_MAX) {
		struct nl_nop_id id;
		uint64_t left = avail - pos - run;

		if (!nl_nop_is_nop(nl_nop_recognize(p + pos + run, left > 15 ? 15 : left, c->mode,
						    &id)))
			break;
		if (!insns)
			first = id;
		for (unsigned k = 0; k < id.len; k++)
			all90 &= p[pos + run + k] == 0x90;
		run += id.len;
		insns++;
	}
	if (run) {
		/* a patchable area has a record from its first NOP, before or after the label */
		bool recorded = c->patchable.present &&
				scan_records_has_in(&c->patchable, c->region_start[i],
						    f->addr + pos + 1);

		if (insns == 1 && run == 5 && !recorded) {
			fx->site = NL_SITE_NOP5;
			fx->site_off = (uint32_t)pos;
			fx->site_len = 5;
			set_encoding(fx, first.name, NULL);
		} else if (recorded) {
			/*
			 * Without a record, a NOP run at an entry is as likely an
			 * ALTERNATIVE's padding (ASM_STAC) as a patchable area.
			 */
			*patch_off = (uint32_t)pos;
			*patch_len = (uint8_t)run;
			pos += run;
		}
	}
	unsigned call = fx->site == NL_SITE_NONE ? scan_is_hook_call(c, f, pos, &fx->site_target) : 0;

	if (call) {
		fx->site = NL_SITE_CALL;
		fx->site_off = (uint32_t)pos;
		fx->site_len = (uint8_t)call;
		set_encoding(fx, "call ", fx->site_target);
	}
	if (fx->site == NL_SITE_NONE && *patch_len) {
		/* with no call after it, the NOP run itself is the patch site */
		fx->site = NL_SITE_PATCHABLE;
		fx->site_off = *patch_off;
		fx->site_len = *patch_len;
		if (all90)
			snprintf(fx->encoding, sizeof(fx->encoding), "90 x%u", *patch_len);
		else
			snprintf(fx->encoding, sizeof(fx->encoding), "%u NOPs, %u bytes", insns,
				 *patch_len);
	}
	fx->cls = class_of(fx->endbr, fx->site, *patch_len != 0);
}

/* kCFI without padding is b8 imm32 right before the entry; with it, 11/27/59 NOPs follow */
static uint32_t cfi_by_bytes(const struct nl_func *f, uint64_t lo)
{
	const uint8_t *sec = f->sec->data;
	uint64_t entry = f->addr - f->sec->addr, low = lo - f->sec->addr, t = 0;

	while (t < 59 && entry - t > low && sec[entry - t - 1] == 0x90)
		t++;
	if (t != 0 && t != 11 && t != 27 && t != 59)
		return 0;
	if (entry - low < t + 5 || sec[entry - t - 5] != 0xb8)
		return 0;
	return (uint32_t)(t + 5);
}

void scan_decoration(const struct scan_ctx *c, size_t i, struct nl_scan_func *fx)
{
	const struct nl_func *f = &c->funcs[i];
	uint64_t lo = c->region_start[i];

	fx->deco = NL_DECO_NONE;
	fx->deco_len = 0;
	if (lo > f->addr)
		lo = f->addr;
	if (f->prefix) {
		uint64_t start = f->prefix->addr > lo ? f->prefix->addr : lo;

		fx->deco = starts_with(f->prefix->name, "__cfi_") ? NL_DECO_CFI : NL_DECO_PFX;
		fx->deco_len = (uint32_t)(f->addr - start);
		if (!fx->deco_len)
			fx->deco = NL_DECO_NONE;
		return;
	}
	if (c->patchable.present && scan_records_has_in(&c->patchable, lo, f->addr)) {
		/* the first record in the region marks the start of the NOPs before the label */
		size_t a = 0, b = c->patchable.nr;

		while (a < b) {
			size_t mid = a + (b - a) / 2;

			if (c->patchable.addr[mid] < lo)
				a = mid + 1;
			else
				b = mid;
		}
		fx->deco = NL_DECO_PATCHABLE;
		fx->deco_len = (uint32_t)(f->addr - c->patchable.addr[a]);
		return;
	}
	if (f->addr - lo >= 5) {
		uint32_t n = cfi_by_bytes(f, lo);

		if (n) {
			fx->deco = NL_DECO_CFI;
			fx->deco_len = n;
		}
	}
}
