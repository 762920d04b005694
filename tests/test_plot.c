// SPDX-License-Identifier: MIT
/*
 * Charts of bench results (cli/plot_bench.c, linked in directly): every kind
 * drawn from fixed result files (tests/fixtures/plot/, trimmed real runs) as
 * SVG, PNG and PDF.  The SVG must parse as XML (xmllint) and say its labels;
 * the PNG must have the size the drawing reported, nothing may touch its
 * edges, and the verdict colours must be there; no two labels may overlap
 * and none may leave the canvas (the renderer records every text's ink box).
 */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nltest.h"
#include "plot.h"
#include "test_plot_png.h"

static char *dir;

static json_t *fixture(const char *name)
{
	const char *src = getenv("NOPLAB_SRC");
	char path[1024];
	json_error_t err;
	json_t *doc;

	snprintf(path, sizeof(path), "%s/tests/fixtures/plot/%s", src ? src : ".", name);
	if (!strcmp(name, "stat.json"))
		snprintf(path, sizeof(path), "%s/tests/fixtures/report/stat.json", src ? src : ".");
	doc = json_load_file(path, 0, &err);
	if (!doc)
		fail_msg("%s: %s (line %d)", path, err.text, err.line);
	return doc;
}

static char *slurp_n(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	long n;
	char *s;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = malloc((size_t)n + 1);
	if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	if (s)
		s[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return s;
}

static char *slurp(const char *path)
{
	return slurp_n(path, NULL);
}

static bool has_label(const struct cli_plot *pl, const char *want)
{
	for (size_t i = 0; i < pl->nr_labels; i++)
		if (strstr(pl->labels[i].text, want))
			return true;
	return false;
}

/* the first overlapping pair, for the failure message */
static void first_overlap(const struct cli_plot *pl, char *buf, size_t size)
{
	snprintf(buf, size, "?");
	for (size_t i = 0; i < pl->nr_labels; i++)
		for (size_t j = i + 1; j < pl->nr_labels; j++)
			if (cli_plot_count_overlaps((struct cli_plot_label[]){ pl->labels[i],
									 pl->labels[j] }, 2)) {
				snprintf(buf, size, "'%s' and '%s'", pl->labels[i].text,
					 pl->labels[j].text);
				return;
			}
}

static void xml_escape(const char *s, char *out, size_t size)
{
	size_t o = 0;

	for (; *s && o + 7 < size; s++) {
		const char *r = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;" :
				*s == '"' ? "&quot;" : NULL;

		if (r)
			o += (size_t)sprintf(out + o, "%s", r);
		else
			out[o++] = *s;
	}
	out[o] = '\0';
}

struct row {
	int line;
	const char *fixture;
	const char *labels[14];		/* drawn somewhere on the chart */
	const char *absent[4];		/* never drawn */
	bool orange, blue;		/* slower bars, no-difference bars */
};

static const struct row rows[] = {
	{ SRC_LINE, "calls.json",
	  { "calls-256", "calls-4096", "cycles/call (TSC)", "p6:5", "under 1% threshold", "single:5",
	    "0f 1f 44 00 00", "call to a stub", "baseline", "not significant", "slower",
	    "fits the 32 KiB L1i", "95% confidence interval of the mean", "[1] generic:5 is not" },
	  { "not measured", "nan" }, true, true },
	{ SRC_LINE, "calls-b.json",
	  { "calls-256", "calls-4096", "none", "no entry NOP", "p < 0.001", "not significant",
	    "k8:atomic5", "66 66 66 66 90" },
	  { "not measured" }, true, true },
	{ SRC_LINE, "sled.json",
	  { "sled-2KiB", "sled-64KiB", "cycles/NOP (TSC)", "66 66 90 66 90", "slower", "baseline",
	    "a loop over 2048 bytes" },
	  { "not measured" }, true, true },
	{ SRC_LINE, "sweep.json",
	  { "sweep-128", "16-byte boundary", "32-byte boundary", "offset of the function entry",
	    "p6:5 (5 bytes)", "k8:atomic5 (5 bytes)", "63", "cycles/call (TSC)",
	    "baseline (p6:5+0)", "crosses a 16-byte boundary", "64-byte (cache line) boundary" },
	  { "not measured" }, false, false },
	{ SRC_LINE, "layout.json",
	  { "layout-128", "Time", "packed", "spread", "hot code together", "+4096 B cold each",
	    "L1i misses", "Not measured", "no hardware PMU" },
	  { "misses/1000", "0 misses" }, false, true },
	{ SRC_LINE, "layout-sim.json",
	  { "layout-1024", "L1i misses (cachegrind)", "misses/1000 calls (cachegrind)",
	    "simulated, exact", "slower", "1126" },
	  { "Not measured" }, true, true },
	{ SRC_LINE, "layout-hw.json",
	  { "cycles/call (PMU)", "L1i misses (PMU)", "iTLB misses (PMU)", "higher",
	    "not significant", "events/1000 calls (PMU)" },
	  { "Not measured" }, true, true },
	{ SRC_LINE, "hostile.json",
	  { "calls-<b>256</b>&amp;", "<script>alert(1)</script>", "k8:5<img", "</desc>" },
	  { "not measured" }, true, true },
};

static void check_png(const struct row *r, const char *path, double w, double h)
{
	struct tpng img;
	char why[128];
	size_t ink;

	if (tpng_read(path, true, &img, why, sizeof(why)))
		row_fail(r, "%s: %s", path, why);
	if (img.width != (uint32_t)w || img.height != (uint32_t)h)
		row_fail(r, "PNG is %ux%u, the drawing said %.0fx%.0f", img.width, img.height, w, h);
	/* nothing clipped at the edges: a margin of background all round */
	if (tpng_count(&img, 0, 0, img.width, 3, px_not_white) ||
	    tpng_count(&img, 0, img.height - 3, img.width, img.height, px_not_white) ||
	    tpng_count(&img, 0, 0, 3, img.height, px_not_white) ||
	    tpng_count(&img, img.width - 3, 0, img.width, img.height, px_not_white))
		row_fail(r, "%s: something is drawn on the picture's edge", path);
	ink = tpng_count(&img, 0, 0, img.width, img.height, px_not_white);
	if (ink < (size_t)img.width * img.height / 40)
		row_fail(r, "%s: nearly blank (%zu inked pixels)", path, ink);
	if (r->orange && tpng_count(&img, 0, 0, img.width, img.height, px_orange) < 200)
		row_fail(r, "%s: no orange (slower) bar", path);
	if (r->blue && tpng_count(&img, 0, 0, img.width, img.height, px_blue) < 200)
		row_fail(r, "%s: no blue (no difference) bar", path);
	tpng_free(&img);
}

static void check_svg(const struct row *r, const char *path, double w, double h)
{
	char cmd[1200], want[160], esc[400];
	char *svg, *out = NULL;
	int st;

	snprintf(cmd, sizeof(cmd), "xmllint --noout '%s' 2>&1", path);
	st = nltest_run(cmd, &out);
	if (st == 127)
		row_fail(r, "xmllint is missing (libxml2-utils; scripts/setup.sh installs it)");
	if (st)
		row_fail(r, "%s does not parse as XML: %s", path, out ? out : "");
	free(out);
	svg = slurp(path);
	if (!svg)
		row_fail(r, "cannot read %s", path);
	snprintf(want, sizeof(want), "width=\"%.0fpx\" height=\"%.0fpx\"", w, h);
	if (!strstr(svg, want))
		row_fail(r, "%s: no %s on the root", path, want);
	if (!strstr(svg, "<title>noplab bench:") || !strstr(svg, "<desc>"))
		row_fail(r, "%s: no <title>/<desc>", path);
	/* the labels are glyph outlines; the <desc> says them, escaped */
	for (size_t i = 0; i < sizeof(r->labels) / sizeof(r->labels[0]) && r->labels[i]; i++) {
		xml_escape(r->labels[i], esc, sizeof(esc));
		if (!strstr(svg, esc))
			row_fail(r, "%s: <desc> lacks '%s'", path, esc);
	}
	free(svg);
}

static void test_charts(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		const struct row *r = &rows[k];
		json_t *doc = fixture(r->fixture);
		const json_t *wls = json_object_get(doc, "workloads");
		struct cli_plot pl;
		struct nl_diag d;
		char path[1024], pair[400];
		double w, h;
		size_t len;
		char *pdf;

		nl_diag_init(&d);
		snprintf(path, sizeof(path), "%s/%s.svg", dir, r->fixture);
		if (cli_plot_draw(doc, -1, "svg", path, &pl, &d))
			row_fail(r, "svg: %s", d.msg);
		for (size_t i = 0; i < sizeof(r->labels) / sizeof(r->labels[0]) && r->labels[i]; i++)
			if (!has_label(&pl, r->labels[i]))
				row_fail(r, "no label '%s' among %zu", r->labels[i], pl.nr_labels);
		for (size_t i = 0; i < sizeof(r->absent) / sizeof(r->absent[0]) && r->absent[i]; i++)
			if (has_label(&pl, r->absent[i]))
				row_fail(r, "a label says '%s'", r->absent[i]);
		first_overlap(&pl, pair, sizeof(pair));
		if (pl.overlaps)
			row_fail(r, "%u overlapping labels, e.g. %s", pl.overlaps, pair);
		if (pl.clipped)
			row_fail(r, "%u labels outside the %.0fx%.0f canvas", pl.clipped, pl.width,
				 pl.height);
		if (pl.width < 1100 || pl.height < 300 || pl.height > 4000)
			row_fail(r, "odd size %.0fx%.0f", pl.width, pl.height);
		w = pl.width;
		h = pl.height;
		cli_plot_free(&pl);
		check_svg(r, path, w, h);

		snprintf(path, sizeof(path), "%s/%s.png", dir, r->fixture);
		if (cli_plot_draw(doc, -1, "png", path, &pl, &d))
			row_fail(r, "png: %s", d.msg);
		if (pl.width != w || pl.height != h)
			row_fail(r, "the PNG is drawn %.0fx%.0f, the SVG %.0fx%.0f", pl.width, pl.height,
				 w, h);
		cli_plot_free(&pl);
		check_png(r, path, w, h);

		snprintf(path, sizeof(path), "%s/%s.pdf", dir, r->fixture);
		if (cli_plot_draw(doc, -1, "pdf", path, &pl, &d))
			row_fail(r, "pdf: %s", d.msg);
		cli_plot_free(&pl);
		pdf = slurp_n(path, &len);
		if (!pdf || len < 1000 || strncmp(pdf, "%PDF-", 5) || !memmem(pdf, len, "%%EOF", 5))
			row_fail(r, "%s is not a PDF", path);
		free(pdf);

		/* each workload alone, into memory: what the report embeds */
		for (size_t i = 0; i < json_array_size(wls); i++) {
			if (cli_plot_draw(doc, (int)i, "svg", NULL, &pl, &d))
				row_fail(r, "workload %zu alone: %s", i, d.msg);
			if (!pl.svg || !strstr(pl.svg, "<svg") || !strstr(pl.svg, "</svg>") ||
			    pl.svg_len != strlen(pl.svg))
				row_fail(r, "workload %zu alone: no SVG in memory", i);
			first_overlap(&pl, pair, sizeof(pair));
			if (pl.overlaps || pl.clipped)
				row_fail(r, "workload %zu alone: %u overlaps (%s), %u clipped", i,
					 pl.overlaps, pair, pl.clipped);
			if (!has_label(&pl, json_string_value(json_object_get(
					json_array_get(wls, i), "name"))))
				row_fail(r, "workload %zu alone does not name itself", i);
			if (json_array_size(wls) > 1 && pl.height >= h)
				row_fail(r, "workload %zu alone is as tall as all of them", i);
			cli_plot_free(&pl);
		}
		json_decref(doc);
		cli_plot_release();
	}
}

