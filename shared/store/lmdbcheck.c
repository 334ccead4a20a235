/*
 * lmdbcheck.c - a structural check of an LMDB data file, page by page
 * (see lmdbcheck.h).
 *
 * LMDB trusts its file: a write that follows a tampered page header or
 * node offset moves memory by what the bytes say (a delete on such a store
 * corrupted the heap). Before rt writes into a store it did not just
 * write itself (delete, compact, salvage, the size cap), every page the
 * snapshot reaches is read with pread (a short read is an answer, not a
 * SIGBUS) and checked against the format of LMDB 0.9 (its data version 1):
 *
 *   meta      magic, version, page size, last page, the two root databases
 *   page      its own number, its kind (branch above the leaves, leaf at
 *             the tree's depth, overflow where a node points), lower and
 *             upper within the page, reached once only
 *   node      inside the page, between upper and the page's end, with its
 *             key (and its value, or the overflow page it names) inside
 *   keys      strictly increasing in each page (byte order, then length;
 *             the free list's by native integer)
 *   counts    the leaves' entries and the branch, leaf and overflow pages
 *             equal what each database's record says
 *   free list each page it names is below the last page, named once, and
 *             reached by no tree
 *
 * Only what rt's stores use is accepted: no duplicate-sorted databases.
 */
#define _GNU_SOURCE
#include "rt/lmdbcheck.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lmdbfmt.h"

#define META_MAGIC 0xBEEFC0DEu
#define DATA_VERSION 1u
#define DB_SIZE 48u
#define P_KINDS (P_BRANCH | P_LEAF | P_OVERFLOW | 0x08u | 0x20u | 0x40u)
#define P_INVALID UINT64_MAX
#define MAX_DEPTH 32u

struct db {
	uint16_t flags, depth;
	uint64_t branch, leaf, overflow, entries, root;
};

struct ck {
	int fd;
	unsigned psize;
	uint64_t npages;
	uint8_t *seen, *freed;
	uint64_t nbranch, nleaf, noverflow, nentries; /* of the database walked */
	char *why;
	size_t cap;
};

static int bad(struct ck *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct ck *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, c->cap, fmt, ap);
	va_end(ap);
	return -1;
}

static void get_db(const uint8_t *p, struct db *d)
{
	d->flags = u16(p + 4);
	d->depth = u16(p + 6);
	d->branch = u64(p + 8);
	d->leaf = u64(p + 16);
	d->overflow = u64(p + 24);
	d->entries = u64(p + 32);
	d->root = u64(p + 40);
}

static int mark(struct ck *c, uint64_t pgno, const char *what)
{
	if (pgno < 2 || pgno >= c->npages)
		return bad(c, "%s page %llu is outside the file's pages (2..%llu)", what,
		           (unsigned long long)pgno, (unsigned long long)c->npages - 1);
	if (c->seen[pgno / 8] & (1u << (pgno % 8)))
		return bad(c, "page %llu is reached twice", (unsigned long long)pgno);
	c->seen[pgno / 8] |= (uint8_t)(1u << (pgno % 8));
	return 0;
}

static int read_page(struct ck *c, uint64_t pgno, uint8_t *buf)
{
	ssize_t n = pread(c->fd, buf, c->psize, (off_t)(pgno * c->psize));
	if (n != (ssize_t)c->psize)
		return bad(c, "page %llu cannot be read (%s)", (unsigned long long)pgno,
		           n < 0 ? strerror(errno) : "the file ends before it");
	if (u64(buf) != pgno)
		return bad(c, "page %llu says it is page %llu", (unsigned long long)pgno,
		           (unsigned long long)u64(buf));
	return 0;
}

/* Overflow pages that hold one big value of dsize bytes. */
static int overflow(struct ck *c, uint64_t pgno, uint64_t dsize, uint8_t *buf)
{
	if (read_page(c, pgno, buf))
		return -1;
	uint32_t pages = u32(buf + 12);
	if ((u16(buf + 10) & P_KINDS) != P_OVERFLOW || pages == 0 || pgno + pages > c->npages ||
	    dsize > (uint64_t)pages * c->psize - PAGEHDRSZ)
		return bad(c, "overflow page %llu is malformed", (unsigned long long)pgno);
	for (uint32_t i = 0; i < pages; i++)
		if (mark(c, pgno + i, "an overflow"))
			return -1;
	c->noverflow += pages;
	return 0;
}

