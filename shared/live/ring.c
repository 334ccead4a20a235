/*
 * ring.c - the /dev/shm sample ring (see ring.h for the protocol).
 *
 * Writer, for seq n in slot s = n % N, k = n / N + 1 (k-th write of s):
 *   version = 2k-1 (relaxed) ; release fence ; copy payload ;
 *   version = 2k (release) ; head = n+1 (release)
 * Reader: acquire version; 2k means complete for seq n, less means not yet,
 * more means lapped; copy; acquire fence; re-read version; a change means
 * the copy may be torn and the slot was lapped meanwhile.
 */
#define _GNU_SOURCE
#include "rt/ring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rt/common.h"

struct ring_hdr {
	uint32_t magic;
	uint16_t layout;
	uint16_t header_size;
	uint32_t slot_size; /* payload bytes per slot */
	uint32_t slot_count;
	int32_t writer_pid;
	uint32_t features; /* RT_RING_F_*: what this writer does */
	uint64_t run_id;
	uint64_t generation; /* bumped if a writer ever re-creates the ring */
	_Atomic uint64_t heartbeat_ns;
	_Atomic uint32_t state;
	uint32_t reserved1;
	_Atomic uint64_t head;
	/* futex words: wake moves at every publish and state change; waiters
	 * counts readers asleep on it (the writer skips the wake call when
	 * there are none). Zero in rings of writers without RT_RING_F_WAKE. */
	_Atomic uint32_t wake;
	_Atomic uint32_t waiters;
	uint64_t reserved[7];
};

/* the writer wakes futex waiters on wake (publish) and state (change) */
#define RT_RING_F_WAKE 1u

struct slot_hdr {
	_Atomic uint64_t version;
	uint32_t len;
	uint32_t reserved;
};

struct rt_ring {
	int fd;
	int writer;
	unsigned char *map;
	size_t map_len;
	struct ring_hdr *h;
	struct ring_hdr *hw; /* a reader's writable view of the header, or NULL */
	size_t hw_len;
	uint32_t slot_size, slot_count;
	size_t stride;
	char path[4096];
};

/* Shared (not private) futex calls: the words live in a file mapping that
 * other processes map too. */
static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)w, op, val, ts, NULL, 0);
}

static size_t stride_of(uint32_t slot_size)
{
	return (sizeof(struct slot_hdr) + slot_size + 63u) & ~(size_t)63u;
}

static struct slot_hdr *slot_at(const struct rt_ring *r, uint64_t seq)
{
	size_t idx = (size_t)(seq % r->slot_count);
	return (struct slot_hdr *)(r->map + sizeof(struct ring_hdr) + idx * r->stride);
}

int rt_ring_path(char *buf, size_t cap, const char *store_key, uint64_t run_id)
{
	const char *dir = getenv("RT_SHM_DIR");
	if (!dir || !*dir)
		dir = "/dev/shm";
	/* FNV-1a of the store's key keeps two stores of one user apart */
	uint32_t hsh = 2166136261u;
	for (const char *p = store_key; *p; p++)
		hsh = (hsh ^ (unsigned char)*p) * 16777619u;
	int n = snprintf(buf, cap, "%s/rt-%u-%08x-%llu.ring", dir, (unsigned)getuid(), hsh,
	                 (unsigned long long)run_id);
	return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : 0;
}

int rt_ring_create(const char *path, uint64_t run_id, uint32_t slot_size, uint32_t slot_count,
                   struct rt_ring **out)
{
	if (slot_count == 0 || slot_size == 0 || slot_size > (64u << 20) / slot_count)
		return -EINVAL;
	struct rt_ring *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	/* raw: made O_EXCL|O_NOFOLLOW: never opens what another user planted */
	r->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (r->fd < 0) {
		int e = -errno;
		free(r);
		return e;
	}
	int err;
	if (flock(r->fd, LOCK_EX | LOCK_NB) < 0)
		goto fail;
	r->slot_size = slot_size;
	r->slot_count = slot_count;
	r->stride = stride_of(slot_size);
	r->map_len = sizeof(struct ring_hdr) + r->stride * slot_count;
	/* allocate every page now: a sparse shared mapping on a full tmpfs
	 * would raise SIGBUS when the writer first touches a page */
	if ((err = posix_fallocate(r->fd, 0, (off_t)r->map_len)) != 0) {
		if (err != EOPNOTSUPP && err != EINVAL) {
			errno = err;
			goto fail;
		}
		if (ftruncate(r->fd, (off_t)r->map_len) < 0)
			goto fail;
	}
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->map == MAP_FAILED)
		goto fail;
	r->h = (struct ring_hdr *)r->map;
	r->h->layout = RT_RING_LAYOUT;
	r->h->header_size = sizeof(struct ring_hdr);
	r->h->slot_size = slot_size;
	r->h->slot_count = slot_count;
	r->h->writer_pid = (int32_t)getpid();
	r->h->features = RT_RING_F_WAKE;
	r->h->run_id = run_id;
	r->h->generation = 1;
	atomic_store_explicit(&r->h->state, RT_RING_RUNNING, memory_order_relaxed);
	atomic_store_explicit(&r->h->head, 0, memory_order_relaxed);
	/* magic last: a reader that sees it sees a complete header */
	atomic_thread_fence(memory_order_release);
	__atomic_store_n(&r->h->magic, RT_RING_MAGIC, __ATOMIC_RELEASE);
	r->writer = 1;
	snprintf(r->path, sizeof(r->path), "%s", path);
	*out = r;
	return 0;
