/*
 * runmeta.h - run metadata, the JSON value of the store's `runs` database.
 *
 * Written by the recorder (which has no JSON library: this writer is
 * enough), read by rt-export with cJSON. Keys:
 *   run_id, status ("running" | "finished" | "failed" | "killed" | "crashed"),
 *   start, end (ISO 8601 UTC or null), start_ns, end_ns, interval_secs,
 *   recorder_pid, command (array or null), tracked_pid (or null),
 *   exit_code (or null), metadata {job_name...}, tags ["k=v"...],
 *   host {hostname, vcpus, cpu_model, memory_mib, host_id, ip, storage_gb,
 *         gpu_model, gpu_count, gpu_memory_mib},
 *   last_seq (or null),
 *   version.
 */
#ifndef RT_RUNMETA_H
#define RT_RUNMETA_H

#include <stdint.h>

#include "rt/config.h"
#include "rt/fmt.h"

struct rt_run_meta {
	uint64_t run_id;
	const char *status;
	uint64_t start_ns, end_ns; /* end 0: null */
	double interval_secs;
	int64_t recorder_pid;
	char *const *command; /* NULL: null */
	int ncommand;
	int64_t tracked_pid; /* 0: null */
	int has_exit_code;
	int exit_code;
	const char *meta[RT_META_COUNT];
	const char *const *tags;
	int ntags;
	const char *hostname, *cpu_model, *host_id, *ip;
	const char *gpu_model; /* first GPU's name, NULL: none */
	unsigned gpu_count;
	uint64_t gpu_memory_mib;
	double storage_gb;
	unsigned vcpus;
	uint64_t memory_mib;
	int has_last_seq;
	uint64_t last_seq;
};

/* Serialize m as one JSON object (no newline). */
void rt_runmeta_write(struct rt_buf *out, const struct rt_run_meta *m);

#endif