/* A free-list record: a count, then that many page numbers. */
static int free_record(struct ck *c, const uint8_t *v, uint64_t dsize)
{
	uint64_t cnt = dsize >= 8 ? u64(v) : 0;
	if (dsize < 8 || cnt > dsize / 8 || (cnt + 1) * 8 != dsize)
		return bad(c, "a free-list record has %llu bytes for %llu pages",
		           (unsigned long long)dsize, (unsigned long long)cnt);
	for (uint64_t k = 1; k <= cnt; k++) {
		uint64_t f = u64(v + k * 8);
		if (f < 2 || f >= c->npages || (c->freed[f / 8] & (1u << (f % 8))))
			return bad(c, "the free list names page %llu wrongly",
			           (unsigned long long)f);
		c->freed[f / 8] |= (uint8_t)(1u << (f % 8));
	}
	return 0;
}

/* A free-list record too big for its page, in overflow pages at opg. */
static int big_free_record(struct ck *c, uint64_t opg, uint64_t dsize)
{
	uint8_t *all = malloc((size_t)dsize);
	if (!all)
		return bad(c, "out of memory");
	int rc =
	    pread(c->fd, all, (size_t)dsize, (off_t)(opg * c->psize + PAGEHDRSZ)) == (ssize_t)dsize
	        ? free_record(c, all, dsize)
	        : bad(c, "overflow page %llu cannot be read", (unsigned long long)opg);
	free(all);
	return rc;
}

static int key_order(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, int intkey)
{
	if (intkey) {
		uint64_t x = alen == 8 ? u64(a) : 0, y = blen == 8 ? u64(b) : 0;
		return x < y ? -1 : x > y;
	}
	int r = memcmp(a, b, alen < blen ? alen : blen);
	return r ? r : (alen > blen) - (alen < blen);
}

static int walk_db(struct ck *c, const struct db *d, int kind, const char *name);

/* A key range a page's keys must lie in: [lo, hi), NULL for no bound. */
struct range {
	const uint8_t *lo, *hi;
	size_t lolen, hilen;
};

/* A page's header: the kind depth says it must be, and sound bounds.
 * The number of its nodes into *nkeys (0 when not sound). */
static int page_header(struct ck *c, uint64_t pgno, const uint8_t *buf, int leaf, unsigned *nkeys)
{
	unsigned flags = u16(buf + 10) & P_KINDS;
	unsigned lower = u16(buf + 12), upper = u16(buf + 14);
	*nkeys = 0;
	if (flags != (leaf ? P_LEAF : P_BRANCH))
		return bad(c, "page %llu is a %s page where a %s was expected",
		           (unsigned long long)pgno,
		           flags == P_LEAF     ? "leaf"
		           : flags == P_BRANCH ? "branch"
		                               : "malformed",
		           leaf ? "leaf" : "branch");
	if (lower < PAGEHDRSZ || lower > upper || upper > c->psize || (lower - PAGEHDRSZ) % 2 ||
	    lower == PAGEHDRSZ)
		return bad(c, "page %llu has bounds %u..%u", (unsigned long long)pgno, lower,
		           upper);
	*nkeys = (lower - PAGEHDRSZ) / 2;
	return 0;
}

/* The keys of a branch page's child i lie between its separator and the
 * next one (within the page's own range r). */
static struct range child_range(const struct ck *c, const uint8_t *buf, unsigned upper, unsigned i,
                                unsigned nkeys, const uint8_t *key, unsigned ksize,
                                const struct range *r)
{
	struct range cr = {i ? key : r->lo, r->hi, i ? ksize : r->lolen, r->hilen};
	if (i + 1 < nkeys) {
		unsigned noff = u16(buf + PAGEHDRSZ + 2 * (i + 1));
		if (noff >= upper && noff + NODESIZE <= c->psize &&
		    noff + NODESIZE + u16(buf + noff + 6) <= c->psize) {
			cr.hi = buf + noff + NODESIZE;
			cr.hilen = u16(buf + noff + 6);
		}
	}
	return cr;
}

/* A named database held in the main one's leaf node i: walked with its
 * own counts (the main database's are kept aside meanwhile). */
static int named_db(struct ck *c, uint64_t pgno, unsigned i, const uint8_t *key, unsigned ksize,
                    const uint8_t *val, uint64_t dsize, int kind)
{
	if (kind != 1 || dsize != DB_SIZE)
		return bad(c, "page %llu: node %u holds a database where none can be",
		           (unsigned long long)pgno, i);
	struct db sub;
	char name[64];
	snprintf(name, sizeof(name), "%.*s", (int)(ksize < 40 ? ksize : 40), key);
	get_db(val, &sub);
	struct ck saved = *c;
	c->nbranch = c->nleaf = c->noverflow = c->nentries = 0;
	int rc = walk_db(c, &sub, 2, name);
	c->nbranch = saved.nbranch;
	c->nleaf = saved.nleaf;
	c->noverflow = saved.noverflow;
	c->nentries = saved.nentries;
	return rc;
}

/* Leaf node i's value (at off in the page): on overflow pages, a named
 * database, a free-list record, or in the page, within its bounds. obuf:
 * a page-sized buffer for overflow pages, made at first need. */
