/*
 * runmeta.h - run metadata, the JSON value of the store's `runs` database.
 *
 * Written and read here, and only here: the recorder has no JSON library,
 * so the reader is a small bounded scanner of the fields programs act on
 * (rt-export's `show` prints the whole document with cJSON). Keys:
 *   run_id, status ("running" | "finished" | "failed" | "killed" | "crashed"),
 *   start, end (ISO 8601 UTC or null), start_ns, end_ns, interval_secs,
 *   recorder_pid, command (array or null), tracked_pid (or null),
 *   exit_code (or null), metadata {job_name...}, tags ["k=v"...],
 *   host {hostname, vcpus, cpu_model, memory_mib, host_id, ip, storage_gb,
 *         gpu_model, gpu_count, gpu_memory_mib},
 *   last_seq (or null), samples_not_stored (when some were not stored),
 *   version.
 */
#ifndef RT_RUNMETA_H
#define RT_RUNMETA_H

#include <stdint.h>

#include "rt/config.h"
#include "rt/fmt.h"

struct rt_alloc;

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
	uint64_t samples_not_stored;  /* taken but not committed (disk full...) */
	uint64_t samples_waited;      /* not stored when taken: kept and stored later */
	uint64_t samples_skipped;     /* deadlines passed while a sample was taken */
	const struct rt_alloc *alloc; /* what the job was given, NULL: unknown */
	/* the largest high-water mark a process of the tree had reached before
	 * tracking began, above what it held then (KiB): left out of the
	 * tree's peak; "peak_before_tracking_mib", written only when set */
	uint64_t peak_before_kb;
	/* the job's budget (--max-memory, --max-cpu): written only when set */
	int has_budget_cpu, has_budget_mem;
	double budget_cpu;   /* cores */
	uint64_t budget_mem; /* bytes */
	/* why the run is not in the store asked for (a fallback store's
	 * reason, kept where a closed stderr lost the warning); NULL: none */
	const char *store_note;
	/* a job tracked by its cgroup (--cgroup, --jobs): "cgroup": {path,
	 * scheduler, job_id, user, name, qos, idle, cpu_before_secs}; written only when path is set */
	const struct rt_run_cgroup *cgroup;
	/* a node job's run: what a node started later needs to go on with it
	 * as the same run (written only when set) */
	const struct rt_run_resume *resume;
};

/* "resume": {group_ino, cpu_offset_user_us, cpu_offset_sys_us,
 * cpu_before_us, samples_skipped, oom_below, handover}: a node job's run, as a node
 * started later finds it (recorder/jobs/nodesampler.c). The group's inode
 * tells the same group from a new one made at its path; the offsets are
 * what its process section's CPU is its group's counter less (so the run
 * goes on from what it showed, the gap's CPU in the interval after it). */
struct rt_run_resume {
	uint64_t group_ino;
	int64_t off_user_us, off_sys_us; /* (both 0 and cg_cpu 0: not yet read) */
	int cg_cpu;                      /* the offsets are set */
	uint64_t before_us;              /* CPU before the first sample */
	uint64_t skipped;                /* samples_skipped so far */
	uint64_t oom_below;              /* v1: kills in groups below the job's */
	int handover;                    /* ended by its node's stop, its group live */
};

/* A part of a job known by its cgroup (a group right below the job's: a
 * Slurm step, a pod's container), as its own counters said at the end. */
struct rt_run_part {
	const char *name;      /* its group's directory name */
	double cpu_secs;       /* -1: unknown */
	uint64_t mem_peak;     /* its high-water mark, bytes; 0: unknown */
	int64_t mem_limit;     /* bytes, -1: none */
	uint64_t oom_kills;    /* in its subtree */
	const char *container; /* a pod's container's name (its runtime's), NULL */
};

