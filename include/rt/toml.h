/*
 * toml.h - a bounded TOML 1.0 reader for the config file.
 *
 * Every valid TOML 1.0 document is accepted (all string, number, date and
 * time forms, inline tables, dotted keys, arrays of tables) and every
 * invalid one refused with its line (duplicate keys, redefined tables, bad
 * escapes, invalid dates or numbers, control characters, invalid UTF-8).
 * It never reads past len and never trusts a NUL.
 */
#ifndef RT_TOML_H
#define RT_TOML_H

#include <stddef.h>
#include <stdint.h>

enum rt_toml_type { RT_TOML_STRING, RT_TOML_INT, RT_TOML_FLOAT, RT_TOML_BOOL, RT_TOML_OTHER };

struct rt_toml_value {
	enum rt_toml_type type;
	const char *str; /* decoded string (NUL-terminated) for RT_TOML_STRING */
	int64_t i;
	double f;
	int b;
};

/* Called for each scalar key; table is "" or "job", key the last part. */
typedef void (*rt_toml_cb)(void *ctx, const char *table, const char *key,
                           const struct rt_toml_value *v);

/*
 * Parse len bytes. Returns 0, or RT_E_SYNTAX with *err_line (1-based) and
 * a short reason in err (errcap bytes). Values seen before an error have
 * already been passed to cb; callers that want all-or-nothing collect first.
 */
int rt_toml_parse(const char *buf, size_t len, rt_toml_cb cb, void *ctx, int *err_line, char *err,
                  size_t errcap);

#endif
