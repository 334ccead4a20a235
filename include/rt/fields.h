/*
 * fields.h - from two records to the fields users see.
 *
 * rt_derive() turns a pair of records (and their inventories) into the
 * values of one output sample: rates over the exact time between the two
 * records, so a gap or a coarser replay gives averages, never spikes. The
 * values are the rows of values.def: each names how it comes from the
 * records (its kind and source), when it is present, its JSON section and
 * key, its CSV columns, decimals and unit. The same rows drive JSON Lines
 * and CSV output, and the answer layer refers to values by their ids.
 */
#ifndef RT_FIELDS_H
#define RT_FIELDS_H

#include <stdint.h>

#include "rt/fmt.h"
#include "rt/inventory.h"
#include "rt/record.h"

/* A record with the inventory its slots refer to. */
struct rt_view {
	const struct rt_record *rec;
	const struct rt_inventory *inv;
};

/* Per-run context printed into every sample. */
struct rt_run_info {
	const char *job_name; /* NULL: null */
	int64_t tracked_pid;  /* 0: null */
};

/* The output values, by id (values.def part 2): RT_V_CPU_UTIL, ... */
enum rt_value_id {
#define RT_VALUE_ID(ID, ...) RT_V_##ID,
	RT_VALUES(RT_VALUE_ID)
#undef RT_VALUE_ID
	    RT_NV
};

/* The CSV columns: the reference's 32, then the extended ones. */
#define RT_IS_CSV(name) 1
#define RT_IS_NOCSV 0
#define RT_COUNT_CSV(ID, type, sec, json, csv, xcsv, ...) +RT_IS_##csv
#define RT_COUNT_XCSV(ID, type, sec, json, csv, xcsv, ...) +RT_IS_##xcsv
enum {
	RT_CSV_COLUMNS = 0 RT_VALUES(RT_COUNT_CSV),
	RT_CSV_COLUMNS_X = RT_CSV_COLUMNS RT_VALUES(RT_COUNT_XCSV)
};
_Static_assert(RT_CSV_COLUMNS == 32, "the reference's CSV has 32 columns (reference.md 3)");

enum rt_value_type { RT_VT_I64, RT_VT_F64 };
enum rt_value_kind { RT_VK_GAUGE, RT_VK_DELTA, RT_VK_TICKS, RT_VK_STALL, RT_VK_FN };
enum rt_json_sec { RT_JS_TOP, RT_JS_CPU, RT_JS_MEM, RT_JS_PRESSURE, RT_JS_CGROUP, RT_JS_N };

/* One row of the list. */
struct rt_value_info {
	const char *json; /* key in its JSON object, NULL: not in JSON */
	const char *csv;  /* one of the 32 CSV columns, or NULL */
	const char *xcsv; /* an extended CSV column, or NULL */
	const char *unit;
	uint8_t type;     /* rt_value_type */
	uint8_t sec;      /* rt_json_sec */
	uint8_t prec;     /* CSV decimals of an F64 */
	uint8_t kind;     /* rt_value_kind */
	double div;       /* GAUGE, DELTA: the raw value over this */
	uint8_t src_sec;  /* RT_SEC_SYSTEM, RT_SEC_PROCESS, or RT_NSECTIONS: none */
	uint16_t src_idx; /* the record value it comes from */
	uint8_t pres;     /* when it is present (fields.c) */
	uint64_t pres_bit;
	/* metrics engines (values.def "fleet"): NULL name when not sent */
	const char *fleet;
	uint8_t fleet_sum; /* a cumulative counter, else a gauge */
	const char *fleet_unit;
	double fleet_scale;
	const char *fleet_attr, *fleet_attr_value; /* NULL: none */
};
const struct rt_value_info *rt_value_info(unsigned id); /* NULL past RT_NV */

union rt_num {
	int64_t i;
	double f;
};

struct rt_derived {
	struct rt_view prev, cur;
	uint64_t seq;
	double dt;        /* seconds between the records (monotonic) */
	int has_interval; /* prev is not the run's warm-up record */
	uint64_t wall_ns;

	/* the values: v[id].i or .f by the row's type, meaningful when present */
	uint64_t present[(RT_NV + 63) / 64];
	union rt_num v[RT_NV];

	/* per device, by slot of cur's inventory */
	double core_pct[RT_MAX_CPUS];
	int64_t disk_rd_delta[RT_MAX_DISKS], disk_wr_delta[RT_MAX_DISKS];
	int64_t nic_rx_delta[RT_MAX_NICS], nic_tx_delta[RT_MAX_NICS];
};

static inline int rt_has(const struct rt_derived *d, unsigned id)
{
	return (int)(d->present[id / 64] >> (id % 64) & 1);
}

/* Value id of d as a double into *v; 0 (and *v untouched) when absent. */
int rt_value(const struct rt_derived *d, unsigned id, double *v);

/* Derive cur against prev. Both must be decoded records of the same run
 * with prev.seq < cur.seq. */
void rt_derive(const struct rt_view *prev, const struct rt_view *cur, struct rt_derived *d);

/* Whether NIC slot i of inv counts in the CSV network totals: physical NICs
 * when the host has any, otherwise every NIC but lo (containers). */
int rt_net_counted(const struct rt_inventory *inv, unsigned i);

/* One JSON object (sorted keys) plus '\n'. */
void rt_format_json(struct rt_buf *out, const struct rt_derived *d, const struct rt_run_info *ri);
/* The CSV columns, in order (RT_CSV_COLUMNS_X with the extended ones):
 * the value id of column i (-1 past the end) and its name (NULL past the
 * end). */
int rt_csv_column_id(unsigned i);
const char *rt_csv_column_name(unsigned i);
/* The value id of a CSV or extended-CSV column name, -1 when none. */
int rt_value_by_column(const char *name);

/* The 32-column header line, and one data line. */
void rt_format_csv_header(struct rt_buf *out);
void rt_format_csv(struct rt_buf *out, const struct rt_derived *d, const struct rt_run_info *ri);
/* The same with extended != 0: the 32, then the extended columns
 * (--csv-columns extended: saturation, pressure, the job's cgroup). */
void rt_format_csv_header_x(struct rt_buf *out, int extended);
/* rt_format_csv_x's extended flags: RT_CSV_X the extended columns (1),
 * RT_CSV_MS the timestamp to the millisecond (seconds with 3 decimals;
 * the reference's CSV has whole seconds, which repeat below 1 s) */
#define RT_CSV_MS 2
void rt_format_csv_x(struct rt_buf *out, const struct rt_derived *d, const struct rt_run_info *ri,
                     int extended);

#endif
