/*
 * export.h - rt-export's internal modules.
 *
 *   runs.c    resolve RUN ("latest", an id), read run metadata, list/show
 *   output.c  the sink (buffered fd, EPIPE-aware) and the emitter that turns
 *             a pair of records into a JSON/CSV line through fields.h
 *   replay.c  replay a stored run or a time range, at any resolution
 *   follow.c  follow a live run: ring first, store when lapped or gone
 */
#ifndef RT_EXPORT_H
#define RT_EXPORT_H

#include <stdint.h>

#include "rt/safefile.h"
#include "rt/config.h"
#include "rt/fields.h"
#include "rt/fmt.h"
#include "rt/inventory.h"
#include "rt/record.h"
#include "rt/store.h"

/* One line on stderr in the exporter's name: "rt-export", or as given to
 * rt_say_as (the recorder's, when it started this exporter). */
void rt_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rt_say_as(const char *prog);
/* --csv-columns extended / TRACKER_CSV_COLUMNS=extended (RT_CSV_* flags):
 * every emitter made after it is set writes those CSV columns */
void rt_emit_csv_columns(int flags);

/* summary, recommend, report (answer.h; parsed by main.c in both builds) */
struct rt_answer_opts {
	const char *run, *job;
	const char *stage;   /* --stage NAME: the job's runs of that stage (step) */
	const char *ext_run; /* --external-run-id ID: of that run of the
	                          * orchestrator (a Metaflow run's tasks of a step:
	                          * its foreach branches) */
	unsigned long last;  /* --last N */
	/* who ran it (a job known by its cgroup): --job-id ID (its job id, or
	 * its array's: 5 selects 5_1, 5_2...), --user NAME, --scheduler S,
	 * --pod NAME, --namespace NS (a pod's, or a container's by its CRI
	 * annotations) */
	const char *job_id, *user, *scheduler, *pod, *ns;
	int any_name;            /* selected by those alone (no --job): job stands for them */
	int json, markdown;      /* summary --format json | markdown */
	unsigned servers;        /* --servers N */
	const char *output;      /* report -o */
	int failed;              /* report --failed: the caller says the job failed */
	unsigned branches;       /* report --branches N: the caller says its step has N */
	const char *integration; /* report --integration NAME: made from R, Metaflow... */
};

/* ---- runs.c ---- */
struct rt_runinfo {
	uint64_t id;
	char status[16]; /* as stored, or "crashed" when its recorder is gone */
	char *job_name;  /* malloc'd or NULL */
	int64_t tracked_pid;
	double interval;
	uint64_t start_ns, end_ns;
	int has_exit_code, exit_code;
	char *meta_json; /* the stored JSON (shown or sent whole: show, Sentinel) */
};

/* Fill ri from run metadata json[0..len) (hostile; runmeta.h reads it).
 * The status is as stored (see rt_run_resolve for "crashed"). */
int rt_runinfo_from_meta(const char *json, size_t len, struct rt_runinfo *ri);

/* Resolve "latest" / an id to run metadata. Returns 0 or an error with a
 * message already printed. */
int rt_run_resolve(struct rt_store *s, const char *spec, struct rt_runinfo *ri);
/* Run id's metadata (RT_E_NOTFOUND when absent; nothing printed). */
int rt_run_load(struct rt_store *s, uint64_t id, struct rt_runinfo *ri);
/* Newest run that is still being recorded. */
int rt_run_newest_live(struct rt_store *s, struct rt_runinfo *ri, int quiet);
void rt_run_free(struct rt_runinfo *ri);
/* Whether run's recorder is alive (its ring is held). */
int rt_run_recorder_alive(struct rt_store *s, uint64_t run);
int rt_cmd_runs(struct rt_store *s, const struct rt_answer_opts *o);
/* Whether a run's metadata matches o's who-filters (--job-id, --user,
 * --scheduler); 1 when none is set. */
