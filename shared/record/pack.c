/*
 * pack.c - packing records for the store (see pack.h).
 *
 * The value lists below are the record's schema, generated from
 * values.def: each section's values in the order they are stored. They
 * only ever grow at the end, so every stored record stays readable.
 */
#include "rt/pack.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rt/common.h"

#define value rt_value_loc

/* The lists, from values.def: each section's values in stored order. */
#define SIGN_U 0
#define SIGN_S 1
#define ONE(T, t, m, s) {offsetof(T, m), sizeof(t), SIGN_##s},
#define EL(T, t, m, i, s) {offsetof(T, m[i]), sizeof(t), SIGN_##s},
#define REP3(T, t, m, s) EL(T, t, m, 0, s) EL(T, t, m, 1, s) EL(T, t, m, 2, s)
#define REP5(T, t, m, s) REP3(T, t, m, s) EL(T, t, m, 3, s) EL(T, t, m, 4, s)
#define REP8(T, t, m, s) REP5(T, t, m, s) EL(T, t, m, 5, s) EL(T, t, m, 6, s) EL(T, t, m, 7, s)
#define REP10(T, t, m, s) REP8(T, t, m, s) EL(T, t, m, 8, s) EL(T, t, m, 9, s)
#define NONE(...)

#define SY_V(t, m, s) ONE(struct rt_rec_system, t, m, s)
#define SY_A(t, m, n, s) REP##n(struct rt_rec_system, t, m, s)
#define PR_V(t, m, s) ONE(struct rt_rec_process, t, m, s)
#define CP_V(t, m, s) ONE(struct rt_rec_cpu, t, m, s)
#define DK_V(t, m, s) ONE(struct rt_rec_disk, t, m, s)
#define MT_V(t, m, s) ONE(struct rt_rec_mount, t, m, s)
#define NI_V(t, m, s) ONE(struct rt_rec_nic, t, m, s)
#define GP_V(t, m, s) ONE(struct rt_rec_gpu, t, m, s)

static const struct value v_system[RT_NVALS_SYSTEM] = {RT_REC_SYSTEM(SY_V, SY_A, NONE)};
static const struct value v_process[RT_NVALS_PROCESS] = {RT_REC_PROCESS(PR_V, NONE, NONE)};
static const struct value v_cpu[RT_NVALS_CPU] = {RT_REC_CPU(CP_V, NONE, NONE)};
static const struct value v_disk[RT_NVALS_DISK] = {RT_REC_DISK(DK_V, NONE, NONE)};
static const struct value v_mount[RT_NVALS_MOUNT] = {RT_REC_MOUNT(MT_V, NONE, NONE)};
static const struct value v_nic[RT_NVALS_NIC] = {RT_REC_NIC(NI_V, NONE, NONE)};
static const struct value v_gpu[RT_NVALS_GPU] = {RT_REC_GPU(GP_V, NONE, NONE)};

static const struct {
	const struct value *v;
	size_t elem; /* bytes per element */
} sections[RT_NSECTIONS] = {
    {v_system, sizeof(struct rt_rec_system)}, {v_process, sizeof(struct rt_rec_process)},
    {v_cpu, sizeof(struct rt_rec_cpu)},       {v_disk, sizeof(struct rt_rec_disk)},
    {v_mount, sizeof(struct rt_rec_mount)},   {v_nic, sizeof(struct rt_rec_nic)},
    {v_gpu, sizeof(struct rt_rec_gpu)},
};

const struct rt_value_loc *rt_record_loc(unsigned sec, unsigned idx)
{
	return sec < RT_NSECTIONS && idx < rt_record_nvals_now[sec] ? &sections[sec].v[idx] : NULL;
}

/* Elements and first element of a section of rec. */
static unsigned sec_count(const struct rt_rec_header *h, unsigned sec)
{
	switch (sec) {
	case RT_SEC_CPU: return h->ncpu;
	case RT_SEC_DISK: return h->ndisk;
	case RT_SEC_MOUNT: return h->nmount;
	case RT_SEC_NIC: return h->nnic;
	case RT_SEC_GPU: return h->ngpu;
	default: return 1;
	}
}

