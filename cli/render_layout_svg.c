// SPDX-License-Identifier: MIT
/*
 * The address map of `noplab layout --svg`, drawn with cairo's SVG surface.
 *
 * A 6 KiB entry text next to 14 MiB of .text cannot share one linear
 * scale, so the axis is piecewise: every region boundary starts a piece,
 * each piece is linear inside and gets a width that grows with the log of
 * its length; pieces squeezed far below the finest scale carry a cut mark
 * and their true length.  Below the overview, the focus region's first and
 * last 4 KiB page (64-byte line grid) and first and last cache line (byte
 * grid, with the bytes when known) show what it shares them with.
 *
 * cairo writes text as glyph outlines, so the region names are also put in
 * the SVG's <title>/<desc>, where tools (and the tests) can read them.
 */
#include <cairo-svg.h>
#include <cairo.h>
#include <errno.h>
#include <fontconfig/fontconfig.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cairo_mem.h"
#include "cli.h"
#include "noplab/layout.h"

#define W 1400.0
#define MARGIN 40.0
#define ROW_H 24.0
#define ROW_GAP 8.0
#define MAX_PIECES 512
#define MAX_LANES 4

struct rgb {
	double r, g, b;
};

static const struct rgb C_TEXT = { 0.13, 0.13, 0.13 };
static const struct rgb C_MUTED = { 0.45, 0.45, 0.45 };
static const struct rgb C_SECTION = { 0.85, 0.85, 0.85 };
static const struct rgb C_FOCUS = { 0.90, 0.38, 0.00 };
static const struct rgb C_FOCUS_FN = { 0.99, 0.72, 0.39 };
static const struct rgb C_FOREIGN = { 0.40, 0.40, 0.45 };
static const struct rgb C_GRID = { 0.70, 0.70, 0.70 };
static const struct rgb C_FILL = { 0.95, 0.95, 0.95 };
static const struct rgb palette[] = {
	{ 0.26, 0.45, 0.71 }, { 0.40, 0.65, 0.35 }, { 0.55, 0.40, 0.70 },
	{ 0.20, 0.60, 0.65 }, { 0.70, 0.55, 0.20 }, { 0.60, 0.30, 0.40 },
};

struct piece {
	uint64_t a0, a1;	/* [a0, a1) */
	double x0, x1;
	bool gap;		/* no region covers it */
	bool cut;		/* drawn far below the finest scale: marked */
};

struct axis {
	struct piece p[MAX_PIECES];
	size_t n;
};

static void set(cairo_t *cr, struct rgb c)
{
	cairo_set_source_rgb(cr, c.r, c.g, c.b);
}

static void font(cairo_t *cr, double size, bool bold)
{
	cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
			       bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, size);
}

static double text_w(cairo_t *cr, const char *s)
{
	cairo_text_extents_t e;

	cairo_text_extents(cr, s, &e);
	return e.x_advance;
}

/* align: 0 left, 0.5 centre, 1 right */
static void text_at(cairo_t *cr, double x, double y, double align, const char *s)
{
	cairo_move_to(cr, x - align * text_w(cr, s), y);
	cairo_show_text(cr, s);
}

