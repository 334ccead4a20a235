/*
 * gpu_nvml_int.h - what gpu_nvml.c (the library, the worker thread, the
 * tree's figures) and gpu_nvml_query.c (the calls into the driver) share.
 *
 * Structures are declared with NVML's layouts (there is no nvml.h at build
 * time). The worker thread owns struct nvml_dev and builds a snapshot; the
 * sampling thread reads the published snapshot under the mutex.
 */
#ifndef RT_GPU_NVML_INT_H
#define RT_GPU_NVML_INT_H

#include <pthread.h>
#include <stdint.h>

#include "gpu_busy.h"
#include "gpu_nvml.h"

typedef int nvmlReturn_t; /* 0: NVML_SUCCESS */
typedef void *nvmlDevice_t;
typedef struct {
	unsigned int gpu, memory;
} nvml_util_t;
typedef struct {
	unsigned long long total, free, used;
} nvml_memory_t;
typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvml_pci_t;
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvml_proc_t; /* nvmlProcessInfo_v2/v3 */
typedef struct {
	unsigned int pid;
	unsigned long long timeStamp; /* µs */
	unsigned int smUtil, memUtil, encUtil, decUtil;
} nvml_putil_t;
typedef struct {
	unsigned long long timeStamp;
	union {
		double d;
		unsigned int ui;
		unsigned long ul;
		unsigned long long ull;
		long long sll;
	} value;
} nvml_sample_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_FUNCTION_NOT_FOUND 13

#define RT_NVML_MAX_PROCS 256 /* per GPU in a snapshot; more are not seen */
#define RT_NVML_MAX_PENDING 1024

enum busy_mode {
	BUSY_NONE,   /* the tree holds no process here: nothing asked */
	BUSY_DEVICE, /* alone here: the device's samples */
	BUSY_PROCS,  /* shares it: each process's samples, polled */
};

/* Calls a board may not support: asked once (bit per call in dev.no). */
enum nvml_ask {
	ASK_UTIL,
	ASK_MEMORY,
	ASK_TEMP,
	ASK_POWER,
	ASK_CLOCK,
	ASK_MEM_CLOCK,
	ASK_ENERGY,
	ASK_FAN,
	ASK_THROTTLE,
	ASK_SAMPLES,
	ASK_PUTIL,
};

struct gpu_proc {
	uint32_t pid, pad;
	uint64_t vram; /* bytes, ~0: not available */
};

/* One device as one query saw it. */
struct dev_snap {
	struct rt_inv_gpu ident;
	struct rt_rec_gpu gauge;
	int mode; /* the busy source asked: busy_mode */
	int left; /* the tree has left this GPU: mode's last samples of it */
	unsigned nproc;
	struct gpu_proc proc[RT_NVML_MAX_PROCS];
	struct rt_busy_acc acc; /* the interval's utilization samples */
};

struct snapshot {
	unsigned ndev;
	struct dev_snap dev[RT_MAX_GPUS];
};

/* A utilization sample not yet given to an interval. */
struct busy_sample {
	uint32_t pid, value;
	uint64_t ts;
};

/* The worker's state of one device. */
struct nvml_dev {
	nvmlDevice_t h;
	unsigned no;        /* nvml_ask bits: not supported, not asked again */
	int mode;           /* busy_mode of the last query */
	uint64_t last_ts;   /* newest utilization sample taken (µs) */
	uint64_t period;    /* NVML's sampling period, µs (as measured) */
	uint64_t poll_at;   /* BUSY_PROCS: the next poll (µs) */
	uint64_t energy_at; /* when the energy counter was last read */
	unsigned max_clock; /* the board's highest SM clock, MHz (0: unknown) */
	nvml_putil_t *ubuf; /* buffers sized as NVML asks */
	unsigned ucap;
	nvml_sample_t *sbuf;
	unsigned scap;
	nvml_proc_t *lbuf;
	unsigned lcap;
	int has_carry; /* samples for the next interval: a query no sample used, a full list */
	struct rt_busy_acc carry;
	unsigned npending;
	struct busy_sample pending[RT_NVML_MAX_PENDING];
};

/* Which listed processes the sampling side found in the tree. */
struct dev_class {
	unsigned n;
	uint32_t pid[RT_NVML_MAX_PROCS];
	uint8_t tree[RT_NVML_MAX_PROCS];
};

struct rt_nvml {
	void *lib;
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	nvmlReturn_t (*count)(unsigned int *);
	nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*util)(nvmlDevice_t, nvml_util_t *);
	nvmlReturn_t (*memory)(nvmlDevice_t, nvml_memory_t *);
	nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*fan)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*pci)(nvmlDevice_t, nvml_pci_t *);
	nvmlReturn_t (*driver)(char *, unsigned int);
	nvmlReturn_t (*cores)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*compute)(nvmlDevice_t, unsigned int *, nvml_proc_t *);
	nvmlReturn_t (*graphics)(nvmlDevice_t, unsigned int *, nvml_proc_t *);
	nvmlReturn_t (*putil)(nvmlDevice_t, nvml_putil_t *, unsigned int *, unsigned long long);
	nvmlReturn_t (*samples)(nvmlDevice_t, int, unsigned long long, int *, unsigned int *,
	                        nvml_sample_t *);

	/* worker side */
	unsigned ndev_known; /* identity read for this many (0: not yet) */
	struct nvml_dev dev[RT_MAX_GPUS];
	struct dev_class cls_now[RT_MAX_GPUS]; /* copy of cls, for one query */
	uint64_t floor_us;                     /* the previous sample's cut */
	struct snapshot work;
	/* shared, under mu */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int want, busy, stop, have, stuck, final;
	uint64_t cut_us;
	unsigned long long done; /* queries completed */
	struct snapshot snap;
	struct dev_class cls[RT_MAX_GPUS];
	/* sampling side */
	int fresh; /* snap is from this sample */
	unsigned long long stalls;
	long last_busy[RT_MAX_GPUS]; /* the tree's, carried over an interval without samples */
	int last_alone[RT_MAX_GPUS]; /* the tree was alone there at the last sample */
};

/* gpu_nvml_query.c, on the worker thread: one query for the sample at
 * cut_us, and one poll of the shared GPUs' process samples. */
void rt_nvml_query(struct rt_nvml *n, uint64_t cut_us, int final);
void rt_nvml_poll(struct rt_nvml *n);
/* When the next poll is due (µs, CLOCK_REALTIME), 0: none is. */
uint64_t rt_nvml_poll_due(const struct rt_nvml *n);
uint64_t rt_nvml_now_us(void);

#endif
