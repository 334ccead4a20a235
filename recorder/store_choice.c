/*
 * store_choice.c - where a run is stored: the store asked for, else a
 * private one of this user's, else none (the run is printed, not kept).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "recording.h"
#include "rt/clock.h"
#include "rt/runmeta.h"
#include "rt/safefile.h"
#include "rt/salvage.h"
#include "rt/sysroot.h"
#include "sigpass.h"
#include "wrapper.h"

/* Open dir and create the run there (mb NULL: no run, the node's). */
static int try_store(const char *dir, const struct rt_config *cfg, const struct rt_buf *mb,
                     struct store_choice *c, char *why, size_t whycap)
{
	struct rt_store *st;
	int rc = rt_store_open(dir, RT_STORE_RDWR, &st);
	if (rc) {
		snprintf(why, whycap, "%s",
		         rc == RT_E_UNSAFE    ? rt_store_refusal()
		         : rc == RT_E_CORRUPT ? "it is damaged"
		                              : rt_strerror(rc));
		return rc;
	}
	/* a damaged store is left as it is (the caller records beside it) */
	if ((rc = rt_store_check_for_writer(st))) {
		snprintf(why, whycap, "%s",
		         rc == RT_E_CORRUPT ? "it is damaged" : rt_store_last_error(st));
		rt_store_close(st);
		return rc;
	}
	rt_store_set_cap(st, (cfg->store_max_mb ? cfg->store_max_mb : DEFAULT_STORE_MAX_MB) << 20);
	rt_salvage_dead_runs(st, NULL, NULL);
	if (mb && (rc = rt_store_new_run(st, mb->p, mb->len, &c->run))) {
		snprintf(why, whycap, "%s",
		         rc == RT_E_STORE ? rt_store_last_error(st) : rt_strerror(rc));
		rt_store_close(st);
		return rc;
	}
	/* the run (and the store's id, which names its ring) on disk now: a
	 * disk that fails later leaves a run its ring can be salvaged into */
	rt_store_sync(st);
	c->store = st;
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
	return 0;
}

/* A private directory of ours under base: made 0700, refused if someone
 * else owns it or can get in (the temp directory is shared). */
static int private_dir(const char *base, const char *name, char *out, size_t cap)
{
	struct stat st;
	if (!base || base[0] != '/' || snprintf(out, cap, "%s/%s", base, name) >= (int)cap)
		return -1;
	/* raw: a private directory in the temp directory, checked by lstat below and walked again by the store */
	if (mkdir(out, 0700) < 0 && errno != EEXIST)
		return -1;
	if (lstat(out, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
		return -1;
	return 0;
}

int rec_choose_store(const char *prog, const struct rt_config *cfg, int wrapper,
                     const struct rt_buf *mb, struct store_choice *c)
{
	char dir[4096], why[512] = "no directory: HOME is not set";
	const char *env = getenv("RT_STORE");
	int explicit = (cfg->store && *cfg->store) || (env && *env);
	memset(c, 0, sizeof(*c));
	int rrc = rt_store_resolve_dir(cfg->store, dir, sizeof(dir));
	int have = rrc == 0;
	if (rrc == -ENAMETOOLONG) {
		snprintf(why, sizeof(why), "the path is too long (at most %d bytes)",
		         RT_STORE_DIR_MAX);
		snprintf(dir, sizeof(dir), "%.60s...",
		         cfg->store && *cfg->store ? cfg->store : env);
		have = 1;
	} else if (have && (rrc = try_store(dir, cfg, mb, c, why, sizeof(why))) == 0) {
		return 0;
	} else if (have && rrc == RT_E_CORRUPT) {
		/* left untouched for verify and recover; runs go on beside it */
		char fresh[4200], why2[512];
		snprintf(fresh, sizeof(fresh), "%s.fresh", dir);
		if (try_store(fresh, cfg, mb, c, why2, sizeof(why2)) == 0) {
			rt_message(
			    prog,
			    "warning: the store %s is damaged; it is left as it is and this run is "
			    "stored in %s (what is intact: rt-export verify --store %s; a copy of "
			    "it: "
			    "rt-export recover %s)",
			    dir, fresh, dir, dir);
			return 0;
		}
	}
	const char *what =
	    explicit ? (cfg->store && *cfg->store ? "--store" : "RT_STORE") : "the default store";
	if (explicit && !wrapper) {
		rt_message(prog,
		           "cannot use %s %s: %s (choose a writable directory with --store DIR)",
		           what, dir, why);
		return -1;
	}
	char alt[4096], name[64];
	snprintf(name, sizeof(name), "resource-tracker-%u", (unsigned)getuid());
	const char *tmp = getenv("TMPDIR");
	const char *bases[2][2] = {{getenv("XDG_RUNTIME_DIR"), "resource-tracker"},
	                           {tmp && *tmp == '/' ? tmp : "/tmp", name}};
	int short_of = 0; /* what stopped the private stores: descriptors, memory */
	for (int i = 0; i < 2; i++) {
		char why2[512];
		errno = 0;
		if (private_dir(bases[i][0], bases[i][1], alt, sizeof(alt)) == 0 &&
		    try_store(alt, cfg, mb, c, why2, sizeof(why2)) == 0) {
			rt_message(
			    prog,
			    "warning: cannot use %s%s%s (%s); this run is stored in %s instead",
			    what, have ? " " : "", have ? dir : "", why, alt);
			snprintf(c->note, sizeof(c->note),
			         "stored here: %s%s%.200s could not be used (%.300s)", what,
			         have ? " " : "", have ? dir : "", why);
			return 0;
		}
		if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
			short_of = errno;
	}
	if (short_of)
		rt_message(prog,
		           "warning: cannot use %s%s%s (%s), nor a private store (%s); this run is "
		           "printed but not stored",
		           what, have ? " " : "", have ? dir : "", why, strerror(short_of));
	else
		rt_message(
		    prog,
		    "warning: cannot use %s%s%s (%s) and no private directory is writable; this "
		    "run is printed but not stored",
		    what, have ? " " : "", have ? dir : "", why);
	return 0;
}
