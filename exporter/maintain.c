/*
 * maintain.c - the verbs that keep a store: verify, recover (a damaged
 * store's runs into a new one), compact, delete (runs, or a job's before a
 * date, with their upload state).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "export.h"
#include "rt/common.h"
#include "rt/ring.h"
#include "rt/runmeta.h"
#include "rt/salvage.h"
#include "rt/store.h"
#include "rt/sysroot.h"
#ifdef RT_EXPORT_FULL
#include "answer/answer.h"
#include "net/cloud.h"
#define FULL(fn) fn
#else
/* not in this executable: main() hands the verb to rt-export-full */
#define FULL(fn) NULL
#endif

/* The store without its free pages; nothing else may have it open. */
int verb_verify(const struct args *a, struct rt_store *s)
{
	(void)s; /* each run is read by a process of its own */
	char dir[4096];
	if (rt_store_resolve_dir(a->store, dir, sizeof(dir))) {
		rt_say("no store directory: use --store DIR or set RT_STORE");
		return 1;
	}
	return rt_cmd_verify(dir);
}

int verb_recover(const struct args *a, struct rt_store *s)
{
	(void)s;
	if (!a->run) {
		rt_say("recover needs the damaged store's directory: rt-export recover DIR [-o "
		       "NEWDIR]");
		return 2;
	}
	return rt_cmd_recover(a->run, a->output);
}

int verb_compact(const struct args *a, struct rt_store *s)
{
	(void)s; /* opened by rt_store_compact itself, after the checks */
	char dir[4096];
	if (rt_store_resolve_dir(a->store, dir, sizeof(dir))) {
		rt_say("no store directory: use --store DIR or set RT_STORE");
		return 1;
	}
	uint64_t before = 0, after = 0;
	long user = 0;
	int rc = rt_store_compact(dir, &before, &after, &user);
	if (rc == RT_E_BUSY) {
		if (user)
			rt_say("the store %s is open in process %ld (a recorder, or rt-export); "
			       "compact it when nothing uses it",
			       dir, user);
		else
			rt_say("a recorder is writing to the store %s (or another compact runs); "
			       "compact it when the run is over",
			       dir);
		return 1;
	}
	if (rc) {
		rt_say("cannot compact the store %s: %s", dir,
		       rc == RT_E_CORRUPT
		           ? "it is damaged and is left as it is; see what can be read "
		             "with rt-export verify, and copy it with rt-export recover"
		           : rt_strerror(rc));
		return 1;
	}
	printf("compacted %s: %.1f MiB -> %.1f MiB\n", dir, (double)before / 1048576.0,
	       (double)after / 1048576.0);
	return 0;
}

struct del_ctx {
	struct rt_store *s;
	const char *job;
	uint64_t before_ns, one;
	uint64_t *ids;
	size_t n, cap;
	int refused, oom;
};

/* Runs to delete: the one asked for, or the job's runs that started before
 * the date; a running run is refused (its recorder still writes it). */
static int del_cb(void *vctx, uint64_t run, const char *meta, size_t len)
{
	struct del_ctx *c = vctx;
	struct rt_run_fields f;
	if (rt_runmeta_read(meta, len, &f))
		return 0;
	if (c->one ? run != c->one
	           : !f.has_job_name || strcmp(f.job_name, c->job) || f.start_ns >= c->before_ns)
		return 0;
	if (rt_run_status_of(f.status) == RT_RUN_RUNNING) {
		rt_say("run %llu is still running: not deleted (delete it when it has ended)",
		       (unsigned long long)run);
		c->refused++;
		return 0;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		uint64_t *p = realloc(c->ids, cap * sizeof(*p));
		if (!p) {
			c->oom = 1;
			return 1;
		}
		c->ids = p;
		c->cap = cap;
	}
	c->ids[c->n++] = run;
	return 0;
}

/* A deleted run's upload state goes with it: removed in the store's own
 * upload directory, held open (never through a link). */
static void forget_upload_state(const struct rt_store *s, uint64_t run)
{
	char why[600], name[64];
	int ufd = rt_store_side_dir(s, "upload", 0, why, sizeof(why));
	if (ufd < 0)
		return;
	snprintf(name, sizeof(name), "%llu.json", (unsigned long long)run);
	unlinkat(ufd, name, 0); /* raw: a name in a directory of ours, held open */
	close(ufd);
}

/* rt-export delete (RUN | --job NAME --before T) [--compact] */
int verb_delete(const struct args *a, struct rt_store *none)
{
	(void)none; /* deleting needs a writer's handle: opened here */
	struct del_ctx c = {.job = a->ans.job};
	if (!a->run && !(a->ans.job && a->before)) {
		rt_say("delete needs a RUN, or --job NAME --before DATE");
		return 2;
	}
	if (a->before && cli_parse_time_opt("--before", a->before, &c.before_ns))
		return 2;
	char dir[4096];
	if (rt_store_resolve_dir(a->store, dir, sizeof(dir)))
		return 1;
	int rc = rt_store_open(dir, RT_STORE_RDWR, &c.s);
	if (rc && rc != RT_E_CORRUPT) {
		rt_say("cannot open the store %s for writing: %s", dir,
		       rc == RT_E_UNSAFE ? rt_store_refusal() : rt_strerror(rc));
		return 1;
	}
	/* deleting changes pages of runs long written: each one is looked at
	 * first, and a damaged store is left as it is (opening it found the
	 * damage already when its databases cannot be found) */
	if (rc || (rc = rt_store_check_pages(c.s))) {
		rt_say(
		    "the store %s is damaged (%s); nothing was deleted. See what can be read with "
		    "rt-export verify, and copy it with rt-export recover %s -o NEWDIR",
		    dir,
		    !c.s                 ? "its meta pages or main database"
		    : rc == RT_E_CORRUPT ? rt_store_last_error(c.s)
		                         : rt_strerror(rc),
		    dir);
		rt_store_close(c.s);
		return 1;
	}
	rt_salvage_dead_runs(c.s, NULL, NULL); /* a killed recorder's run is not running */
	if (a->run) {
		struct rt_runinfo ri;
		if (rt_run_resolve(c.s, a->run, &ri)) {
			rt_store_close(c.s);
			return 1;
		}
		c.one = ri.id;
		rt_run_free(&ri);
	}
	rt_store_list_runs(c.s, del_cb, &c);
	int ret = c.oom || c.refused ? 1 : 0;
	for (size_t i = 0; i < c.n; i++) {
		if ((rc = rt_store_delete_run(c.s, c.ids[i]))) {
			rt_say("cannot delete run %llu: %s", (unsigned long long)c.ids[i],
			       rt_strerror(rc));
			ret = 1;
			continue;
		}
		forget_upload_state(c.s, c.ids[i]);
		printf("deleted run %llu\n", (unsigned long long)c.ids[i]);
	}
	if (!c.n && !c.refused && !c.oom)
		printf("no run of job %s started before %s\n", a->ans.job ? a->ans.job : "-",
		       a->before ? a->before : "-");
	free(c.ids);
	rt_store_close(c.s);
	if (a->compact && c.n && verb_compact(a, NULL))
		ret = 1;
	return ret;
}
