/*
 * verify.c - what of a damaged store can be read (rt-export verify), and a
 * copy of it (rt-export recover).
 *
 * Each run is read in a child process of its own, which opens the store
 * itself: whatever the damaged bytes make LMDB do (a fault is caught by
 * the store's guard; a wild write is not), it costs that child alone. The
 * child keeps its progress in a page shared with the parent, so a child
 * that dies still tells how far its run was intact. A run is intact when
 * every sample from 0 to the last its metadata names is there, in order,
 * and passes its checksum (records carry a CRC-32C).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "export.h"
#include "rt/common.h"
#include "rt/record.h"
#include "rt/runmeta.h"
#include "rt/store.h"

struct run_entry {
	uint64_t id;
	int meta_ok;
	int has_last;
	uint64_t last_seq;
};

struct run_list {
	struct run_entry *v;
	size_t n, cap;
	int list_damaged; /* runs the list cannot reach */
};

static int collect(void *ctx, uint64_t run, const char *meta, size_t len)
{
	struct run_list *l = ctx;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		void *p = realloc(l->v, cap * sizeof(*l->v));
		if (!p)
			return -ENOMEM;
		l->v = p;
		l->cap = cap;
	}
	struct run_entry *e = &l->v[l->n++];
	struct rt_run_fields f;
	memset(e, 0, sizeof(*e));
	e->id = run;
	e->meta_ok = rt_runmeta_read(meta, len, &f) == 0;
	if (e->meta_ok && f.has_last_seq && !f.samples_not_stored) {
		e->has_last = 1;
		e->last_seq = f.last_seq;
	}
	return 0;
}

/* What a child found, in a page it shares with the parent. */
struct progress {
	uint64_t next;      /* the seq expected next */
	uint64_t good;      /* intact samples in order from 0 */
	uint64_t first_bad; /* the first seq missing or failing its check */
	uint64_t readable;  /* samples that passed their check, in all */
	int bad, done, rc;
	uint64_t copied;
};

struct walk {
	struct progress *p;
	struct rt_store *dst; /* recover: where intact samples go */
	struct rt_store *src;
	uint64_t run;
	uint32_t gens[64];
	unsigned ngens;
};

static int copy_inventory(struct walk *w, uint32_t gen)
{
	for (unsigned i = 0; i < w->ngens; i++)
		if (w->gens[i] == gen)
			return 0;
	void *buf = NULL;
	size_t len = 0;
	int rc = rt_store_get_inventory(w->src, w->run, gen, &buf, &len);
	if (rc == 0)
		rc = rt_store_put_inventory(w->dst, w->run, gen, buf, len);
	free(buf);
	if (rc == 0 && w->ngens < RT_ARRAY_LEN(w->gens))
		w->gens[w->ngens++] = gen;
	return rc;
}

static int one(void *ctx, uint64_t seq, const void *rec, size_t len)
{
	struct walk *w = ctx;
	struct progress *p = w->p;
	struct rt_record r;
	int ok = rt_record_decode(rec, len, &r) == 0 && r.h->seq == seq;
	if (ok)
		p->readable++;
	if (!p->bad && (!ok || seq != p->next)) {
		p->bad = 1;
		p->first_bad = p->next;
	}
	if (!p->bad)
		p->good++;
	p->next = seq + 1;
	if (ok && w->dst && copy_inventory(w, r.h->inv_gen) == 0 &&
	    rt_store_append(w->dst, w->run, seq, rec, len) == 0)
		p->copied++;
	if (w->dst && p->copied % 256 == 0)
		rt_store_flush(w->dst); /* a child that dies keeps most of its copy */
	return 0;
}

/* The child: read (and copy) one run; _exit. */
static void child(const char *dir, const char *dst_dir, const struct run_entry *e,
                  struct progress *p)
{
	struct walk w = {.p = p, .run = e->id};
	if (rt_store_open(dir, RT_STORE_RDONLY, &w.src)) {
		p->rc = RT_E_CORRUPT;
		_exit(1);
	}
	if (dst_dir) {
		char *meta = NULL;
		size_t len = 0;
		if (rt_store_open(dst_dir, RT_STORE_RDWR, &w.dst) ||
		    rt_store_get_meta(w.src, e->id, &meta, &len) ||
		    rt_store_put_meta(w.dst, e->id, meta, len)) {
			p->rc = RT_E_STORE;
			_exit(1);
		}
		free(meta);
		rt_store_set_group(w.dst, 4096, 60ull * 1000000000ull, 0);
	}
	p->rc = rt_store_scan(w.src, e->id, 0, UINT64_MAX, one, &w);
	if (w.dst && rt_store_flush(w.dst) == 0)
		rt_store_sync(w.dst);
	p->done = 1;
	rt_store_close(w.dst);
	rt_store_close(w.src);
	_exit(0);
}

/* Read run e in a child; *p is what it found. */
static void check_run(const char *dir, const char *dst_dir, const struct run_entry *e,
                      struct progress *p)
{
	memset(p, 0, sizeof(*p));
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		child(dir, dst_dir, e, p);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	else
		p->rc = -errno;
}

static int damaged(const struct run_entry *e, const struct progress *p)
{
	return !e->meta_ok || !p->done || p->rc || p->bad ||
	       (e->has_last && p->next != e->last_seq + 1);
}