int rt_run_who_matches(const struct rt_answer_opts *o, const char *meta, size_t len);
/* Whether o sets any of them. */
int rt_run_who_set(const struct rt_answer_opts *o);
/* wall clock ns of sample seq of run (0 when it cannot be read) */
uint64_t rt_run_sample_wall(struct rt_store *s, uint64_t run, uint64_t seq);
/* A run's first and last seq: the store's, extended by the samples its live
 * ring holds beyond them (the store commits every 30 s). RT_E_NOTFOUND
 * when it has none. */
int rt_run_bounds(struct rt_store *s, uint64_t run, uint64_t *first, uint64_t *last);
int rt_cmd_show(struct rt_store *s, const char *spec);
/* verify: each run of the store in dir intact, damaged from sample N, or
 * unreadable (exit 1 when any is damaged); recover: every intact sample
 * into a new store dst (NULL: dir.recovered). verify.c */
int rt_cmd_verify(const char *dir);
int rt_cmd_recover(const char *dir, const char *dst);
/* recover's second pass: records the tree of the store in src_dir no
 * longer reaches, found in its pages, into the store dst_dir where it
 * lacks them; *samples counts the samples. 0 or -errno. carve.c */
int rt_recover_carve(const char *src_dir, const char *dst_dir, uint64_t *samples);
/* sink/upload.c: `rt-export upload RUN` (exit status). allocation says
 * what Sentinel's host_server_allocation is for a finished run ("shared",
 * "dedicated" or NULL); the verb layer passes the answer layer's rule
 * (rt_run_allocation), so sinks never depend on answers. */
typedef const char *(*rt_allocation_fn)(struct rt_store *s, const struct rt_runinfo *ri);
/* sink/push.c: `rt-export push RUN --to prometheus [--url URL]` (exit
 * status): the run's fleet values by Prometheus remote write, resumable. */
int rt_cmd_push(struct rt_store *s, const char *spec, const char *to, const char *url, int verbose);
struct rt_value_info;
/* The Prometheus name of a value's fleet metric (system_cpu_time_seconds_total). */
void rt_prom_name(char *out, size_t cap, const struct rt_value_info *v);
int rt_cmd_upload(struct rt_store *s, const char *spec, int verbose, rt_allocation_fn allocation);
/* rt-export sinks: every run the node mode names on descriptor 3 sent to
 * the sinks the environment sets, in this one process (sink/nodesinks.c).
 * 0 once the node closed it and its runs are sent; 2 without descriptor 3. */
int rt_cmd_sinks(struct rt_store *s, rt_allocation_fn allocation);

/* ---- output.c ---- */
struct rt_sink {
	int fd;
	int own_fd;
	int atomic; /* a regular file replaced at close (of) */
	struct rt_outfile of;
	int line_flush; /* write each line at once (live output) */
	int no_poll;    /* 1: a regular file or /dev/null, poll() says ready anyway;
	                 * 0: not known yet; -1: may block (pipe, FIFO, tty, socket) */
	int failed;     /* errno of the first write error, reported once */
	int memory;     /* collect in buf, never write (batches) */
	struct rt_buf buf;
	const char *name;
};

/* Output to path ("-": stdout; NULL: default_fd). Live output (line_flush)
 * is written in place as it comes; any other to a regular file replaces it
 * atomically at rt_sink_close (safefile.h). why: one line on failure. */
int rt_sink_open(struct rt_sink *k, const char *path, int default_fd, int line_flush, char *why,
                 size_t cap);
/* Write what is buffered. Returns 0 or -errno (also kept in k->failed). */
int rt_sink_flush(struct rt_sink *k);
/* Flush and close: 0, or -errno when the output could not be written
 * (a replaced file then keeps its old contents). */
int rt_sink_close(struct rt_sink *k);
/* Close without writing the file into place. */
void rt_sink_discard(struct rt_sink *k);

