/*
 * upload.h - one run's upload to S3 through Sentinel, step by step: the
 * node's exporter (nodesinks.c) follows every run of its node in one
 * process with these; `rt-export upload RUN` (export.h) is the same
 * upload in one loop of its own.
 */
#ifndef RT_SINK_UPLOAD_H
#define RT_SINK_UPLOAD_H

#include <stdint.h>

#include "export.h"
#include "sink/push.h"

struct rt_upload_run;
struct rt_cloud;

/* The cloud this host runs on, asked of the metadata services (at most
 * 2 s) and remembered in the store for summary, recommend and report. */
void rt_upload_cloud(struct rt_store *s, struct rt_cloud *cloud);

/* The run's upload: Sentinel from the environment, the cloud as asked
 * (rt_upload_cloud, once for every run: it goes into each run's start),
 * the run's checkpoint locked. NULL with the exit code in *rc (said: 1
 * also when another rt-export uploads it). */
struct rt_upload_run *rt_upload_run_open(struct rt_store *s, uint64_t run,
                                         rt_allocation_fn allocation, const struct rt_cloud *cloud,
                                         int *rc);
/* What the upload can do now: the run started on Sentinel (once), the
 * batches due put, the run finished once it ended and all is in (a run
 * handed over is never finished: the node started next goes on with it).
 * An outage is waited out by later steps (no sleep here, nothing said).
 * 0: more to come; 1: this run is done here; RT_E_NET: a try failed
 * (rt_upload_run_answer says why; tried again after a backoff); -EPROTO:
 * given up (said). */
int rt_upload_run_step(struct rt_upload_run *r, enum rt_sink_end end);
const char *rt_upload_run_answer(const struct rt_upload_run *r);
/* The requests that succeeded so far (an outage is over at the next):
 * which 1 Sentinel's, 2 S3's, 0 both. */
uint64_t rt_upload_run_oks(const struct rt_upload_run *r, int which);
/* Whether the last failure (rt_upload_run_answer) was S3's, not Sentinel's. */
int rt_upload_run_failed_s3(const struct rt_upload_run *r);
void rt_upload_run_close(struct rt_upload_run *r);

#endif