static void human(uint64_t v, char *buf, size_t size)
{
	if (v >= (1ull << 20))
		snprintf(buf, size, "%.1f MiB", (double)v / (1 << 20));
	else if (v >= 4096)
		snprintf(buf, size, "%.1f KiB", (double)v / 1024);
	else
		snprintf(buf, size, "%" PRIu64 " B", v);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool covered(const struct nl_layout *lay, uint64_t a0, uint64_t a1)
{
	for (size_t i = 0; i < lay->nr_regions; i++)
		if (lay->regions[i].start <= a0 && a1 <= lay->regions[i].end)
			return true;
	return false;
}

/* Pieces between consecutive region boundaries, widths by log of length. */
static void build_axis(const struct nl_layout *lay, double x0, double x1, struct axis *ax)
{
	uint64_t pts[2 * MAX_PIECES];
	size_t np = 0;
	double total = 0, wts[MAX_PIECES], min_bpp = INFINITY;

	for (size_t i = 0; i < lay->nr_regions && np + 2 <= 2 * MAX_PIECES; i++) {
		pts[np++] = lay->regions[i].start;
		pts[np++] = lay->regions[i].end;
	}
	qsort(pts, np, sizeof(*pts), cmp_u64);
	ax->n = 0;
	for (size_t i = 0; i + 1 < np && ax->n < MAX_PIECES; i++) {
		if (pts[i + 1] == pts[i])
			continue;
		struct piece *p = &ax->p[ax->n];

		p->a0 = pts[i];
		p->a1 = pts[i + 1];
		p->gap = !covered(lay, p->a0, p->a1);
		/* 64 B -> 2, 4 KiB -> 7, 2 MiB -> 16: small regions stay visible */
		wts[ax->n] = p->gap ? 3.0 : 1.0 + log2(1.0 + (double)(p->a1 - p->a0) / 64.0);
		total += wts[ax->n];
		ax->n++;
	}
	double x = x0;

	for (size_t i = 0; i < ax->n; i++) {
		struct piece *p = &ax->p[i];

		p->x0 = x;
		x += (x1 - x0) * wts[i] / total;
		p->x1 = x;
		if (!p->gap) {
			double bpp = (double)(p->a1 - p->a0) / (p->x1 - p->x0);

			if (bpp < min_bpp)
				min_bpp = bpp;
		}
	}
	for (size_t i = 0; i < ax->n; i++) {
		struct piece *p = &ax->p[i];
		double bpp = (double)(p->a1 - p->a0) / (p->x1 - p->x0);

		p->cut = p->gap || (p->a1 - p->a0 >= 65536 && bpp > 16 * min_bpp);
	}
}

static double ax_x(const struct axis *ax, uint64_t a)
{
	if (!ax->n)
		return MARGIN;
	if (a <= ax->p[0].a0)
		return ax->p[0].x0;
	for (size_t i = 0; i < ax->n; i++) {
		const struct piece *p = &ax->p[i];

		if (a < p->a1)
			return p->x0 + (p->x1 - p->x0) * (double)(a - p->a0) / (double)(p->a1 - p->a0);
	}
	return ax->p[ax->n - 1].x1;
}

static const struct nl_region *focus_region(const struct nl_layout *lay)
{
	const struct nl_region *r = nl_layout_find_region(lay, "entry_text");

	if (r && !r->empty)
		return r;
	for (size_t i = 0; i < lay->nr_regions; i++)
		if (lay->regions[i].kind == NL_REGION_RANGE && !lay->regions[i].empty &&
		    lay->regions[i].parent >= 0)
			return &lay->regions[i];
	for (size_t i = 0; i < lay->nr_regions; i++)
		if (!lay->regions[i].empty)
			return &lay->regions[i];
	return NULL;
}

static int row_of(const struct nl_layout *lay, const struct nl_region *r)
{
	int d = 0;

	for (int p = r->parent; p >= 0 && d < 8; p = lay->regions[p].parent)
		d++;
	return d;
}

static struct rgb band_color(const struct nl_layout *lay, const struct nl_region *r,
			     const struct nl_region *focus, size_t i)
{
	if (r == focus)
		return C_FOCUS;
	if (r->kind == NL_REGION_SECTION && row_of(lay, r) == 0)
		return C_SECTION;
	return palette[i % 6];
}

static int overview_rows(const struct nl_layout *lay)
{
	int rows = 1;

	for (size_t i = 0; i < lay->nr_regions; i++)
		if (row_of(lay, &lay->regions[i]) + 1 > rows)
			rows = row_of(lay, &lay->regions[i]) + 1;
	return rows;
}

/* A zigzag across [y0, y1] at x: the mark of a cut run. */
static void cut_mark(cairo_t *cr, double x, double y0, double y1)
{
	cairo_save(cr);
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_rectangle(cr, x - 4, y0 - 2, 8, y1 - y0 + 4);
	cairo_fill(cr);
	set(cr, C_TEXT);
	cairo_set_line_width(cr, 1.2);
	for (int side = -1; side <= 1; side += 2) {
		double xs = x + side * 4;

		cairo_move_to(cr, xs, y0 - 2);
		for (double y = y0; y <= y1 + 2; y += 6)
			cairo_line_to(cr, xs + ((int)((y - y0) / 6) % 2 ? 2.5 : -2.5), y);
		cairo_stroke(cr);
	}
	cairo_restore(cr);
}

struct lanes {
	double end[MAX_LANES];
};

/* Place a label of width w near x in the first lane where it fits. */
static int lane_for(struct lanes *l, double x, double w)
{
	for (int i = 0; i < MAX_LANES; i++)
		if (x - w / 2 > l->end[i] + 6) {
			l->end[i] = x + w / 2;
			return i;
		}
	return -1;
}

static void draw_overview(cairo_t *cr, const struct nl_layout *lay, const struct axis *ax,
			  const struct nl_region *focus, double y0, double *y_end)
{
	int rows = overview_rows(lay);
	char buf[96];
	struct lanes lanes = { { -1e9, -1e9, -1e9, -1e9 } };
	const struct nl_layout_input *in = lay->in;
	double band_bottom = y0 + rows * (ROW_H + ROW_GAP);

	/* bands, outermost first */
	for (size_t i = 0; i < lay->nr_regions; i++) {
		const struct nl_region *r = &lay->regions[i];
		int row = row_of(lay, r);
		double y = y0 + row * (ROW_H + ROW_GAP);
		double xa = ax_x(ax, r->start), xb = ax_x(ax, r->end);

		set(cr, band_color(lay, r, focus, i));
		if (r->empty) {
			cairo_set_line_width(cr, 2);
			cairo_move_to(cr, xa, y - 2);
			cairo_line_to(cr, xa, y + ROW_H + 2);
			cairo_stroke(cr);
			continue;
		}
		if (xb - xa < 2)
			xb = xa + 2;
		cairo_rectangle(cr, xa, y, xb - xa, ROW_H);
		cairo_fill(cr);
	}
	double lanes_bottom = band_bottom + 14 + MAX_LANES * 15;

	/* grid where the scale allows: cache lines, 4 KiB pages, 2 MiB pages */
	for (size_t i = 0; i < ax->n; i++) {
		const struct piece *p = &ax->p[i];
		double ppb = (p->x1 - p->x0) / (double)(p->a1 - p->a0);
		static const struct {
			uint64_t unit;
			double min_px, alpha;
		} grids[] = { { 64, 4, 0.35 }, { 4096, 5, 0.6 }, { 2u << 20, 3, 1.0 } };

		if (p->cut)
			continue;
		for (size_t g = 0; g < 3; g++) {
			uint64_t u = grids[g].unit;

			if (ppb * (double)u < grids[g].min_px)
				continue;
			cairo_set_source_rgba(cr, C_GRID.r, C_GRID.g, C_GRID.b, grids[g].alpha);
			cairo_set_line_width(cr, g == 2 ? 1.2 : 0.5);
			for (uint64_t a = (p->a0 + u - 1) & ~(u - 1); a < p->a1; a += u) {
				double x = ax_x(ax, a);

				cairo_move_to(cr, x, y0 - 4);
				cairo_line_to(cr, x, band_bottom - ROW_GAP);
				cairo_stroke(cr);
			}
		}
	}
	/* cut marks and their true lengths */
	font(cr, 10, false);
	for (size_t i = 0; i < ax->n; i++) {
		const struct piece *p = &ax->p[i];
		double xm = (p->x0 + p->x1) / 2;
		char len[32];

		if (!p->cut)
			continue;
		cut_mark(cr, xm, y0, band_bottom - ROW_GAP);
		human(p->a1 - p->a0, len, sizeof(len));
		snprintf(buf, sizeof(buf), p->gap ? "%s gap" : "%s cut", len);
		set(cr, C_MUTED);
		text_at(cr, xm, y0 - 6, 0.5, buf);
	}
	/* labels last, over grid and cut marks: inside the band when it fits */
	for (size_t i = 0; i < lay->nr_regions; i++) {
		const struct nl_region *r = &lay->regions[i];
		int row = row_of(lay, r);
		double y = y0 + row * (ROW_H + ROW_GAP);
		double xa = ax_x(ax, r->start), xb = ax_x(ax, r->end);
		struct rgb c = band_color(lay, r, focus, i);

		if (r == focus && !r->empty) {
			set(cr, C_TEXT);
			cairo_set_line_width(cr, 2);
			cairo_rectangle(cr, xa, y, xb - xa < 2 ? 2 : xb - xa, ROW_H);
			cairo_stroke(cr);
		}
		font(cr, 11, r == focus);
		snprintf(buf, sizeof(buf), "%s%s", r->name, r->empty ? " (empty)" : "");
		double tw = text_w(cr, buf);

		if (!r->empty && tw + 8 < xb - xa) {
			bool light = r->kind == NL_REGION_SECTION && row == 0 && r != focus;
			double xm = (xa + xb) / 2;

			set(cr, c);
			cairo_rectangle(cr, xm - tw / 2 - 3, y + 3, tw + 6, ROW_H - 6);
			cairo_fill(cr);
			set(cr, light ? C_TEXT : (struct rgb){ 1, 1, 1 });
			text_at(cr, xm, y + ROW_H / 2 + 4, 0.5, buf);
			continue;
		}
		/* no room inside: a label in a lane below the bands, with a leader */
		double xm = r->empty ? xa : (xa + xb) / 2;
		int lane = lane_for(&lanes, xm, tw);

		if (lane < 0)
			continue;	/* every lane is taken here; the <desc> still names it */
		double ly = band_bottom + 14 + lane * 15;

		set(cr, C_MUTED);
		cairo_set_line_width(cr, 0.6);
		cairo_move_to(cr, xm, y + ROW_H);
		cairo_line_to(cr, xm, ly - 10);
		cairo_stroke(cr);
		set(cr, r == focus ? C_FOCUS : C_TEXT);
		text_at(cr, xm, ly, 0.5, buf);
	}
	/* axis: every boundary, as an offset from the first (or from _text) */
	double ay = lanes_bottom + 4;
	uint64_t base = in->has_text_base ? in->text_base : ax->n ? ax->p[0].a0 : 0;
	double last_x = -1e9;

	set(cr, C_TEXT);
	cairo_set_line_width(cr, 1);
	cairo_move_to(cr, ax->n ? ax->p[0].x0 : MARGIN, ay);
	cairo_line_to(cr, ax->n ? ax->p[ax->n - 1].x1 : W - MARGIN, ay);
	cairo_stroke(cr);
	font(cr, 9, false);
	for (size_t i = 0; i <= ax->n && ax->n; i++) {
		uint64_t a = i < ax->n ? ax->p[i].a0 : ax->p[ax->n - 1].a1;
		double x = i < ax->n ? ax->p[i].x0 : ax->p[ax->n - 1].x1;

		cairo_move_to(cr, x, ay);
		cairo_line_to(cr, x, ay + 4);
		cairo_stroke(cr);
		if (x - last_x < 12)
			continue;	/* rotated labels still need a little room */
		last_x = x;
		if (a >= base)
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, in->has_text_base ? "_text" : "",
				 a - base);
		else
			snprintf(buf, sizeof(buf), "-0x%" PRIx64, base - a);
		/*
		 * Slanted below the axis, ending at the tick (parallel labels never
		 * cross); only where that would leave the picture, starting at it.
		 */
		double tw = text_w(cr, buf);

		cairo_save(cr);
		if (x - 3 - tw * M_SQRT1_2 < 2) {
			cairo_move_to(cr, x + 3, ay + 10);
			cairo_rotate(cr, M_PI / 4);
		} else {
			cairo_move_to(cr, x - 3 - tw * M_SQRT1_2, ay + 6 + tw * M_SQRT1_2);
			cairo_rotate(cr, -M_PI / 4);
		}
		cairo_show_text(cr, buf);
		cairo_restore(cr);
	}
	*y_end = ay + 90;
}