static unsigned char *sec_base(const struct rt_record *r, unsigned sec)
{
	void *p[RT_NSECTIONS] = {r->sys, r->proc, r->cpu, r->disk, r->mount, r->nic, r->gpu};
	return p[sec];
}

static uint64_t load(const unsigned char *p, const struct value *v)
{
	if (v->size == 8) {
		uint64_t x;
		memcpy(&x, p + v->off, 8);
		return x;
	}
	uint32_t x;
	memcpy(&x, p + v->off, 4);
	return v->sgn ? (uint64_t)(int64_t)(int32_t)x : x;
}

static void store(unsigned char *p, const struct value *v, uint64_t x)
{
	if (v->size == 8) {
		memcpy(p + v->off, &x, 8);
	} else {
		uint32_t y = (uint32_t)x;
		memcpy(p + v->off, &y, 4);
	}
}

static uint64_t zig(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static uint64_t unzig(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

unsigned char *rt_varint_put(unsigned char *p, uint64_t x)
{
	while (x >= 0x80) {
		*p++ = (unsigned char)(x | 0x80);
		x >>= 7;
	}
	*p++ = (unsigned char)x;
	return p;
}

/* Read a varint from [*p, end); 0 or -1 when it runs off the end or is
 * longer than ten bytes. */
int rt_varint_get(const unsigned char **p, const unsigned char *end, uint64_t *out)
{
	uint64_t x = 0;
	const unsigned char *q = *p;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (q >= end)
			return -1;
		unsigned char b = *q++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*p = q;
			*out = x;
			return 0;
		}
	}
	return -1;
}

int rt_pack_state_init(struct rt_pack_state *st)
{
	memset(st, 0, sizeof(*st));
	if (posix_memalign(&st->buf, 64, rt_record_max_size())) {
		st->buf = NULL;
		return -ENOMEM;
	}
	return 0;
}

void rt_pack_state_free(struct rt_pack_state *st)
{
	free(st->buf);
	st->buf = NULL;
	st->valid = 0;
}

static unsigned total_values(const struct rt_rec_header *h)
{
	unsigned n = 0;
	for (unsigned s = 0; s < RT_NSECTIONS; s++)
		n += sec_count(h, s) * h->nvals[s];
	return n;
}

size_t rt_pack_bound(const struct rt_record *rec)
{
	return 3 + 2 * 10 + 10 + RT_NSECTIONS * 2 * 10 + 2 * 10 + (total_values(rec->h) + 7) / 8 +
	       (size_t)total_values(rec->h) * 10 + 4;
}

static int same_shape(const struct rt_pack_state *st, const struct rt_rec_header *h)
{
	const struct rt_rec_header *o = st->rec.h;
	return o->ncpu == h->ncpu && o->ndisk == h->ndisk && o->nmount == h->nmount &&
	       o->nnic == h->nnic && o->ngpu == h->ngpu &&
	       !memcmp(o->nvals, h->nvals, sizeof(h->nvals));
}

