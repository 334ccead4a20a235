/*
 * common.h - error codes and small helpers shared by every rt module.
 *
 * Library code never prints and never exits: it returns 0 or a negative
 * RT_E* / -errno value, and the program's main() turns that into a one-line
 * message for a person (rt_strerror).
 */
#ifndef RT_COMMON_H
#define RT_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define RT_VERSION "0.1.0"

enum rt_err {
	RT_OK = 0,
	/* -1 .. -4095 are -errno values */
	RT_E_CORRUPT = -10001,  /* bytes failed validation (magic, size, CRC) */
	RT_E_LAYOUT = -10002,   /* record/ring/inventory of an unknown layout */
	RT_E_AGAIN = -10003,    /* not there yet (ring slot not written) */
	RT_E_LAPPED = -10004,   /* ring slot overwritten by a newer seq */
	RT_E_NOTFOUND = -10005, /* run, seq or inventory not in the store */
	RT_E_STORE = -10006,    /* LMDB failure (see rt_store_last_error) */
	RT_E_RANGE = -10007,    /* value out of the accepted range */
	RT_E_SYNTAX = -10008,   /* unparsable input */
	RT_E_FULL = -10009,     /* fixed-capacity table full */
	RT_E_DEAD = -10010,     /* the ring's writer is gone */
	RT_E_NET = -10011,      /* no answer from a server (connection, timeout, TLS) */
	RT_E_HTTP = -10012,     /* a server answered with an error status */
	RT_E_PROTOCOL = -10013, /* a server's 2xx answer cannot be used */
	RT_E_CONFIG = -10014,   /* a setting is invalid (a URL, a number) */
	RT_E_BUSY = -10015,     /* the store is in use (compact) or being compacted */
	RT_E_CREDS = -10016,    /* a server refused the credentials as expired or invalid */
	RT_E_UNSAFE = -10017,   /* a file or directory someone else owns or can write */
};

/* Human-readable text for an rt error code or -errno. Never NULL. */
const char *rt_strerror(int err);

#define RT_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The one-line message format of both programs: "prog: message\n" on
 * stderr (for main() and the exporter's edge code, never library code). */
void rt_vmessage(const char *prog, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
void rt_message(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Put /dev/null on each of descriptors 0-2 that is closed, before anything
 * else is opened: otherwise the first file opened (the store) becomes
 * stdout or stderr and output lands in it. They are close-on-exec.
 */
void rt_std_fds(void);

/* Copy at most cap-1 bytes of src[0..len) into dst and NUL-terminate. */
void rt_strlcpy_n(char *dst, size_t cap, const char *src, size_t len);

#endif
