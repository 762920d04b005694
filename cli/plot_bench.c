// SPDX-License-Identifier: MIT
/*
 * Charts of `noplab bench` results, drawn with cairo from the JSON document
 * that `bench -o` writes (so a saved result draws the same as a fresh one).
 *
 * - calls, sled (comparisons): a panel per footprint, a bar per variant at
 *   its mean with the 95% CI as error bar, the baseline grey and dashed
 *   across the panel, and under each bar its name, bytes and verdict against
 *   the baseline.  Panels of one kind share their y scale, so the footprint
 *   effect shows.
 * - sweep: the figure against the entry offset 0..63 as a line with its CI
 *   band; columns where the entry NOP crosses a 16-, 32- or 64-byte boundary
 *   are shaded, boundaries drawn; significant differences ringed.
 * - layout: packed against spread, for time and for every miss figure in the
 *   document; with no icache figure (no PMU, no --sim) the panel says so
 *   instead of drawing zeros.
 *
 * The picture is drawn twice: once on an unbounded recording surface to
 * learn its height, then on the real surface (SVG and PDF sizes are fixed at
 * creation).  Every text goes through text(), which records its ink box, so
 * overlapping or clipped labels are counted rather than hoped away; cairo
 * writes glyph outlines, so the SVG also gets the labels in <title>/<desc>.
 */
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <errno.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_get.h"
#include "cairo_mem.h"
#include "noplab/stats.h"
#include "plot.h"

#define W_MIN 1100.0
#define M 24.0			/* page margin */
#define AXIS_W 88.0		/* y tick labels and the axis title */
#define MIN_SLOT 118.0		/* per bar: room for "under 1% threshold" at 11 px */
#define PLOT_H 230.0
#define SWEEP_H 290.0
#define LAYOUT_H 220.0
#define GAP 30.0		/* between panels */
#define GAP_X 28.0		/* between side-by-side panels */
#define LINE_LEN 256
#define MAX_SERIES 6
#define MAX_SUB 4

struct rgb {
	double r, g, b;
};

static const struct rgb C_TEXT = { 0.12, 0.12, 0.12 };
static const struct rgb C_MUTED = { 0.38, 0.38, 0.40 };
static const struct rgb C_GRID = { 0.89, 0.89, 0.90 };
static const struct rgb C_AXIS = { 0.30, 0.30, 0.32 };
/* Okabe-Ito hues: the verdict colours stay apart for colour-blind readers */
static const struct rgb C_BASE = { 0.50, 0.52, 0.56 };
static const struct rgb C_SAME = { 0.34, 0.58, 0.83 };
static const struct rgb C_SLOW = { 0.84, 0.37, 0.00 };
static const struct rgb C_FAST = { 0.00, 0.62, 0.45 };
static const struct rgb T_BASE = { 0.30, 0.31, 0.34 };
static const struct rgb T_SAME = { 0.10, 0.36, 0.62 };
static const struct rgb T_SLOW = { 0.68, 0.27, 0.00 };
static const struct rgb T_FAST = { 0.00, 0.45, 0.33 };
static const struct rgb C_X16 = { 1.00, 0.96, 0.78 };
static const struct rgb C_X32 = { 1.00, 0.87, 0.68 };
static const struct rgb C_X64 = { 0.98, 0.75, 0.72 };
static const struct rgb series_rgb[MAX_SERIES] = {
	{ 0.00, 0.45, 0.70 }, { 0.55, 0.35, 0.65 }, { 0.35, 0.35, 0.35 },
	{ 0.60, 0.45, 0.20 }, { 0.80, 0.47, 0.65 }, { 0.30, 0.60, 0.75 },
};

enum face { REG, BOLD, MONO };

struct pc {
	cairo_t *cr;
	double w;
	double threshold;	/* practical threshold of the verdicts, percent */
	bool record;
	struct cli_plot_label *labels;
	size_t nr, cap;
	int err;
};

/* ---- JSON ----------------------------------------------------------------- */

static double jnum_or(const json_t *o, const char *k, double dflt)
{
	double v;

	return cli_jnum(o, k, &v) ? v : dflt;
}

struct fig {
	bool ok;		/* a finite mean */
	double mean, lo, hi;	/* lo, hi: the 95% CI, or the mean when there is none */
	bool has_ci, has_sem;
	double sem_pct, n;
	const char *unit, *source;
};

static struct fig get_fig(const json_t *var, const char *key)
{
	const json_t *f = json_object_get(json_object_get(var, "figures"), key);
	const json_t *ci = json_object_get(f, "ci95");
	struct fig r = { .unit = "", .source = "" };

	if (!f || !cli_jnum(f, "mean", &r.mean))
		return r;
	r.ok = true;
	r.lo = r.hi = r.mean;
	r.unit = cli_jstr(f, "unit");
	r.source = cli_jstr(f, "source");
	r.n = jnum_or(f, "n", 0);
	r.has_sem = cli_jnum(f, "sem_pct", &r.sem_pct);
	if (json_array_size(ci) == 2 && json_is_number(json_array_get(ci, 0)) &&
	    json_is_number(json_array_get(ci, 1))) {
		double lo = json_number_value(json_array_get(ci, 0));
		double hi = json_number_value(json_array_get(ci, 1));

		if (isfinite(lo) && isfinite(hi) && lo <= hi) {
			r.lo = fmin(lo, r.mean);
			r.hi = fmax(hi, r.mean);
			r.has_ci = true;
		}
	}
	return r;
}

/* The figure the verdicts are about: compare.figure, else the first timed one. */
static const char *primary_key(const json_t *w)
{
	const json_t *vars = json_object_get(w, "variants");
	const char *first = NULL;

	for (size_t i = 0; i < json_array_size(vars); i++) {
		const json_t *cmp = json_object_get(json_array_get(vars, i), "compare");

		if (json_string_value(json_object_get(cmp, "figure")))
			return json_string_value(json_object_get(cmp, "figure"));
	}
	for (size_t i = 0; i < json_array_size(vars) && !first; i++) {
		const char *k;
		const json_t *f;

		json_object_foreach((json_t *)json_object_get(json_array_get(vars, i), "figures"), k, f) {
			if (!strncmp(k, "cycles_per_", 11))
				return k;
			if (!first && strcmp(cli_jstr(f, "source"), "sw"))
				first = k;
		}
	}
	return first;
}

static bool is_time(const char *key)
{
	return !strncmp(key, "cycles_per_", 11) || !strncmp(key, "ticks_per_", 10) ||
	       !strncmp(key, "ns_per_", 7) || !strncmp(key, "entry_cycles_per_", 17);
}

static const char *source_words(const char *src)
{
	return !strcmp(src, "tsc") ? "TSC" : !strcmp(src, "hw") ? "PMU" : !strcmp(src, "sim") ?
	       "cachegrind" : !strcmp(src, "sw") ? "software event" : !strcmp(src, "wall") ?
	       "wall clock" : src;
}

enum kind { K_BARS, K_SWEEP, K_LAYOUT };

static enum kind kind_of(const json_t *w)
{
	const char *k = json_string_value(json_object_get(w, "kind"));

	if (!k)
		k = json_string_value(json_object_get(w, "name"));
	if (!k)
		return K_BARS;
	if (!strncmp(k, "sweep", 5))
		return K_SWEEP;
	if (!strncmp(k, "layout", 6))
		return K_LAYOUT;
	return K_BARS;
}

/* ---- drawing primitives ---------------------------------------------------- */

static void set(struct pc *p, struct rgb c)
{
	cairo_set_source_rgb(p->cr, c.r, c.g, c.b);
}

