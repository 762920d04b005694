/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_CLI_PLOT_H
#define NOPLAB_CLI_PLOT_H

/*
 * Pictures of results: charts of a `noplab bench` document drawn with cairo
 * (cli/plot_bench.c), and the self-contained HTML report of bench and stat
 * results (cli/report_html.c).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "noplab/diag.h"

/*
 * Draw every workload of bench_doc (the document `noplab bench -o` writes)
 * into path: .svg, .png or .pdf by the extension.  Comparison workloads
 * (calls, sled) get bars per variant with 95% CIs, the baseline marked and
 * the verdict under each bar, one panel per footprint; sweep a line chart
 * against the entry offset with the 16/32/64-byte boundaries marked; layout
 * packed against spread for time and every icache/iTLB miss figure.
 * Releases cairo's and fontconfig's caches before it returns.
 */
int cli_plot_bench(const json_t *bench_doc, const char *path, struct nl_diag *d);

/* -NL_E_USAGE unless path ends in .svg, .png or .pdf: check before a long measurement. */
int cli_plot_check_path(const char *path, struct nl_diag *d);

/* A text drawn on a chart with its ink box in pixels, for the overlap and clipping checks. */
struct cli_plot_label {
	char text[256];
	double x0, y0, x1, y1;
};

struct cli_plot {
	double width, height;		/* pixels (SVG px, PNG pixels, PDF points) */
	struct cli_plot_label *labels;
	size_t nr_labels;
	unsigned overlaps;		/* pairs of labels whose ink overlaps */
	unsigned clipped;		/* labels not wholly inside the canvas */
	char *svg;			/* the SVG document, when drawn to memory */
	size_t svg_len;
};

/*
 * The drawing behind cli_plot_bench.  workload: the index in workloads[] to
 * draw alone (no page header or legend), or -1 for all with both.  format:
 * "svg", "png" or "pdf".  path NULL draws an SVG into out->svg.  Leaves the
 * font caches alone: call cli_plot_release() after the last chart.
 */
int cli_plot_draw(const json_t *bench_doc, int workload, const char *format, const char *path,
		  struct cli_plot *out, struct nl_diag *d);
void cli_plot_free(struct cli_plot *p);

/* Count the label pairs whose boxes overlap (cli_plot_draw fills overlaps with it). */
unsigned cli_plot_count_overlaps(const struct cli_plot_label *l, size_t n);

/* Hand back cairo's and fontconfig's process-wide caches (LeakSanitizer counts them). */
void cli_plot_release(void);

/* Load a noplab JSON document (an object) from path (cli/cmd_plot.c). */
int cli_load_json(const char *path, json_t **doc, struct nl_diag *d);

/* ---- the HTML report (cli/report_html.c) ---------------------------------- */

struct cli_report_input {
	const char *path;		/* as given; also what nl_results_load reads for the diff */
	json_t *doc;			/* a noplab bench or stat document */
};

struct cli_report_opts {
	const char *title;		/* NULL: "noplab report" */
	double threshold_pct;		/* diff's practical threshold */
};

/*
 * One self-contained HTML page: per input the environment, the tables and
 * (bench) the charts as data: URIs; with two or more inputs, `noplab diff`
 * of each later input against the first.  Every text from the inputs is
 * escaped.  Returns 0 or a negative code with the detail in d.
 */
int cli_report_html(FILE *f, const struct cli_report_input *in, size_t n,
		    const struct cli_report_opts *o, struct nl_diag *d);

/* "bench", "stat", or NULL when doc is neither (then why says what it is). */
const char *cli_report_kind(const json_t *doc, char *why, size_t size);

#endif