size_t rt_pack(struct rt_pack_state *st, uint64_t seq, const struct rt_record *rec,
               unsigned char *out)
{
	const struct rt_rec_header *h = rec->h;
	int full = !st->valid || seq == 0 || st->seq != seq - 1 || seq % RT_PACK_FULL_EVERY == 0 ||
	           !same_shape(st, h);
	unsigned char *p = out;
	*p++ = RT_PACK_TAG;
	*p++ = RT_PACK_LAYOUT;
	*p++ = full ? 0 : 1;
	p = rt_varint_put(p, h->flags);
	p = rt_varint_put(p, h->inv_gen);
	uint64_t off = h->wall_ns - h->mono_ns, interval = 0;
	if (full) {
		p = rt_varint_put(p, RT_NSECTIONS);
		for (unsigned s = 0; s < RT_NSECTIONS; s++) {
			p = rt_varint_put(p, sec_count(h, s));
			p = rt_varint_put(p, h->nvals[s]);
		}
		p = rt_varint_put(p, h->mono_ns);
		p = rt_varint_put(p, zig(off));
	} else {
		const struct rt_rec_header *o = st->rec.h;
		interval = h->mono_ns - o->mono_ns;
		p = rt_varint_put(p, zig(interval - st->interval));
		p = rt_varint_put(p, zig(off - (o->wall_ns - o->mono_ns)));
	}
	unsigned nbits = total_values(h), bit = 0;
	unsigned char *bitmap = p;
	memset(bitmap, 0, (nbits + 7) / 8);
	p += (nbits + 7) / 8;
	for (unsigned s = 0; s < RT_NSECTIONS; s++) {
		unsigned n = sec_count(h, s);
		const unsigned char *cur = sec_base(rec, s);
		const unsigned char *old = full ? NULL : sec_base(&st->rec, s);
		for (unsigned e = 0; e < n; e++) {
			for (unsigned v = 0; v < h->nvals[s]; v++, bit++) {
				const struct value *d = &sections[s].v[v];
				uint64_t delta = load(cur, d) - (old ? load(old, d) : 0);
				if (!delta)
					continue;
				bitmap[bit >> 3] |= (unsigned char)(1u << (bit & 7));
				p = rt_varint_put(p, zig(delta));
			}
			cur += sections[s].elem;
			if (old)
				old += sections[s].elem;
		}
	}
	uint32_t crc = rt_crc32c(0, out, (size_t)(p - out));
	memcpy(p, &crc, 4); /* little-endian hosts only, like the record */
	p += 4;
	/* remember rec as the next one's predecessor */
	memcpy(st->buf, h, h->size);
	rt_record_point(st->buf, &st->rec);
	st->seq = seq;
	st->valid = 1;
	st->interval = interval;
	st->nsec = RT_NSECTIONS;
	for (unsigned s = 0; s < RT_NSECTIONS; s++) {
		st->count[s] = (uint16_t)sec_count(h, s);
		st->nvals[s] = h->nvals[s];
	}
	return (size_t)(p - out);
}

int rt_pack_is_packed(const void *in, size_t len)
{
	return len >= RT_PACK_MIN && ((const unsigned char *)in)[0] == RT_PACK_TAG;
}

int rt_pack_is_full(const void *in, size_t len)
{
	const unsigned char *p = in;
	return rt_pack_is_packed(in, len) && p[1] == RT_PACK_LAYOUT && p[2] == 0;
}

/* Read a full record's shape into st and lay out an empty record for it. */
static int read_shape(struct rt_pack_state *st, const unsigned char **p, const unsigned char *end)
{
	uint64_t nsec, count, nvals;
	if (rt_varint_get(p, end, &nsec) || nsec < RT_NSECTIONS || nsec > RT_PACK_MAX_SECTIONS)
		return RT_E_CORRUPT;
	static const unsigned cap[RT_NSECTIONS] = {
	    1, 1, RT_MAX_CPUS, RT_MAX_DISKS, RT_MAX_MOUNTS, RT_MAX_NICS, RT_MAX_GPUS};
	unsigned c[RT_NSECTIONS];
	for (unsigned s = 0; s < nsec; s++) {
		if (rt_varint_get(p, end, &count) || rt_varint_get(p, end, &nvals) || nvals > 255 ||
		    count > 65535)
			return RT_E_CORRUPT;
		if (s < RT_NSECTIONS && (count > cap[s] || (s <= RT_SEC_PROCESS && count != 1)))
			return RT_E_CORRUPT;
		if (s < RT_NSECTIONS)
			c[s] = (unsigned)count;
		st->count[s] = (uint16_t)count;
		st->nvals[s] = (uint8_t)nvals;
	}
	st->nsec = (unsigned)nsec;
	int rc = rt_record_init(st->buf, rt_record_max_size(), c[RT_SEC_CPU], c[RT_SEC_DISK],
	                        c[RT_SEC_MOUNT], c[RT_SEC_NIC], c[RT_SEC_GPU], &st->rec);
	if (rc)
		return RT_E_CORRUPT;
	for (unsigned s = 0; s < RT_NSECTIONS; s++)
		if (st->rec.h->nvals[s] > st->nvals[s])
			st->rec.h->nvals[s] = st->nvals[s]; /* the rest is absent */
	return 0;
}

/* The bitmap, one bit per value stored, and the changed values after it
 * (every one of them in the bytes), into st->rec: against zeros for a
 * full record, against the previous one for a delta. 0 or RT_E_CORRUPT. */
