/*
 * pack.h - the stored form of a sample record.
 *
 * The store keeps records packed: every value of every section (record.h,
 * in the order pack.c lists them) as the zigzag varint of its change from
 * the same value in the run's previous record, the unchanged ones skipped
 * (a bitmap says which changed). A record is "full" (packed against zeros,
 * so a replay can start there) at every seq that is a multiple of
 * RT_PACK_FULL_EVERY, at the start of a run, when its shape (device
 * counts) differs from its predecessor's, and when its predecessor is not
 * the sample just before it.
 *
 *   'P' layout kind         kind 0: full, 1: delta
 *   varint flags, inv_gen
 *   full:  varint nsec; per section varint count, nvals;
 *          varint mono_ns; zigzag (wall_ns - mono_ns)
 *   delta: zigzag (mono interval - previous interval);
 *          zigzag change of (wall_ns - mono_ns)
 *   bitmap, one bit per value (sections, elements, values in order)
 *   zigzag varint of the change of each value whose bit is set
 *   CRC-32C of all the above, 4 bytes little-endian
 *
 * Growing: values appended to a section, and sections appended to the
 * record, are skipped by a reader that does not know them; values a writer
 * did not have are absent in what the reader gets (record.h, nvals). The
 * layout byte changes only when the form itself does; a reader meeting a
 * newer one says the run needs a newer rt (rt_record_claimed_layout).
 */
#ifndef RT_PACK_H
#define RT_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "rt/record.h"

/* RT_PACK_TAG and RT_PACK_MIN, the form's first byte and least size:
 * record.h */
#define RT_PACK_LAYOUT RT_RECORD_LAYOUT /* one number for both forms */
#define RT_PACK_FULL_EVERY 64
#define RT_PACK_MAX_SECTIONS 32 /* sections a stored record may declare */

/* The run's previous record, as the packer or unpacker last saw it. */
struct rt_pack_state {
	void *buf; /* aligned, rt_record_max_size() bytes */
	struct rt_record rec;
	uint64_t seq;
	int valid;
	uint64_t interval; /* mono_ns step into rec (0 after a full record) */
	/* the shape as stored: a newer writer's extra sections and values,
	 * which this rt skips, are counted here */
	unsigned nsec;
	uint16_t count[RT_PACK_MAX_SECTIONS];
	uint8_t nvals[RT_PACK_MAX_SECTIONS];
};

/* A state with no previous record, its record buffer allocated
 * (rt_record_max_size bytes, 64-aligned): 0, or -ENOMEM. */
int rt_pack_state_init(struct rt_pack_state *st);
void rt_pack_state_free(struct rt_pack_state *st);
/* Forget the previous record: the next one packed is full. */
static inline void rt_pack_state_reset(struct rt_pack_state *st)
{
	st->valid = 0;
}

/* Bytes rt_pack may write for rec (an upper bound; cannot fail). */
size_t rt_pack_bound(const struct rt_record *rec);

/* Pack rec (this rt's layout) as sample seq of the run whose previous
 * record st holds, into out (rt_pack_bound bytes); st then holds rec.
 * Returns the packed length. */
size_t rt_pack(struct rt_pack_state *st, uint64_t seq, const struct rt_record *rec,
               unsigned char *out);

/*
 * Unpack the stored bytes of sample seq into st->rec (sealed, this rt's
 * layout). A delta needs st to hold seq - 1. Returns 0, RT_E_CORRUPT,
 * RT_E_LAYOUT (a newer form) or RT_E_NOTFOUND (a delta without its
 * predecessor: start from a full record).
 */
int rt_unpack(struct rt_pack_state *st, uint64_t seq, const void *in, size_t len);

/*
 * What the store holds for sample seq, as a record of this rt's layout in
 * st->rec: unpacked (the packed form) or upgraded (rt 0.1's raw layout 1).
 * Returns 0, or an error; the store then hands the raw bytes on, and their
 * decoding says what is wrong with them (a raw record of this layout
 * decodes there too).
 */
int rt_unpack_stored(struct rt_pack_state *st, uint64_t seq, const void *in, size_t len);

/* The varints of the form (LEB128, at most ten bytes): put returns the
 * byte after; get reads from [*p, end), 0 or -1 when the bytes run out
 * or the varint is longer than ten bytes. */
unsigned char *rt_varint_put(unsigned char *p, uint64_t x);
int rt_varint_get(const unsigned char **p, const unsigned char *end, uint64_t *out);

/* 1 when the bytes are a packed record that needs no predecessor. */
int rt_pack_is_full(const void *in, size_t len);
/* 1 when the bytes are a packed record (of any layout). */
int rt_pack_is_packed(const void *in, size_t len);

#endif