/* One zoomed strip: [lo, hi) over [x0, x1], grid every `grid` bytes. */
static void draw_zoom(cairo_t *cr, const struct nl_layout *lay, const struct nl_region *r,
		      uint64_t lo, uint64_t hi, double x0, double x1, double y, uint64_t grid,
		      const char *title, bool bytes)
{
	const double h = 26;
	double ppb = (x1 - x0) / (double)(hi - lo);
	char buf[128];
	struct lanes lanes = { { -1e9, -1e9, -1e9, -1e9 } };

#define X(a) (x0 + ppb * (double)((a) - lo))
	font(cr, 11, true);
	set(cr, C_TEXT);
	text_at(cr, x0, y - 8, 0, title);
	/* background: no symbol (fill, or code nobody named) */
	set(cr, C_FILL);
	cairo_rectangle(cr, x0, y, x1 - x0, h);
	cairo_fill(cr);
	/* code symbols overlapping the strip */
	for (size_t i = 0; i < lay->nr_code; i++) {
		const struct nl_code_ext *e = &lay->code[i];
		uint64_t a = e->start > lo ? e->start : lo, b = e->end < hi ? e->end : hi;
		bool own = e->start >= r->start && e->start < r->end;

		if (e->end <= lo || e->start >= hi || b <= a)
			continue;
		set(cr, own ? C_FOCUS_FN : C_FOREIGN);
		cairo_rectangle(cr, X(a), y + 3, X(b) - X(a), h - 6);
		cairo_fill(cr);
		if (!own && e->start >= lo) {
			double w;
			int lane;

			font(cr, 10, false);
			w = text_w(cr, e->sym->name);
			lane = lane_for(&lanes, X(a) + w / 2, w);
			if (lane >= 0) {
				double ly = y + h + 14 + lane * 13;

				set(cr, C_MUTED);
				cairo_set_line_width(cr, 0.6);
				cairo_move_to(cr, X(a), y + h);
				cairo_line_to(cr, X(a), ly - 9);
				cairo_stroke(cr);
				set(cr, C_TEXT);
				text_at(cr, X(a), ly, 0, e->sym->name);
			}
		}
	}
	/* the region itself, outlined over everything */
	uint64_t ra = r->start > lo ? r->start : lo, rb = r->end < hi ? r->end : hi;

	if (rb > ra) {
		cairo_set_source_rgba(cr, C_FOCUS.r, C_FOCUS.g, C_FOCUS.b, 0.35);
		cairo_rectangle(cr, X(ra), y, X(rb) - X(ra), h);
		cairo_fill(cr);
		set(cr, C_FOCUS);
		cairo_set_line_width(cr, 2);
		cairo_rectangle(cr, X(ra), y, X(rb) - X(ra), h);
		cairo_stroke(cr);
	}
	/* grid and offsets */
	set(cr, C_GRID);
	cairo_set_line_width(cr, 0.5);
	for (uint64_t a = lo; a <= hi; a += grid) {
		cairo_move_to(cr, X(a), y);
		cairo_line_to(cr, X(a), y + h);
		cairo_stroke(cr);
	}
	font(cr, 8, false);
	set(cr, C_MUTED);
	for (uint64_t a = lo; a < hi; a += grid * 8) {
		snprintf(buf, sizeof(buf), "+0x%" PRIx64, a - lo);
		text_at(cr, X(a) + 1, y - 1, 0, buf);
	}
	if (bytes) {
		uint64_t avail;
		const uint8_t *p = nl_layout_bytes_at(lay->in, lo, &avail);

		if (p) {
			uint64_t end = avail < hi - lo ? lo + avail : hi;	/* the section may end */

			font(cr, 8, false);
			for (uint64_t a = lo; a < end; a++) {
				snprintf(buf, sizeof(buf), "%02x", p[a - lo]);
				set(cr, C_TEXT);
				text_at(cr, X(a) + ppb / 2, y + h / 2 + 3, 0.5, buf);
			}
		}
	}
	/* the region's edges, with their addresses */
	font(cr, 10, true);
	set(cr, C_FOCUS);
	if (r->start >= lo && r->start <= hi) {
		snprintf(buf, sizeof(buf), "%s 0x%" PRIx64, r->start_sym ? r->start_sym : r->name,
			 r->start);
		text_at(cr, X(r->start), y + h + 62, X(r->start) > (x0 + x1) / 2 ? 1 : 0, buf);
	}
	if (r->end >= lo && r->end <= hi) {
		snprintf(buf, sizeof(buf), "%s 0x%" PRIx64, r->end_sym ? r->end_sym : "end", r->end);
		text_at(cr, X(r->end), y + h + 76, X(r->end) > (x0 + x1) / 2 ? 1 : 0, buf);
	}
#undef X
}