static int leaf_value(struct ck *c, uint64_t pgno, unsigned i, unsigned off, const uint8_t *n,
                      int kind, uint8_t **obuf)
{
	unsigned nflags = u16(n + 4), ksize = u16(n + 6);
	uint64_t dsize = (uint64_t)u16(n) | (uint64_t)u16(n + 2) << 16;
	const uint8_t *key = n + NODESIZE, *val = key + ksize;
	if (nflags & ~(unsigned)(F_BIGDATA | F_SUBDATA))
		return bad(c,
		           "page %llu: node %u has flags %#x (duplicate-sorted data is not rt's)",
		           (unsigned long long)pgno, i, nflags);
	if (nflags & F_BIGDATA) {
		if (off + NODESIZE + ksize + 8 > c->psize || (nflags & F_SUBDATA))
			return bad(c, "page %llu: node %u is malformed", (unsigned long long)pgno,
			           i);
		if (!*obuf && !(*obuf = malloc(c->psize)))
			return bad(c, "out of memory");
		uint64_t opg = u64(val);
		int rc = overflow(c, opg, dsize, *obuf);
		return !rc && kind == 0 ? big_free_record(c, opg, dsize) : rc;
	}
	if (off + NODESIZE + ksize + dsize > c->psize)
		return bad(c, "page %llu: node %u's value runs past the page",
		           (unsigned long long)pgno, i);
	if (nflags & F_SUBDATA)
		return named_db(c, pgno, i, key, ksize, val, dsize, kind);
	return kind == 0 ? free_record(c, val, dsize) : 0;
}

/* One page at depth (1: the root) of a tree depth pages deep, its keys
 * within r (its separators in the branch above). kind: 0 the free list, 1
 * the main database (named databases in it), 2 a named one. */
static int walk(struct ck *c, uint64_t pgno, unsigned depth, unsigned maxdepth, int kind,
                const struct range *r)
{
	if (mark(c, pgno, kind == 0 ? "a free-list" : "a tree"))
		return -1;
	uint8_t *buf = malloc(c->psize), *obuf = NULL;
	if (!buf)
		return bad(c, "out of memory");
	int leaf = depth == maxdepth;
	unsigned nkeys = 0, upper = 0;
	int rc = read_page(c, pgno, buf);
	if (!rc) {
		rc = page_header(c, pgno, buf, leaf, &nkeys);
		upper = u16(buf + 14);
	}
	if (leaf)
		c->nleaf++;
	else
		c->nbranch++;
	const uint8_t *pkey = NULL;
	size_t plen = 0;
	uint64_t packed = 0; /* the nodes' sizes: LMDB keeps them packed from upper on */
	for (unsigned i = 0; !rc && i < nkeys; i++) {
		unsigned off = u16(buf + PAGEHDRSZ + 2 * i);
		if (off < upper || off + NODESIZE > c->psize) {
			rc = bad(c, "page %llu: node %u at %u is outside %u..%u",
			         (unsigned long long)pgno, i, off, upper, c->psize);
			break;
		}
		const uint8_t *n = buf + off;
		unsigned nflags = u16(n + 4), ksize = u16(n + 6);
		uint64_t dsize = (uint64_t)u16(n) | (uint64_t)u16(n + 2) << 16;
		if (off + NODESIZE + ksize > c->psize) {
			rc = bad(c, "page %llu: node %u's key runs past the page",
			         (unsigned long long)pgno, i);
			break;
		}
		const uint8_t *key = n + NODESIZE;
		/* what LMDB will take the node's size to be when it moves or
		 * deletes it: a node that claims more than it has moves other
		 * nodes past the page (a write out of bounds) */
		uint64_t nsz = NODESIZE + ksize + (!leaf ? 0 : (nflags & F_BIGDATA) ? 8 : dsize);
		packed += (nsz + 1) & ~(uint64_t)1;
		if (off + nsz > c->psize) {
			rc = bad(c, "page %llu: node %u runs past the page",
			         (unsigned long long)pgno, i);
			break;
		}
		/* a branch page's first key is the lower bound of all: empty */
		if (leaf || i > 0) {
			if ((pkey && key_order(pkey, plen, key, ksize, kind == 0) >= 0) ||
			    (r->lo && key_order(r->lo, r->lolen, key, ksize, kind == 0) > 0) ||
			    (r->hi && key_order(key, ksize, r->hi, r->hilen, kind == 0) >= 0)) {
				rc = bad(c, "page %llu: keys out of order at node %u",
				         (unsigned long long)pgno, i);
				break;
			}
			pkey = key;
			plen = ksize;
		}
		if (!leaf) {
			struct range cr = child_range(c, buf, upper, i, nkeys, key, ksize, r);
			rc =
			    walk(c, dsize | (uint64_t)nflags << 32, depth + 1, maxdepth, kind, &cr);
			continue;
		}
		c->nentries++;
		rc = leaf_value(c, pgno, i, off, n, kind, &obuf);
	}
	if (!rc && packed != c->psize - upper)
		rc = bad(c, "page %llu: its nodes take %llu bytes of the %u from upper on",
		         (unsigned long long)pgno, (unsigned long long)packed, c->psize - upper);
	free(obuf);
	free(buf);
	return rc;
}

