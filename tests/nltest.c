// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "nltest.h"

size_t nltest_hex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	while (*s && n < cap) {
		while (*s && !isxdigit((unsigned char)*s))
			s++;
		if (!*s)
			break;
		out[n++] = (uint8_t)strtoul(s, (char **)&s, 16);
	}
	return n;
}

int nltest_run(const char *cmd, char **out)
{
	FILE *p = popen(cmd, "r");
	size_t cap = 1 << 16, len = 0;
	char *buf;
	int status;

	if (out)
		*out = NULL;
	if (!p)
		return -1;
	buf = malloc(cap);
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
		size_t r = fread(buf + len, 1, 4096, p);

		if (!r)
			break;
		len += r;
	}
	buf[len] = '\0';
	status = pclose(p);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

char *nltest_tmpdir(const char *tag)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *path = malloc(strlen(base) + strlen(tag) + 32);

	sprintf(path, "%s/noplab-%s-XXXXXX", base, tag);
	if (!mkdtemp(path)) {
		free(path);
		return NULL;
	}
	return path;
}

int nltest_rmtree(char *dir)
{
	char *cmd;
	int ret;

	if (!dir)
		return 0;
	cmd = malloc(strlen(dir) + 16);
	if (!cmd) {
		free(dir);
		return -1;
	}
	/* the directory comes from mkdtemp(): no quote in it */
	sprintf(cmd, "rm -rf '%s'", dir);
	ret = nltest_run(cmd, NULL) ? -1 : 0;
	free(cmd);
	free(dir);
	return ret;
}

const char *nltest_noplab(void)
{
	const char *bin = getenv("NOPLAB_BIN");

	return bin ? bin : "noplab";
}