static void draw_legend(cairo_t *cr, double y)
{
	static const struct {
		const struct rgb *c;
		const char *what;
	} items[] = {
		{ &C_FOCUS, "the region (entry_text when present)" },
		{ &C_FOCUS_FN, "its functions" },
		{ &C_FOREIGN, "foreign code (other symbols)" },
		{ &C_FILL, "no symbol: fill or padding" },
		{ &C_SECTION, "section" },
		{ &palette[0], "other regions" },
	};
	double x = MARGIN;

	font(cr, 10, false);
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		set(cr, *items[i].c);
		cairo_rectangle(cr, x, y - 9, 12, 12);
		cairo_fill(cr);
		set(cr, C_MUTED);
		cairo_set_line_width(cr, 0.5);
		cairo_rectangle(cr, x, y - 9, 12, 12);
		cairo_stroke(cr);
		set(cr, C_TEXT);
		text_at(cr, x + 16, y + 1, 0, items[i].what);
		x += 16 + text_w(cr, items[i].what) + 22;
	}
	cut_mark(cr, x + 6, y - 10, y + 3);
	set(cr, C_TEXT);
	text_at(cr, x + 16, y + 1, 0, "cut: a long run drawn short");
}

/* ---- the SVG document ---- */

static void xml_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* The SVG from cairo, with <title> and <desc> naming the file and its regions. */
static int write_svg(const struct cli_membuf *m, const struct nl_layout *lay, const char *title,
		     const char *path, struct nl_diag *d)
{
	const char *open = strstr(m->p, "<svg");
	const char *gt = open ? strchr(open, '>') : NULL;
	FILE *f;

	if (!gt)
		return nl_fail(d, -EIO, "cairo wrote no <svg> element");
	f = fopen(path, "w");
	if (!f)
		return nl_fail_errno(d, -errno, "cannot write");
	fwrite(m->p, 1, (size_t)(gt + 1 - m->p), f);
	fputs("\n<title>noplab layout: ", f);
	xml_escape(f, title);
	fputs("</title>\n<desc>", f);
	for (size_t i = 0; i < lay->nr_regions; i++) {
		const struct nl_region *r = &lay->regions[i];
		char line[160];

		snprintf(line, sizeof(line), "%s%s %s 0x%" PRIx64 "-0x%" PRIx64 " (%" PRIu64 " bytes)",
			 i ? "; " : "", r->kind == NL_REGION_SECTION ? "section" : "region", r->name,
			 r->start, r->end, r->size);
		xml_escape(f, line);
	}
	fputs("</desc>", f);
	fputs(gt + 1, f);
	if (ferror(f) | fclose(f))
		return nl_fail(d, -EIO, "write failed");
	return 0;
}

