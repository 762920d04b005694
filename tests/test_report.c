// SPDX-License-Identifier: MIT
/*
 * noplab report and noplab plot end to end, from the fixed results in
 * tests/fixtures/plot and tests/fixtures/report: the page's tables, charts
 * and diffs, that it fetches nothing, that every string from the inputs is
 * escaped, the exit statuses; then the page in headless Chromium: every
 * chart decoded (the page marks each <img> loaded or broken), no console
 * message (a Content-Security-Policy violation would be one), and a
 * screenshot with the charts' colours in it.  The browser tests skip when
 * Chromium is not installed; CI installs it (scripts/setup.sh).
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nltest.h"
#include "test_plot_png.h"

static char *dir;

static const char *fx(const char *name)
{
	static char buf[8][1024];
	static int k;
	const char *src = getenv("NOPLAB_SRC");

	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/tests/fixtures/%s/%s", src ? src : ".",
		 strcmp(name, "stat.json") ? "plot" : "report", name);
	return buf[k];
}

static int run(const char *args, char **out)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", nltest_noplab(), args);
	return nltest_run(cmd, out);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;
	char *s;

	if (!f)
		fail_msg("cannot read %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = malloc((size_t)n + 1);
	if (fread(s, 1, (size_t)n, f) != (size_t)n)
		fail_msg("short read of %s", path);
	s[n] = '\0';
	fclose(f);
	return s;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void must(const char *html, const char *what)
{
	if (!strstr(html, what))
		fail_msg("the page lacks '%s'", what);
}

static void must_not(const char *html, const char *what)
{
	if (strstr(html, what))
		fail_msg("the page has '%s'", what);
}

/* The report (path) from the fixtures named in list. */
static char *report(const char *list, const char *name)
{
	char args[4096], path[1024], *out = NULL;
	int st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(args, sizeof(args), "report %s -o '%s'", list, path);
	st = run(args, &out);
	if (st)
		fail_msg("noplab %s: status %d\n%s", args, st, out ? out : "");
	free(out);
	return strdup(path);
}

static int b64val(char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 :
	       c >= '0' && c <= '9' ? c - '0' + 52 : c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Every src= and href= in a tag is a data: URI or a fragment; no element that could fetch. */
static void no_fetches(const char *html)
{
	static const char *const attrs[] = { " src=", " href=", " srcset=", " action=", " poster=",
					     " data=", " background=" };
	static const char *const tags[] = { "<script", "<link", "<iframe", "<object", "<embed",
					    "<base", "<form", "<svg", "@import", "url(" };

	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		must_not(html, tags[i]);
	/* text is escaped, so every '<' opens a tag */
	for (const char *t = strchr(html, '<'); t; t = strchr(t + 1, '<')) {
		const char *end = strchr(t, '>');
		size_t len = end ? (size_t)(end - t) : strlen(t);

		for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
			const char *p = memmem(t, len, attrs[i], strlen(attrs[i]));
			const char *v = p ? p + strlen(attrs[i]) : NULL;

			if (!v)
				continue;
			if (*v == '"' || *v == '\'')
				v++;
			if (strncmp(v, "data:", 5) && *v != '#')
				fail_msg("the page fetches: %.80s", t);
		}
	}
}