/* Twelve variants with long names and notes: the page widens, names shrink or are cut. */
static void test_crowded(void **state)
{
	json_t *doc = fixture("calls.json"), *wls = json_object_get(doc, "workloads");
	json_t *w = json_array_get(wls, 0), *vars = json_object_get(w, "variants");
	struct cli_plot pl;
	struct nl_diag d;
	char name[128];
	bool cut = false;

	(void)state;
	json_array_remove(wls, 1);
	while (json_array_size(vars) < 12) {
		json_t *v = json_deep_copy(json_array_get(vars, json_array_size(vars) % 5 + 1));

		snprintf(name, sizeof(name), "variant-%zu-with-a-name-far-too-long-for-its-bar<&>",
			 json_array_size(vars));
		json_object_set_new(v, "name", json_string(name));
		json_object_set_new(v, "note", json_string("a note long enough to need wrapping over "
			"more than one line of the footnotes under the panel, which is what this "
			"sentence checks by going on for rather longer than any sane note would, "
			"and then some more, and more still, so that even a wide page wraps it"));
		json_array_append_new(vars, v);
	}
	nl_diag_init(&d);
	assert_int_equal(cli_plot_draw(doc, -1, "svg", NULL, &pl, &d), 0);
	assert_true(pl.width >= 24 * 2 + 88 + 12 * 118);
	assert_int_equal(pl.overlaps, 0);
	assert_int_equal(pl.clipped, 0);
	for (size_t i = 0; i < pl.nr_labels; i++)
		cut |= strstr(pl.labels[i].text, "\xe2\x80\xa6") != NULL;
	assert_true(cut);
	assert_true(has_label(&pl, "] a note long enough"));
	cli_plot_free(&pl);
	json_decref(doc);
	cli_plot_release();
}