/*
 * The height draw_all() will use, known before drawing (cairo's SVG surface
 * is sized at creation): the same arithmetic as the drawing code.
 */
static double picture_height(const struct nl_layout *lay, const struct nl_region *focus)
{
	double y = 86 + overview_rows(lay) * (ROW_H + ROW_GAP) + 14 + MAX_LANES * 15 + 4 + 90;

	if (focus) {
		uint64_t l0 = focus->start & ~(uint64_t)(NL_LINE - 1);
		uint64_t l1 = (focus->end - 1) & ~(uint64_t)(NL_LINE - 1);

		y += 20 + 130 + 120 + (l1 != l0 ? 120 : 0);
	}
	return y + 30;
}

/* The whole picture on cr; returns the height it used. */
static double draw_all(cairo_t *cr, const struct nl_layout *lay, const struct axis *ax,
		       const struct nl_region *focus, const char *title, double height)
{
	char buf[256];
	double y;

	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_rectangle(cr, 0, 0, W, height);
	cairo_fill(cr);
	font(cr, 17, true);
	set(cr, C_TEXT);
	snprintf(buf, sizeof(buf), "noplab layout: %s", title);
	text_at(cr, MARGIN, 30, 0, buf);
	font(cr, 11, false);
	set(cr, C_MUTED);
	if (ax->n) {
		char span[32];

		human(ax->p[ax->n - 1].a1 - ax->p[0].a0, span, sizeof(span));
		snprintf(buf, sizeof(buf), "%zu regions over 0x%" PRIx64 "-0x%" PRIx64 " (%s). Each piece "
			 "between region boundaries is linear; widths grow with the log of the length; "
			 "long runs are cut.", lay->nr_regions, ax->p[0].a0, ax->p[ax->n - 1].a1, span);
	} else {
		snprintf(buf, sizeof(buf), "no text regions");
	}
	text_at(cr, MARGIN, 50, 0, buf);

	draw_overview(cr, lay, ax, focus, 86, &y);
	if (focus) {
		uint64_t p0 = focus->start & ~(uint64_t)(NL_PAGE_4K - 1);
		uint64_t p1 = (focus->end - 1) & ~(uint64_t)(NL_PAGE_4K - 1);
		uint64_t l0 = focus->start & ~(uint64_t)(NL_LINE - 1);
		uint64_t l1 = (focus->end - 1) & ~(uint64_t)(NL_LINE - 1);
		double mid = W / 2;
		char t[160];

		y += 20;
		if (p0 == p1) {
			snprintf(t, sizeof(t), "%s: its 4 KiB page 0x%" PRIx64 " (64-byte lines)",
				 focus->name, p0);
			draw_zoom(cr, lay, focus, p0, p0 + NL_PAGE_4K, MARGIN, W - MARGIN, y, 64, t,
				  false);
		} else {
			snprintf(t, sizeof(t), "%s: first 4 KiB page 0x%" PRIx64 " (64-byte lines)",
				 focus->name, p0);
			draw_zoom(cr, lay, focus, p0, p0 + NL_PAGE_4K, MARGIN, mid - 15, y, 64, t, false);
			snprintf(t, sizeof(t), "last 4 KiB page 0x%" PRIx64, p1);
			draw_zoom(cr, lay, focus, p1, p1 + NL_PAGE_4K, mid + 15, W - MARGIN, y, 64, t,
				  false);
		}
		y += 130;
		/* full width: a byte gets ~20 px, room for its hex */
		snprintf(t, sizeof(t), "%s: first cache line 0x%" PRIx64 " (one cell per byte)",
			 focus->name, l0);
		draw_zoom(cr, lay, focus, l0, l0 + NL_LINE, MARGIN, W - MARGIN, y, 1, t, true);
		y += 120;
		if (l1 != l0) {
			snprintf(t, sizeof(t), "%s: last cache line 0x%" PRIx64, focus->name, l1);
			draw_zoom(cr, lay, focus, l1, l1 + NL_LINE, MARGIN, W - MARGIN, y, 1, t, true);
			y += 120;
		}
	}
	draw_legend(cr, y + 10);
	return y + 30;
}

