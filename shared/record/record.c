/*
 * record.c - encoder/decoder of the fixed-layout sample record.
 *
 * The recorder fills a record in place (rt_record_init then field writes
 * then rt_record_seal), so encoding costs no copy. Decoding validates every
 * size and count against the byte length before any pointer is formed.
 */
#include "rt/record.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "rt/common.h"

const uint8_t rt_record_nvals_now[RT_NSECTIONS] = {RT_NVALS_SYSTEM, RT_NVALS_PROCESS, RT_NVALS_CPU,
                                                   RT_NVALS_DISK,   RT_NVALS_MOUNT,   RT_NVALS_NIC,
                                                   RT_NVALS_GPU};

/* Each section's struct is exactly its values.def list: no padding the
 * list does not name, 8-byte aligned (records are laid end to end). */
#define SZ_V(t, m, s) +sizeof(t)
#define SZ_A(t, m, n, s) +sizeof(t) * (n)
#define SZ_P(t, m) +sizeof(t)
#define EXACT(T, LIST)                                                                             \
	_Static_assert(sizeof(T) == 0 LIST(SZ_V, SZ_A, SZ_P) && sizeof(T) % 8 == 0,                \
	               #T " is its list in values.def")
EXACT(struct rt_rec_system, RT_REC_SYSTEM);
EXACT(struct rt_rec_process, RT_REC_PROCESS);
EXACT(struct rt_rec_cpu, RT_REC_CPU);
EXACT(struct rt_rec_disk, RT_REC_DISK);
EXACT(struct rt_rec_mount, RT_REC_MOUNT);
EXACT(struct rt_rec_nic, RT_REC_NIC);
EXACT(struct rt_rec_gpu, RT_REC_GPU);

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

void rt_record_point(void *buf, struct rt_record *rec)
{
	layout(buf, buf, rec);
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
	memcpy(h->nvals, rt_record_nvals_now, sizeof(h->nvals));
	layout(buf, h, rec);
	return 0;
}

void rt_record_seal(struct rt_record *rec)
{
	rec->h->crc = 0;
	rec->h->crc = rt_crc32c(0, rec->h, rec->h->size);
}

/* Whether the bytes are in the packed form (pack.h): its tag. */
static int packed_form(const void *buf, size_t len)
{
	return len >= RT_PACK_MIN && ((const unsigned char *)buf)[0] == RT_PACK_TAG;
}

unsigned rt_record_claimed_layout(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	if (packed_form(buf, len))
		return p[1]; /* the stored form (pack.h) */
	uint32_t magic;
	uint16_t layout;
	if (len < 8)
		return 0;
	memcpy(&magic, p, 4);
	memcpy(&layout, p + 4, 2);
	return magic == RT_RECORD_MAGIC ? layout : 0;
}

/* Layout 1 (rt 0.1): a 64-byte header without nvals, a system section
 * without the load average, disks and NICs with their first two values;
 * the other sections as today. */
struct rec_header_v1 {
	uint32_t magic;
	uint16_t layout;
	uint16_t header_size;
	uint32_t size;
	uint32_t crc;
	uint64_t seq, mono_ns, wall_ns;
	uint32_t inv_gen, flags;
	uint16_t ncpu, ndisk, nmount, nnic, ngpu, reserved[3];
};
#define SYSTEM_V1_BYTES offsetof(struct rt_rec_system, load_x100)
_Static_assert(sizeof(struct rec_header_v1) == 64, "layout 1 header");
_Static_assert(SYSTEM_V1_BYTES == 176, "layout 1 system section");

int rt_record_upgrade(const void *in, size_t len, void *buf, size_t cap, struct rt_record *rec)
{
	struct rec_header_v1 h;
	if (len < sizeof(h))
		return RT_E_CORRUPT;
	memcpy(&h, in, sizeof(h));
	if (h.magic != RT_RECORD_MAGIC || h.layout != 1 || h.header_size != sizeof(h))
		return RT_E_CORRUPT;
	if (h.ncpu > RT_MAX_CPUS || h.ndisk > RT_MAX_DISKS || h.nmount > RT_MAX_MOUNTS ||
	    h.nnic > RT_MAX_NICS || h.ngpu > RT_MAX_GPUS)
		return RT_E_CORRUPT;
	/* sections after the system one: disks and NICs had two values each */
	const size_t disk_v1 = RT_NVALS_DISK_V1 * 8, nic_v1 = RT_NVALS_NIC_V1 * 8;
	const size_t gpu_v1 = offsetof(struct rt_rec_gpu, pcie_rx_kbps);
	size_t rest = offsetof(struct rt_rec_process, threads) +
	              h.ncpu * sizeof(struct rt_rec_cpu) + h.ndisk * disk_v1 +
	              h.nmount * sizeof(struct rt_rec_mount) + h.nnic * nic_v1 + h.ngpu * gpu_v1;
	if (h.size != len || len != sizeof(h) + SYSTEM_V1_BYTES + rest)
		return RT_E_CORRUPT;
	uint32_t want = h.crc;
	h.crc = 0;
	uint32_t crc = rt_crc32c(0, &h, sizeof(h));
	if (rt_crc32c(crc, (const unsigned char *)in + sizeof(h), len - sizeof(h)) != want)
		return RT_E_CORRUPT;
	int rc = rt_record_init(buf, cap, h.ncpu, h.ndisk, h.nmount, h.nnic, h.ngpu, rec);
	if (rc)
		return rc;
	const unsigned char *p = (const unsigned char *)in + sizeof(h);
	memcpy(rec->sys, p, SYSTEM_V1_BYTES);
	p += SYSTEM_V1_BYTES;
	const size_t proc_v1 = offsetof(struct rt_rec_process, threads);
	memcpy(rec->proc, p, proc_v1);
	p += proc_v1;
	memcpy(rec->cpu, p, h.ncpu * sizeof(struct rt_rec_cpu));
	p += h.ncpu * sizeof(struct rt_rec_cpu);
	for (unsigned i = 0; i < h.ndisk; i++, p += disk_v1)
		memcpy(&rec->disk[i], p, disk_v1);
	memcpy(rec->mount, p, h.nmount * sizeof(struct rt_rec_mount));
	p += h.nmount * sizeof(struct rt_rec_mount);
	for (unsigned i = 0; i < h.nnic; i++, p += nic_v1)
		memcpy(&rec->nic[i], p, nic_v1);
	for (unsigned i = 0; i < h.ngpu; i++, p += gpu_v1)
		memcpy(&rec->gpu[i], p, gpu_v1);
	rec->h->seq = h.seq;
	rec->h->mono_ns = h.mono_ns;
	rec->h->wall_ns = h.wall_ns;
	rec->h->inv_gen = h.inv_gen;
	rec->h->flags = h.flags;
	rec->h->nvals[RT_SEC_SYSTEM] = RT_NVALS_SYSTEM_V1;
	rec->h->nvals[RT_SEC_PROCESS] = RT_NVALS_PROCESS_V1;
	rec->h->nvals[RT_SEC_DISK] = RT_NVALS_DISK_V1;
	rec->h->nvals[RT_SEC_NIC] = RT_NVALS_NIC_V1;
	rec->h->nvals[RT_SEC_GPU] = RT_NVALS_GPU_V1;
	rt_record_seal(rec);
	return 0;
}

int rt_record_decode(const void *buf, size_t len, struct rt_record *rec)
{
	struct rt_rec_header h;
	if (packed_form(buf, len)) /* stored bytes a newer rt packed */
		return rt_record_claimed_layout(buf, len) > RT_RECORD_LAYOUT ? RT_E_LAYOUT
		                                                             : RT_E_CORRUPT;
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
	for (int i = 0; i < RT_NSECTIONS; i++)
		if (h.nvals[i] > rt_record_nvals_now[i])
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
