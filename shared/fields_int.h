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

uint64_t fld_delta_reset(uint64_t cur, uint64_t prev);
/* fields.c: a counter's delta; a device's slot in the previous sample;
 * a JSON key, a string or null */
int64_t fld_delta_i64(uint64_t cur, uint64_t prev, uint64_t unit);
int fld_prev_slot_disk(const struct rt_derived *d, unsigned i);
int fld_prev_slot_nic(const struct rt_derived *d, unsigned i);
void fld_key(struct rt_buf *b, const char *k, int *first);
void fld_str_or_null(struct rt_buf *b, const char *s);
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
