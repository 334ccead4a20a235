/* alloc_detect.h - what the job was given, at the start of a run (alloc.c). */
#ifndef RT_ALLOC_DETECT_H
#define RT_ALLOC_DETECT_H

#include "rt/alloc.h"

/* req may be NULL; host_mem in bytes. */
void rt_alloc_detect(const struct rt_request *req, unsigned host_cpus, uint64_t host_mem,
                     unsigned host_gpus, struct rt_alloc *a);

#endif
