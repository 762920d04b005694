// SPDX-License-Identifier: MIT
/*
 * Layout rules: parser (one rule per line, see rules.h) and evaluator.
 * A violation names the address and the symbol that break the rule, so a
 * failing build says what moved.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "noplab/rules.h"

/*
 * What an x86-64 kernel's linker script promises (arch/x86/kernel/vmlinux.lds.S,
 * include/asm-generic/vmlinux.lds.h), checked on v5.10 .. v6.18 layouts.
 */
static const char kernel_x86_64[] =
	"# noplab built-in rules: kernel-x86_64\n"
	"#\n"
	"# PTI maps the entry text into the user page tables, so the linker script\n"
	"# aligns the block holding it to PMD_SIZE (ALIGN_ENTRY_TEXT_BEGIN/END):\n"
	"# it must exist and fit in one 2 MiB page.\n"
	"region entry_text present\n"
	"region entry_text max-pages 1 2M\n"
	"# ENTRY_TEXT starts with ALIGN_FUNCTION(): 8 bytes before v6.2,\n"
	"# CONFIG_FUNCTION_ALIGNMENT (16) after.\n"
	"region entry_text align 8\n"
	"# entry_64.S defines __irqentry_text_start/_end inside .entry.text.\n"
	"optional region irqentry_text inside entry_text\n";

static const char *const builtin_names[] = { "kernel-x86_64", NULL };

const char *const *nl_rules_builtin_names(void)
{
	return builtin_names;
}

const char *nl_rules_builtin(const char *name)
{
	if (!strcmp(name, "kernel-x86_64"))
		return kernel_x86_64;
	return NULL;
}

int nl_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;

	if (!s || !isdigit((unsigned char)*s))
		return -NL_E_FORMAT;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -NL_E_FORMAT;
	if (*end) {
		const char *u = end;

		if (*u == 'K' || *u == 'k')
			mult = 1ull << 10;
		else if (*u == 'M' || *u == 'm')
			mult = 1ull << 20;
		else if (*u == 'G' || *u == 'g')
			mult = 1ull << 30;
		else
			return -NL_E_FORMAT;
		u++;
		if (*u == 'i' && u[1] == 'B')
			u += 2;
		else if (*u == 'B')
			u++;
		if (*u)
			return -NL_E_FORMAT;
	}
	if (v > UINT64_MAX / mult)
		return -NL_E_FORMAT;
	*out = v * mult;
	return 0;
}

/* ---- parser ---- */

#define MAX_TOKENS 12

struct parse_ctx {
	const char *source;
	unsigned line;
	struct nl_diag *d;
};