static int unpack_values(struct rt_pack_state *st, int full, const unsigned char **pp,
                         const unsigned char *end)
{
	const unsigned char *p = *pp;
	struct rt_rec_header *h = st->rec.h;
	uint64_t nbits = 0;
	for (unsigned s = 0; s < st->nsec; s++)
		nbits += (uint64_t)st->count[s] * st->nvals[s];
	if (nbits > (uint64_t)(end - p) * 8)
		return RT_E_CORRUPT;
	const unsigned char *bitmap = p;
	p += (nbits + 7) / 8;
	uint64_t bit = 0;
	for (unsigned s = 0; s < st->nsec; s++) {
		unsigned known = s < RT_NSECTIONS ? h->nvals[s] : 0;
		unsigned char *base = s < RT_NSECTIONS ? sec_base(&st->rec, s) : NULL;
		for (unsigned e = 0; e < st->count[s]; e++) {
			for (unsigned v = 0; v < st->nvals[s]; v++, bit++) {
				if (!(bitmap[bit >> 3] & (1u << (bit & 7))))
					continue;
				uint64_t z;
				if (rt_varint_get(&p, end, &z))
					return RT_E_CORRUPT;
				if (v >= known)
					continue; /* a value of a newer rt */
				const struct value *d = &sections[s].v[v];
				uint64_t x = (full ? 0 : load(base, d)) + unzig(z);
				store(base, d, x);
			}
			if (base)
				base += sections[s].elem;
		}
	}
	*pp = p;
	return 0;
}

int rt_unpack(struct rt_pack_state *st, uint64_t seq, const void *in, size_t len)
{
	const unsigned char *p = in, *end = p + len;
	if (len < RT_PACK_MIN || p[0] != RT_PACK_TAG)
		return RT_E_CORRUPT;
	if (p[1] != RT_PACK_LAYOUT)
		return p[1] > RT_PACK_LAYOUT ? RT_E_LAYOUT : RT_E_CORRUPT;
	uint32_t want;
	memcpy(&want, end - 4, 4);
	end -= 4;
	if (rt_crc32c(0, p, len - 4) != want)
		return RT_E_CORRUPT;
	int full = p[2] == 0;
	if (p[2] > 1)
		return RT_E_CORRUPT;
	if (!full && (!st->valid || seq == 0 || st->seq != seq - 1))
		return RT_E_NOTFOUND;
	p += 3;
	st->valid = 0; /* until this record is whole */
	uint64_t flags, inv_gen, a, b;
	if (rt_varint_get(&p, end, &flags) || rt_varint_get(&p, end, &inv_gen) ||
	    flags > UINT32_MAX || inv_gen > UINT32_MAX)
		return RT_E_CORRUPT;
	struct rt_rec_header *h;
	uint64_t interval = 0;
	if (full) {
		int rc = read_shape(st, &p, end);
		if (rc)
			return rc;
		h = st->rec.h;
		if (rt_varint_get(&p, end, &a) || rt_varint_get(&p, end, &b))
			return RT_E_CORRUPT;
		h->mono_ns = a;
		h->wall_ns = a + unzig(b);
	} else {
		h = st->rec.h;
		if (rt_varint_get(&p, end, &a) || rt_varint_get(&p, end, &b))
			return RT_E_CORRUPT;
		interval = st->interval + unzig(a);
		uint64_t off = h->wall_ns - h->mono_ns + unzig(b);
		h->mono_ns += interval;
		h->wall_ns = h->mono_ns + off;
	}
	h->flags = (uint32_t)flags;
	h->inv_gen = (uint32_t)inv_gen;
	h->seq = seq;
	if (unpack_values(st, full, &p, end))
		return RT_E_CORRUPT;
	if (p != end)
		return RT_E_CORRUPT;
	rt_record_seal(&st->rec);
	st->seq = seq;
	st->interval = interval;
	st->valid = 1;
	return 0;
}

int rt_unpack_stored(struct rt_pack_state *st, uint64_t seq, const void *in, size_t len)
{
	if (rt_pack_is_packed(in, len))
		return rt_unpack(st, seq, in, len);
	st->valid = 0;
	if (rt_record_claimed_layout(in, len) != 1)
		return RT_E_CORRUPT;
	return rt_record_upgrade(in, len, st->buf, rt_record_max_size(), &st->rec);
}