struct rt_run_cgroup {
	const char *path;      /* relative to the hierarchies */
	const char *scheduler; /* "slurm", "kubernetes", "systemd", NULL */
	const char *job_id;    /* Slurm job id, pod uid, unit name; NULL */
	const char *user;      /* the job's user where known; NULL */
	const char *name;      /* the job's name (SLURM_JOB_NAME, the pod's), NULL */
	const char *qos;       /* a pod's QoS class, NULL */
	const char *pod, *ns;  /* a container's pod and namespace (CRI), NULL: not written */
	int idle;              /* no process was in the group while recorded */
	double cpu_before;     /* its CPU seconds before the first sample, < 0: unknown */
	unsigned bounds;       /* what the member walk's bounds left unread (1 depth,
	                        * 2 groups, 4 members, 8 environment): "bounds_hit" */
	const char *array_job_id, *array_task_id; /* a Slurm array's task, NULL */
	/* at the run's end (ended 1), the kernel's word on its memory */
	int ended;
	int mem_known;       /* its memory group was read */
	uint64_t oom_kills;  /* OOM kills in its whole subtree of groups */
	uint64_t mem_peak;   /* its group's high-water mark since it was made, bytes */
	int64_t mem_limit;   /* bytes, -1: none */
	uint64_t limit_hits; /* times it reached its limit (v1 failcnt, v2 "max") */
	const struct rt_run_part *parts;
	unsigned nparts;
};

/* Serialize m as one JSON object (no newline). */
void rt_runmeta_write(struct rt_buf *out, const struct rt_run_meta *m);

/*
 * The fields programs act on, read back from stored metadata. Absent or
 * mistyped keys keep their defaults (0, "", interval 1.0); the text is
 * hostile (any bytes, any nesting, any length).
 */
struct rt_run_fields {
	char status[16];   /* "" when absent or longer than 15 bytes */
	size_t status_at;  /* offset of the status string's opening quote, 0: absent */
	size_t status_end; /* offset just past its closing quote */
	int64_t recorder_pid;
	int64_t tracked_pid; /* 0: null */
	uint64_t start_ns, end_ns;
	double interval_secs;
	int has_exit_code;
	int exit_code;
	int has_last_seq;
	uint64_t last_seq;
	uint64_t samples_not_stored;
	int has_job_name;
	char job_name[256]; /* metadata.job_name, unescaped, truncated to fit */
	/* a job known by its cgroup: who it is ("" when absent or too long) */
	char cg_scheduler[16], cg_job_id[96], cg_user[64], cg_array_job[24];
	char cg_pod[128], cg_ns[128]; /* a pod's name and namespace ("": none) */
	char cg_path[512];            /* cgroup.path ("" when absent or too long) */
	int has_resume;               /* "resume" with its group_ino read */
	struct rt_run_resume resume;
	size_t handover_at; /* offset of resume.handover's digit, 0: absent */
};

/* Read f from json[0..len). Returns 0 or RT_E_SYNTAX (not a JSON object). */
int rt_runmeta_read(const char *json, size_t len, struct rt_run_fields *f);

/* out = json with its status replaced (json must have one: RT_E_NOTFOUND). */
int rt_runmeta_set_status(const char *json, size_t len, const char *status, struct rt_buf *out);

/* out = json with its resume object's handover mark cleared (the run's
 * job ended while no node ran: no node goes on with it). 0, or
 * RT_E_NOTFOUND when it has none, RT_E_SYNTAX, -ENOMEM. */
int rt_runmeta_clear_handover(const char *json, size_t len, struct rt_buf *out);

/* A run's status: the names stored in the metadata, in one place. */
enum rt_run_status {
	RT_RUN_UNKNOWN, /* absent, or a name this rt does not know */
	RT_RUN_RUNNING,
	RT_RUN_FINISHED, /* ended, exit code 0 (or stopped in standalone mode) */
	RT_RUN_FAILED,   /* the command exited non-zero, or could not start */
	RT_RUN_KILLED,   /* a signal killed the command */
	RT_RUN_CRASHED,  /* its recorder died; salvaged */
	RT_RUN_UNTRACKED /* the command ran untracked (no process to spare) */
};
/* A status's name in metadata ("running", "finished"...; "unknown" for a
 * value out of the enum). Never NULL. */
const char *rt_run_status_name(enum rt_run_status st);
/* The status a name stands for; RT_RUN_UNKNOWN for any other name and
 * for NULL. Cannot fail. */
enum rt_run_status rt_run_status_of(const char *name);

#endif
