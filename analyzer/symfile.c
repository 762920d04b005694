// SPDX-License-Identifier: MIT
/*
 * System.map, /proc/kallsyms and `nm` output: "ADDR TYPE NAME [MODULE]".
 * Lines that do not parse are counted and skipped rather than fatal: real
 * kallsyms files carry odd entries (module-less BPF symbols, very long names),
 * and the caller decides whether a file with no usable line is an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "noplab/symfile.h"

#define SYMFILE_MAX_BYTES (1ull << 30)

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parse one line of len bytes held in buf (a writable copy); names end up NUL-terminated. */
static bool parse_line(char *buf, size_t len, struct nl_symfile_entry *e)
{
	size_t i = 0, digits = 0;
	uint64_t addr = 0;
	char *name, *mod = NULL;

	while (i < len && is_space(buf[i]))
		i++;
	for (; i < len && hexval(buf[i]) >= 0; i++, digits++) {
		if (digits >= 16)
			return false;
		addr = addr << 4 | (uint64_t)hexval(buf[i]);
	}
	if (!digits || i >= len || !is_space(buf[i]))
		return false;
	while (i < len && is_space(buf[i]))
		i++;
	if (i + 1 >= len || !is_space(buf[i + 1]))
		return false;
	e->type = buf[i];
	i += 2;
	while (i < len && is_space(buf[i]))
		i++;
	if (i >= len)
		return false;
	name = buf + i;
	while (i < len && !is_space(buf[i]))
		i++;
	if (i < len) {
		buf[i++] = '\0';
		while (i < len && is_space(buf[i]))
			i++;
		if (i < len && buf[i] == '[') {
			mod = buf + i + 1;
			while (i < len && buf[i] != ']')
				i++;
			if (i >= len)
				return false;
			buf[i] = '\0';
		}
	} else {
		buf[len] = '\0';	/* the copy has room for it */
	}
	e->addr = addr;
	e->name = name;
	e->module = mod;
	return true;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct nl_symfile_entry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* file order among equal addresses: names point into one buffer in file order */
	return x->name < y->name ? -1 : x->name > y->name;
}

int nl_symfile_parse(const char *text, size_t len, struct nl_symfile **out, struct nl_diag *d)
{
	struct nl_symfile *sf = calloc(1, sizeof(*sf));
	size_t lines = 0, nonzero = 0;

	*out = NULL;
	if (!sf)
		return nl_fail_errno(d, -ENOMEM, "symbol file");
	sf->strings = malloc(len + 1);
	if (!sf->strings) {
		free(sf);
		return nl_fail_errno(d, -ENOMEM, "symbol file of %zu bytes", len);
	}
	memcpy(sf->strings, text, len);
	sf->strings[len] = '\0';
	for (size_t i = 0; i < len; i++)
		if (text[i] == '\n')
			lines++;
	sf->entries = calloc(lines + 1, sizeof(*sf->entries));
	if (!sf->entries) {
		nl_symfile_free(sf);
		return nl_fail_errno(d, -ENOMEM, "%zu symbol lines", lines + 1);
	}
	for (size_t pos = 0; pos < len;) {
		char *line = sf->strings + pos;
		char *nl = memchr(line, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - line) : len - pos;

		/* an embedded NUL would cut names short: such a line is bad */
		if (l && !memchr(line, '\0', l)) {
			if (parse_line(line, l, &sf->entries[sf->nr])) {
				if (sf->entries[sf->nr].addr)
					nonzero++;
				sf->nr++;
			} else {
				sf->nr_bad_lines++;
			}
		} else if (l) {
			sf->nr_bad_lines++;
		}
		pos += l + 1;
	}
	sf->all_zero = sf->nr && !nonzero;
	qsort(sf->entries, sf->nr, sizeof(*sf->entries), cmp_entry);
	*out = sf;
	return 0;
}

int nl_symfile_read(const char *path, struct nl_symfile **out, struct nl_diag *d)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int fd, err = 0;
	struct stat st;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return nl_fail_errno(d, -errno, "%s", path);
	if (!fstat(fd, &st) && S_ISDIR(st.st_mode)) {
		close(fd);
		return nl_fail(d, -EISDIR, "%s: is a directory", path);
	}
	/* read(), not the size: /proc/kallsyms reports size 0 */
	for (;;) {
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 1 << 20;
			char *nb;

			if (ncap > SYMFILE_MAX_BYTES) {
				err = nl_fail(d, -NL_E_LIMIT, "%s: larger than %llu MiB", path,
					      SYMFILE_MAX_BYTES >> 20);
				break;
			}
			nb = realloc(buf, ncap);
			if (!nb) {
				err = nl_fail_errno(d, -ENOMEM, "%s", path);
				break;
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t r = read(fd, buf + len, cap - len);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = nl_fail_errno(d, -errno, "%s", path);
			break;
		}
		if (!r)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (!err)
		err = nl_symfile_parse(buf ? buf : "", len, out, d);
	free(buf);
	return err;
}

void nl_symfile_free(struct nl_symfile *sf)
{
	if (!sf)
		return;
	free(sf->entries);
	free(sf->strings);
	free(sf);
}

const struct nl_symfile_entry *nl_symfile_find(const struct nl_symfile *sf, const char *name)
{
	const struct nl_symfile_entry *best = NULL;

	/* "first" means first in the file: the smallest name pointer */
	for (size_t i = 0; i < sf->nr; i++)
		if (!strcmp(sf->entries[i].name, name) && (!best || sf->entries[i].name < best->name))
			best = &sf->entries[i];
	return best;
}
