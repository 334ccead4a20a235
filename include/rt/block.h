/*
 * block.h - a run's consecutive samples in one stored value.
 *
 * The samples database maps (run, seq) to what is stored for that seq: one
 * sample's bytes (a packed record, pack.h, or rt 0.1's raw record), or,
 * since blocks, a block of the run's consecutive samples keyed by its
 * first seq:
 *
 *   'B' form            form 1
 *   varint run, first   the run's id and its first record's seq (the
 *                       key's: a block found on a page by itself, its
 *                       leaf lost, still says whose samples it holds)
 *   varint count        records in the block, at least one
 *   varint span         last seq - first seq
 *   per record: varint step (seq - the previous record's; 0 for the first,
 *   whose seq is the key's), varint len (at least 1), the record's stored
 *   bytes (a packed record, which keeps its own CRC-32C)
 *
 * A block is at most RT_BLOCK_MAX bytes: one 4 KiB overflow page of LMDB,
 * so a closed block costs a page nearly full and one small node in a leaf,
 * where a value per sample cost 26 bytes of key and node on leaves about
 * half full (docs/architecture.md, "What the store's bytes are made of").
 * A packed record never starts with 'B' ('P'), nor does rt 0.1's raw one.
 */
#ifndef RT_BLOCK_H
#define RT_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#define RT_BLOCK_TAG 'B'
#define RT_BLOCK_FORM 1
#define RT_BLOCK_MAX 4080   /* a 4 KiB page less LMDB's page header */
#define RT_BLOCK_HDR_MAX 42 /* tag, form and four varints */

/* A block being built: the records after room for the header. */
struct rt_block {
	unsigned char buf[RT_BLOCK_HDR_MAX + RT_BLOCK_MAX];
	size_t len; /* record bytes, from buf + RT_BLOCK_HDR_MAX */
	uint64_t run, first, last;
	unsigned count;
};

static inline void rt_block_reset(struct rt_block *b)
{
	b->len = 0;
	b->count = 0;
}

/* Add sample seq of run (its stored bytes; seq above the block's last).
 * 0, or -ENOSPC when the block would exceed RT_BLOCK_MAX (the block is
 * unchanged), or -EINVAL when seq is not above its last, the block is
 * another run's or len is 0. */
int rt_block_add(struct rt_block *b, uint64_t run, uint64_t seq, const void *rec, size_t len);
/* The value to store at (run, b->first): header and records, in b's own
 * buffer (valid until b changes), *len its length. Cannot fail. */
const void *rt_block_value(struct rt_block *b, size_t *len);

/* 1 when a stored value is a block (its tag). */
int rt_block_is(const void *v, size_t len);
/* The length of the block at the start of bytes that may go on past it
 * (an overflow page found alone), its run and first seq; 0 when they do
 * not start with a whole block. */
size_t rt_block_measure(const void *v, size_t len, uint64_t *run, uint64_t *first);

/*
 * The samples in a stored value, whichever form, in seq order: a single
 * value gives one (at the key's seq), a block each of its records. The
 * records point into the value (byte-aligned).
 */
struct rt_stored_it {
	const unsigned char *p, *end;
	uint64_t seq, last; /* the last given, the block's last by its span */
	unsigned left;      /* records still to give */
	int block, started;
};

/* Begin on the value stored at key (run, seq `key`). 0, or RT_E_CORRUPT
 * when a block's header cannot be read or names another key
 * (rt_stored_next then gives nothing). */
int rt_stored_begin(struct rt_stored_it *it, uint64_t run, uint64_t key, const void *v, size_t len);
/* 1 with the next sample's seq and bytes, 0 at the end, RT_E_CORRUPT when
 * the rest of a block cannot be read (*seq: the seq damage starts at). */
int rt_stored_next(struct rt_stored_it *it, uint64_t *seq, const void **rec, size_t *len);
/* The last seq a value stored at (run, key) holds (a block's by its span). */
uint64_t rt_stored_last(uint64_t run, uint64_t key, const void *v, size_t len);

#endif
