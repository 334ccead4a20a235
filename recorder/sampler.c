/*
 * sampler.c - collect -> encode -> store -> ring, for one sample.
 *
 * Order matters: a sample is committed to the store before it is published
 * in the ring, so everything a ring reader sees is also in the store and a
 * lapped reader can always catch up from there.
 */
#define _GNU_SOURCE
#include "sampler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt/common.h"
#include "rt/inventory.h"

#define SYNC_EVERY_NS (5ull * 1000000000ull) /* bounded loss on power failure */
#define TRIM_EVERY 16 /* samples between RSS trims (each commit maps ~3 new pages) */
#define CAP_EVERY 256 /* samples between size-cap checks */

int rt_sampler_init(struct rt_sampler *s, struct rt_store *store, uint64_t run, uint32_t ring_slots)
{
	memset(s, 0, sizeof(*s));
	s->store = store;
	s->run = run;
	s->ring_slots = ring_slots ? ring_slots : 64;
	s->rec_cap = rt_record_max_size();
	s->inv_cap = rt_inventory_encoded_max();
	if (posix_memalign(&s->rec, 64, s->rec_cap)) {
		s->rec = NULL;
		return -ENOMEM;
	}
	s->inv_buf = malloc(s->inv_cap);
	if (!s->inv_buf)
		return -ENOMEM;
	return rt_collector_open(&s->col);
}

static void store_warn(struct rt_sampler *s, const char *what, int rc, char *warn, size_t cap)
{
	if (s->store_failed)
		return;
	s->store_failed = 1;
	snprintf(warn, cap,
	         "cannot %s in the store %s (%s); sampling goes on, "
	         "samples not stored are only in the live ring",
	         what, rt_store_dir(s->store),
	         rc == RT_E_STORE ? rt_store_last_error(s->store) : rt_strerror(rc));
}

static int create_ring(struct rt_sampler *s, const struct rt_record *rec)
{
	/* room for devices that may appear later; bigger records go via the store */
	size_t slot = rt_record_size(rec->h->ncpu, rec->h->ndisk + 4u, rec->h->nmount + 8u,
	                             rec->h->nnic + 8u, rec->h->ngpu + 2u);
	slot = (slot + 63) & ~(size_t)63;
	int rc = rt_ring_path(s->ring_path, sizeof(s->ring_path), rt_store_dir(s->store), s->run);
	if (rc)
		return rc;
	return rt_ring_create(s->ring_path, s->run, (uint32_t)slot, s->ring_slots, &s->ring);
}

int rt_sampler_take(struct rt_sampler *s, unsigned flags, char *warn, size_t warncap)
{
	struct rt_record rec;
	int inv_changed = 0;
	warn[0] = '\0';
	struct rt_time t;
	rt_clock_now(&t);
	int rc = rt_collector_sample(&s->col, s->rec, s->rec_cap, &rec, &inv_changed);
	if (rc)
		return rc;
	if (s->tree) {
		rt_proctree_sample(s->tree, rec.proc);
		rt_nvml_tree(s->col.nvml, s->tree, rec.proc);
		rt_amd_tree(&s->col.amd, s->tree, t.mono_ns, rec.proc);
		rec.proc->pid = s->tracked_pid;
		rec.h->flags |= RT_REC_HAS_PROCESS;
	}
	rec.h->seq = s->seq;
	rec.h->mono_ns = t.mono_ns;
	rec.h->wall_ns = t.wall_ns;
	rec.h->flags |= flags;
	rt_record_seal(&rec);
	s->last_len = rec.h->size;
	s->last = t;
	if (inv_changed) {
		long n = rt_inventory_encode(s->col.inv, s->inv_buf, s->inv_cap);
		rc = n < 0 ? (int)n
		           : rt_store_put_inventory(s->store, s->run, s->col.inv->gen, s->inv_buf,
		                                    (size_t)n);
		if (rc)
			store_warn(s, "write the inventory", rc, warn, warncap);
	}
	rc = rt_store_append(s->store, s->run, s->seq, rec.h, rec.h->size);
	if (rc)
		store_warn(s, "write samples", rc, warn, warncap);
	if (!s->ring && (rc = create_ring(s, &rec)))
		return rc;
	/* too big for a slot (many new devices): publish an empty slot; readers
	 * then take this sample from the store */
	if (rt_ring_publish(s->ring, s->seq, rec.h, rec.h->size) == -EMSGSIZE)
		rt_ring_publish(s->ring, s->seq, rec.h, 0);
	rt_ring_heartbeat(s->ring, t.mono_ns);
	s->seq++;
	if (t.mono_ns - s->last_sync_ns >= SYNC_EVERY_NS) {
		rt_store_sync(s->store);
		s->last_sync_ns = t.mono_ns;
	}
	if (++s->since_trim >= TRIM_EVERY) {
		rt_store_trim_rss(s->store);
		s->since_trim = 0;
	}
	if (++s->since_cap >= CAP_EVERY) {
		unsigned deleted;
		rt_store_enforce_cap(s->store, s->run, &deleted);
		s->since_cap = 0;
	}
	return 0;
}

void rt_sampler_finish(struct rt_sampler *s)
{
	rt_store_sync(s->store);
	if (s->ring)
		rt_ring_set_state(s->ring, RT_RING_FINISHED);
}

void rt_sampler_close(struct rt_sampler *s, int unlink_ring)
{
	if (s->ring) {
		rt_ring_close(s->ring, unlink_ring);
		s->ring = NULL;
	}
	rt_collector_close(&s->col);
	free(s->rec);
	free(s->inv_buf);
	s->rec = s->inv_buf = NULL;
}
