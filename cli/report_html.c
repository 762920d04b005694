// SPDX-License-Identifier: MIT
/*
 * The HTML report of `noplab report`: one self-contained page.  Nothing is
 * fetched: the style is inline, the charts are SVG documents in data: URIs
 * (an <img> each, so cairo's glyph ids cannot collide across charts), and a
 * Content-Security-Policy forbids every other source.  The only scripts are
 * two one-statement image handlers the policy names by hash; they mark each
 * chart loaded or broken, so a headless browser's DOM says whether it drew.
 *
 * Every string that comes from an input file is escaped: a variant name,
 * a CPU brand or a command line may hold '<' or '&'.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_get.h"
#include "noplab/results.h"
#include "noplab/stats.h"
#include "noplab/version.h"
#include "plot.h"

/* sha256 of the two handler bodies below, base64 */
#define H_LOADED "this.dataset.loaded=1"
#define H_BROKEN "this.dataset.broken=1"
#define CSP "default-src 'none'; img-src data:; style-src 'unsafe-inline'; " \
	    "script-src 'unsafe-hashes' 'sha256-Yhj8+54oolSdK174PLTD3I2z7QpTmsLMMgGUAKAykhA=' " \
	    "'sha256-3Uaz5uBiJyrA7mqdGvPUAmTz71GOJllscAEgeVCjijg='; base-uri 'none'; form-action 'none'"

static const char css[] =
	":root{--fg:#1f1f1f;--muted:#5f5f66;--line:#dcdce0;--zebra:#f6f6f8;--base:#4d4f57;"
	"--same:#1a5c9e;--slow:#ad4500;--fast:#007355}\n"
	"body{font:15px/1.45 system-ui,-apple-system,'DejaVu Sans',sans-serif;color:var(--fg);"
	"margin:0 auto;max-width:1180px;padding:24px}\n"
	"h1{font-size:26px;margin:0 0 4px}h2{font-size:21px;margin:36px 0 8px;"
	"border-bottom:2px solid var(--line);padding-bottom:4px}h3{font-size:17px;margin:28px 0 6px}\n"
	".muted,figcaption,.params{color:var(--muted)}\n"
	"code,.mono{font-family:'DejaVu Sans Mono',ui-monospace,monospace;font-size:13px}\n"
	"table{border-collapse:collapse;margin:8px 0 14px;font-size:13.5px}\n"
	"caption{text-align:left;font-weight:600;padding:4px 0}\n"
	"th,td{border-bottom:1px solid var(--line);padding:4px 9px;text-align:left;vertical-align:top}\n"
	"th{background:#eeeef2}tbody tr:nth-child(even){background:var(--zebra)}\n"
	"td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}.nw{white-space:nowrap}\n"
	".scroll{overflow-x:auto}\n"
	".v-baseline{color:var(--base);font-weight:600}.v-same{color:var(--same)}"
	".v-slower,.v-higher{color:var(--slow);font-weight:600}"
	".v-faster,.v-lower{color:var(--fast);font-weight:600}\n"
	"figure{margin:12px 0 18px}figure img{max-width:100%;height:auto;border:1px solid var(--line)}\n"
	"ul.warnings,tr.warn td{color:var(--slow)}tr.warn td{border-bottom:0;font-size:12.5px}"
	"details{margin:6px 0 14px}summary{cursor:pointer}\n"
	"nav ol{margin:6px 0}.kind{font-size:13px;color:var(--muted);font-weight:400}\n"
	"footer{margin-top:40px;color:var(--muted);font-size:13px}\n";

/* ---- output helpers -------------------------------------------------------- */

static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			/* control characters have no business in a page */
			fputc((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t' ? ' ' : *s, f);
		}
	}
}

