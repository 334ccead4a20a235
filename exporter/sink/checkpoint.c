/*
 * checkpoint.c - the uploader's state, one small JSON file per run next to
 * the store (never inside the recorder's LMDB environment): the Sentinel
 * run id, bucket, prefix, credentials, the first seq not yet confirmed by
 * S3 and the confirmed object URIs. It only moves forward after S3 (or
 * Sentinel, for finish) confirmed, and is replaced atomically.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net/net.h"
#include "rt/common.h"
#include "rt/safefile.h"

/* The run's file (ext) in the upload directory held open as udfd: opened
 * with flags by rt_open_own_at (never a link, never blocking). */
static int cp_open(int udfd, uint64_t run, const char *ext, int flags, char *why, size_t cap)
{
	char name[64];
	snprintf(name, sizeof(name), "%llu.%s", (unsigned long long)run, ext);
	return rt_open_own_at(udfd, name, name, flags, 0600, why, cap);
}

static void copy_str(char *dst, size_t cap, const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	dst[0] = '\0';
	if (cJSON_IsString(v) && strlen(v->valuestring) < cap)
		snprintf(dst, cap, "%s", v->valuestring);
}

int rt_checkpoint_parse(const char *text, struct rt_checkpoint *cp)
{
	memset(cp, 0, sizeof(*cp));
	cp->next_seq = 1;
	cJSON *o = cJSON_Parse(text);
	if (!o)
		return RT_E_CORRUPT;
	copy_str(cp->sentinel_run, sizeof(cp->sentinel_run), o, "sentinel_run");
	copy_str(cp->bucket, sizeof(cp->bucket), o, "bucket");
	copy_str(cp->prefix, sizeof(cp->prefix), o, "prefix");
	copy_str(cp->region, sizeof(cp->region), o, "region");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "credentials");
	copy_str(cp->creds.access_key, sizeof(cp->creds.access_key), c, "access_key");
	copy_str(cp->creds.secret_key, sizeof(cp->creds.secret_key), c, "secret_key");
	copy_str(cp->creds.session_token, sizeof(cp->creds.session_token), c, "session_token");
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(c, "expires_s");
	if (cJSON_IsNumber(e) && e->valuedouble > 0 && e->valuedouble < 1e12)
		cp->creds.expires_ns = (uint64_t)e->valuedouble * 1000000000ull;
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(o, "next_seq");
	if (cJSON_IsNumber(ns) && ns->valuedouble >= 1 && ns->valuedouble < 1.8e19)
		cp->next_seq = (uint64_t)ns->valuedouble;
	cp->finished = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "finished"));
	const cJSON *u;
	cJSON_ArrayForEach(u, cJSON_GetObjectItemCaseSensitive(o, "uris"))
	{
		if (cJSON_IsString(u) && rt_checkpoint_add_uri(cp, u->valuestring)) {
			cJSON_Delete(o);
			rt_checkpoint_free(cp);
			return -ENOMEM;
		}
	}
	cJSON_Delete(o);
	return 0;
}

int rt_checkpoint_load(int udfd, uint64_t run, struct rt_checkpoint *cp)
{
	memset(cp, 0, sizeof(*cp));
	cp->next_seq = 1;
	char why[512];
	int fd = cp_open(udfd, run, "json", O_RDONLY, why, sizeof(why));
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	static char buf[16 << 20];
	size_t n = 0;
	ssize_t r;
	while (n < sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return rt_checkpoint_parse(buf, cp);
}

int rt_checkpoint_add_uri(struct rt_checkpoint *cp, const char *uri)
{
	for (size_t i = 0; i < cp->nuris; i++)
		if (!strcmp(cp->uris[i], uri))
			return 0; /* a re-sent batch: same key, listed once */
	if (cp->nuris >= RT_CP_MAX_URIS)
		return -ENOSPC;
	char **u = realloc(cp->uris, (cp->nuris + 1) * sizeof(*u));
	if (!u)
		return -ENOMEM;
	cp->uris = u;
	if (!(cp->uris[cp->nuris] = strdup(uri)))
		return -ENOMEM;
	cp->nuris++;
	return 0;
}

void rt_checkpoint_free(struct rt_checkpoint *cp)
{
	for (size_t i = 0; i < cp->nuris; i++)
		free(cp->uris[i]);
	free(cp->uris);
	cp->uris = NULL;
	cp->nuris = 0;
}

int rt_checkpoint_save(int udfd, uint64_t run, const struct rt_checkpoint *cp)
{
	char name[64], why[512];
	snprintf(name, sizeof(name), "%llu.json", (unsigned long long)run);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "sentinel_run", cp->sentinel_run);
	cJSON_AddStringToObject(o, "bucket", cp->bucket);
	cJSON_AddStringToObject(o, "prefix", cp->prefix);
	cJSON_AddStringToObject(o, "region", cp->region);
	cJSON *c = cJSON_AddObjectToObject(o, "credentials");
	cJSON_AddStringToObject(c, "access_key", cp->creds.access_key);
	cJSON_AddStringToObject(c, "secret_key", cp->creds.secret_key);
	cJSON_AddStringToObject(c, "session_token", cp->creds.session_token);
	cJSON_AddNumberToObject(c, "expires_s", (double)(cp->creds.expires_ns / 1000000000ull));
	cJSON_AddNumberToObject(o, "next_seq", (double)cp->next_seq);
	cJSON_AddBoolToObject(o, "finished", cp->finished);
	cJSON *u = cJSON_AddArrayToObject(o, "uris");
	for (size_t i = 0; i < cp->nuris; i++)
		cJSON_AddItemToArray(u, cJSON_CreateString(cp->uris[i]));
	char *txt = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!txt)
		return -ENOMEM;
	struct rt_outfile of;
	int rc = rt_outfile_open_at(&of, udfd, name, name, 0600, why, sizeof(why));
	if (rc == 0) {
		if ((rc = rt_write_all(of.fd, txt, strlen(txt), 10000)) == 0)
			rc = rt_outfile_commit(&of);
		else
			rt_outfile_abort(&of);
	}
	free(txt);
	return rc;
}

int rt_checkpoint_lock(int udfd, uint64_t run, int *fd)
{
	char why[512];
	*fd = cp_open(udfd, run, "lock", O_RDWR | O_CREAT, why, sizeof(why));
	if (*fd < 0)
		return *fd;
	if (flock(*fd, LOCK_EX | LOCK_NB) < 0) {
		close(*fd);
		return -EBUSY;
	}
	return 0;
}