fail:
	err = -errno;
	if (r->map && r->map != MAP_FAILED)
		munmap(r->map, r->map_len);
	/* raw: the ring we just failed to make, by its name in the sticky shm directory */
	unlink(path);
	close(r->fd);
	free(r);
	return err;
}

int rt_ring_publish(struct rt_ring *r, uint64_t seq, const void *rec, size_t len)
{
	if (len > r->slot_size)
		return -EMSGSIZE;
	struct slot_hdr *s = slot_at(r, seq);
	uint64_t k = seq / r->slot_count + 1;
	atomic_store_explicit(&s->version, 2 * k - 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	s->len = (uint32_t)len;
	memcpy((unsigned char *)(s + 1), rec, len);
	atomic_store_explicit(&s->version, 2 * k, memory_order_release);
	atomic_store_explicit(&r->h->head, seq + 1, memory_order_release);
	/* seq_cst pairs with rt_ring_wait: either we see its waiter count or
	 * it sees the new head */
	atomic_fetch_add(&r->h->wake, 1);
	if (atomic_load(&r->h->waiters))
		futex(&r->h->wake, FUTEX_WAKE, INT32_MAX, NULL);
	return 0;
}

void rt_ring_heartbeat(struct rt_ring *r, uint64_t mono_ns)
{
	atomic_store_explicit(&r->h->heartbeat_ns, mono_ns, memory_order_relaxed);
}

void rt_ring_set_state(struct rt_ring *r, enum rt_ring_state st)
{
	atomic_store(&r->h->state, (uint32_t)st);
	atomic_fetch_add(&r->h->wake, 1);
	futex(&r->h->wake, FUTEX_WAKE, INT32_MAX, NULL);
	futex(&r->h->state, FUTEX_WAKE, INT32_MAX, NULL);
}

int rt_ring_open(const char *path, struct rt_ring **out)
{
	struct rt_ring *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	int err = 0;
	/* read-write only to count ourselves among the header's waiters; the
	 * slots are mapped read-only */
	int rw = 1;
	/* ring names can be guessed: a FIFO planted at one never blocks */
	/* raw: never through a link, never blocking; checked after the open */
	r->fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (r->fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM)) {
		rw = 0;
		/* raw: never through a link, never blocking; checked after the open */
		r->fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	}
	if (r->fd < 0) {
		err = -errno;
		free(r);
		return err;
	}
	struct stat st;
	if (fstat(r->fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != getuid() ||
	    (size_t)st.st_size < sizeof(struct ring_hdr)) {
		err = RT_E_CORRUPT;
		goto fail;
	}
	r->map_len = (size_t)st.st_size;
	r->map = mmap(NULL, r->map_len, PROT_READ, MAP_SHARED, r->fd, 0);
	if (r->map == MAP_FAILED) {
		err = -errno;
		r->map = NULL;
		goto fail;
	}
	r->h = (struct ring_hdr *)r->map;
	if (__atomic_load_n(&r->h->magic, __ATOMIC_ACQUIRE) != RT_RING_MAGIC) {
		err = RT_E_CORRUPT;
		goto fail;
	}
	if (r->h->layout != RT_RING_LAYOUT || r->h->header_size != sizeof(struct ring_hdr)) {
		err = RT_E_LAYOUT;
		goto fail;
	}
	/* hostile header: sizes must describe exactly this file */
	r->slot_size = r->h->slot_size;
	r->slot_count = r->h->slot_count;
	if (r->slot_count == 0 || r->slot_size == 0 || r->slot_size > (64u << 20)) {
		err = RT_E_CORRUPT;
		goto fail;
	}
	r->stride = stride_of(r->slot_size);
	if (r->map_len != sizeof(struct ring_hdr) + r->stride * (size_t)r->slot_count) {
		err = RT_E_CORRUPT;
		goto fail;
	}
	if (rw && (r->h->features & RT_RING_F_WAKE)) {
		r->hw_len = sizeof(struct ring_hdr);
		r->hw = mmap(NULL, r->hw_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		if (r->hw == MAP_FAILED)
			r->hw = NULL; /* readers then nap between looks */
	}
	snprintf(r->path, sizeof(r->path), "%s", path);
	*out = r;
	return 0;
fail:
	if (r->map)
		munmap(r->map, r->map_len);
	close(r->fd);
	free(r);
	return err;
}

uint64_t rt_ring_head(const struct rt_ring *r)
{
	return atomic_load_explicit(&r->h->head, memory_order_acquire);
}

uint32_t rt_ring_slot_count(const struct rt_ring *r)
{
	return r->slot_count;
}
uint64_t rt_ring_run_id(const struct rt_ring *r)
{
	return r->h->run_id;
}

enum rt_ring_state rt_ring_state(const struct rt_ring *r)
{
	return (enum rt_ring_state)atomic_load_explicit(&r->h->state, memory_order_acquire);
}

int rt_ring_read(const struct rt_ring *r, uint64_t seq, void *buf, size_t cap, size_t *len)
{
	const struct slot_hdr *s = slot_at(r, seq);
	uint64_t want = 2 * (seq / r->slot_count + 1);
	uint64_t v1 = atomic_load_explicit(&((struct slot_hdr *)s)->version, memory_order_acquire);
	if (v1 < want)
		return RT_E_AGAIN; /* not written yet, or being written */
	if (v1 > want)
		return RT_E_LAPPED;
	uint32_t n = s->len;
	if (n > r->slot_size)
		return RT_E_CORRUPT;
	if (n > cap)
		return -EMSGSIZE;
	memcpy(buf, (const unsigned char *)(s + 1), n);
	atomic_thread_fence(memory_order_acquire);
	uint64_t v2 = atomic_load_explicit(&((struct slot_hdr *)s)->version, memory_order_relaxed);
	if (v2 != v1)
		return RT_E_LAPPED;
	*len = n;
	return 0;
}

int rt_ring_writer_alive(const struct rt_ring *r)
{
	if (r->writer)
		return 1;
	/* The writer holds LOCK_EX for its whole life; if we can take a shared
	 * lock, nobody holds it any more. Works across pid reuse. */
	if (flock(r->fd, LOCK_SH | LOCK_NB) == 0) {
		flock(r->fd, LOCK_UN);
		return 0;
	}
	return errno == EWOULDBLOCK;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
	nanosleep(&ts, NULL);
}

int rt_ring_wait(struct rt_ring *r, uint64_t head, uint64_t timeout_ns)
{
	if (!r->hw) { /* an older writer, or no write access: look again later */
		sleep_ns(timeout_ns < RT_RING_NAP_NS ? timeout_ns : RT_RING_NAP_NS);
		return RT_E_AGAIN;
	}
	struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
	atomic_fetch_add(&r->hw->waiters, 1);
	uint32_t w = atomic_load(&r->hw->wake);
	long rc = 0;
	if (rt_ring_head(r) == head && rt_ring_state(r) == RT_RING_RUNNING)
		rc = futex(&r->hw->wake, FUTEX_WAIT, w, &ts);
	atomic_fetch_sub(&r->hw->waiters, 1);
	return rc < 0 && errno == ETIMEDOUT ? RT_E_AGAIN : 0;
}

int rt_ring_wait_end(struct rt_ring *r, uint64_t timeout_ns)
{
	if (rt_ring_state(r) != RT_RING_RUNNING)
		return 0;
	if (!(r->h->features & RT_RING_F_WAKE)) {
		sleep_ns(timeout_ns < RT_RING_NAP_NS ? timeout_ns : RT_RING_NAP_NS);
		return rt_ring_state(r) == RT_RING_RUNNING ? RT_E_AGAIN : 0;
	}
	/* waiting needs no write access: the writer always wakes this word */
	struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
	futex(&r->h->state, FUTEX_WAIT, RT_RING_RUNNING, &ts);
	return rt_ring_state(r) == RT_RING_RUNNING ? RT_E_AGAIN : 0;
}

void rt_ring_close(struct rt_ring *r, int unlink_file)
{
	if (!r)
		return;
	if (unlink_file)
		/* raw: our own ring, by the name we made it under */
		unlink(r->path);
	if (r->hw)
		munmap(r->hw, r->hw_len);
	if (r->map)
		munmap(r->map, r->map_len);
	close(r->fd);
	free(r);
}