/* A decoded record with its own aligned storage. */
struct rt_recbuf {
	void *buf;
	size_t len;
	struct rt_record rec;
};
int rt_recbuf_init(struct rt_recbuf *r);
void rt_recbuf_free(struct rt_recbuf *r);
/* Copy len bytes in and decode them. */
int rt_recbuf_set(struct rt_recbuf *r, const void *bytes, size_t len);

/* What a reader went past, or met at its end: the readers (replay, follow)
 * print nothing; the verb says it (rt_say_read_notes). */
struct rt_read_notes {
	uint64_t corrupt, corrupt_first; /* samples that failed validation: skipped */
	uint64_t no_inv, no_inv_first;   /* lines whose inventory is missing: skipped */
	unsigned newer_layout;           /* a record of a newer rt stopped the replay */
	int stopped;                     /* the recorder stopped without finishing the run */
	int gone;                        /* its ring is gone while the run still says running */
	int stream_cut;                  /* the recorder's pipe ended without the end frame */
	uint64_t last_seq;               /* the last sample read (stopped, gone) */
};
/* One line per note (nothing when there is none). */
void rt_say_read_notes(const struct rt_read_notes *n, uint64_t run, uint64_t lines);

struct rt_emitter {
	struct rt_store *store;
	uint64_t run;
	enum rt_format fmt;
	struct rt_run_info info;
	struct rt_sink *sink;
	int header_done;
	struct rt_inventory *inv[4]; /* small cache by generation */
	uint32_t inv_gen[4];
	unsigned inv_next;
	struct rt_derived *d;
	uint64_t lines;
	double interval;  /* the run's sampling interval, seconds */
	int csv_extended; /* CSV: the 32 columns, then the extended ones */
	/* Called with every line (summary, report); sink may then be NULL:
	 * no text at all. A non-zero return stops with that error. */
	int (*observe)(void *ctx, const struct rt_derived *d);
	void *observe_ctx;
	/* rt_follow_stream keeps the newest run metadata here when set */
	struct rt_buf *last_meta;
	struct rt_read_notes notes;
};

/* s may be NULL: inventories then come only from rt_emitter_put_inventory.
 * sink may be NULL when only an observer wants the lines. */
int rt_emitter_init(struct rt_emitter *e, struct rt_store *s, const struct rt_runinfo *ri,
                    enum rt_format fmt, struct rt_sink *sink);
/* Add an inventory (encoded bytes) of generation gen. */
int rt_emitter_put_inventory(struct rt_emitter *e, uint32_t gen, const void *bytes, size_t len);
void rt_emitter_free(struct rt_emitter *e);
/* CSV header (once). */
void rt_emit_header(struct rt_emitter *e);
/* Format the line of cur against prev into the sink. Returns 0, or an
 * error (inventory missing/corrupt, sink failed). */
int rt_emit(struct rt_emitter *e, const struct rt_record *prev, const struct rt_record *cur);

/* ---- replay.c / follow.c ---- */
struct rt_replay_opts {
	uint64_t from_ns, to_ns; /* 0: open */
	uint64_t every;          /* >= 1 */
};
int rt_replay(struct rt_emitter *e, const struct rt_replay_opts *o);
/* Lines for seq first_line..last_line (header first, for CSV). */
int rt_replay_range(struct rt_emitter *e, uint64_t first_line, uint64_t last_line);

/* Follow run from line seq `start` (>= 1) until the run ends or its
 * recorder dies. */
int rt_follow(struct rt_emitter *e, uint64_t start);
/* The header, then lines first_line..last_line of a live run (line k
 * against sample k-1), each sample from ring while it holds it, else from
 * the store; samples in neither are skipped (the next line spans them). */
struct rt_ring;
int rt_emit_lines(struct rt_emitter *e, struct rt_ring *ring, uint64_t first_line,
                  uint64_t last_line);
/* Follow the recorder's stream on fd (stream.h) to its end. */
int rt_follow_stream(struct rt_emitter *e, int fd);

#endif