/* Each chart: an SVG document in a base64 data: URI. */
static size_t check_images(const char *html)
{
	static const char pre[] = "src=\"data:image/svg+xml;base64,";
	size_t n = 0;

	for (const char *p = html; (p = strstr(p, pre)); n++) {
		const char *b = p + sizeof(pre) - 1, *e = strchr(b, '"');
		size_t len = (size_t)(e - b), o = 0;
		unsigned char *svg = malloc(len + 1);

		assert_non_null(e);
		assert_int_equal(len % 4, 0);
		for (size_t i = 0; i < len; i += 4) {
			int v[4];

			for (int k = 0; k < 4; k++)
				v[k] = b[i + k] == '=' ? 0 : b64val(b[i + k]);
			for (int k = 0; k < 4; k++)
				if (v[k] < 0)
					fail_msg("chart %zu: not base64", n + 1);
			svg[o++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
			if (b[i + 2] != '=')
				svg[o++] = (unsigned char)(v[1] << 4 | v[2] >> 2);
			if (b[i + 3] != '=')
				svg[o++] = (unsigned char)(v[2] << 6 | v[3]);
		}
		svg[o] = '\0';
		if (strncmp((char *)svg, "<?xml", 5) || !strstr((char *)svg, "<title>noplab bench:") ||
		    !strstr((char *)svg, "</svg>"))
			fail_msg("chart %zu is not the SVG of a bench chart", n + 1);
		free(svg);
		p = e;
	}
	return n;
}

static void test_report_page(void **state)
{
	char list[4096], *path, *html;

	(void)state;
	snprintf(list, sizeof(list), "'%s' '%s' '%s' '%s' '%s' '%s' '%s'", fx("calls.json"),
		 fx("calls-b.json"), fx("sweep.json"), fx("layout.json"), fx("layout-sim.json"),
		 fx("sled.json"), fx("stat.json"));
	path = report(list, "all.html");
	html = slurp(path);
	assert_int_equal(strncmp(html, "<!DOCTYPE html>", 15), 0);
	must(html, "Content-Security-Policy\" content=\"default-src 'none'; img-src data:;");
	no_fetches(html);
	/* charts: calls 2 + calls-b 2 + sweep 1 + layout 1 + layout-sim 1 + sled 2 */
	assert_int_equal(count(html, "<img "), 9);
	assert_int_equal(check_images(html), 9);
	assert_int_equal(count(html, "<figure>"), 9);
	assert_int_equal(count(html, "<caption>Environment</caption>"), 7);
	for (const char *const *w = (const char *const[]){ "calls-256", "calls-4096", "sweep-128",
			"layout-128", "layout-1024", "sled-2KiB", "sled-64KiB", NULL }; *w; w++) {
		char h[64];

		snprintf(h, sizeof(h), "<h3>%s</h3>", *w);
		must(html, h);
	}
	/* the tables: per variant the figures, the comparison in words */
	must(html, "<th>&plusmn; SEM</th>");
	must(html, "<th>95% CI</th>");
	must(html, "cycles_per_call in cycles/call (source tsc), each variant against the baseline p6:5");
	must(html, "cycles_per_nop in cycles/NOP (source tsc)");
	must(html, "<td class=\"v-same\" title=\"no significant difference (");
	must(html, ">no significant difference</td>");
	must(html, ">slower</td>");
	must(html, "<td class=\"v-baseline\">baseline</td>");
	must(html, "<summary>Every figure (");
	must(html, "l1i_misses_per_1000_calls");
	/* stat: its events, what was not measured */
	must(html, "noplab stat</span>");
	must(html, "<caption>Counts per run</caption>");
	must(html, "<td>task-clock</td>");
	must(html, "<td>elapsed</td>");
	must(html, "Not measured:");
	/* diff of each later result against the first */
	for (int i = 2; i <= 7; i++) {
		char h[64];

		snprintf(h, sizeof(h), "id=\"diff-%d\"", i);
		must(html, h);
	}
	must(html, "As <code>noplab diff</code> says it, B against A:");
	must(html, "<td>calls-256/<wbr>p6:5/<wbr>cycles_per_call</td>");
	must(html, "significantly higher, beyond the threshold");
	must(html, "Not compared: the two inputs share no event");
	must_not(html, "nan%");
	free(html);
	free(path);
}

static void test_report_escapes(void **state)
{
	char list[1200], *path, *html;

	(void)state;
	snprintf(list, sizeof(list), "'%s' --title 'A & <B>'", fx("hostile.json"));
	path = report(list, "hostile.html");
	html = slurp(path);
	no_fetches(html);
	must(html, "<title>A &amp; &lt;B&gt;</title>");
	must(html, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Quoted&quot; CPU");
	must(html, "calls-&lt;b&gt;256&lt;/b&gt;&amp;amp;");
	must(html, "k8:5&lt;img src=x onerror=alert(2)&gt;");
	must(html, "&lt;a href=&quot;http://example.com/&quot;&gt;a link&lt;/a&gt;");
	must(html, "fits &lt;i&gt;the&lt;/i&gt; L1i &amp; more");
	must_not(html, "<script>");
	must_not(html, "<b>256");
	must_not(html, "<img src=x");
	must_not(html, "<a href=\"http");
	assert_int_equal(check_images(html), 1);
	free(html);
	free(path);
}

static void test_report_errors(void **state)
{
	char args[2048], bad[1024], *out = NULL;
	FILE *f;

	(void)state;
	assert_int_equal(run("report", &out), 2);
	free(out);
	snprintf(args, sizeof(args), "report '%s'", fx("calls.json"));
	assert_int_equal(run(args, &out), 2);
	assert_non_null(strstr(out, "needs -o"));
	free(out);
	snprintf(args, sizeof(args), "report '%s/missing.json' -o '%s/x.html'", dir, dir);
	assert_int_equal(run(args, &out), 3);
	assert_non_null(strstr(out, "missing.json: cannot open"));
	free(out);
	snprintf(bad, sizeof(bad), "%s/not.json", dir);
	f = fopen(bad, "w");
	fputs("task-clock 1.0 msec\n", f);
	fclose(f);
	snprintf(args, sizeof(args), "report '%s' -o '%s/x.html'", bad, dir);
	assert_int_equal(run(args, &out), 3);
	assert_non_null(strstr(out, "not JSON"));
	free(out);
	snprintf(bad, sizeof(bad), "%s/diff.json", dir);
	f = fopen(bad, "w");
	fputs("{\"tool\": \"noplab\", \"version\": \"0.1.0\", \"command\": \"diff\", \"events\": []}\n", f);
	fclose(f);
	snprintf(args, sizeof(args), "report '%s' '%s' -o '%s/x.html'", fx("calls.json"), bad, dir);
	assert_int_equal(run(args, &out), 3);
	assert_non_null(strstr(out, "the report takes bench and stat results"));
	free(out);
	snprintf(args, sizeof(args), "report '%s' -o '%s/no/such/dir/x.html'", fx("calls.json"), dir);
	assert_int_equal(run(args, &out), 3);
	assert_non_null(strstr(out, "cannot write"));
	free(out);
	snprintf(args, sizeof(args), "%s/x.html", dir);
	assert_int_equal(access(args, F_OK), -1);
	snprintf(args, sizeof(args), "report --threshold abc '%s' -o -", fx("calls.json"));
	assert_int_equal(run(args, &out), 2);
	free(out);
	/* -o - writes the page to stdout */
	snprintf(args, sizeof(args), "report '%s' -o -", fx("stat.json"));
	assert_int_equal(run(args, &out), 0);
	assert_int_equal(strncmp(out, "<!DOCTYPE html>", 15), 0);
	assert_non_null(strstr(out, "</html>"));
	free(out);
}

static void test_plot_cli(void **state)
{
	char args[2048], path[1024], why[128], *out = NULL, *svg;
	struct tpng img;

	(void)state;
	snprintf(path, sizeof(path), "%s/calls.png", dir);
	snprintf(args, sizeof(args), "plot '%s' -o '%s'", fx("calls.json"), path);
	assert_int_equal(run(args, &out), 0);
	assert_string_equal(out, "");	/* no warning: nothing overlaps or is clipped */
	free(out);
	if (tpng_read(path, false, &img, why, sizeof(why)))
		fail_msg("%s: %s", path, why);
	assert_int_equal(img.width, 1100);
	assert_true(img.height > 800 && img.height < 1500);

	snprintf(path, sizeof(path), "%s/one.svg", dir);
	snprintf(args, sizeof(args), "plot '%s' --workload calls-4096 -o '%s'", fx("calls.json"),
		 path);
	assert_int_equal(run(args, &out), 0);
	free(out);
	svg = slurp(path);
	assert_non_null(strstr(svg, "<title>noplab bench: calls-4096</title>"));
	assert_null(strstr(svg, "calls-256"));
	free(svg);

	snprintf(args, sizeof(args), "plot '%s' --workload calls-1 -o '%s'", fx("calls.json"), path);
	assert_int_equal(run(args, &out), 2);
	assert_non_null(strstr(out, "no workload 'calls-1'"));
	free(out);
	snprintf(args, sizeof(args), "plot '%s' -o '%s/s.svg'", fx("stat.json"), dir);
	assert_int_equal(run(args, &out), 3);
	assert_non_null(strstr(out, "not a noplab bench result (command 'stat')"));
	free(out);
	snprintf(args, sizeof(args), "plot '%s'", fx("calls.json"));
	assert_int_equal(run(args, &out), 2);
	free(out);
	snprintf(args, sizeof(args), "plot '%s' -o '%s/c.gif'", fx("calls.json"), dir);
	assert_int_equal(run(args, &out), 2);
	assert_non_null(strstr(out, ".svg, .png or .pdf"));
	free(out);
	snprintf(args, sizeof(args), "plot '%s/none.json' -o '%s/c.svg'", dir, dir);
	assert_int_equal(run(args, &out), 3);
	free(out);
}

/* ---- in a browser ---------------------------------------------------------- */

static char chromium[256];

static bool find_chromium(void)
{
	char *out = NULL;

	if (chromium[0])
		return true;
	nltest_run("for b in chromium chromium-browser google-chrome; do command -v $b && break; "
		   "done 2>/dev/null", &out);
	if (out && out[0]) {
		out[strcspn(out, "\n")] = '\0';
		snprintf(chromium, sizeof(chromium), "%s", out);
	}
	free(out);
	return chromium[0] != '\0';
}

/* Run headless Chromium on page with extra flags; stdout into *out, stderr kept in errpath. */
static int browse(const char *page, const char *flags, char **out, char *errpath, size_t size)
{
	char cmd[4096];
	static int k;

	snprintf(errpath, size, "%s/chromium-%d.err", dir, ++k);
	snprintf(cmd, sizeof(cmd),
		 "HOME='%s' timeout 180 '%s' --headless --no-sandbox --disable-gpu "
		 "--disable-dev-shm-usage --disable-background-networking --disable-component-update "
		 "--disable-sync --no-first-run --no-default-browser-check --hide-scrollbars "
		 "--enable-logging=stderr --v=0 --user-data-dir='%s/profile-%d' %s 'file://%s' 2>'%s'",
		 dir, chromium, dir, k, flags, page, errpath);
	return nltest_run(cmd, out);
}

/* Console messages: a CSP violation, a script error, a failed load would each be one. */
static void no_console(const char *errpath)
{
	char *err = slurp(errpath);
	const char *c = strstr(err, ":CONSOLE");

	if (c)
		fail_msg("the browser's console: %.400s", c);
	free(err);
}

static void test_browser_dom(void **state)
{
	char list[4096], errpath[1024], *path, *dom = NULL;
	size_t imgs;
	int st;

	(void)state;
	if (!find_chromium()) {
		print_message("chromium is not installed: the browser tests skip\n");
		skip();
	}
	snprintf(list, sizeof(list), "'%s' '%s' '%s' '%s' '%s'", fx("calls.json"), fx("calls-b.json"),
		 fx("sweep.json"), fx("layout-sim.json"), fx("stat.json"));
	path = report(list, "dom.html");
	st = browse(path, "--dump-dom", &dom, errpath, sizeof(errpath));
	if (st)
		fail_msg("chromium --dump-dom: status %d", st);
	no_console(errpath);
	imgs = count(dom, "<img ");
	assert_int_equal(imgs, 6);
	/* every chart decoded: onload ran (the CSP allowed it by hash); none failed */
	assert_int_equal(count(dom, "data-loaded=\"1\""), imgs);
	assert_int_equal(count(dom, "data-broken"), 0);
	assert_int_equal(count(dom, "<figure>"), imgs);
	assert_true(count(dom, "<table") >= 12);
	assert_non_null(strstr(dom, "<h3>sweep-128</h3>"));
	assert_non_null(strstr(dom, "significantly lower"));
	assert_null(strstr(dom, "<script"));
	free(dom);
	free(path);

	/* hostile text stays text in the DOM */
	snprintf(list, sizeof(list), "'%s'", fx("hostile.json"));
	path = report(list, "hostile-dom.html");
	st = browse(path, "--dump-dom", &dom, errpath, sizeof(errpath));
	if (st)
		fail_msg("chromium --dump-dom: status %d", st);
	no_console(errpath);
	assert_null(strstr(dom, "<script"));
	assert_null(strstr(dom, "<b>256"));
	assert_null(strstr(dom, "<img src=\"x\""));
	assert_non_null(strstr(dom, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_int_equal(count(dom, "data-loaded=\"1\""), 1);
	free(dom);
	free(path);
}

static void test_browser_screenshot(void **state)
{
	char list[1200], errpath[1024], shot[1100], flags[1300], why[128], *path, *out = NULL;
	struct tpng img;
	size_t ink;
	int st;

	(void)state;
	if (!find_chromium()) {
		print_message("chromium is not installed: the browser tests skip\n");
		skip();
	}
	snprintf(list, sizeof(list), "'%s'", fx("calls.json"));
	path = report(list, "shot.html");
	snprintf(shot, sizeof(shot), "%s/shot.png", dir);
	snprintf(flags, sizeof(flags), "--window-size=1280,2400 --screenshot='%s'", shot);
	st = browse(path, flags, &out, errpath, sizeof(errpath));
	if (st)
		fail_msg("chromium --screenshot: status %d\n%s", st, out ? out : "");
	free(out);
	no_console(errpath);
	if (tpng_read(shot, true, &img, why, sizeof(why)))
		fail_msg("%s: %s", shot, why);
	assert_int_equal(img.width, 1280);
	assert_int_equal(img.height, 2400);
	ink = tpng_count(&img, 0, 0, img.width, img.height, px_not_white);
	if (ink < (size_t)img.width * img.height / 50)
		fail_msg("the screenshot is nearly blank (%zu inked pixels)", ink);
	/* the first chart drew: its blue bars and the orange "call" bar are on screen */
	if (tpng_count(&img, 0, 0, img.width, img.height, px_blue) < 1000 ||
	    tpng_count(&img, 0, 0, img.width, img.height, px_orange) < 1000)
		fail_msg("no chart colours in the screenshot");
	tpng_free(&img);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_page),
		cmocka_unit_test(test_report_escapes),
		cmocka_unit_test(test_report_errors),
		cmocka_unit_test(test_plot_cli),
		cmocka_unit_test(test_browser_dom),
		cmocka_unit_test(test_browser_screenshot),
	};
	int ret;

	dir = nltest_tmpdir("report");
	if (!dir)
		return 1;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	if (ret)
		free(dir);	/* the files of a failed run stay, to look at */
	else if (nltest_rmtree(dir))
		ret = 1;
	return ret;
}
