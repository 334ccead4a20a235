/* lmdbcarve.c - records found page by page (lmdbcarve.h), in LMDB 0.9's
 * format (lmdbfmt.h). */
#define _GNU_SOURCE
#include "rt/lmdbcarve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lmdbfmt.h"

struct carve {
	int fd;
	unsigned psize;
	uint64_t npages;
	rt_lmdb_carve_cb cb;
	void *ctx;
	uint8_t *big; /* a value read from overflow pages */
	size_t bigcap;
};

/* A value of dsize bytes in the overflow pages at opg, into c->big:
 * 0, or -1 when those pages are not an overflow run that holds it. */
static int read_big(struct carve *c, uint64_t opg, uint64_t dsize)
{
	uint8_t head[PAGEHDRSZ];
	if (opg < 2 || opg >= c->npages ||
	    pread(c->fd, head, sizeof(head), (off_t)(opg * c->psize)) != (ssize_t)sizeof(head))
		return -1;
	uint32_t pages;
	memcpy(&pages, head + 12, sizeof(pages));
	if (u64(head) != opg || !(u16(head + 10) & P_OVERFLOW) || pages == 0 ||
	    opg + pages > c->npages || dsize > (uint64_t)pages * c->psize - PAGEHDRSZ)
		return -1;
	if (dsize > c->bigcap) {
		uint8_t *b = realloc(c->big, (size_t)dsize);
		if (!b)
			return -1;
		c->big = b;
		c->bigcap = (size_t)dsize;
	}
	return pread(c->fd, c->big, (size_t)dsize, (off_t)(opg * c->psize + PAGEHDRSZ)) ==
	               (ssize_t)dsize
	           ? 0
	           : -1;
}

/* Each record of the leaf page pgno (in buf), within its bounds. */
static int leaf(struct carve *c, uint64_t pgno, const uint8_t *buf)
{
	unsigned lower = u16(buf + 12), upper = u16(buf + 14);
	if (lower < PAGEHDRSZ || lower > upper || upper > c->psize || (lower - PAGEHDRSZ) % 2)
		return 0;
	for (unsigned i = 0; i < (lower - PAGEHDRSZ) / 2; i++) {
		unsigned off = u16(buf + PAGEHDRSZ + 2 * i);
		if (off < upper || off + NODESIZE > c->psize)
			continue;
		const uint8_t *n = buf + off;
		unsigned nflags = u16(n + 4), ksize = u16(n + 6);
		uint64_t dsize = (uint64_t)u16(n) | (uint64_t)u16(n + 2) << 16;
		if ((nflags & (F_SUBDATA | F_DUPDATA)) || off + NODESIZE + ksize > c->psize)
			continue;
		const uint8_t *key = n + NODESIZE, *val = key + ksize;
		if (nflags & F_BIGDATA) {
			if (off + NODESIZE + ksize + 8 > c->psize || read_big(c, u64(val), dsize))
				continue;
			val = c->big;
		} else if (off + NODESIZE + ksize + dsize > c->psize) {
			continue;
		}
		int rc = c->cb(c->ctx, key, ksize, val, (size_t)dsize, pgno);
		if (rc)
			return rc;
	}
	return 0;
}

/* An overflow page run by itself (its leaf maybe lost): its first bytes,
 * at most RT_LMDB_CARVE_LOOSE_MAX, handed with no key. */
static int loose(struct carve *c, uint64_t pgno, const uint8_t *buf)
{
	uint32_t pages;
	memcpy(&pages, buf + 12, sizeof(pages));
	if (pages == 0 || pgno + pages > c->npages)
		return 0;
	uint64_t dsize = (uint64_t)pages * c->psize - PAGEHDRSZ;
	if (dsize > RT_LMDB_CARVE_LOOSE_MAX)
		dsize = RT_LMDB_CARVE_LOOSE_MAX;
	if (read_big(c, pgno, dsize))
		return 0;
	return c->cb(c->ctx, NULL, 0, c->big, (size_t)dsize, pgno);
}

int rt_lmdb_carve(int fd, rt_lmdb_carve_cb cb, void *ctx)
{
	uint8_t head[PAGEHDRSZ + 64];
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (pread(fd, head, sizeof(head), 0) != (ssize_t)sizeof(head))
		return -EIO;
	unsigned psize;
	memcpy(&psize, head + PAGEHDRSZ + 24, sizeof(psize)); /* FREE_DBI's md_pad */
	if (psize < 512 || psize > 65536 || (psize & (psize - 1)))
		psize = 4096; /* a damaged meta page: LMDB's page size on Linux */
	struct carve c = {
	    .fd = fd, .psize = psize, .npages = (uint64_t)st.st_size / psize, .cb = cb, .ctx = ctx};
	uint8_t *buf = malloc(psize);
	if (!buf)
		return -ENOMEM;
	int rc = 0;
	for (uint64_t pg = 2; pg < c.npages && !rc; pg++) {
		if (pread(fd, buf, psize, (off_t)(pg * psize)) != (ssize_t)psize)
			break;
		unsigned flags = u16(buf + 10);
		if (u64(buf) == pg && (flags & P_LEAF) && !(flags & (P_OVERFLOW | P_SUBP)))
			rc = leaf(&c, pg, buf);
		else if (u64(buf) == pg && flags == P_OVERFLOW)
			rc = loose(&c, pg, buf);
	}
	free(buf);
	free(c.big);
	return rc;
}
