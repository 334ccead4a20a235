/*
 * block.c - a run's consecutive samples in one stored value (block.h):
 * building one, and reading any stored value as its samples.
 */
#include "rt/block.h"

#include <errno.h>
#include <string.h>

#include "rt/common.h"
#include "rt/pack.h"

static size_t varint_len(uint64_t x)
{
	size_t n = 1;
	while (x >= 0x80) {
		x >>= 7;
		n++;
	}
	return n;
}

static size_t header_len(uint64_t run, uint64_t first, unsigned count, uint64_t span)
{
	return 2 + varint_len(run) + varint_len(first) + varint_len(count) + varint_len(span);
}

int rt_block_add(struct rt_block *b, uint64_t run, uint64_t seq, const void *rec, size_t len)
{
	if (!len || (b->count && (seq <= b->last || run != b->run)))
		return -EINVAL;
	uint64_t step = b->count ? seq - b->last : 0;
	uint64_t first = b->count ? b->first : seq;
	size_t add = varint_len(step) + varint_len(len) + len;
	if (header_len(run, first, b->count + 1, seq - first) + b->len + add > RT_BLOCK_MAX)
		return -ENOSPC;
	unsigned char *p = b->buf + RT_BLOCK_HDR_MAX + b->len;
	p = rt_varint_put(p, step);
	p = rt_varint_put(p, len);
	memcpy(p, rec, len);
	b->len += add;
	b->run = run;
	b->first = first;
	b->last = seq;
	b->count++;
	return 0;
}

const void *rt_block_value(struct rt_block *b, size_t *len)
{
	size_t h = header_len(b->run, b->first, b->count, b->last - b->first);
	unsigned char *start = b->buf + RT_BLOCK_HDR_MAX - h, *p = start;
	*p++ = RT_BLOCK_TAG;
	*p++ = RT_BLOCK_FORM;
	p = rt_varint_put(p, b->run);
	p = rt_varint_put(p, b->first);
	p = rt_varint_put(p, b->count);
	rt_varint_put(p, b->last - b->first);
	*len = h + b->len;
	return start;
}

int rt_block_is(const void *v, size_t len)
{
	return len >= 1 && ((const unsigned char *)v)[0] == RT_BLOCK_TAG;
}

/* A block's header. 0 or RT_E_CORRUPT. */
struct header {
	uint64_t run, first, count, span;
};

static int read_header(const unsigned char **p, const unsigned char *end, struct header *h)
{
	if (end - *p < 2 || (*p)[0] != RT_BLOCK_TAG || (*p)[1] != RT_BLOCK_FORM)
		return RT_E_CORRUPT;
	*p += 2;
	if (rt_varint_get(p, end, &h->run) || rt_varint_get(p, end, &h->first) ||
	    rt_varint_get(p, end, &h->count) || rt_varint_get(p, end, &h->span) || h->count == 0 ||
	    h->count > (uint64_t)(end - *p) || h->span > UINT64_MAX - h->first)
		return RT_E_CORRUPT;
	return 0;
}

int rt_stored_begin(struct rt_stored_it *it, uint64_t run, uint64_t key, const void *v, size_t len)
{
	memset(it, 0, sizeof(*it));
	it->p = v;
	it->end = it->p + len;
	it->seq = key;
	it->last = key;
	if (!rt_block_is(v, len)) {
		it->left = 1;
		return 0;
	}
	it->block = 1;
	struct header h;
	if (read_header(&it->p, it->end, &h) || h.run != run || h.first != key)
		return RT_E_CORRUPT; /* left 0: nothing given */
	it->left = (unsigned)h.count;
	it->last = key + h.span;
	return 0;
}

int rt_stored_next(struct rt_stored_it *it, uint64_t *seq, const void **rec, size_t *len)
{
	if (!it->left)
		return 0;
	if (!it->block) {
		it->left = 0;
		*seq = it->seq;
		*rec = it->p;
		*len = (size_t)(it->end - it->p);
		return 1;
	}
	uint64_t step, n;
	*seq = it->started ? it->seq + 1 : it->seq;
	if (rt_varint_get(&it->p, it->end, &step) || rt_varint_get(&it->p, it->end, &n) ||
	    (it->started ? step == 0 : step != 0) || step > it->last - it->seq || n == 0 ||
	    n > (uint64_t)(it->end - it->p) ||
	    (it->left == 1 && (it->seq + step != it->last || it->p + n != it->end))) {
		it->left = 0;
		return RT_E_CORRUPT;
	}
	it->seq += step;
	it->started = 1;
	it->left--;
	*seq = it->seq;
	*rec = it->p;
	*len = (size_t)n;
	it->p += n;
	return 1;
}

uint64_t rt_stored_last(uint64_t run, uint64_t key, const void *v, size_t len)
{
	struct rt_stored_it it;
	return rt_stored_begin(&it, run, key, v, len) ? key : it.last;
}

size_t rt_block_measure(const void *v, size_t len, uint64_t *run, uint64_t *first)
{
	const unsigned char *p = v, *end = p + len;
	struct header h;
	if (read_header(&p, end, &h))
		return 0;
	uint64_t step, n;
	for (uint64_t i = 0; i < h.count; i++)
		if (rt_varint_get(&p, end, &step) || rt_varint_get(&p, end, &n) || n == 0 ||
		    n > (uint64_t)(end - p))
			return 0;
		else
			p += n;
	*run = h.run;
	*first = h.first;
	return (size_t)(p - (const unsigned char *)v);
}
