/* SPDX-License-Identifier: MIT */
#ifndef NOPLAB_CLI_JSON_GET_H
#define NOPLAB_CLI_JSON_GET_H

/* Reading saved results: a missing or mistyped key is "" or "not there", never a crash. */
#include <jansson.h>
#include <math.h>
#include <stdbool.h>

static inline const char *cli_jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

/* A finite number under k; false leaves *v alone (JSON has no NaN, a hostile file may say 1e999). */
static inline bool cli_jnum(const json_t *o, const char *k, double *v)
{
	const json_t *x = json_object_get(o, k);

	if (!json_is_number(x) || !isfinite(json_number_value(x)))
		return false;
	*v = json_number_value(x);
	return true;
}

#endif