static void num(FILE *f, double v)
{
	double a = fabs(v);

	if (!isfinite(v))
		fputs("&ndash;", f);
	else if (v == 0)
		fputs("0", f);
	else if (a >= 1e6)
		fprintf(f, "%.0f", v);
	else if (a >= 1000)
		fprintf(f, "%.1f", v);
	else if (a >= 1)
		fprintf(f, "%.3f", v);
	else if (a >= 0.001)
		fprintf(f, "%.4f", v);
	else
		fprintf(f, "%.3g", v);
}

/* <td class="n">value</td>, or a dash when the key is absent or null */
static void td_num(FILE *f, const json_t *o, const char *k)
{
	double v;

	fputs("<td class=\"n\">", f);
	if (cli_jnum(o, k, &v))
		num(f, v);
	else
		fputs("&ndash;", f);
	fputs("</td>", f);
}

/* A numeric cell: the figure under k with its prefix and precision, or a dash. */
static void td_fixed(FILE *f, const json_t *o, const char *k, const char *prefix, int decimals,
		     const char *suffix)
{
	double v;

	if (cli_jnum(o, k, &v))
		fprintf(f, "<td class=\"n\">%s%.*f%s</td>", prefix, decimals, v, suffix);
	else
		fputs("<td class=\"n\">&ndash;</td>", f);
}

static void td_sem(FILE *f, const json_t *o, const char *k)
{
	td_fixed(f, o, k, "&plusmn;", 2, "%");
}

static void td_ci(FILE *f, const json_t *ci, bool pct)
{
	const json_t *lo = json_array_get(ci, 0), *hi = json_array_get(ci, 1);

	fputs("<td class=\"n\">", f);
	if (json_is_number(lo) && json_is_number(hi)) {
		if (pct) {
			fprintf(f, "[%+.2f%%, %+.2f%%]", json_number_value(lo), json_number_value(hi));
		} else {
			fputc('[', f);
			num(f, json_number_value(lo));
			fputs(", ", f);
			num(f, json_number_value(hi));
			fputc(']', f);
		}
	} else {
		fputs("&ndash;", f);
	}
	fputs("</td>", f);
}

static void td_text(FILE *f, const char *s)
{
	fputs("<td>", f);
	esc(f, s);
	fputs("</td>", f);
}

/* a JSON value as words: strings as they are, objects as "key value, ..." */
static void value_text(FILE *f, const json_t *v)
{
	const char *k;
	const json_t *x;
	size_t i = 0;

	switch (json_typeof(v)) {
	case JSON_STRING: esc(f, json_string_value(v)); break;
	case JSON_INTEGER: fprintf(f, "%lld", (long long)json_integer_value(v)); break;
	case JSON_REAL: num(f, json_real_value(v)); break;
	case JSON_TRUE: fputs("yes", f); break;
	case JSON_FALSE: fputs("no", f); break;
	case JSON_NULL: fputs("&ndash;", f); break;
	case JSON_ARRAY:
		json_array_foreach(v, i, x) {
			if (i)
				fputs(", ", f);
			value_text(f, x);
		}
		break;
	case JSON_OBJECT:
		json_object_foreach((json_t *)v, k, x) {
			if (i++)
				fputs(", ", f);
			esc(f, k);
			fputc(' ', f);
			value_text(f, x);
		}
		break;
	}
}

