/*
 * fields_int.h - what fields.c (the table of values, derivation, the JSON
 * and CSV writers) and fields_json.c (the JSON's device arrays and run
 * facts) share. Internal to shared/.
 */
#ifndef RT_FIELDS_INT_H
#define RT_FIELDS_INT_H

#include <stdint.h>

#include "rt/common.h"
#include "rt/fields.h"
#include "rt/fmt.h"
#include "rt/inventory.h"
#include "rt/record.h"

/* fields.c's and fields_json.c's helpers, inline in both (neither file
 * calls the other's for them): a counter's delta across a reset, held
 * deltas, a device's slot in the previous sample, a JSON key, a string or
 * null */
/* Counter delta across a device reset: the new counter started from 0. */
static inline uint64_t fld_delta_reset(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : cur;
}

/* A counter's change in units of `unit` bytes as a signed total, held at
 * INT64_MAX: a damaged record can hold any value, and no sum of them may
 * overflow. */
static inline int64_t fld_delta_i64(uint64_t cur, uint64_t prev, uint64_t unit)
{
	uint64_t d = fld_delta_reset(cur, prev);
	return d > (uint64_t)INT64_MAX / unit ? INT64_MAX : (int64_t)(d * unit);
}

static inline int fld_prev_slot_disk(const struct rt_derived *d, unsigned i)
{
	if (d->prev.rec->h->inv_gen == d->cur.rec->h->inv_gen && i < d->prev.rec->h->ndisk)
		return (int)i;
	int j = rt_inventory_find_disk(d->prev.inv, d->cur.inv->disk[i].name);
	return j < (int)d->prev.rec->h->ndisk ? j : -1;
}

static inline int fld_prev_slot_nic(const struct rt_derived *d, unsigned i)
{
	if (d->prev.rec->h->inv_gen == d->cur.rec->h->inv_gen && i < d->prev.rec->h->nnic)
		return (int)i;
	int j = rt_inventory_find_nic(d->prev.inv, d->cur.inv->nic[i].name);
	return j < (int)d->prev.rec->h->nnic ? j : -1;
}

static inline void fld_key(struct rt_buf *b, const char *k, int *first)
{
	if (!*first)
		rt_buf_putc(b, ',');
	*first = 0;
	rt_buf_putc(b, '"');
	rt_buf_puts(b, k);
	rt_buf_puts(b, "\":");
}

static inline void fld_str_or_null(struct rt_buf *b, const char *s)
{
	if (s && *s)
		rt_buf_json_str(b, s);
	else
		rt_buf_puts(b, "null");
}

/* fields_json.c: the run's facts and the device arrays (extras[] in
 * fields.c orders them among the keys) */
void fj_job(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri);
void fj_pid(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri);
void fj_version(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri);
void fj_seq(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri);
void fj_timestamp(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri);
void fj_per_core(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri);
void fj_disks(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri);
void fj_nics(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri);
void fj_gpus(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri);

#endif