static int walk_db(struct ck *c, const struct db *d, int kind, const char *name)
{
	if (d->root == P_INVALID) {
		if (d->depth || d->entries || d->branch || d->leaf || d->overflow)
			return bad(c, "database %s is empty but counts pages", name);
		return 0;
	}
	if (d->depth == 0 || d->depth > MAX_DEPTH)
		return bad(c, "database %s has depth %u", name, d->depth);
	if (d->flags & ~0x7Fu) /* MDB_REVERSEKEY..MDB_REVERSEDUP, MDB_INTEGERKEY */
		return bad(c, "database %s has flags %#x", name, d->flags);
	if (kind != 0 && (d->flags & 0x7Eu))
		return bad(c, "database %s has flags %#x (rt's use none)", name, d->flags);
	struct range all = {NULL, NULL, 0, 0};
	if (walk(c, d->root, 1, d->depth, kind, &all))
		return -1;
	if (c->nentries != d->entries || c->nbranch != d->branch || c->nleaf != d->leaf ||
	    c->noverflow != d->overflow)
		return bad(
		    c,
		    "database %s counts %llu entries in %llu/%llu/%llu pages, its tree holds "
		    "%llu in %llu/%llu/%llu",
		    name, (unsigned long long)d->entries, (unsigned long long)d->branch,
		    (unsigned long long)d->leaf, (unsigned long long)d->overflow,
		    (unsigned long long)c->nentries, (unsigned long long)c->nbranch,
		    (unsigned long long)c->nleaf, (unsigned long long)c->noverflow);
	return 0;
}

int rt_lmdb_check(int fd, uint64_t txnid, char *why, size_t cap)
{
	struct ck c = {.fd = fd, .why = why, .cap = cap};
	why[0] = '\0';
	uint8_t head[256];
	if (pread(fd, head, sizeof(head), 0) != (ssize_t)sizeof(head))
		return bad(&c, "the file is shorter than its first page");
	unsigned psize = u32(head + PAGEHDRSZ + 24); /* FREE_DBI's md_pad */
	if (psize < 512 || psize > 65536 || (psize & (psize - 1)))
		return bad(&c, "page size %u", psize);
	c.psize = psize;
	uint8_t meta[2][256];
	for (int i = 0; i < 2; i++)
		if (pread(fd, meta[i], sizeof(meta[i]), (off_t)i * psize) !=
		    (ssize_t)sizeof(meta[i]))
			return bad(&c, "meta page %d cannot be read", i);
	const uint8_t *m = NULL;
	for (int i = 0; i < 2; i++) {
		const uint8_t *x = meta[i] + PAGEHDRSZ;
		if (u32(x) == META_MAGIC && u32(x + 4) == DATA_VERSION && u64(x + 128) == txnid)
			m = x;
	}
	if (!m)
		return bad(&c, "no meta page holds transaction %llu", (unsigned long long)txnid);
	uint64_t last = u64(m + 120);
	off_t end = lseek(fd, 0, SEEK_END);
	if (end < 0 || last < 1 || last >= (uint64_t)end / psize)
		return bad(&c, "the last page %llu is beyond the file's %llu pages",
		           (unsigned long long)last,
		           (unsigned long long)(end > 0 ? end / psize : 0));
	c.npages = last + 1;
	c.seen = calloc((size_t)(c.npages / 8 + 1), 1);
	c.freed = calloc((size_t)(c.npages / 8 + 1), 1);
	int rc = 0;
	if (!c.seen || !c.freed) {
		rc = bad(&c, "out of memory");
	} else {
		struct db fdb, mdb;
		get_db(m + 24, &fdb);
		get_db(m + 24 + DB_SIZE, &mdb);
		rc = walk_db(&c, &mdb, 1, "main");
		c.nbranch = c.nleaf = c.noverflow = c.nentries = 0;
		if (!rc)
			rc = walk_db(&c, &fdb, 0, "free list");
		for (uint64_t p = 2; !rc && p < c.npages; p++)
			if ((c.freed[p / 8] & (1u << (p % 8))) && (c.seen[p / 8] & (1u << (p % 8))))
				rc = bad(&c, "the free list names page %llu, which is in use",
				         (unsigned long long)p);
	}
	free(c.seen);
	free(c.freed);
	return rc;
}
