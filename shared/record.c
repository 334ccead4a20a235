/*
 * record.c - encoder/decoder of the fixed-layout sample record.
 *
 * The recorder fills a record in place (rt_record_init then field writes
 * then rt_record_seal), so encoding costs no copy. Decoding validates every
 * size and count against the byte length before any pointer is formed.
 */
#include "rt/record.h"

#include <errno.h>
#include <string.h>

#include "rt/common.h"

static uint32_t crc_table[8][256];
static int crc_ready;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] =
			    (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
	__atomic_store_n(&crc_ready, 1, __ATOMIC_RELEASE);
}

#if defined(__x86_64__)
/* The CPU's crc32 instruction computes the same CRC-32C (Castagnoli) ~10x
 * faster than the tables; replays check every record's CRC. */
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const void *buf,
                                                            size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = ~crc;
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	uint32_t c32 = (uint32_t)c;
	while (len--)
		c32 = __builtin_ia32_crc32qi(c32, *p++);
	return ~c32;
}
#endif

uint32_t rt_crc32c(uint32_t crc, const void *buf, size_t len)
{
#if defined(__x86_64__)
	if (__builtin_cpu_supports("sse4.2"))
		return crc32c_hw(crc, buf, len);
#endif
	if (!__atomic_load_n(&crc_ready, __ATOMIC_ACQUIRE))
		crc_init();
	const unsigned char *p = buf;
	crc = ~crc;
	while (len >= 8) { /* slicing-by-8 */
		uint32_t lo, hi;
		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo ^= crc;
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

size_t rt_record_size(unsigned ncpu, unsigned ndisk, unsigned nmount, unsigned nnic, unsigned ngpu)
{
	return sizeof(struct rt_rec_header) + sizeof(struct rt_rec_system) +
	       sizeof(struct rt_rec_process) + ncpu * sizeof(struct rt_rec_cpu) +
	       ndisk * sizeof(struct rt_rec_disk) + nmount * sizeof(struct rt_rec_mount) +
	       nnic * sizeof(struct rt_rec_nic) + ngpu * sizeof(struct rt_rec_gpu);
}

size_t rt_record_max_size(void)
{
	return rt_record_size(RT_MAX_CPUS, RT_MAX_DISKS, RT_MAX_MOUNTS, RT_MAX_NICS, RT_MAX_GPUS);
}

/* Point rec's sections into buf for the counts in h (already validated). */
static void layout(unsigned char *buf, const struct rt_rec_header *h, struct rt_record *rec)
{
	size_t off = sizeof(*h);
	rec->h = (struct rt_rec_header *)buf;
	rec->sys = (struct rt_rec_system *)(buf + off);
	off += sizeof(struct rt_rec_system);
	rec->proc = (struct rt_rec_process *)(buf + off);
	off += sizeof(struct rt_rec_process);
	rec->cpu = (struct rt_rec_cpu *)(buf + off);
	off += h->ncpu * sizeof(struct rt_rec_cpu);
	rec->disk = (struct rt_rec_disk *)(buf + off);
	off += h->ndisk * sizeof(struct rt_rec_disk);
	rec->mount = (struct rt_rec_mount *)(buf + off);
	off += h->nmount * sizeof(struct rt_rec_mount);
	rec->nic = (struct rt_rec_nic *)(buf + off);
	off += h->nnic * sizeof(struct rt_rec_nic);
	rec->gpu = (struct rt_rec_gpu *)(buf + off);
}

int rt_record_init(void *buf, size_t cap, unsigned ncpu, unsigned ndisk, unsigned nmount,
                   unsigned nnic, unsigned ngpu, struct rt_record *rec)
{
	if (ncpu > RT_MAX_CPUS || ndisk > RT_MAX_DISKS || nmount > RT_MAX_MOUNTS ||
	    nnic > RT_MAX_NICS || ngpu > RT_MAX_GPUS)
		return -EINVAL;
	size_t size = rt_record_size(ncpu, ndisk, nmount, nnic, ngpu);
	if (size > cap)
		return -ENOSPC;
	memset(buf, 0, size);
	struct rt_rec_header *h = buf;
	h->magic = RT_RECORD_MAGIC;
	h->layout = RT_RECORD_LAYOUT;
	h->header_size = sizeof(*h);
	h->size = (uint32_t)size;
	h->ncpu = (uint16_t)ncpu;
	h->ndisk = (uint16_t)ndisk;
	h->nmount = (uint16_t)nmount;
	h->nnic = (uint16_t)nnic;
	h->ngpu = (uint16_t)ngpu;
	layout(buf, h, rec);
	return 0;
}

void rt_record_seal(struct rt_record *rec)
{
	rec->h->crc = 0;
	rec->h->crc = rt_crc32c(0, rec->h, rec->h->size);
}

unsigned rt_record_claimed_layout(const void *buf, size_t len)
{
	struct rt_rec_header h;
	if (len < sizeof(h))
		return 0;
	memcpy(&h, buf, sizeof(h));
	return h.magic == RT_RECORD_MAGIC ? h.layout : 0;
}

int rt_record_decode(const void *buf, size_t len, struct rt_record *rec)
{
	struct rt_rec_header h;
	if (len < sizeof(h))
		return RT_E_CORRUPT;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != RT_RECORD_MAGIC)
		return RT_E_CORRUPT;
	if (h.layout != RT_RECORD_LAYOUT || h.header_size != sizeof(h))
		return RT_E_LAYOUT;
	if (h.ncpu > RT_MAX_CPUS || h.ndisk > RT_MAX_DISKS || h.nmount > RT_MAX_MOUNTS ||
	    h.nnic > RT_MAX_NICS || h.ngpu > RT_MAX_GPUS)
		return RT_E_CORRUPT;
	if (h.size != len || h.size != rt_record_size(h.ncpu, h.ndisk, h.nmount, h.nnic, h.ngpu))
		return RT_E_CORRUPT;
	uint32_t want = h.crc;
	h.crc = 0; /* the CRC covers the record with its crc field zeroed */
	uint32_t crc = rt_crc32c(0, &h, sizeof(h));
	crc = rt_crc32c(crc, (const unsigned char *)buf + sizeof(h), len - sizeof(h));
	if (crc != want)
		return RT_E_CORRUPT;
	h.crc = want;
	layout((unsigned char *)(uintptr_t)buf, &h, rec);
	return 0;
}
