/* common.c - error text and tiny string helpers. */
#include "rt/common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *rt_strerror(int err)
{
	switch (err) {
	case RT_OK: return "success";
	case RT_E_CORRUPT: return "data failed validation (corrupt or truncated)";
	case RT_E_LAYOUT: return "unknown data layout (written by another rt version?)";
	case RT_E_AGAIN: return "not available yet";
	case RT_E_LAPPED: return "overwritten in the ring";
	case RT_E_NOTFOUND: return "not found";
	case RT_E_STORE: return "store (LMDB) error";
	case RT_E_RANGE: return "value out of range";
	case RT_E_SYNTAX: return "syntax error";
	case RT_E_FULL: return "table full";
	case RT_E_DEAD: return "writer is gone";
	case RT_E_NET: return "no answer from the server";
	case RT_E_HTTP: return "the server answered with an error";
	case RT_E_PROTOCOL: return "the server's answer cannot be used";
	case RT_E_CONFIG: return "invalid setting";
	case RT_E_BUSY: return "the store is in use or being compacted";
	case RT_E_CREDS: return "the credentials expired or are no longer valid";
	case RT_E_UNSAFE: return "not safe to use (another user owns it or can write it)";
	default: break;
	}
	if (err < 0 && err > -4096)
		return strerror(-err);
	return "unknown error";
}

void rt_strlcpy_n(char *dst, size_t cap, const char *src, size_t len)
{
	if (cap == 0)
		return;
	if (len >= cap)
		len = cap - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

void rt_vmessage(const char *prog, const char *fmt, va_list ap)
{
	char msg[2048];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "%s: %s\n", prog, msg);
}

void rt_message(const char *prog, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rt_vmessage(prog, fmt, ap);
	va_end(ap);
}

void rt_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* the lowest free descriptor is fd; close-on-exec, so a command
		 * started later finds it closed, as its caller left it */
		/* raw: /dev/null, the system's */
		int n = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (n >= 0 && n != fd)
			close(n); /* cannot happen: fd was the lowest free one */
	}
}