static void kv_table(FILE *f, const char *caption, const json_t *o)
{
	const char *k;
	const json_t *v;

	if (!json_is_object(o) || !json_object_size(o))
		return;
	fprintf(f, "<table class=\"env\"><caption>%s</caption><tbody>\n", caption);
	json_object_foreach((json_t *)o, k, v) {
		fputs("<tr><th scope=\"row\">", f);
		esc(f, k);
		fputs("</th><td>", f);
		value_text(f, v);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

static void base64(FILE *f, const unsigned char *p, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16;

		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		fputc(tab[v >> 18 & 63], f);
		fputc(tab[v >> 12 & 63], f);
		fputc(i + 1 < n ? tab[v >> 6 & 63] : '=', f);
		fputc(i + 2 < n ? tab[v & 63] : '=', f);
	}
}

/* ---- bench ----------------------------------------------------------------- */

static const char *primary_key(const json_t *w)
{
	const json_t *vars = json_object_get(w, "variants");

	for (size_t i = 0; i < json_array_size(vars); i++) {
		const char *k = json_string_value(json_object_get(
			json_object_get(json_array_get(vars, i), "compare"), "figure"));

		if (k)
			return k;
	}
	for (size_t i = 0; i < json_array_size(vars); i++) {
		const char *k;
		const json_t *f;

		json_object_foreach((json_t *)json_object_get(json_array_get(vars, i), "figures"), k, f)
			if (!strncmp(k, "cycles_per_", 11) || strcmp(cli_jstr(f, "source"), "sw"))
				return k;
	}
	return NULL;
}

/* the entry's bytes, or its name when it has none (none, call) or differs from the variant's */
static void entry_cell(FILE *f, const json_t *v)
{
	const json_t *e = json_object_get(v, "entry");
	const char *name = cli_jstr(e, "name"), *bytes = cli_jstr(e, "bytes");

	fputs("<td class=\"nw\">", f);
	if (!bytes[0] || strcmp(name, cli_jstr(v, "name"))) {
		esc(f, name);
		fputs(bytes[0] ? " " : "", f);
	}
	fputs("<span class=\"mono\">", f);
	esc(f, bytes);
	fputs("</span></td>", f);
}

static void td_int(FILE *f, const json_t *o, const char *k)
{
	td_fixed(f, o, k, "", 0, "");
}

static void chart(FILE *f, const json_t *doc, size_t wi, const json_t *w, bool *drew)
{
	struct cli_plot pl;
	struct nl_diag d;
	const char *kind = cli_jstr(w, "kind");
	int err;

	nl_diag_init(&d);
	err = cli_plot_draw(doc, (int)wi, "svg", NULL, &pl, &d);
	*drew = true;
	if (err) {
		fputs("<p class=\"muted\">No chart: ", f);
		esc(f, d.msg);
		fputs("</p>\n", f);
		return;
	}
	fprintf(f, "<figure><img width=\"%.0f\" height=\"%.0f\" onload=\"" H_LOADED "\" "
		"onerror=\"" H_BROKEN "\" alt=\"", pl.width, pl.height);
	fputs("Chart of ", f);
	esc(f, cli_jstr(w, "name"));
	fputs("\" src=\"data:image/svg+xml;base64,", f);
	base64(f, (const unsigned char *)pl.svg, pl.svg_len);
	fputs("\"><figcaption>", f);
	if (!strcmp(kind, "sweep"))
		fputs("The compared figure against the offset of the function entry in its cache "
		      "line, with its 95% confidence band; shaded columns: the entry NOP crosses a "
		      "16-, 32- or 64-byte boundary there; rings: significant differences from the "
		      "baseline (square).", f);
	else if (!strcmp(kind, "layout"))
		fputs("Hot functions packed together against spread out (each followed by cold "
		      "code): time and every miss figure measured, with 95% confidence intervals; "
		      "the verdict of spread against packed under its bar.", f);
	else
		fputs("A bar per variant at its mean with the 95% confidence interval; grey: the "
		      "baseline (dashed line at its mean); under each bar the entry bytes and the "
		      "verdict against the baseline (blue: no significant or practical difference, "
		      "orange: slower, green: faster).", f);
	fputs("</figcaption></figure>\n", f);
	cli_plot_free(&pl);
}

static void bench_primary_table(FILE *f, const json_t *w, const char *key, double threshold)
{
	const json_t *vars = json_object_get(w, "variants"), *v;
	const json_t *f0 = json_object_get(json_object_get(json_array_get(vars, 0), "figures"), key);
	const char *base = cli_jstr(w, "baseline");
	size_t i;

	/* one figure: its unit and source in the caption, where they take no width */
	fputs("<div class=\"scroll\"><table class=\"primary\"><caption>", f);
	esc(f, key);
	fputs(" in ", f);
	esc(f, cli_jstr(f0, "unit"));
	fputs(" (source ", f);
	esc(f, cli_jstr(f0, "source"));
	fputs(")", f);
	if (base[0]) {
		fputs(", each variant against the baseline ", f);
		esc(f, base);
	}
	fputs("</caption>\n<thead><tr><th>variant</th><th>entry</th><th>mean</th><th>&plusmn; SEM</th>"
	      "<th>95% CI</th><th>median</th><th>min</th><th>n</th>"
	      "<th>&Delta;</th><th>95% CI of &Delta;</th><th>p</th><th>verdict</th></tr></thead>"
	      "<tbody>\n", f);
	json_array_foreach(vars, i, v) {
		const json_t *fig = json_object_get(json_object_get(v, "figures"), key);
		const json_t *cmp = json_object_get(v, "compare");
		const char *word = cli_jstr(cmp, "verdict");
		double x;

		fputs("<tr>", f);
		td_text(f, cli_jstr(v, "name"));
		entry_cell(f, v);
		td_num(f, fig, "mean");
		td_sem(f, fig, "sem_pct");
		td_ci(f, json_object_get(fig, "ci95"), false);
		td_num(f, fig, "median");
		td_num(f, fig, "min");
		td_int(f, fig, "n");
		if (base[0] && !strcmp(cli_jstr(v, "name"), base)) {
			fputs("<td></td><td></td><td></td><td class=\"v-baseline\">baseline</td>", f);
		} else if (cmp) {
			if (cli_jnum(cmp, "delta_pct", &x))
				fprintf(f, "<td class=\"n\">%+.2f%%</td>", x);
			else
				fputs("<td class=\"n\">&ndash;</td>", f);
			td_ci(f, json_object_get(cmp, "ci95"), true);
			if (cli_jnum(cmp, "p", &x))
				fprintf(f, x < 0.001 ? "<td class=\"n\">&lt; 0.001</td>" :
						       "<td class=\"n\">%.3f</td>", x);
			else
				fputs("<td class=\"n\">&ndash;</td>", f);
			/* short words here (the numbers have their columns); bench's sentence on hover */
			fputs("<td class=\"v-", f);
			esc(f, !strcmp(word, "slower") || !strcmp(word, "faster") ? word : "same");
			fputs("\" title=\"", f);
			esc(f, cli_jstr(cmp, "text"));
			fputs("\">", f);
			if (!strcmp(word, "slower") || !strcmp(word, "faster"))
				esc(f, word);
			else if (json_is_true(json_object_get(cmp, "significant")))
				fprintf(f, "no practical difference (under %g%%)", threshold);
			else
				fputs("no significant difference", f);
			fputs("</td>", f);
		} else {
			fputs("<td></td><td></td><td></td><td></td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
}

static void bench_all_figures(FILE *f, const json_t *w)
{
	const json_t *vars = json_object_get(w, "variants"), *v, *fig;
	const char *k;
	size_t i, nf = 0;

	json_array_foreach(vars, i, v)
		nf += json_object_size(json_object_get(v, "figures"));
	fprintf(f, "<details><summary>Every figure (%zu)</summary><div class=\"scroll\">"
		"<table class=\"all\"><thead><tr><th>variant</th><th>figure</th><th>mean</th>"
		"<th>&plusmn; SEM</th><th>95%% CI</th><th>median</th><th>min</th><th>max</th><th>n</th>"
		"<th>unit</th><th>source</th><th>note</th></tr></thead><tbody>\n", nf);
	json_array_foreach(vars, i, v) {
		json_object_foreach(json_object_get(v, "figures"), k, fig) {
			double run;

			fputs("<tr>", f);
			td_text(f, cli_jstr(v, "name"));
			td_text(f, k);
			td_num(f, fig, "mean");
			td_sem(f, fig, "sem_pct");
			td_ci(f, json_object_get(fig, "ci95"), false);
			td_num(f, fig, "median");
			td_num(f, fig, "min");
			td_num(f, fig, "max");
			td_int(f, fig, "n");
			td_text(f, cli_jstr(fig, "unit"));
			td_text(f, cli_jstr(fig, "source"));
			fputs("<td>", f);
			if (json_is_true(json_object_get(fig, "scaled")) &&
			    cli_jnum(fig, "running_pct", &run))
				fprintf(f, "scaled: counted %.1f%% of the time", run);
			fputs("</td></tr>\n", f);
		}
	}
	fputs("</tbody></table></div></details>\n", f);
}

static void bench_section(FILE *f, const json_t *doc, size_t ri, bool *drew)
{
	const json_t *wls = json_object_get(doc, "workloads"), *me = json_object_get(doc, "method");
	const json_t *warn = json_object_get(doc, "warnings"), *w, *x;
	size_t i;

	kv_table(f, "Environment", json_object_get(doc, "environment"));
	kv_table(f, "Method", me);
	if (json_array_size(warn)) {
		fputs("<ul class=\"warnings\">", f);
		json_array_foreach(warn, i, x) {
			fputs("<li>", f);
			esc(f, json_string_value(x));
			fputs("</li>", f);
		}
		fputs("</ul>\n", f);
	}
	json_array_foreach(wls, i, w) {
		const char *key = primary_key(w);
		double sec;

		fprintf(f, "<section class=\"workload\" id=\"r%zu-w%zu\">\n<h3>", ri, i + 1);
		esc(f, cli_jstr(w, "name"));
		fputs("</h3>\n<p class=\"params\">", f);
		value_text(f, json_object_get(w, "params"));
		if (cli_jstr(w, "fit")[0]) {
			fputs("<br>", f);
			esc(f, cli_jstr(w, "fit"));
		}
		if (cli_jnum(w, "seconds", &sec))
			fprintf(f, "<br>measured in %.2f s", sec);
		fputs("</p>\n", f);
		chart(f, doc, i, w, drew);
		if (key)
			bench_primary_table(f, w, key, cli_jnum(me, "threshold_pct", &sec) ? sec : 1);
		bench_all_figures(f, w);
		fputs("</section>\n", f);
	}
}

/* ---- stat ------------------------------------------------------------------ */

static void stat_row(FILE *f, const char *name, const json_t *e)
{
	const json_t *metric = json_object_get(e, "metric");
	double run;

	fputs("<tr>", f);
	td_text(f, name);
	td_num(f, e, "mean");
	td_sem(f, e, "sem_pct");
	td_ci(f, json_object_get(e, "ci95"), false);
	td_num(f, e, "median");
	td_num(f, e, "min");
	td_num(f, e, "max");
	td_int(f, e, "n");
	td_text(f, cli_jstr(e, "unit"));
	td_text(f, cli_jstr(e, "source"));
	fputs("<td>", f);
	if (json_is_object(metric)) {
		double v;

		if (cli_jnum(metric, "value", &v))
			num(f, v);
		fputc(' ', f);
		esc(f, cli_jstr(metric, "unit"));
	}
	if (json_is_true(json_object_get(e, "scaled")) && cli_jnum(e, "running_pct", &run))
		fprintf(f, " <b>scaled</b>: counted %.1f%% of the time", run);
	fputs("</td></tr>\n", f);
}

static void stat_section(FILE *f, const json_t *doc)
{
	const json_t *events = json_object_get(doc, "events"), *nm = json_object_get(doc, "not_measured");
	const json_t *meas = json_object_get(doc, "measured"), *e;
	size_t i;

	fputs("<p>Command: <code>", f);
	esc(f, cli_jstr(meas, "cmdline"));
	fputs("</code></p>\n", f);
	kv_table(f, "Environment", json_object_get(doc, "environment"));
	kv_table(f, "Options", json_object_get(doc, "options"));
	fputs("<div class=\"scroll\"><table class=\"events\"><caption>Counts per run</caption>"
	      "<thead><tr><th>event</th><th>mean</th><th>&plusmn; SEM</th><th>95% CI</th>"
	      "<th>median</th><th>min</th><th>max</th><th>n</th><th>unit</th><th>source</th>"
	      "<th>metric, note</th></tr></thead><tbody>\n", f);
	json_array_foreach(events, i, e)
		stat_row(f, cli_jstr(e, "name"), e);
	if (json_is_object(json_object_get(doc, "elapsed")))
		stat_row(f, "elapsed", json_object_get(doc, "elapsed"));
	fputs("</tbody></table></div>\n", f);
	if (json_array_size(nm)) {
		fputs("<p>Not measured:</p><ul>", f);
		json_array_foreach(nm, i, e) {
			fputs("<li><b>", f);
			esc(f, cli_jstr(e, "name"));
			fputs("</b>: ", f);
			esc(f, cli_jstr(e, "reason"));
			fputs("</li>", f);
		}
		fputs("</ul>\n", f);
	}
}

/* ---- diff ------------------------------------------------------------------ */

/* a series name that may break after its slashes ("calls-256/p6:5/cycles_per_call") */
static void td_series(FILE *f, const char *s)
{
	fputs("<td>", f);
	for (; *s; s++) {
		char c[2] = { *s, 0 };

		esc(f, c);
		if (*s == '/')
			fputs("<wbr>", f);
	}
	fputs("</td>", f);
}

static void td_pct(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "<td class=\"n\">%+.2f%%</td>", v);
	else
		fputs("<td class=\"n\">&ndash;</td>", f);
}

static void diff_row(FILE *f, const struct nl_diff_row *r)
{
	const char *cls = "same", *words = "not tested";

	fputs("<tr>", f);
	td_series(f, r->a->name);
	td_text(f, r->a->unit);
	fputs("<td class=\"n\">", f);
	num(f, r->a->state == NL_SERIES_COUNTED ? r->a->sum.mean : NAN);
	fputs("</td><td class=\"n\">", f);
	num(f, r->b->state == NL_SERIES_COUNTED ? r->b->sum.mean : NAN);
	fputs("</td>", f);
	if (r->compared) {
		td_pct(f, r->cmp.delta_pct);
		if (isfinite(r->cmp.ci95_lo) && isfinite(r->cmp.ci95_hi))
			fprintf(f, "<td class=\"n\">[%+.2f%%, %+.2f%%]</td>", r->cmp.ci95_lo,
				r->cmp.ci95_hi);
		else
			fputs("<td class=\"n\">&ndash;</td>", f);
		fputs("<td class=\"n\">", f);
		if (isfinite(r->cmp.t))
			fprintf(f, "%.2f", r->cmp.t);
		else
			fputs("&ndash;", f);
		fputs("</td><td class=\"n\">", f);
		if (isfinite(r->cmp.df))
			fprintf(f, "%.1f", r->cmp.df);
		else
			fputs("&ndash;", f);
		fprintf(f, r->cmp.p < 0.001 ? "</td><td class=\"n\">&lt; 0.001</td>" :
			   "</td><td class=\"n\">%.3f</td>", r->cmp.p);
		if (r->cmp.verdict == NL_VERDICT_HIGHER)
			cls = "higher", words = "significantly higher";
		else if (r->cmp.verdict == NL_VERDICT_LOWER)
			cls = "lower", words = "significantly lower";
		else
			words = "no significant difference";
		fprintf(f, "<td class=\"nw v-%s\">%s%s</td>", cls, words,
			r->cmp.verdict == NL_VERDICT_NONE ? "" : r->cmp.practical ?
			", beyond the threshold" : ", within the threshold");
	} else {
		fprintf(f, "<td></td><td></td><td></td><td></td><td></td><td class=\"nw\">%s</td>",
			words);
	}
	fputs("</tr>\n", f);
	/* warnings under the row, as noplab diff prints them */
	for (size_t k = 0; k < r->nr_warnings; k++) {
		fputs("<tr class=\"warn\"><td></td><td colspan=\"9\">! ", f);
		esc(f, r->warnings[k]);
		fputs("</td></tr>\n", f);
	}
}

static void diff_table(FILE *f, const struct nl_diff_row *rows, size_t nr, bool significant)
{
	fputs("<div class=\"scroll\"><table class=\"diff\"><thead><tr><th>series</th><th>unit</th>"
	      "<th>A mean</th><th>B mean</th><th>&Delta;</th><th>95% CI of &Delta;</th><th>t</th>"
	      "<th>df</th><th>p</th><th>verdict</th></tr></thead><tbody>\n", f);
	for (size_t i = 0; i < nr; i++)
		if (!significant || (rows[i].compared && rows[i].cmp.verdict != NL_VERDICT_NONE))
			diff_row(f, &rows[i]);
	fputs("</tbody></table></div>\n", f);
}

static void diff_section(FILE *f, const struct cli_report_input *a,
			 const struct cli_report_input *b, size_t bi,
			 const struct cli_report_opts *o)
{
	struct nl_diff_opts dopt = { .threshold_pct = o->threshold_pct, .max_sem_pct = 5,
				     .min_runs = 3 };
	struct nl_results ra, rb;
	struct nl_diff_row *rows = NULL;
	struct nl_diag d;
	size_t nr = 0;
	unsigned higher = 0, lower = 0, same = 0, untested = 0;
	int err;

	nl_diag_init(&d);
	fprintf(f, "<section class=\"diff\" id=\"diff-%zu\">\n<h2>%zu against 1: ", bi + 1, bi + 1);
	esc(f, b->path);
	fputs(" (B) against ", f);
	esc(f, a->path);
	fputs(" (A)</h2>\n", f);
	nl_results_init(&ra);
	nl_results_init(&rb);
	err = nl_results_load(a->path, &ra, &d);
	if (!err)
		err = nl_results_load(b->path, &rb, &d);
	if (!err)
		err = nl_results_diff(&ra, &rb, &dopt, &rows, &nr, &d);
	if (!err && !nr)
		err = nl_fail(&d, -NL_E_FORMAT, "the two results measured nothing in common");
	if (err) {
		fputs("<p class=\"muted\">Not compared: ", f);
		esc(f, d.msg[0] ? d.msg : nl_strerror(err));
		fputs("</p>\n</section>\n", f);
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		if (!rows[i].compared)
			untested++;
		else if (rows[i].cmp.verdict == NL_VERDICT_HIGHER)
			higher++;
		else if (rows[i].cmp.verdict == NL_VERDICT_LOWER)
			lower++;
		else
			same++;
	}
	fprintf(f, "<p>As <code>noplab diff</code> says it, B against A: <b>%u significantly higher, "
		"%u significantly lower</b>, %u no significant difference, %u not tested (Welch's "
		"t-test, alpha 0.05; practical threshold %g%%).</p>\n", higher, lower, same, untested,
		o->threshold_pct);
	if (higher + lower) {
		fputs("<h3>Significant differences</h3>\n", f);
		diff_table(f, rows, nr, true);
	}
	fprintf(f, "<details%s><summary>Every series (%zu)</summary>\n", higher + lower ? "" : " open",
		nr);
	diff_table(f, rows, nr, false);
	fputs("</details>\n</section>\n", f);
out:
	free(rows);
	nl_results_free(&ra);
	nl_results_free(&rb);
}

/* ---- the page -------------------------------------------------------------- */

const char *cli_report_kind(const json_t *doc, char *why, size_t size)
{
	const char *cmd = cli_jstr(doc, "command");

	if (strcmp(cli_jstr(doc, "tool"), "noplab")) {
		snprintf(why, size, "not a noplab result (no \"tool\": \"noplab\")");
		return NULL;
	}
	if (!strcmp(cmd, "bench") && json_is_array(json_object_get(doc, "workloads")))
		return "bench";
	if (!strcmp(cmd, "stat") && json_is_array(json_object_get(doc, "events")))
		return "stat";
	snprintf(why, size, "a noplab %s document: the report takes bench and stat results "
		 "(noplab bench -o, noplab stat -o)", cmd[0] ? cmd : "(no command)");
	return NULL;
}

int cli_report_html(FILE *f, const struct cli_report_input *in, size_t n,
		    const struct cli_report_opts *o, struct nl_diag *d)
{
	const char *title = o->title ? o->title : "noplab report";
	bool drew = false;
	char why[200];

	for (size_t i = 0; i < n; i++)
		if (!cli_report_kind(in[i].doc, why, sizeof(why)))
			return nl_fail(d, -NL_E_FORMAT, "%s: %s", in[i].path, why);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"" CSP "\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"noplab " NOPLAB_VERSION "\">\n<title>", f);
	esc(f, title);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header>\n<h1>", css);
	esc(f, title);
	fprintf(f, "</h1>\n<p class=\"muted\">%zu result%s, drawn by noplab " NOPLAB_VERSION
		". &plusmn; is the standard error of the mean in percent, as perf stat prints "
		"it; CIs are 95%%.</p>\n<nav><ol>\n", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		const char *kind = cli_report_kind(in[i].doc, why, sizeof(why));
		const json_t *wls = json_object_get(in[i].doc, "workloads"), *w;
		size_t k;

		fprintf(f, "<li><a href=\"#r%zu\">", i + 1);
		esc(f, in[i].path);
		fprintf(f, "</a> <span class=\"kind\">%s", kind);
		json_array_foreach(wls, k, w) {
			fputs(k ? ", " : ": ", f);
			esc(f, cli_jstr(w, "name"));
		}
		if (!strcmp(kind, "stat")) {
			fputs(": ", f);
			esc(f, cli_jstr(json_object_get(in[i].doc, "measured"), "cmdline"));
		}
		fputs("</span></li>\n", f);
	}
	for (size_t i = 1; i < n; i++)
		fprintf(f, "<li><a href=\"#diff-%zu\">%zu against 1</a> <span class=\"kind\">diff"
			"</span></li>\n", i + 1, i + 1);
	fputs("</ol></nav>\n</header>\n<main>\n", f);

	for (size_t i = 0; i < n; i++) {
		const char *kind = cli_report_kind(in[i].doc, why, sizeof(why));

		fprintf(f, "<section class=\"result %s\" id=\"r%zu\">\n<h2>%zu. ", kind, i + 1, i + 1);
		esc(f, in[i].path);
		fprintf(f, " <span class=\"kind\">noplab %s</span></h2>\n", kind);
		if (!strcmp(kind, "bench"))
			bench_section(f, in[i].doc, i + 1, &drew);
		else
			stat_section(f, in[i].doc);
		fputs("</section>\n", f);
	}
	for (size_t i = 1; i < n; i++)
		diff_section(f, &in[0], &in[i], i, o);
	fputs("</main>\n<footer>Self-contained: no scripts beyond two image handlers, no fetches. "
	      "Sources: tsc = time stamp counter, hw = PMU counter, sw = software event, sim = "
	      "cachegrind, wall = wall clock.</footer>\n</body>\n</html>\n", f);
	if (drew)
		cli_plot_release();
	if (ferror(f))
		return nl_fail(d, -EIO, "write failed");
	return 0;
}