static void say_run(const struct run_entry *e, const struct progress *p, int recover)
{
	uint64_t want = e->has_last ? e->last_seq + 1 : p->next;
	if (!damaged(e, p)) {
		/* counted as runs, summary and the live output count them: the
		 * run's first sample is the base of the first line */
		printf("run %llu: intact, %llu samples%s\n", (unsigned long long)e->id,
		       (unsigned long long)(p->good ? p->good - 1 : 0), recover ? " copied" : "");
		return;
	}
	if (!e->meta_ok && p->readable == 0) {
		printf("run %llu: unreadable (its metadata is damaged)\n",
		       (unsigned long long)e->id);
		return;
	}
	uint64_t from = p->bad ? p->first_bad : p->next;
	printf("run %llu: damaged from sample %llu: %llu of %llu samples readable%s%s\n",
	       (unsigned long long)e->id, (unsigned long long)from, (unsigned long long)p->readable,
	       (unsigned long long)(want > p->next ? want : p->next),
	       !e->meta_ok ? ", metadata damaged" : "",
	       recover ? (p->copied ? ", those copied" : ", nothing copied") : "");
}

static int list_runs(const char *dir, struct run_list *l)
{
	struct rt_store *s;
	int rc = rt_store_open(dir, RT_STORE_RDONLY, &s);
	if (rc) {
		rt_say("cannot open the store %s: %s", dir,
		       rc == RT_E_CORRUPT ? "it is damaged beyond reading (LMDB refuses it)"
		                          : rt_strerror(rc));
		return rc;
	}
	rc = rt_store_list_runs(s, collect, l);
	if (rc == RT_E_CORRUPT) {
		rt_say("the store %s is damaged: %s; the %zu runs that can be listed follow", dir,
		       rt_store_last_error(s), l->n);
		l->list_damaged = 1;
	}
	rt_store_close(s);
	return rc == RT_E_CORRUPT ? 0 : rc;
}

/* The pages a writer would change (delete, compact, salvage, the size cap
 * check them first): one line. 1: sound. */
static int pages_sound(const char *dir)
{
	struct rt_store *s;
	if (rt_store_open(dir, RT_STORE_RDONLY, &s))
		return 0;
	int rc = rt_store_check_pages(s);
	if (rc)
		printf("pages: damaged (%s); delete, compact and recording into this store refuse "
		       "to write into it\n",
		       rt_store_last_error(s));
	else
		printf("pages: sound\n");
	rt_store_close(s);
	return rc == 0;
}

static int walk_store(const char *dir, const char *dst)
{
	struct run_list l = {0};
	int rc = list_runs(dir, &l);
	if (rc && !dst)
		return 1;
	l.list_damaged |= rc != 0; /* recover reads the pages all the same */
	struct progress *p =
	    mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		free(l.v);
		rt_say("out of memory");
		return 1;
	}
	size_t bad = 0;
	for (size_t i = 0; i < l.n; i++) {
		check_run(dir, dst, &l.v[i], p);
		say_run(&l.v[i], p, dst != NULL);
		bad += damaged(&l.v[i], p);
	}
	int pages_bad = (!dst && !pages_sound(dir)) || l.list_damaged;
	uint64_t carved = 0;
	if (dst && rt_recover_carve(dir, dst, &carved))
		rt_say("cannot read the pages of %s/data.mdb for what its tree no longer reaches",
		       dir);
	if (dst)
		printf("%zu runs copied into %s, %zu of them damaged (only their intact samples); "
		       "%llu samples the tree no longer reached found in its pages\n",
		       l.n, dst, bad, (unsigned long long)carved);
	else if (l.list_damaged)
		printf("the list of runs is damaged: %zu runs listed, %zu of them damaged; copy "
		       "what is intact (runs the list hides are found in its pages) with: "
		       "rt-export recover %s\n",
		       l.n, bad, dir);
	else if (pages_bad && !bad)
		printf("all %zu runs readable, but the store's pages are damaged; copy it with: "
		       "rt-export recover %s\n",
		       l.n, dir);
	else if (bad)
		printf("%zu of %zu runs damaged; copy what is intact with: rt-export recover %s\n",
		       bad, l.n, dir);
	else
		printf("all %zu runs intact\n", l.n);
	munmap(p, sizeof(*p));
	free(l.v);
	return (bad || pages_bad) && !dst ? 1 : 0;
}

int rt_cmd_verify(const char *dir)
{
	return walk_store(dir, NULL);
}

int rt_cmd_recover(const char *dir, const char *dst)
{
	char def[4200];
	if (!dst) {
		snprintf(def, sizeof(def), "%s.recovered", dir);
		dst = def;
	}
	struct stat st;
	char p[4300];
	snprintf(p, sizeof(p), "%s/data.mdb", dst);
	if (stat(p, &st) == 0) {
		rt_say("%s already holds a store; recover into a new directory (-o DIR)", dst);
		return 1;
	}
	struct rt_store *d;
	int rc = rt_store_open(dst, RT_STORE_RDWR, &d);
	if (rc) {
		rt_say("cannot make the store %s: %s", dst,
		       rc == RT_E_UNSAFE ? rt_store_refusal() : rt_strerror(rc));
		return 1;
	}
	rt_store_close(d);
	return walk_store(dir, dst);
}