static int bad(const struct parse_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(const struct parse_ctx *c, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return nl_fail(c->d, -NL_E_FORMAT, "%s:%u: %s", c->source, c->line, what);
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int want_size(const struct parse_ctx *c, const char *tok, const char *what, bool pow2,
		     uint64_t *out)
{
	if (!tok)
		return bad(c, "%s: missing size", what);
	if (nl_parse_size(tok, out))
		return bad(c, "%s: '%s' is not a size (64, 0x40, 4K, 2M)", what, tok);
	if (pow2 && !is_pow2(*out))
		return bad(c, "%s: %s is not a power of two", what, tok);
	return 0;
}

static int want_count(const struct parse_ctx *c, const char *tok, const char *what,
		      uint64_t *out)
{
	char *end;

	if (!tok)
		return bad(c, "%s: missing count", what);
	errno = 0;
	*out = strtoull(tok, &end, 10);
	if (errno || *end || !isdigit((unsigned char)*tok))
		return bad(c, "%s: '%s' is not a count", what, tok);
	return 0;
}

static int page_unit(const struct parse_ctx *c, const char *tok, uint64_t *unit)
{
	if (!tok || !strcmp(tok, "4K") || !strcmp(tok, "4k") || !strcmp(tok, "4KiB")) {
		*unit = NL_PAGE_4K;
		return 0;
	}
	if (!strcmp(tok, "2M") || !strcmp(tok, "2m") || !strcmp(tok, "2MiB")) {
		*unit = NL_PAGE_2M;
		return 0;
	}
	return bad(c, "page size '%s': 4K or 2M", tok);
}

static int copy_name(const struct parse_ctx *c, char *dst, size_t size, const char *tok)
{
	if (!tok)
		return bad(c, "missing region name");
	if (strlen(tok) >= size)
		return bad(c, "region name too long");
	strcpy(dst, tok);
	return 0;
}

/* `in NAME` at t[i], or nothing */
static int opt_in(const struct parse_ctx *c, char **t, int n, int i, struct nl_rule *r)
{
	if (i == n)
		return 0;
	if (strcmp(t[i], "in") || i + 2 != n)
		return bad(c, "expected 'in REGION' after the rule, got '%s'", t[i]);
	return copy_name(c, r->region, sizeof(r->region), t[i + 1]);
}

static int parse_region_rule(const struct parse_ctx *c, char **t, int n, struct nl_rule *r)
{
	const char *what;
	int used = 4;
	int ret;

	if ((ret = copy_name(c, r->region, sizeof(r->region), n > 1 ? t[1] : NULL)))
		return ret;
	if (n < 3)
		return bad(c, "region %s: missing condition", r->region);
	what = t[2];
	if (!strcmp(what, "present")) {
		r->kind = NL_RULE_PRESENT;
		used = 3;
	} else if (!strcmp(what, "align") || !strcmp(what, "end-align")) {
		r->kind = what[0] == 'a' ? NL_RULE_ALIGN : NL_RULE_END_ALIGN;
		ret = want_size(c, n > 3 ? t[3] : NULL, what, true, &r->value);
	} else if (!strcmp(what, "max-size")) {
		r->kind = NL_RULE_MAX_SIZE;
		ret = want_size(c, n > 3 ? t[3] : NULL, what, false, &r->value);
	} else if (!strcmp(what, "max-lines")) {
		r->kind = NL_RULE_MAX_LINES;
		ret = want_count(c, n > 3 ? t[3] : NULL, what, &r->value);
		r->unit = NL_LINE;
	} else if (!strcmp(what, "max-pages")) {
		r->kind = NL_RULE_MAX_PAGES;
		ret = want_count(c, n > 3 ? t[3] : NULL, what, &r->value);
		if (!ret && n > 4) {
			ret = page_unit(c, t[4], &r->unit);
			used = 5;
		} else {
			r->unit = NL_PAGE_4K;
		}
	} else if (!strcmp(what, "exclusive-lines")) {
		r->kind = NL_RULE_EXCLUSIVE;
		r->unit = NL_LINE;
		r->sides = NL_SIDE_BEFORE | NL_SIDE_AFTER;
		used = 3;
	} else if (!strcmp(what, "exclusive-pages")) {
		r->kind = NL_RULE_EXCLUSIVE;
		r->sides = NL_SIDE_BEFORE | NL_SIDE_AFTER;
		ret = page_unit(c, n > 3 ? t[3] : NULL, &r->unit);
		used = n > 3 ? 4 : 3;
	} else if (!strcmp(what, "exclusive")) {
		r->kind = NL_RULE_EXCLUSIVE;
		ret = want_size(c, n > 3 ? t[3] : NULL, what, true, &r->unit);
		r->sides = NL_SIDE_BEFORE | NL_SIDE_AFTER;
		if (!ret && n > 4) {
			used = 5;
			if (!strcmp(t[4], "before"))
				r->sides = NL_SIDE_BEFORE;
			else if (!strcmp(t[4], "after"))
				r->sides = NL_SIDE_AFTER;
			else
				ret = bad(c, "exclusive: 'before' or 'after', not '%s'", t[4]);
		}
	} else if (!strcmp(what, "inside")) {
		r->kind = NL_RULE_INSIDE;
		ret = copy_name(c, r->other, sizeof(r->other), n > 3 ? t[3] : NULL);
	} else {
		return bad(c, "region %s: unknown condition '%s' (present, align, end-align, "
			      "max-size, max-lines, max-pages, exclusive-lines, exclusive-pages, "
			      "exclusive, inside)", r->region, what);
	}
	if (ret)
		return ret;
	if (n > used)
		return bad(c, "unexpected '%s' after the rule", t[used]);
	return 0;
}

static int parse_line(const struct parse_ctx *c, char *line, struct nl_rule *r, bool *empty)
{
	char *t[MAX_TOKENS + 1];
	int n = 0, first = 0, ret;
	char *hash = strchr(line, '#');

	if (hash)
		*hash = '\0';
	for (char *save = NULL, *tok = strtok_r(line, " \t\r", &save); tok;
	     tok = strtok_r(NULL, " \t\r", &save)) {
		if (n == MAX_TOKENS)
			return bad(c, "too many words");
		t[n++] = tok;
	}
	*empty = !n;
	if (!n)
		return 0;
	memset(r, 0, sizeof(*r));
	r->line = c->line;
	/* the rule as written, shortened to the field when the line is long */
	for (size_t i = 0, o = 0; i < (size_t)n && o + 1 < sizeof(r->text); i++) {
		int w = snprintf(r->text + o, sizeof(r->text) - o, "%s%s", i ? " " : "", t[i]);

		if (w < 0)
			break;
		o += (size_t)w;
	}
	if (!strcmp(t[0], "optional")) {
		r->optional = true;
		first = 1;
		if (n == 1)
			return bad(c, "'optional' needs a rule after it");
	}
	char **w = t + first;
	int m = n - first;

	if (!strcmp(w[0], "region"))
		return parse_region_rule(c, w, m, r);
	if (!strcmp(w[0], "functions")) {
		r->kind = NL_RULE_FUNC_ALIGN;
		if (m < 2 || strcmp(w[1], "align"))
			return bad(c, "functions: expected 'functions align SIZE [in REGION]'");
		if ((ret = want_size(c, m > 2 ? w[2] : NULL, "functions align", true, &r->value)))
			return ret;
		return opt_in(c, w, m, 3, r);
	}
	if (!strcmp(w[0], "ftrace-site")) {
		r->kind = NL_RULE_FTRACE_NO_STRADDLE;
		if (m < 2 || strcmp(w[1], "no-straddle"))
			return bad(c, "ftrace-site: expected 'ftrace-site no-straddle SIZE [in REGION]'");
		if ((ret = want_size(c, m > 2 ? w[2] : NULL, "no-straddle", true, &r->value)))
			return ret;
		return opt_in(c, w, m, 3, r);
	}
	if (!strcmp(w[0], "jcc")) {
		r->kind = NL_RULE_JCC_MAX;
		if (m < 2 || strcmp(w[1], "max"))
			return bad(c, "jcc: expected 'jcc max N [in REGION]'");
		if ((ret = want_count(c, m > 2 ? w[2] : NULL, "jcc max", &r->value)))
			return ret;
		return opt_in(c, w, m, 3, r);
	}
	return bad(c, "unknown rule '%s' (region, functions, ftrace-site, jcc)", w[0]);
}

int nl_rules_parse(const char *text, size_t len, const char *source, struct nl_rules *out,
		   struct nl_diag *d)
{
	struct parse_ctx c = { .source = source, .d = d };
	size_t pos = 0, cap = 0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	snprintf(out->source, sizeof(out->source), "%s", source);
	while (pos < len) {
		size_t eol = pos;
		char line[1024];
		struct nl_rule r;
		bool empty;

		while (eol < len && text[eol] != '\n')
			eol++;
		c.line++;
		if (eol - pos >= sizeof(line)) {
			ret = bad(&c, "line longer than %zu bytes", sizeof(line) - 1);
			break;
		}
		if (memchr(text + pos, '\0', eol - pos)) {
			ret = bad(&c, "a NUL byte: not a rules file");
			break;
		}
		memcpy(line, text + pos, eol - pos);
		line[eol - pos] = '\0';
		pos = eol + 1;
		ret = parse_line(&c, line, &r, &empty);
		if (ret)
			break;
		if (empty)
			continue;
		if (out->nr == cap) {
			struct nl_rule *v;

			cap = cap ? cap * 2 : 16;
			v = realloc(out->v, cap * sizeof(*v));
			if (!v) {
				ret = nl_fail_errno(d, -ENOMEM, "rules");
				break;
			}
			out->v = v;
		}
		out->v[out->nr++] = r;
	}
	if (ret)
		nl_rules_release(out);
	return ret;
}

int nl_rules_load(const char *arg, struct nl_rules *out, struct nl_diag *d)
{
	const char *text = strchr(arg, '/') ? NULL : nl_rules_builtin(arg);
	FILE *f;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int ret;

	if (text)
		return nl_rules_parse(text, strlen(text), arg, out, d);
	f = fopen(arg, "r");
	if (!f)
		return nl_fail_errno(d, -errno, "%s (rules file; built-in sets: kernel-x86_64)", arg);
	for (;;) {
		if (len + 4096 > cap) {
			char *nb;

			cap = cap ? cap * 2 : 8192;
			if (cap > (16u << 20)) {
				free(buf);
				fclose(f);
				return nl_fail(d, -NL_E_LIMIT, "%s: rules file larger than 16 MiB", arg);
			}
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return nl_fail_errno(d, -ENOMEM, "%s", arg);
			}
			buf = nb;
		}
		size_t r = fread(buf + len, 1, cap - len, f);

		if (!r)
			break;
		len += r;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return nl_fail_errno(d, -EIO, "%s", arg);
	}
	fclose(f);
	ret = nl_rules_parse(buf ? buf : "", len, arg, out, d);
	free(buf);
	return ret;
}

void nl_rules_release(struct nl_rules *r)
{
	free(r->v);
	r->v = NULL;
	r->nr = 0;
}

bool nl_rules_need_jcc(const struct nl_rules *r)
{
	for (size_t i = 0; i < r->nr; i++)
		if (r->v[i].kind == NL_RULE_JCC_MAX)
			return true;
	return false;
}

/* ---- evaluation ---- */

static char *fmt_size(uint64_t v, char *buf, size_t size)
{
	if (v >= (1ull << 30) && !(v & ((1ull << 30) - 1)))
		snprintf(buf, size, "%" PRIu64 " GiB", v >> 30);
	else if (v >= (1ull << 20) && !(v & ((1ull << 20) - 1)))
		snprintf(buf, size, "%" PRIu64 " MiB", v >> 20);
	else if (v >= 1024 && !(v & 1023))
		snprintf(buf, size, "%" PRIu64 " KiB", v >> 10);
	else
		snprintf(buf, size, "%" PRIu64 " bytes", v);
	return buf;
}

struct eval {
	const struct nl_layout *lay;
	struct nl_rule_result *res;
	size_t cap;
	int err;
};

static void violation(struct eval *e, bool has_addr, uint64_t addr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void violation(struct eval *e, bool has_addr, uint64_t addr, const char *fmt, ...)
{
	struct nl_rule_result *res = e->res;
	struct nl_violation *v;
	va_list ap;

	res->status = NL_RULE_FAILS;
	if (res->nr_v == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 8;
		struct nl_violation *nv = realloc(res->v, cap * sizeof(*nv));

		if (!nv) {
			e->err = -ENOMEM;
			return;
		}
		res->v = nv;
		e->cap = cap;
	}
	v = &res->v[res->nr_v++];
	memset(v, 0, sizeof(*v));
	v->has_addr = has_addr;
	v->addr = addr;
	if (has_addr) {
		const struct nl_code_ext *c = nl_layout_code_at(e->lay, addr);

		if (c) {
			v->symbol = c->sym->name;
			v->sym_off = addr - c->start;
		}
	}
	va_start(ap, fmt);
	vsnprintf(v->msg, sizeof(v->msg), fmt, ap);
	va_end(ap);
}

static const struct nl_region *need_region(struct eval *e, const struct nl_rule *r,
					   const char *name)
{
	const struct nl_region *reg = nl_layout_find_region(e->lay, name);

	if (reg)
		return reg;
	if (r->optional) {
		e->res->status = NL_RULE_SKIPPED;
		snprintf(e->res->note, sizeof(e->res->note), "no region %s", name);
	} else {
		violation(e, false, 0, "no region %s in this file", name);
	}
	return NULL;
}

static void neigh_violation(struct eval *e, const struct nl_region *reg, uint64_t lo,
			    uint64_t hi, uint64_t unit, const char *side)
{
	struct nl_neigh n;
	char names[160] = "", us[32];
	size_t o = 0;

	if (hi <= lo)
		return;
	nl_layout_foreign(e->lay, reg, lo, hi, &n);
	if (!n.nr_names)
		return;
	for (size_t i = 0; i < n.nr_names && i < NL_NEIGH_MAX && o + 1 < sizeof(names); i++) {
		int w = snprintf(names + o, sizeof(names) - o, "%s%s", i ? ", " : "", n.names[i]);

		if (w < 0)
			break;
		o += (size_t)w;
	}
	if (n.nr_names > NL_NEIGH_MAX && o < sizeof(names))
		snprintf(names + o, sizeof(names) - o, " and %zu more", n.nr_names - NL_NEIGH_MAX);
	if (unit == NL_LINE)
		snprintf(us, sizeof(us), "cache line");
	else if (unit == NL_PAGE_4K || unit == NL_PAGE_2M)
		snprintf(us, sizeof(us), "%s page", unit == NL_PAGE_4K ? "4 KiB" : "2 MiB");
	else
		fmt_size(unit, us, sizeof(us));
	violation(e, true, lo, "%s shares the %s at %#" PRIx64 " %s it with %s (%" PRIu64
		  " bytes of foreign code)", reg->name, us, lo & ~(unit - 1), side, names,
		  n.foreign_bytes);
}

static bool func_in_scope(const struct nl_layout *lay, const struct nl_region *scope,
			  uint64_t addr)
{
	(void)lay;
	return !scope || (addr >= scope->start && addr < scope->end);
}

static void eval_one(struct eval *e, const struct nl_rule *r)
{
	const struct nl_layout *lay = e->lay;
	const struct nl_region *reg = NULL, *other;
	char a[32], b[32];

	e->res->status = NL_RULE_HOLDS;
	if (r->region[0]) {
		reg = need_region(e, r, r->region);
		if (!reg)
			return;
	}
	switch (r->kind) {
	case NL_RULE_PRESENT:
		snprintf(e->res->note, sizeof(e->res->note), "%#" PRIx64 "-%#" PRIx64 ", %" PRIu64
			 " bytes", reg->start, reg->end, reg->size);
		break;
	case NL_RULE_ALIGN:
		snprintf(e->res->note, sizeof(e->res->note), "starts at %#" PRIx64 ", aligned to %s",
			 reg->start, fmt_size(reg->align_start, a, sizeof(a)));
		if (reg->align_start < r->value)
			violation(e, true, reg->start, "%s starts at %#" PRIx64 ", aligned to %s, not %s",
				  reg->name, reg->start, fmt_size(reg->align_start, a, sizeof(a)),
				  fmt_size(r->value, b, sizeof(b)));
		break;
	case NL_RULE_END_ALIGN:
		snprintf(e->res->note, sizeof(e->res->note), "ends at %#" PRIx64 ", aligned to %s",
			 reg->end, fmt_size(reg->align_end, a, sizeof(a)));
		if (reg->align_end < r->value)
			violation(e, true, reg->end, "%s ends at %#" PRIx64 ", aligned to %s, not %s",
				  reg->name, reg->end, fmt_size(reg->align_end, a, sizeof(a)),
				  fmt_size(r->value, b, sizeof(b)));
		break;
	case NL_RULE_MAX_SIZE:
		snprintf(e->res->note, sizeof(e->res->note), "%" PRIu64 " bytes", reg->size);
		if (reg->size > r->value)
			violation(e, true, reg->start, "%s is %" PRIu64 " bytes, more than %s",
				  reg->name, reg->size, fmt_size(r->value, a, sizeof(a)));
		break;
	case NL_RULE_MAX_LINES:
		snprintf(e->res->note, sizeof(e->res->note), "%" PRIu64 " cache lines", reg->lines);
		if (reg->lines > r->value)
			violation(e, true, reg->start, "%s touches %" PRIu64
				  " cache lines (%#" PRIx64 "-%#" PRIx64 "), more than %" PRIu64,
				  reg->name, reg->lines, reg->start, reg->end, r->value);
		break;
	case NL_RULE_MAX_PAGES: {
		uint64_t pages = r->unit == NL_PAGE_2M ? reg->pages_2m : reg->pages_4k;

		snprintf(e->res->note, sizeof(e->res->note), "%" PRIu64 " page%s of %s", pages,
			 pages == 1 ? "" : "s", fmt_size(r->unit, b, sizeof(b)));

		if (pages > r->value)
			violation(e, true, reg->start, "%s touches %" PRIu64 " pages of %s (%#" PRIx64
				  "-%#" PRIx64 "), more than %" PRIu64, reg->name, pages,
				  fmt_size(r->unit, a, sizeof(a)), reg->start, reg->end, r->value);
		break;
	}
	case NL_RULE_EXCLUSIVE: {
		uint64_t u = r->unit;

		if (reg->empty)
			break;
		if (r->sides & NL_SIDE_BEFORE)
			neigh_violation(e, reg, reg->start & ~(u - 1), reg->start, u, "before");
		if (r->sides & NL_SIDE_AFTER) {
			uint64_t hi = (reg->end + u - 1) & ~(u - 1);

			neigh_violation(e, reg, reg->end, hi, u, "after");
		}
		if (e->res->status == NL_RULE_HOLDS)
			snprintf(e->res->note, sizeof(e->res->note), "no foreign code in its %s %s",
				 r->sides == NL_SIDE_BEFORE ? "first" : r->sides == NL_SIDE_AFTER ? "last"
											: "first and last",
				 fmt_size(u, a, sizeof(a)));
		break;
	}
	case NL_RULE_INSIDE:
		other = need_region(e, r, r->other);
		if (!other)
			break;
		snprintf(e->res->note, sizeof(e->res->note), "%#" PRIx64 "-%#" PRIx64 " in %#" PRIx64
			 "-%#" PRIx64, reg->start, reg->end, other->start, other->end);
		if (reg->start < other->start || reg->end > other->end)
			violation(e, true, reg->start, "%s (%#" PRIx64 "-%#" PRIx64 ") is not inside %s (%#"
				  PRIx64 "-%#" PRIx64 ")", reg->name, reg->start, reg->end,
				  other->name, other->start, other->end);
		break;
	case NL_RULE_FUNC_ALIGN: {
		uint64_t n = 0;

		for (size_t i = 0; i < lay->nr_funcs && !e->err; i++) {
			const struct nl_layout_func *f = &lay->funcs[i];
			uint64_t al;

			if (!func_in_scope(lay, reg, f->addr))
				continue;
			n++;
			al = nl_layout_func_align(lay, f);
			if (al < r->value)
				violation(e, true, f->addr, "%s at %#" PRIx64 " is aligned to %s, not %s",
					  f->name, f->addr, fmt_size(al, a, sizeof(a)),
					  fmt_size(r->value, b, sizeof(b)));
		}
		snprintf(e->res->note, sizeof(e->res->note), "%" PRIu64 " functions checked", n);
		break;
	}
	case NL_RULE_FTRACE_NO_STRADDLE: {
		uint64_t *sites;
		size_t ns, n = 0;
		struct nl_diag d2;

		nl_diag_init(&d2);
		if (nl_layout_ftrace_sites(lay, &sites, &ns, &d2)) {
			e->res->status = NL_RULE_SKIPPED;
			snprintf(e->res->note, sizeof(e->res->note), "not checked: %s", d2.msg);
			break;
		}
		for (size_t i = 0; i < ns && !e->err; i++) {
			if (!func_in_scope(lay, reg, sites[i]))
				continue;
			n++;
			if (sites[i] / r->value != (sites[i] + 4) / r->value)
				violation(e, true, sites[i], "ftrace site %#" PRIx64 "-%#" PRIx64
					  " straddles the %s boundary at %#" PRIx64, sites[i],
					  sites[i] + 5, fmt_size(r->value, a, sizeof(a)),
					  (sites[i] + 4) & ~(r->value - 1));
		}
		free(sites);
		snprintf(e->res->note, sizeof(e->res->note), "%zu ftrace sites checked", n);
		break;
	}
	case NL_RULE_JCC_MAX: {
		struct nl_jcc_counts cnt;

		if (!lay->jcc_done) {
			e->res->status = NL_RULE_SKIPPED;
			snprintf(e->res->note, sizeof(e->res->note), "not checked: no branch audit");
			break;
		}
		if (reg)
			cnt = reg->jcc;
		else
			cnt = lay->jcc.total;
		snprintf(e->res->note, sizeof(e->res->note), "%" PRIu64 " of %" PRIu64
			 " branch units cross or end on a 32-byte boundary", cnt.affected, cnt.units);
		if (cnt.affected <= r->value)
			break;
		for (size_t i = 0; i < lay->jcc.nr_affected && !e->err; i++) {
			const struct nl_jcc_unit *u = &lay->jcc.affected[i];

			if (reg && (u->addr < reg->start || u->addr >= reg->end))
				continue;
			violation(e, true, u->addr, "%s %#" PRIx64 "-%#" PRIx64 " (%u bytes) %s %#" PRIx64,
				  nl_jcc_kind_name(u->kind), u->addr, u->addr + u->len, u->len,
				  u->ends_on_boundary ? "ends on" : "crosses",
				  (u->addr + u->len) & ~(uint64_t)31);
		}
		break;
	}
	}
}

int nl_rules_eval(const struct nl_rules *rules, const struct nl_layout *lay,
		  struct nl_rule_result **out, size_t *nr, struct nl_diag *d)
{
	struct nl_rule_result *res = calloc(rules->nr ? rules->nr : 1, sizeof(*res));

	*out = NULL;
	*nr = 0;
	if (!res)
		return nl_fail_errno(d, -ENOMEM, "rules");
	for (size_t i = 0; i < rules->nr; i++) {
		struct eval e = { .lay = lay, .res = &res[i] };

		res[i].rule = &rules->v[i];
		eval_one(&e, &rules->v[i]);
		if (e.err) {
			nl_rule_results_free(res, i + 1);
			return nl_fail_errno(d, e.err, "rules");
		}
	}
	*out = res;
	*nr = rules->nr;
	return 0;
}

void nl_rule_results_free(struct nl_rule_result *res, size_t nr)
{
	if (!res)
		return;
	for (size_t i = 0; i < nr; i++)
		free(res[i].v);
	free(res);
}