/* A variant without the figure is "not measured", never a zero bar; null means are absent. */
static void test_missing_figures(void **state)
{
	json_t *doc = fixture("sled.json");
	json_t *vars = json_object_get(json_array_get(json_object_get(doc, "workloads"), 0),
				       "variants");
	json_t *figs = json_object_get(json_array_get(vars, 1), "figures");
	struct cli_plot pl;
	struct nl_diag d;

	(void)state;
	json_object_clear(figs);
	json_object_set_new(json_object_get(json_object_get(json_array_get(vars, 2), "figures"),
					    "cycles_per_nop"), "mean", json_null());
	nl_diag_init(&d);
	assert_int_equal(cli_plot_draw(doc, 0, "svg", NULL, &pl, &d), 0);
	assert_true(has_label(&pl, "not measured"));
	assert_int_equal(pl.overlaps, 0);
	{
		size_t n = 0;

		for (size_t i = 0; i < pl.nr_labels; i++)
			n += !strcmp(pl.labels[i].text, "not measured");
		assert_int_equal(n, 2);
	}
	cli_plot_free(&pl);
	json_decref(doc);
	cli_plot_release();
}

static void test_rejects(void **state)
{
	json_t *stat = fixture("stat.json"), *calls = fixture("calls.json");
	json_t *empty = json_pack("{s:s, s:s, s:[]}", "tool", "noplab", "command", "bench",
				  "workloads");
	struct cli_plot pl;
	struct nl_diag d;
	char path[1024];

	(void)state;
	nl_diag_init(&d);
	assert_int_equal(cli_plot_draw(stat, -1, "svg", NULL, &pl, &d), -NL_E_FORMAT);
	assert_non_null(strstr(d.msg, "'stat'"));
	assert_int_equal(cli_plot_draw(empty, -1, "svg", NULL, &pl, &d), -NL_E_FORMAT);
	assert_non_null(strstr(d.msg, "no workloads"));
	assert_true(cli_plot_draw(calls, 2, "svg", NULL, &pl, &d) < 0);
	assert_int_equal(cli_plot_draw(calls, -1, "gif", NULL, &pl, &d), -NL_E_USAGE);
	assert_true(cli_plot_draw(calls, -1, "png", NULL, &pl, &d) < 0);

	/* what bench --plot checks before it measures */
	assert_int_equal(cli_plot_check_path("out/a.PNG", &d), 0);
	assert_int_equal(cli_plot_check_path("a.pdf", &d), 0);
	assert_int_equal(cli_plot_check_path("a.svg.gz", &d), -NL_E_USAGE);
	assert_int_equal(cli_plot_check_path("pictures.svg/a", &d), -NL_E_USAGE);
	assert_int_equal(cli_plot_check_path("svg", &d), -NL_E_USAGE);

	/* cli_plot_bench: the format from the extension, any case; errors name the problem */
	snprintf(path, sizeof(path), "%s/chart.jpg", dir);
	assert_int_equal(cli_plot_bench(calls, path, &d), -NL_E_USAGE);
	assert_non_null(strstr(d.msg, ".svg, .png or .pdf"));
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/chart.SVG", dir);
	assert_int_equal(cli_plot_bench(calls, path, &d), 0);
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/no/such/dir/chart.png", dir);
	assert_int_equal(cli_plot_bench(calls, path, &d), -ENOENT);
	assert_non_null(strstr(d.msg, "cannot write"));
	snprintf(path, sizeof(path), "%s/stat.png", dir);
	assert_int_equal(cli_plot_bench(stat, path, &d), -NL_E_FORMAT);
	assert_int_equal(access(path, F_OK), -1);
	json_decref(stat);
	json_decref(calls);
	json_decref(empty);
}

static void test_overlap_counter(void **state)
{
	const struct cli_plot_label l[] = {
		{ "a", 0, 0, 10, 10 }, { "b", 5, 5, 15, 15 },	/* a and b overlap */
		{ "c", 10, 0, 20, 10 },				/* touches a, overlaps b */
		{ "d", 100, 100, 110, 110 },			/* alone */
	};

	(void)state;
	assert_int_equal(cli_plot_count_overlaps(l, 4), 2);
	assert_int_equal(cli_plot_count_overlaps(l + 2, 2), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overlap_counter),
		cmocka_unit_test(test_charts),
		cmocka_unit_test(test_crowded),
		cmocka_unit_test(test_missing_figures),
		cmocka_unit_test(test_rejects),
	};
	int ret;

	dir = nltest_tmpdir("plot");
	if (!dir)
		return 1;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	cli_plot_release();
	if (ret)
		free(dir);	/* the files of a failed run stay, to look at */
	else if (nltest_rmtree(dir))
		ret = 1;
	return ret;
}