int cli_render_layout_svg(const struct nl_layout *lay, const char *path, const char *title,
			  struct nl_diag *d)
{
	const struct nl_region *focus = focus_region(lay);
	struct axis *ax = calloc(1, sizeof(*ax));
	struct cli_membuf m = { 0 };
	cairo_surface_t *s;
	cairo_t *cr;
	double height;
	int ret;

	if (!ax)
		return nl_fail_errno(d, -ENOMEM, "svg");
	build_axis(lay, MARGIN, W - MARGIN, ax);
	height = picture_height(lay, focus);

	s = cairo_svg_surface_create_for_stream(cli_membuf_write, &m, W, height);
	/* browsers read the default "pt" as 4/3 px: the map would not fit its window */
	cairo_svg_surface_set_document_unit(s, CAIRO_SVG_UNIT_PX);
	cr = cairo_create(s);
	if (draw_all(cr, lay, ax, focus, title, height) != height)
		nl_log(d, NL_LOG_WARN, "svg: the picture's height was miscounted");
	cairo_destroy(cr);
	cairo_surface_finish(s);
	ret = cairo_surface_status(s) != CAIRO_STATUS_SUCCESS ? -EIO : m.err;
	cairo_surface_destroy(s);
	/*
	 * cairo and fontconfig keep font caches for the life of the process; this
	 * is the only drawing a run does, so hand them back (LeakSanitizer
	 * counts them otherwise).
	 */
	cairo_debug_reset_static_data();
	FcFini();
	free(ax);
	if (ret || !m.p) {
		free(m.p);
		return nl_fail(d, ret ? ret : -EIO, "cairo could not draw the SVG");
	}
	ret = write_svg(&m, lay, title, path, d);
	free(m.p);
	return ret;
}
