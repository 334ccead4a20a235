/*
 * lmdbfmt.h - LMDB 0.9's data file format (its data version 1), as the two
 * readers of raw pages use it: lmdbcheck.c (the structural check) and
 * lmdbcarve.c (recover's page scan). Internal to shared/.
 *
 * A page: a 16-byte header (its number at 0, flags at 10, lower and upper
 * at 12 and 14; an overflow page's count of pages at 12), then a leaf's or
 * branch's node offsets; each node an 8-byte header (data size low and
 * high, flags, key size) with its key and value.
 */
#ifndef RT_LMDBFMT_H
#define RT_LMDBFMT_H

#include <stdint.h>
#include <string.h>

#define PAGEHDRSZ 16u
#define NODESIZE 8u
#define P_BRANCH 0x01u
#define P_LEAF 0x02u
#define P_OVERFLOW 0x04u
#define P_SUBP 0x40u
#define F_BIGDATA 0x01u
#define F_SUBDATA 0x02u
#define F_DUPDATA 0x04u

/* Little-endian fields read from anywhere (no alignment assumed). */
static inline uint16_t u16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

#endif