static void font(struct pc *p, enum face f, double size)
{
	cairo_select_font_face(p->cr, f == MONO ? "DejaVu Sans Mono" : "DejaVu Sans",
			       CAIRO_FONT_SLANT_NORMAL,
			       f == BOLD ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(p->cr, size);
}

static double tw(struct pc *p, const char *s)
{
	cairo_text_extents_t e;

	cairo_text_extents(p->cr, s, &e);
	return e.x_advance;
}

/* The longest prefix of s of at most max bytes that ends on a character boundary. */
static size_t utf8_prefix(const char *s, size_t max)
{
	if (strlen(s) <= max)
		return strlen(s);
	while (max && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

static void record(struct pc *p, const char *s, double x0, double y0, double x1, double y1)
{
	struct cli_plot_label *l;

	if (!p->record || p->err)
		return;
	if (p->nr == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 128;
		struct cli_plot_label *n = realloc(p->labels, cap * sizeof(*n));

		if (!n) {
			p->err = -ENOMEM;
			return;
		}
		p->labels = n;
		p->cap = cap;
	}
	l = &p->labels[p->nr++];
	snprintf(l->text, sizeof(l->text), "%.*s", (int)utf8_prefix(s, sizeof(l->text) - 1), s);
	l->x0 = x0;
	l->y0 = y0;
	l->x1 = x1;
	l->y1 = y1;
}

/* s with its baseline at y; align 0 left, 0.5 centre, 1 right of x */
static void text(struct pc *p, double x, double y, double align, const char *s)
{
	cairo_text_extents_t e;
	double x0;

	if (!*s)
		return;
	cairo_text_extents(p->cr, s, &e);
	x0 = x - align * e.x_advance;
	cairo_move_to(p->cr, x0, y);
	cairo_show_text(p->cr, s);
	if (e.width > 0)
		record(p, s, x0 + e.x_bearing, y + e.y_bearing, x0 + e.x_bearing + e.width,
		       y + e.y_bearing + e.height);
}

/* s centred on (x, y), reading bottom to top */
static void text_up(struct pc *p, double x, double y, const char *s)
{
	cairo_text_extents_t e;
	double u0, u1;

	cairo_text_extents(p->cr, s, &e);
	cairo_save(p->cr);
	cairo_translate(p->cr, x, y);
	cairo_rotate(p->cr, -M_PI / 2);
	cairo_move_to(p->cr, -e.x_advance / 2, 0);
	cairo_show_text(p->cr, s);
	cairo_restore(p->cr);
	/* text space (u, v) lands on (x + v, y - u) */
	u0 = -e.x_advance / 2 + e.x_bearing;
	u1 = u0 + e.width;
	if (e.width > 0)
		record(p, s, x + e.y_bearing, y - u1, x + e.y_bearing + e.height, y - u0);
}

/* s cut to fit maxw at the current font, ending in an ellipsis */
static const char *ellipsize(struct pc *p, const char *s, double maxw, char *buf, size_t size)
{
	size_t n;

	if (tw(p, s) <= maxw)
		return s;
	n = utf8_prefix(s, size - 4);
	for (;;) {
		while (n && s[n - 1] == ' ')
			n--;
		snprintf(buf, size, "%.*s\xe2\x80\xa6", (int)n, s);
		if (!n || tw(p, buf) <= maxw)
			return buf;
		n = utf8_prefix(s, n - 1);
	}
}

/* s at the largest size in [min, size] that fits maxw, else ellipsized at min; font left set */
static const char *fit(struct pc *p, enum face f, double size, double min, double maxw,
		       const char *s, char *buf, size_t bsize)
{
	for (double z = size; z >= min - 1e-9; z -= 0.5) {
		font(p, f, z);
		if (tw(p, s) <= maxw)
			return s;
	}
	font(p, f, min);
	return ellipsize(p, s, maxw, buf, bsize);
}

/* Greedy word wrap at the current font into at most maxl lines; the last is ellipsized. */
static size_t wrap(struct pc *p, const char *s, double maxw, char (*lines)[LINE_LEN], size_t maxl)
{
	size_t nl = 0;

	while (*s == ' ')
		s++;
	while (*s && nl < maxl) {
		size_t take = 0, j = 0;
		const char *rest;
		char cand[LINE_LEN];

		for (;;) {
			size_t k = j;

			while (s[k] == ' ')
				k++;
			while (s[k] && s[k] != ' ')
				k++;
			if (k == j || k >= LINE_LEN - 4)
				break;
			snprintf(cand, sizeof(cand), "%.*s", (int)k, s);
			if (take && tw(p, cand) > maxw)
				break;
			take = j = k;
		}
		if (!take)
			take = utf8_prefix(s, LINE_LEN - 4);	/* one enormous word */
		rest = s + take;
		while (*rest == ' ')
			rest++;
		if (nl + 1 == maxl && *rest) {
			char all[2 * LINE_LEN], tmp[LINE_LEN];

			snprintf(all, sizeof(all), "%.*s", (int)utf8_prefix(s, sizeof(all) - 1), s);
			snprintf(lines[nl++], LINE_LEN, "%s", ellipsize(p, all, maxw, tmp, sizeof(tmp)));
			return nl;
		}
		snprintf(lines[nl], LINE_LEN, "%.*s", (int)take, s);
		if (tw(p, lines[nl]) > maxw) {
			char tmp[LINE_LEN];

			snprintf(tmp, sizeof(tmp), "%s", lines[nl]);
			snprintf(lines[nl], LINE_LEN, "%s", ellipsize(p, tmp, maxw, cand, sizeof(cand)));
		}
		nl++;
		s = rest;
	}
	return nl;
}

/* A wrapped paragraph, first baseline at y; returns the y under its last line. */
static double para(struct pc *p, double x, double y, double maxw, double lh, size_t maxl,
		   const char *s)
{
	char lines[8][LINE_LEN];
	size_t n = wrap(p, s, maxw, lines, maxl > 8 ? 8 : maxl);

	for (size_t i = 0; i < n; i++)
		text(p, x, y + (double)i * lh, 0, lines[i]);
	return y + (double)n * lh - lh + lh * 0.45;
}

static void fmt_num(double v, char *buf, size_t size)
{
	double a = fabs(v);

	if (v == 0)
		snprintf(buf, size, "0");
	else if (a >= 10000)
		snprintf(buf, size, "%.0f", v);
	else if (a >= 100)
		snprintf(buf, size, "%.1f", v);
	else if (a >= 1)
		snprintf(buf, size, "%.3f", v);
	else if (a >= 0.001)
		snprintf(buf, size, "%.4f", v);
	else
		snprintf(buf, size, "%.3g", v);
}

static void fmt_delta(double d, char *buf, size_t size)
{
	double a = fabs(d);

	if (a < 0.005)
		snprintf(buf, size, "0.00%%");	/* not "-0.00%" */
	else
		snprintf(buf, size, a < 10 ? "%+.2f%%" : a < 1000 ? "%+.1f%%" : "%+.0f%%", d);
}

/* ---- scales ---------------------------------------------------------------- */

struct scale {
	double lo, hi, step;
	int dec;
	double top, bottom;	/* pixels */
};

static void nice_scale(struct scale *s, double lo, double hi, double top, double bottom)
{
	double raw, mag, f;

	if (!(hi > lo)) {
		double m = fabs(hi) > 0 ? fabs(hi) * 0.1 : 1;

		if (lo == 0 && hi == 0)
			hi = 1;
		else
			lo -= m, hi += m;
	}
	raw = (hi - lo) / 5;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	s->step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * mag;
	s->lo = floor(lo / s->step + 1e-9) * s->step;
	s->hi = ceil(hi / s->step - 1e-9) * s->step;
	if (s->hi <= s->lo)
		s->hi = s->lo + s->step;
	for (s->dec = 0; s->dec < 9; s->dec++) {
		double k = s->step * pow(10, s->dec);

		if (fabs(k - round(k)) < 1e-6 * fmax(1, k))
			break;
	}
	s->top = top;
	s->bottom = bottom;
}

static double sy(const struct scale *s, double v)
{
	return s->bottom - (v - s->lo) / (s->hi - s->lo) * (s->bottom - s->top);
}

/* Grid, tick labels and the rotated title of a y axis at x_axis; the title centred on x_title. */
static void y_axis(struct pc *p, const struct scale *s, double x_title, double x_axis,
		   double x_end, const char *title)
{
	int n = (int)lround((s->hi - s->lo) / s->step);
	char buf[64], cut[160];
	const char *t;

	cairo_set_line_width(p->cr, 1);
	for (int i = 0; i <= n; i++) {
		double v = s->lo + i * s->step, y = round(sy(s, v)) + 0.5;

		if (fabs(v) < s->step * 1e-9)
			v = 0;
		set(p, C_GRID);
		cairo_move_to(p->cr, x_axis, y);
		cairo_line_to(p->cr, x_end, y);
		cairo_stroke(p->cr);
		snprintf(buf, sizeof(buf), "%.*f", s->dec, v);
		set(p, C_MUTED);
		t = fit(p, REG, 11, 8, x_axis - x_title - 16, buf, cut, sizeof(cut));
		text(p, x_axis - 6, y + 4, 1, t);
	}
	set(p, C_AXIS);
	cairo_move_to(p->cr, x_axis + 0.5, s->top);
	cairo_line_to(p->cr, x_axis + 0.5, s->bottom);
	cairo_stroke(p->cr);
	set(p, C_TEXT);
	t = fit(p, REG, 12, 9, s->bottom - s->top, title, cut, sizeof(cut));
	text_up(p, x_title, (s->top + s->bottom) / 2, t);
}

static void axis_title(const struct fig *f, char *buf, size_t size)
{
	snprintf(buf, size, "%s (%s)", f->unit[0] ? f->unit : "value", source_words(f->source));
}

/* ---- verdicts -------------------------------------------------------------- */

enum word { W_NONE, W_BASE, W_NS, W_UNDER, W_SLOWER, W_FASTER, W_EXACT };

struct verdict {
	enum word w;
	double delta, p;	/* NAN when unknown */
};

static size_t runs_of(const json_t *var, const char *key, double **out)
{
	const json_t *r = json_object_get(json_object_get(json_object_get(var, "figures"), key),
					  "runs");
	size_t n = json_array_size(r), k = 0;

	*out = n ? malloc(n * sizeof(**out)) : NULL;
	if (!*out)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (json_is_number(json_array_get(r, i)) &&
		    isfinite(json_number_value(json_array_get(r, i))))
			(*out)[k++] = json_number_value(json_array_get(r, i));
	return k;
}

static const json_t *variant_named(const json_t *w, const char *name)
{
	const json_t *vars = json_object_get(w, "variants");

	for (size_t i = 0; i < json_array_size(vars); i++)
		if (!strcmp(cli_jstr(json_array_get(vars, i), "name"), name))
			return json_array_get(vars, i);
	return NULL;
}

/* The verdict under v's bar for figure key: bench's own for its figure, else Welch's from the runs. */
static struct verdict verdict_of(const struct pc *p, const json_t *w, const json_t *v,
				 const char *key)
{
	struct verdict r = { W_NONE, NAN, NAN };
	const char *base = cli_jstr(w, "baseline");
	const json_t *cmp = json_object_get(v, "compare"), *bv;
	struct fig fa, fb;
	double *ra = NULL, *rb = NULL;
	size_t na, nb;

	if (base[0] && !strcmp(cli_jstr(v, "name"), base))
		return (struct verdict){ W_BASE, NAN, NAN };
	if (cmp && (!json_object_get(cmp, "figure") || !strcmp(cli_jstr(cmp, "figure"), key))) {
		const char *word = cli_jstr(cmp, "verdict");

		cli_jnum(cmp, "delta_pct", &r.delta);
		cli_jnum(cmp, "p", &r.p);
		r.w = !strcmp(word, "slower") ? W_SLOWER : !strcmp(word, "faster") ? W_FASTER :
		      json_is_true(json_object_get(cmp, "significant")) ? W_UNDER : W_NS;
		return r;
	}
	bv = base[0] ? variant_named(w, base) : NULL;
	if (!bv)
		return r;
	fa = get_fig(bv, key);
	fb = get_fig(v, key);
	if (!fa.ok || !fb.ok)
		return r;
	na = runs_of(bv, key, &ra);
	nb = runs_of(v, key, &rb);
	if (na >= 2 && nb >= 2) {
		struct nl_summary sa, sb;
		struct nl_compare c;

		if (!nl_summarize(ra, na, &sa) && !nl_summarize(rb, nb, &sb) && sa.mean != 0 &&
		    !nl_compare(&sa, &sb, p->threshold, &c)) {
			r.delta = c.delta_pct;
			r.p = c.p;
			r.w = c.verdict == NL_VERDICT_NONE ? W_NS : !c.practical ? W_UNDER :
			      c.delta_pct > 0 ? W_SLOWER : W_FASTER;
		}
	} else {
		r.w = W_EXACT;
		r.delta = fa.mean != 0 ? 100 * (fb.mean - fa.mean) / fabs(fa.mean) :
			  fb.mean == 0 ? 0 : NAN;
	}
	free(ra);
	free(rb);
	return r;
}

static struct rgb bar_rgb(enum word w)
{
	return w == W_BASE ? C_BASE : w == W_SLOWER ? C_SLOW : w == W_FASTER ? C_FAST : C_SAME;
}

static struct rgb word_rgb(enum word w)
{
	return w == W_BASE ? T_BASE : w == W_SLOWER ? T_SLOW : w == W_FASTER ? T_FAST : T_SAME;
}

static void word_text(const struct pc *p, enum word w, const char *key, const char *src,
		      char *buf, size_t size)
{
	switch (w) {
	case W_BASE: snprintf(buf, size, "baseline"); break;
	case W_NS: snprintf(buf, size, "not significant"); break;
	case W_UNDER: snprintf(buf, size, "under %g%% threshold", p->threshold); break;
	case W_SLOWER: snprintf(buf, size, "%s", is_time(key) ? "slower" : "higher"); break;
	case W_FASTER: snprintf(buf, size, "%s", is_time(key) ? "faster" : "lower"); break;
	case W_EXACT:
		snprintf(buf, size, "%s", !strcmp(src, "sim") ? "simulated, exact" : "one run: no test");
		break;
	case W_NONE: buf[0] = '\0'; break;
	}
}

/* ---- bars ------------------------------------------------------------------ */

struct bars {
	const json_t *w;
	const char *key;
	const char *title;	/* above the plot (layout's sub-panels), or NULL */
	double x0, x1, plot_h;
	const double *shared;	/* [lo, hi] shared with sibling panels, or NULL */
	bool layout;		/* say what packed/spread mean instead of the bytes */
};

static void fig_range(const json_t *w, const char *key, double *lo, double *hi)
{
	const json_t *vars = json_object_get(w, "variants");

	for (size_t i = 0; i < json_array_size(vars); i++) {
		struct fig f = get_fig(json_array_get(vars, i), key);

		if (f.ok) {
			*lo = fmin(*lo, f.lo);
			*hi = fmax(*hi, f.hi);
		}
	}
}

static void entry_words(const json_t *w, const json_t *v, bool layout, char *buf, size_t size)
{
	const json_t *e = json_object_get(v, "entry");
	const char *bytes = cli_jstr(e, "bytes"), *name = cli_jstr(e, "name");

	if (layout && json_is_boolean(json_object_get(v, "packed"))) {
		if (json_is_true(json_object_get(v, "packed")))
			snprintf(buf, size, "hot code together");
		else
			snprintf(buf, size, "+%.0f B cold each",
				 jnum_or(json_object_get(w, "params"), "cold_bytes", 0));
	} else if (bytes[0]) {
		snprintf(buf, size, "%s", bytes);
	} else if (!strcmp(name, "none")) {
		snprintf(buf, size, "no entry NOP");
	} else if (!strcmp(name, "call")) {
		snprintf(buf, size, "call to a stub");
	} else {
		snprintf(buf, size, "%s", name);
	}
}

static double draw_bars(struct pc *p, const struct bars *b, double y)
{
	const json_t *vars = json_object_get(b->w, "variants");
	size_t nv = json_array_size(vars), nnotes = 0;
	const char *notes[16];
	double xa = b->x0 + AXIS_W, slot = (b->x1 - xa) / (double)(nv ? nv : 1);
	double lo = 0, hi = 0, bw = fmin(64, slot * 0.5), ybase, top;
	char buf[LINE_LEN], cut[LINE_LEN], title[160];
	struct fig f0 = { .unit = "", .source = "" };
	struct scale s;

	for (size_t i = 0; i < nv && !f0.ok; i++)
		f0 = get_fig(json_array_get(vars, i), b->key);
	if (b->title) {
		set(p, C_TEXT);
		text(p, b->x0, y + 14, 0, fit(p, BOLD, 13, 10, b->x1 - b->x0, b->title, cut,
					       sizeof(cut)));
		y += 24;
	}
	top = y + 8;
	if (b->shared) {
		lo = b->shared[0];
		hi = b->shared[1];
	} else {
		fig_range(b->w, b->key, &lo, &hi);
	}
	/* headroom for the value labels above the whiskers */
	nice_scale(&s, lo, hi + (hi - lo) * 0.12, top, top + b->plot_h);
	while (sy(&s, hi) - s.top < 22)
		s.hi += s.step;
	axis_title(&f0, title, sizeof(title));
	y_axis(p, &s, b->x0 + 10, xa, b->x1, title);
	ybase = sy(&s, fmax(s.lo, fmin(0, s.hi)));

	/* the baseline's mean across the panel */
	for (size_t i = 0; i < nv; i++) {
		const json_t *v = json_array_get(vars, i);
		struct fig f = get_fig(v, b->key);

		if (f.ok && verdict_of(p, b->w, v, b->key).w == W_BASE) {
			double yb = round(sy(&s, f.mean)) + 0.5;
			const double dash[] = { 5, 4 };

			set(p, C_BASE);
			cairo_set_dash(p->cr, dash, 2, 0);
			cairo_set_line_width(p->cr, 1);
			cairo_move_to(p->cr, xa, yb);
			cairo_line_to(p->cr, b->x1, yb);
			cairo_stroke(p->cr);
			cairo_set_dash(p->cr, NULL, 0, 0);
		}
	}

	for (size_t i = 0; i < nv; i++) {
		const json_t *v = json_array_get(vars, i);
		struct fig f = get_fig(v, b->key);
		struct verdict vd = verdict_of(p, b->w, v, b->key);
		double cx = xa + slot * ((double)i + 0.5), ly = s.bottom + 17, ytop;
		const char *note = cli_jstr(v, "note");
		size_t mark = 0;
		char num[48], sem[32];

		if (note[0]) {
			for (mark = 0; mark < nnotes && strcmp(notes[mark], note); mark++)
				;
			if (mark == nnotes && nnotes < 16)
				notes[nnotes++] = note;
			mark++;
		}
		if (!f.ok) {
			set(p, C_MUTED);
			font(p, REG, 11);
			text(p, cx, s.bottom - 8, 0.5, "not measured");
		} else {
			struct rgb c = bar_rgb(vd.w);
			double yv = sy(&s, f.mean);

			cairo_rectangle(p->cr, cx - bw / 2, fmin(yv, ybase), bw, fabs(ybase - yv));
			cairo_set_source_rgba(p->cr, c.r, c.g, c.b, 0.85);
			cairo_fill_preserve(p->cr);
			set(p, (struct rgb){ c.r * 0.7, c.g * 0.7, c.b * 0.7 });
			cairo_set_line_width(p->cr, 1);
			cairo_stroke(p->cr);
			ytop = fmin(yv, ybase);
			if (f.has_ci && f.hi > f.lo) {
				double y0 = sy(&s, f.lo), y1 = sy(&s, f.hi), cap = fmin(10, bw / 3);

				set(p, C_TEXT);
				cairo_set_line_width(p->cr, 1.4);
				cairo_move_to(p->cr, cx, y0);
				cairo_line_to(p->cr, cx, y1);
				cairo_move_to(p->cr, cx - cap, y0);
				cairo_line_to(p->cr, cx + cap, y0);
				cairo_move_to(p->cr, cx - cap, y1);
				cairo_line_to(p->cr, cx + cap, y1);
				cairo_stroke(p->cr);
				ytop = fmin(ytop, y1);
			}
			fmt_num(f.mean, num, sizeof(num));
			sem[0] = '\0';
			if (f.has_sem && f.has_ci)
				snprintf(sem, sizeof(sem), " \xc2\xb1%.2f%%", f.sem_pct);
			snprintf(buf, sizeof(buf), "%s%s", num, sem);
			set(p, C_TEXT);
			text(p, cx, ytop - 6, 0.5, fit(p, REG, 11, 8.5, slot - 6, buf, cut, sizeof(cut)));
		}

		/* under the bar: name, what it is, the verdict */
		set(p, C_TEXT);
		sem[0] = '\0';
		if (mark)
			snprintf(sem, sizeof(sem), " [%zu]", mark);
		snprintf(buf, sizeof(buf), "%s%s", cli_jstr(v, "name"), sem);
		if (fit(p, BOLD, 12, 9, slot - 8, buf, cut, sizeof(cut)) != buf) {
			/* too long even small: cut the name, keep the footnote mark */
			const char *nm = ellipsize(p, cli_jstr(v, "name"), slot - 8 - tw(p, sem), cut,
						   sizeof(cut));

			snprintf(buf, sizeof(buf), "%s%s", nm, sem);
		}
		text(p, cx, ly, 0.5, buf);
		entry_words(b->w, v, b->layout, buf, sizeof(buf));
		set(p, C_MUTED);
		text(p, cx, ly + 15, 0.5, fit(p, b->layout ? REG : MONO, 10.5, 8, slot - 8, buf, cut,
					      sizeof(cut)));
		set(p, word_rgb(vd.w));
		if (vd.w != W_BASE && isfinite(vd.delta)) {
			fmt_delta(vd.delta, buf, sizeof(buf));
			text(p, cx, ly + 32, 0.5, fit(p, BOLD, 11.5, 8, slot - 8, buf, cut, sizeof(cut)));
		}
		word_text(p, vd.w, b->key, f.source, buf, sizeof(buf));
		text(p, cx, vd.w == W_BASE ? ly + 32 : ly + 46, 0.5,
		     fit(p, vd.w == W_BASE ? BOLD : REG, 11, 8, slot - 8, buf, cut, sizeof(cut)));
		if (isfinite(vd.p) && vd.w != W_EXACT) {
			if (vd.p < 0.001)
				snprintf(buf, sizeof(buf), "p < 0.001");
			else
				snprintf(buf, sizeof(buf), "p = %.3f", vd.p);
			text(p, cx, ly + 60, 0.5, fit(p, REG, 10.5, 8, slot - 8, buf, cut, sizeof(cut)));
		}
	}
	/* the zero line over the bars' feet */
	set(p, C_AXIS);
	cairo_set_line_width(p->cr, 1);
	cairo_move_to(p->cr, xa, round(ybase) + 0.5);
	cairo_line_to(p->cr, b->x1, round(ybase) + 0.5);
	cairo_stroke(p->cr);

	y = s.bottom + 17 + 60 + 8;
	set(p, C_MUTED);
	font(p, REG, 11);
	for (size_t i = 0; i < nnotes; i++) {
		snprintf(buf, sizeof(buf), "[%zu] %s", i + 1, notes[i]);
		y = para(p, b->x0, y + 12, b->x1 - b->x0, 14, 3, buf);
	}
	return y;
}

/* ---- panels ---------------------------------------------------------------- */

static void describe(const json_t *w, char *buf, size_t size)
{
	const json_t *pr = json_object_get(w, "params");
	const char *fit = cli_jstr(w, "fit");
	char what[256];
	double funcs = jnum_or(pr, "funcs", 0), align = jnum_or(pr, "align", 0);

	switch (kind_of(w)) {
	case K_LAYOUT:
		/* bench's own line starts with the function count */
		if (fit[0]) {
			snprintf(buf, size, "%s; the %.0f cold bytes after each spread function "
				 "never run", fit, jnum_or(pr, "cold_bytes", 0));
			return;
		}
			snprintf(what, sizeof(what), "%.0f hot functions packed together, or each "
				 "followed by %.0f bytes of cold code that never runs", funcs,
				 jnum_or(pr, "cold_bytes", 0));
		break;
	case K_SWEEP:
		snprintf(what, sizeof(what), "%.0f functions with the entry at every offset of a "
			 "%.0f-byte slot, %s fill, %s driver, %s order%s", funcs, align,
			 cli_jstr(pr, "fill"), cli_jstr(pr, "driver"), cli_jstr(pr, "order"),
			 json_is_true(json_object_get(pr, "endbr")) ? ", endbr64" : "");
		break;
	default:
		if (json_object_get(pr, "bytes"))
			snprintf(what, sizeof(what), "a loop over %.0f bytes of copies of one NOP",
				 jnum_or(pr, "bytes", 0));
		else if (funcs > 0)
			snprintf(what, sizeof(what), "%.0f functions, %.0f-byte alignment, %s fill, "
				 "%s driver, %s order%s", funcs, align, cli_jstr(pr, "fill"),
				 cli_jstr(pr, "driver"), cli_jstr(pr, "order"),
				 json_is_true(json_object_get(pr, "endbr")) ? ", endbr64" : "");
		else
			what[0] = '\0';
	}
	snprintf(buf, size, "%s%s%s", what, what[0] && fit[0] ? "; " : "", fit);
}

static double panel_title(struct pc *p, const json_t *w, double y)
{
	char buf[600], cut[LINE_LEN];

	set(p, C_TEXT);
	text(p, M, y + 16, 0, fit(p, BOLD, 15, 10, p->w - 2 * M, cli_jstr(w, "name"), cut, sizeof(cut)));
	describe(w, buf, sizeof(buf));
	set(p, C_MUTED);
	font(p, REG, 12);
	return para(p, M, y + 36, p->w - 2 * M, 15, 3, buf) + 6;
}

static double panel_bars(struct pc *p, const json_t *w, const double *shared, double y)
{
	struct bars b = { .w = w, .key = primary_key(w), .x0 = M, .x1 = p->w - M,
			  .plot_h = PLOT_H, .shared = shared };

	y = panel_title(p, w, y);
	if (!b.key) {
		set(p, C_MUTED);
		font(p, REG, 12);
		text(p, M, y + 20, 0, "no figures in this workload");
		return y + 30 + GAP;
	}
	return draw_bars(p, &b, y) + GAP;
}

/* Where the entry (len bytes at site) crosses a boundary: 64, 32, 16 or 0. */
static int straddle(unsigned site, unsigned len)
{
	if (!len)
		return 0;
	if (site % 64 + len > 64)
		return 64;
	if (site % 32 + len > 32)
		return 32;
	if (site % 16 + len > 16)
		return 16;
	return 0;
}

struct legend {
	struct pc *p;
	double x, y, x0, x1;
};

enum swatch { SW_BOX, SW_LINE, SW_RING, SW_SQUARE, SW_DASH, SW_WHISKER };

static void legend_item(struct legend *lg, enum swatch sw, struct rgb c, const char *label)
{
	struct pc *p = lg->p;
	double w, x, y;

	font(p, REG, 11);
	w = 22 + tw(p, label);
	if (lg->x > lg->x0 && lg->x + w > lg->x1) {
		lg->x = lg->x0;
		lg->y += 18;
	}
	x = lg->x;
	y = lg->y;
	cairo_new_path(p->cr);	/* text leaves a current point an arc would join */
	cairo_set_line_width(p->cr, 1.6);
	switch (sw) {
	case SW_BOX:
		cairo_rectangle(p->cr, x, y - 9, 14, 10);
		set(p, c);
		cairo_fill_preserve(p->cr);
		set(p, (struct rgb){ c.r * 0.8, c.g * 0.8, c.b * 0.8 });
		cairo_set_line_width(p->cr, 0.8);
		cairo_stroke(p->cr);
		break;
	case SW_LINE:
		set(p, c);
		cairo_move_to(p->cr, x, y - 4);
		cairo_line_to(p->cr, x + 14, y - 4);
		cairo_stroke(p->cr);
		cairo_arc(p->cr, x + 7, y - 4, 2.6, 0, 2 * M_PI);
		cairo_fill(p->cr);
		break;
	case SW_RING:
		set(p, c);
		cairo_arc(p->cr, x + 7, y - 4, 5, 0, 2 * M_PI);
		cairo_stroke(p->cr);
		break;
	case SW_SQUARE:
		set(p, c);
		cairo_rectangle(p->cr, x + 2, y - 9, 10, 10);
		cairo_stroke(p->cr);
		break;
	case SW_DASH: {
		const double dash[] = { 4, 3 };

		set(p, c);
		cairo_set_line_width(p->cr, 1);
		cairo_set_dash(p->cr, dash, 2, 0);
		cairo_move_to(p->cr, x, y - 4);
		cairo_line_to(p->cr, x + 14, y - 4);
		cairo_stroke(p->cr);
		cairo_set_dash(p->cr, NULL, 0, 0);
		break;
	}
	case SW_WHISKER:
		set(p, c);
		cairo_set_line_width(p->cr, 1.4);
		cairo_move_to(p->cr, x + 7, y - 11);
		cairo_line_to(p->cr, x + 7, y + 2);
		cairo_move_to(p->cr, x + 3, y - 11);
		cairo_line_to(p->cr, x + 11, y - 11);
		cairo_move_to(p->cr, x + 3, y + 2);
		cairo_line_to(p->cr, x + 11, y + 2);
		cairo_stroke(p->cr);
		break;
	}
	set(p, C_TEXT);
	text(p, x + 20, y, 0, label);
	lg->x += w + 18;
}

static double panel_sweep(struct pc *p, const json_t *w, double y)
{
	const json_t *vars = json_object_get(w, "variants");
	const char *key = primary_key(w), *series[MAX_SERIES];
	size_t nv = json_array_size(vars), ns = 0;
	unsigned len[MAX_SERIES] = { 0 }, endbr, noff = 64;
	double lo = INFINITY, hi = -INFINITY, xa = M + AXIS_W, xb = p->w - M - 8, colw;
	char buf[LINE_LEN], title[160];
	struct fig f0 = { .unit = "", .source = "" };
	struct scale s;
	struct legend lg;

	y = panel_title(p, w, y);
	if (!key) {
		set(p, C_MUTED);
		font(p, REG, 12);
		text(p, M, y + 20, 0, "no figures in this workload");
		return y + 30 + GAP;
	}
	endbr = json_is_true(json_object_get(json_object_get(w, "params"), "endbr")) ? 4 : 0;
	for (size_t i = 0; i < nv; i++) {
		const json_t *v = json_array_get(vars, i), *e = json_object_get(v, "entry");
		struct fig f = get_fig(v, key);
		size_t k;

		for (k = 0; k < ns && strcmp(series[k], cli_jstr(e, "name")); k++)
			;
		if (k == ns && ns < MAX_SERIES) {
			series[ns] = cli_jstr(e, "name");
			len[ns++] = (unsigned)jnum_or(e, "length", 0);
		}
		noff = (unsigned)fmax(noff, fmin(4096, jnum_or(v, "offset", 0) + 1));
		if (f.ok) {
			if (!f0.ok)
				f0 = f;
			lo = fmin(lo, f.lo);
			hi = fmax(hi, f.hi);
		}
	}
	if (!f0.ok)
		lo = hi = 0;
	colw = (xb - xa) / noff;
	/* room above the plot for the boundary labels */
	nice_scale(&s, lo - (hi - lo) * 0.06, hi + (hi - lo) * 0.06, y + 24, y + 24 + SWEEP_H);

	/* the columns where the (first series') entry crosses a boundary */
	for (unsigned o = 0; o < noff; o++) {
		int c = straddle(o + endbr, len[0]);

		if (!c)
			continue;
		set(p, c == 64 ? C_X64 : c == 32 ? C_X32 : C_X16);
		cairo_rectangle(p->cr, xa + o * colw, s.top, colw, s.bottom - s.top);
		cairo_fill(p->cr);
	}
	axis_title(&f0, title, sizeof(title));
	y_axis(p, &s, M + 10, xa, xb, title);
	/* boundaries: 16 dotted, 32 dashed, 64 solid */
	for (unsigned b = 16; b < noff; b += 16) {
		const double dot[] = { 1.5, 3 }, dash[] = { 6, 3 };
		double x = round(xa + b * colw) + 0.5;

		set(p, b % 64 == 0 ? C_AXIS : b % 32 == 0 ? C_MUTED : C_MUTED);
		cairo_set_line_width(p->cr, b % 64 == 0 ? 1.6 : b % 32 == 0 ? 1.2 : 1);
		if (b % 64)
			cairo_set_dash(p->cr, b % 32 == 0 ? dash : dot, 2, 0);
		cairo_move_to(p->cr, x, s.top);
		cairo_line_to(p->cr, x, s.bottom);
		cairo_stroke(p->cr);
		cairo_set_dash(p->cr, NULL, 0, 0);
		snprintf(buf, sizeof(buf), "%u-byte boundary", b % 64 == 0 ? 64 : b % 32 == 0 ? 32 : 16);
		set(p, C_MUTED);
		font(p, REG, 10.5);
		text(p, x, s.top - 6, 0.5, buf);
	}
	set(p, C_AXIS);
	cairo_set_line_width(p->cr, 1);
	cairo_move_to(p->cr, xa, round(s.bottom) + 0.5);
	cairo_line_to(p->cr, xb, round(s.bottom) + 0.5);
	cairo_stroke(p->cr);
	/* x ticks every 8 bytes */
	font(p, REG, 11);
	for (unsigned o = 0; o < noff; o += noff > 128 ? 64 : 8) {
		double x = xa + (o + 0.5) * colw;

		set(p, C_AXIS);
		cairo_move_to(p->cr, round(x) + 0.5, s.bottom);
		cairo_line_to(p->cr, round(x) + 0.5, s.bottom + 4);
		cairo_stroke(p->cr);
		snprintf(buf, sizeof(buf), "%u", o);
		set(p, C_MUTED);
		text(p, x, s.bottom + 17, 0.5, buf);
	}
	snprintf(buf, sizeof(buf), "%u", noff - 1);
	text(p, xa + (noff - 0.5) * colw, s.bottom + 17, 0.5, buf);
	set(p, C_TEXT);
	font(p, REG, 12);
	snprintf(buf, sizeof(buf), "offset of the function entry in its %u-byte slot (bytes)%s",
		 noff <= 64 ? 64 : noff, endbr ? "; the NOP follows a 4-byte endbr64" : "");
	text(p, (xa + xb) / 2, s.bottom + 36, 0.5, buf);

	/* each series: CI band, line, points; significant differences ringed */
	for (size_t k = 0; k < ns; k++) {
		struct rgb c = series_rgb[k];
		bool pen = false;

		for (int pass = 0; pass < 3; pass++) {
			for (size_t i = 0; i < nv; i++) {
				const json_t *v = json_array_get(vars, i);
				struct fig f = get_fig(v, key);
				double x = xa + (jnum_or(v, "offset", 0) + 0.5) * colw;

				if (strcmp(cli_jstr(json_object_get(v, "entry"), "name"), series[k]))
					continue;
				if (!f.ok) {
					pen = false;
					continue;
				}
				if (pass == 0) {
					cairo_set_source_rgba(p->cr, c.r, c.g, c.b, 0.16);
					cairo_rectangle(p->cr, x - colw / 2, sy(&s, f.hi), colw,
							sy(&s, f.lo) - sy(&s, f.hi));
					cairo_fill(p->cr);
				} else if (pass == 1) {
					if (pen)
						cairo_line_to(p->cr, x, sy(&s, f.mean));
					else
						cairo_move_to(p->cr, x, sy(&s, f.mean));
					pen = true;
				} else {
					struct verdict vd = verdict_of(p, w, v, key);

					set(p, c);
					cairo_new_path(p->cr);
					cairo_arc(p->cr, x, sy(&s, f.mean), 2.4, 0, 2 * M_PI);
					cairo_fill(p->cr);
					if (vd.w == W_SLOWER || vd.w == W_FASTER || vd.w == W_BASE) {
						set(p, bar_rgb(vd.w));
						cairo_set_line_width(p->cr, vd.w == W_BASE ? 1.6 : 1.8);
						if (vd.w == W_BASE)
							cairo_rectangle(p->cr, x - 5, sy(&s, f.mean) - 5, 10, 10);
						else
							cairo_arc(p->cr, x, sy(&s, f.mean), 5.2, 0, 2 * M_PI);
						cairo_stroke(p->cr);
					}
				}
			}
			if (pass == 1) {
				set(p, c);
				cairo_set_line_width(p->cr, 1.6);
				cairo_stroke(p->cr);
				pen = false;
			}
		}
	}

	lg = (struct legend){ p, xa, s.bottom + 60, xa, xb };
	for (size_t k = 0; k < ns; k++) {
		snprintf(buf, sizeof(buf), "%s (%u bytes): mean, 95%% CI band", series[k], len[k]);
		legend_item(&lg, SW_LINE, series_rgb[k], buf);
	}
	snprintf(buf, sizeof(buf), "baseline (%s)", cli_jstr(w, "baseline"));
	legend_item(&lg, SW_SQUARE, C_BASE, buf);
	legend_item(&lg, SW_RING, C_SLOW, is_time(key) ? "significantly slower" : "significantly higher");
	legend_item(&lg, SW_RING, C_FAST, is_time(key) ? "significantly faster" : "significantly lower");
	if (len[0]) {
		snprintf(buf, sizeof(buf), "%s%s crosses a 16-byte boundary", ns > 1 ? series[0] : "the entry",
			 ns > 1 ? "'s entry" : "");
		legend_item(&lg, SW_BOX, C_X16, buf);
		legend_item(&lg, SW_BOX, C_X32, "... a 32-byte boundary");
		legend_item(&lg, SW_BOX, C_X64, "... a 64-byte (cache line) boundary");
	}
	return lg.y + 8 + GAP;
}

static bool is_icache_key(const char *k)
{
	return strstr(k, "l1i") || strstr(k, "icache") || !strncmp(k, "ic_", 3) ||
	       strstr(k, "_ic_");
}

static void miss_title(const char *key, const char *src, char *buf, size_t size)
{
	const char *per = strstr(key, "_per_");
	int n = per ? (int)(per - key) : (int)strlen(key);
	char name[96];

	if (strstr(key, "itlb"))
		snprintf(name, sizeof(name), "iTLB misses");
	else if (is_icache_key(key))
		snprintf(name, sizeof(name), "L1i misses");
	else {
		snprintf(name, sizeof(name), "%.*s", n, key);
		for (char *c = name; *c; c++)
			if (*c == '_')
				*c = ' ';
	}
	snprintf(buf, size, "%s (%s)", name, source_words(src));
}

static double panel_layout(struct pc *p, const json_t *doc, const json_t *w, double y)
{
	const json_t *v0 = json_array_get(json_object_get(w, "variants"), 0);
	const json_t *env = json_object_get(doc, "environment"), *fig;
	const char *keys[MAX_SUB], *k;
	char titles[MAX_SUB][160];
	size_t nk = 0;
	bool icache = false;
	double ybot, x, width;

	y = panel_title(p, w, y);
	keys[nk] = primary_key(w);
	if (keys[nk]) {
		snprintf(titles[nk], sizeof(titles[nk]), "Time");
		nk++;
	}
	json_object_foreach((json_t *)json_object_get(v0, "figures"), k, fig) {
		if (nk == MAX_SUB - 1 || !strstr(k, "miss"))
			continue;
		keys[nk] = k;
		miss_title(k, cli_jstr(fig, "source"), titles[nk], sizeof(titles[nk]));
		icache |= is_icache_key(k);
		nk++;
	}
	width = (p->w - 2 * M - (double)(nk + !icache - 1) * GAP_X) / (double)(nk + !icache);
	ybot = y;
	x = M;
	for (size_t i = 0; i < nk; i++) {
		struct bars b = { .w = w, .key = keys[i], .title = titles[i], .x0 = x,
				  .x1 = x + width, .plot_h = LAYOUT_H, .layout = true };

		ybot = fmax(ybot, draw_bars(p, &b, y));
		x += width + GAP_X;
	}
	if (!icache) {
		char why[600], cut[LINE_LEN];
		const char *reason = cli_jstr(env, "hardware_unavailable");
		const double dash[] = { 5, 4 };
		double ty;

		set(p, C_TEXT);
		text(p, x, y + 14, 0, fit(p, BOLD, 13, 10, width, "L1i misses", cut, sizeof(cut)));
		set(p, C_MUTED);
		cairo_set_dash(p->cr, dash, 2, 0);
		cairo_set_line_width(p->cr, 1);
		cairo_rectangle(p->cr, x + 0.5, y + 32.5, width - 1, LAYOUT_H);
		cairo_stroke(p->cr);
		cairo_set_dash(p->cr, NULL, 0, 0);
		if (json_is_false(json_object_get(env, "hardware_counters")))
			snprintf(why, sizeof(why), "Not measured: this machine has no hardware PMU, "
				 "and the run did not simulate the cache (--sim cachegrind), so nothing "
				 "is drawn rather than zeros.%s%s", reason[0] ? " The PMU: " : "",
				 reason);
		else
			snprintf(why, sizeof(why), "Not measured: the events counted (-e) include no "
				 "icache miss event, and the run did not simulate the cache (--sim "
				 "cachegrind). Nothing is drawn rather than zeros.");
		font(p, REG, 12);
		set(p, C_TEXT);
		ty = para(p, x + 14, y + 60, width - 28, 17, 9, why);
		ybot = fmax(ybot, fmax(ty, y + 32 + LAYOUT_H));
	}
	return ybot + GAP;
}

/* ---- the page -------------------------------------------------------------- */

static double page_header(struct pc *p, const json_t *doc, double y)
{
	const json_t *env = json_object_get(doc, "environment");
	const json_t *me = json_object_get(doc, "method"), *wls = json_object_get(doc, "workloads");
	char buf[1400], cut[LINE_LEN];
	size_t o;

	o = (size_t)snprintf(buf, sizeof(buf), "noplab bench:");
	for (size_t i = 0; i < json_array_size(wls) && o < sizeof(buf); i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s %s", i ? "," : "",
				      cli_jstr(json_array_get(wls, i), "name"));
	set(p, C_TEXT);
	text(p, M, y + 20, 0, fit(p, BOLD, 19, 12, p->w - 2 * M, buf, cut, sizeof(cut)));
	y += 44;
	set(p, C_MUTED);
	font(p, REG, 12);
	snprintf(buf, sizeof(buf), "%s; %s; CPU %.0f pinned; %s; %s", cli_jstr(env, "cpu"),
		 cli_jstr(env, "kernel"), jnum_or(env, "cpu_pinned", -1), cli_jstr(env, "frequency"),
		 cli_jstr(env, "pages"));
	y = para(p, M, y, p->w - 2 * M, 15, 2, buf) + 12;
	snprintf(buf, sizeof(buf), "Counters: %s", cli_jstr(env, "counters"));
	y = para(p, M, y, p->w - 2 * M, 15, 3, buf) + 12;
	snprintf(buf, sizeof(buf), "Method: %.0f repetitions (%.0f warm-up) of %.0f rounds, every "
		 "variant in every round in a fresh order; %s.", jnum_or(me, "repetitions", 0),
		 jnum_or(me, "warmups", 0), jnum_or(me, "inner_rounds", 0), cli_jstr(me, "aggregation"));
	y = para(p, M, y, p->w - 2 * M, 15, 2, buf) + 6;
	cairo_set_line_width(p->cr, 1);
	set(p, C_GRID);
	cairo_move_to(p->cr, M, round(y + 8) + 0.5);
	cairo_line_to(p->cr, p->w - M, round(y + 8) + 0.5);
	cairo_stroke(p->cr);
	return y + 22;
}

static double page_legend(struct pc *p, bool bars, double y)
{
	struct legend lg = { p, M, y + 12, M, p->w - M };
	char buf[700];

	if (bars) {
		legend_item(&lg, SW_BOX, C_BASE, "baseline (dashed line: its mean)");
		legend_item(&lg, SW_BOX, C_SAME, "no significant or no practical difference");
		legend_item(&lg, SW_BOX, C_SLOW, "significantly slower (higher)");
		legend_item(&lg, SW_BOX, C_FAST, "significantly faster (lower)");
		legend_item(&lg, SW_WHISKER, C_TEXT, "95% confidence interval of the mean");
		y = lg.y + 10;
	}
	set(p, C_MUTED);
	font(p, REG, 11);
	snprintf(buf, sizeof(buf), "Bars and points are means over the repetitions; \xc2\xb1 is the "
		 "standard error of the mean in percent (perf stat's ( +- x%% )). Verdicts: Welch's "
		 "t-test against the baseline, alpha 0.05; a significant difference under %g%% is "
		 "no practical difference. Sources: TSC = time stamp counter (cycles are ticks times "
		 "the core/TSC clock ratio measured beside them); PMU = hardware counter; cachegrind "
		 "= simulated; software event = the kernel's count.", p->threshold);
	return para(p, M, y + 14, p->w - 2 * M, 14, 4, buf) + 4;
}

static bool selected(int only, size_t i)
{
	return only < 0 || (size_t)only == i;
}

static double needed_width(const json_t *doc, int only)
{
	const json_t *wls = json_object_get(doc, "workloads");
	double w = W_MIN;

	for (size_t i = 0; i < json_array_size(wls); i++) {
		const json_t *wl = json_array_get(wls, i), *f;
		double nv = (double)json_array_size(json_object_get(wl, "variants"));
		const char *k;
		size_t nk = 1;
		bool icache = false;

		if (!selected(only, i))
			continue;
		switch (kind_of(wl)) {
		case K_BARS:
			w = fmax(w, 2 * M + AXIS_W + nv * MIN_SLOT);
			break;
		case K_LAYOUT:
			json_object_foreach((json_t *)json_object_get(
				json_array_get(json_object_get(wl, "variants"), 0), "figures"), k, f) {
				if (nk < MAX_SUB - 1 && strstr(k, "miss")) {
					nk++;
					icache |= is_icache_key(k);
				}
			}
			w = fmax(w, 2 * M + (double)nk * (AXIS_W + fmax(2, nv) * MIN_SLOT) +
					    (icache ? 0 : 330) + (double)(nk - icache) * GAP_X);
			break;
		case K_SWEEP:
			break;
		}
	}
	return ceil(w);
}

static double draw_page(struct pc *p, const json_t *doc, int only)
{
	const json_t *wls = json_object_get(doc, "workloads");
	bool bars = false;
	double y = M / 2;

	cairo_set_source_rgb(p->cr, 1, 1, 1);
	cairo_paint(p->cr);
	if (only < 0)
		y = page_header(p, doc, y);
	for (size_t i = 0; i < json_array_size(wls); i++) {
		const json_t *w = json_array_get(wls, i);
		enum kind kd = kind_of(w);
		const char *key = primary_key(w);
		double shared[2] = { 0, 0 };

		if (!selected(only, i))
			continue;
		if (kd == K_SWEEP) {
			y = panel_sweep(p, w, y);
			continue;
		}
		bars = true;
		if (kd == K_LAYOUT) {
			y = panel_layout(p, doc, w, y);
			continue;
		}
		/* panels of one kind and figure share the scale: the footprint effect shows */
		for (size_t j = 0; j < json_array_size(wls) && key && only < 0; j++) {
			const json_t *o = json_array_get(wls, j);
			const char *ok = primary_key(o);

			if (kind_of(o) == K_BARS && !strcmp(cli_jstr(o, "kind"), cli_jstr(w, "kind")) && ok &&
			    !strcmp(ok, key))
				fig_range(o, key, &shared[0], &shared[1]);
		}
		y = panel_bars(p, w, only < 0 && key ? shared : NULL, y);
	}
	if (only < 0)
		y = page_legend(p, bars, y - GAP + 6);
	else
		y -= GAP - 8;
	return ceil(y + M / 2);
}

/* ---- output ---------------------------------------------------------------- */

static cairo_status_t file_write(void *ctx, const unsigned char *data, unsigned int len)
{
	return fwrite(data, 1, len, ctx) == len ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

static int put_escaped(struct cli_membuf *m, const char *s)
{
	for (; *s; s++) {
		const char *r = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;" :
				*s == '"' ? "&quot;" : NULL;
		char c = (char)((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t' ? ' ' : *s);

		if (cli_membuf_write(m, (const unsigned char *)(r ? r : &c), r ? (unsigned)strlen(r) : 1))
			return -ENOMEM;
	}
	return 0;
}

/* cairo's SVG with a <title> and a <desc> holding every label, after the <svg> tag */
static int svg_with_text(const struct cli_membuf *svg, const json_t *doc, int only,
			 const struct cli_plot_label *l, size_t nl, struct cli_membuf *out)
{
	const char *open = strstr(svg->p, "<svg"), *gt = open ? strchr(open, '>') : NULL;
	const json_t *wls = json_object_get(doc, "workloads");
	int err = 0;

	if (!gt)
		return -EIO;
	err |= cli_membuf_write(out, (const unsigned char *)svg->p, (unsigned)(gt + 1 - svg->p));
	err |= cli_membuf_write(out, (const unsigned char *)"\n<title>noplab bench:", 21);
	for (size_t i = 0; i < json_array_size(wls); i++) {
		if (!selected(only, i))
			continue;
		err |= cli_membuf_write(out, (const unsigned char *)" ", 1);
		err |= put_escaped(out, cli_jstr(json_array_get(wls, i), "name"));
	}
	err |= cli_membuf_write(out, (const unsigned char *)"</title>\n<desc>", 15);
	for (size_t i = 0; i < nl; i++) {
		err |= put_escaped(out, l[i].text);
		err |= cli_membuf_write(out, (const unsigned char *)"\n", 1);
	}
	err |= cli_membuf_write(out, (const unsigned char *)"</desc>", 7);
	err |= cli_membuf_write(out, (const unsigned char *)gt + 1, (unsigned)strlen(gt + 1));
	return err || out->err ? -ENOMEM : 0;
}

unsigned cli_plot_count_overlaps(const struct cli_plot_label *l, size_t n)
{
	unsigned c = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (fmin(l[i].x1, l[j].x1) - fmax(l[i].x0, l[j].x0) > 0.5 &&
			    fmin(l[i].y1, l[j].y1) - fmax(l[i].y0, l[j].y0) > 0.5)
				c++;
	return c;
}

static int check_doc(const json_t *doc, int only, struct nl_diag *d)
{
	const json_t *wls = json_object_get(doc, "workloads");
	const char *cmd = cli_jstr(doc, "command");

	if (!json_is_object(doc))
		return nl_fail(d, -NL_E_FORMAT, "not a JSON object");
	if (strcmp(cmd, "bench"))
		return nl_fail(d, -NL_E_FORMAT, "not a noplab bench result (%s%s%s): only bench "
			       "results have charts", cmd[0] ? "command '" : "no \"command\"", cmd,
			       cmd[0] ? "'" : "");
	if (!json_array_size(wls))
		return nl_fail(d, -NL_E_FORMAT, "no workloads in this bench result");
	for (size_t i = 0; i < json_array_size(wls); i++)
		if (!json_is_array(json_object_get(json_array_get(wls, i), "variants")))
			return nl_fail(d, -NL_E_FORMAT, "workload %zu has no variants array", i);
	if (only >= 0 && (size_t)only >= json_array_size(wls))
		return nl_fail(d, -EINVAL, "no workload %d", only);
	return 0;
}

void cli_plot_free(struct cli_plot *p)
{
	free(p->labels);
	free(p->svg);
	memset(p, 0, sizeof(*p));
}

void cli_plot_release(void)
{
	/* cairo's and fontconfig's caches live as long as the process otherwise */
	cairo_debug_reset_static_data();
	FcFini();
}

int cli_plot_draw(const json_t *doc, int only, const char *format, const char *path,
		  struct cli_plot *out, struct nl_diag *d)
{
	enum { SVG, PNG, PDF } fmt;
	struct pc p = { 0 };
	struct cli_membuf m = { 0 }, svg = { 0 };
	cairo_surface_t *s;
	FILE *f = NULL;
	double width, height, h2;
	cairo_status_t st;
	int err;

	memset(out, 0, sizeof(*out));
	if (!strcmp(format, "svg"))
		fmt = SVG;
	else if (!strcmp(format, "png"))
		fmt = PNG;
	else if (!strcmp(format, "pdf"))
		fmt = PDF;
	else
		return nl_fail(d, -NL_E_USAGE, "unknown picture format '%s' (svg, png or pdf)", format);
	if (!path && fmt != SVG)
		return nl_fail(d, -EINVAL, "only SVG is drawn into memory");
	err = check_doc(doc, only, d);
	if (err)
		return err;
	p.threshold = jnum_or(json_object_get(doc, "method"), "threshold_pct", 1);

	/* pass 1: the height, on a surface without bounds */
	s = cairo_recording_surface_create(CAIRO_CONTENT_COLOR_ALPHA, NULL);
	p.cr = cairo_create(s);
	p.w = needed_width(doc, only);
	height = draw_page(&p, doc, only);
	err = cairo_status(p.cr) ? -EIO : 0;
	cairo_destroy(p.cr);
	cairo_surface_destroy(s);
	if (err)
		return nl_fail(d, err, "cairo: measuring the chart failed");
	width = p.w;

	/* pass 2: the picture */
	if (path) {
		f = fopen(path, "wb");
		if (!f)
			return nl_fail_errno(d, -errno, "cannot write %s", path);
	}
	switch (fmt) {
	case SVG:
		s = cairo_svg_surface_create_for_stream(cli_membuf_write, &m, width, height);
		/* browsers read the default "pt" as 4/3 px */
		cairo_svg_surface_set_document_unit(s, CAIRO_SVG_UNIT_PX);
		break;
	case PNG:
		s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)width, (int)height);
		break;
	default:
		s = cairo_pdf_surface_create_for_stream(file_write, f, width, height);
		cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_TITLE, "noplab bench");
		cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "noplab");
		break;
	}
	p.cr = cairo_create(s);
	p.record = true;
	h2 = draw_page(&p, doc, only);
	st = cairo_status(p.cr);
	err = p.err;
	cairo_destroy(p.cr);
	if (!st && fmt == PNG)
		st = cairo_surface_write_to_png_stream(s, file_write, f);
	cairo_surface_finish(s);
	if (!st)
		st = cairo_surface_status(s);
	cairo_surface_destroy(s);
	if (!err && st)
		err = -EIO;
	if (!err && m.err)
		err = m.err;
	if (!err && h2 != height)
		nl_log(d, NL_LOG_WARN, "plot: the chart's height was miscounted (%.0f, drew %.0f)",
		       height, h2);
	if (!err && fmt == SVG) {
		err = svg_with_text(&m, doc, only, p.labels, p.nr, &svg);
		if (!err && f && fwrite(svg.p, 1, svg.len, f) != svg.len)
			err = -errno ? -errno : -EIO;
	}
	free(m.p);
	if (f && (fclose(f) || err)) {
		if (!err)
			err = -errno ? -errno : -EIO;
		unlink(path);
	}
	if (err) {
		free(p.labels);
		free(svg.p);
		return err == -ENOMEM ? nl_fail_errno(d, err, "plot") :
		       nl_fail(d, err, "cannot draw %s: %s", path ? path : "the chart",
			       st ? cairo_status_to_string(st) : nl_strerror(err));
	}
	out->width = width;
	out->height = height;
	out->labels = p.labels;
	out->nr_labels = p.nr;
	out->overlaps = cli_plot_count_overlaps(p.labels, p.nr);
	for (size_t i = 0; i < p.nr; i++)
		out->clipped += p.labels[i].x0 < -0.5 || p.labels[i].y0 < -0.5 ||
				p.labels[i].x1 > width + 0.5 || p.labels[i].y1 > height + 0.5;
	if (!path) {
		out->svg = svg.p;
		out->svg_len = svg.len;
	} else {
		free(svg.p);
	}
	return 0;
}

/* The format of path from its extension, any case; NULL when it is not one we draw. */
static const char *format_of(const char *path, char *ext, size_t size)
{
	const char *dot = strrchr(path, '.');

	memset(ext, 0, size);
	if (!dot || strchr(dot, '/') || strlen(dot + 1) >= size)
		return NULL;
	for (size_t i = 0; dot[i + 1]; i++)
		ext[i] = (char)(dot[i + 1] >= 'A' && dot[i + 1] <= 'Z' ? dot[i + 1] + 32 : dot[i + 1]);
	return !strcmp(ext, "svg") || !strcmp(ext, "png") || !strcmp(ext, "pdf") ? ext : NULL;
}

int cli_plot_check_path(const char *path, struct nl_diag *d)
{
	char ext[8];

	if (!format_of(path, ext, sizeof(ext)))
		return nl_fail(d, -NL_E_USAGE, "%s: the picture's name must end in .svg, .png or .pdf",
			       path);
	return 0;
}

int cli_plot_bench(const json_t *bench_doc, const char *path, struct nl_diag *d)
{
	struct cli_plot pl;
	char ext[8];
	int err;

	if (!format_of(path, ext, sizeof(ext)))
		return cli_plot_check_path(path, d);
	err = cli_plot_draw(bench_doc, -1, ext, path, &pl, d);
	if (!err && (pl.overlaps || pl.clipped))
		nl_log(d, NL_LOG_WARN, "plot: %u overlapping and %u clipped labels in %s", pl.overlaps,
		       pl.clipped, path);
	cli_plot_free(&pl);
	cli_plot_release();
	return err;
}
