/*
 * admincomment.c - rt's answer for a Slurm job in the job's AdminComment:
 * the encoding (admincomment.h). The text read back is written only by
 * Slurm's administrators and rt, but it is parsed as any bytes: bounded,
 * every piece's shape checked, fuzzed (fuzz_admincomment).
 */
#include "admincomment.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#define JSON_MAX (1u << 20) /* the document, inflated */
#define FIELD_MAX 1000      /* a piece's string */
#define NODE_MAX 64         /* a node's name */

static const char b32[] = "abcdefghijklmnopqrstuvwxyz234567";

/* 5 bits of a base32 character of either case, or -1. */
static int b32_value(char c)
{
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= '2' && c <= '7')
		return c - '2' + 26;
	return -1;
}

/* len characters of base32 into out (len * 5 / 8 bytes): their count,
 * or -1 (a character outside the alphabet). */
static long b32_decode(const char *in, size_t len, unsigned char *out)
{
	uint32_t acc = 0;
	int bits = 0;
	long n = 0;
	for (size_t i = 0; i < len; i++) {
		int v = b32_value(in[i]);
		if (v < 0)
			return -1;
		acc = (acc << 5) | (uint32_t)v;
		bits += 5;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	return n;
}

/* len bytes as base32 into out (NUL-terminated; room for len * 8 / 5 + 2). */
static void b32_encode(const unsigned char *in, size_t len, char *out)
{
	uint32_t acc = 0;
	int bits = 0;
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		acc = (acc << 8) | in[i];
		bits += 8;
		while (bits >= 5) {
			bits -= 5;
			out[n++] = b32[(acc >> bits) & 31];
		}
		acc &= (1u << bits) - 1;
	}
	if (bits)
		out[n++] = b32[(acc << (5 - bits)) & 31];
	out[n] = '\0';
}

/* A zlib stream of len bytes inflated, NUL-terminated (malloc'd), *outlen
 * its length; NULL when it is not one whole stream within JSON_MAX. */
static char *inflate_bounded(const unsigned char *in, size_t len, size_t *outlen)
{
	char *out = malloc(JSON_MAX + 1);
	z_stream z = {0};
	if (!out || inflateInit(&z) != Z_OK) {
		free(out);
		return NULL;
	}
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)len;
	z.next_out = (unsigned char *)out;
	z.avail_out = JSON_MAX;
	int rc = inflate(&z, Z_FINISH);
	*outlen = z.total_out;
	inflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	out[*outlen] = '\0';
	return out;
}

/* Whether a piece has the shape rt writes. */
static int piece_ok(const cJSON *p)
{
	static const char *const str[] = {"run", "answer", "sbatch", "seff", "end", NULL};
	if (!cJSON_IsObject(p) || !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(p, "at")))
		return 0;
	for (int i = 0; str[i]; i++) {
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(p, str[i]);
		if (s && (!cJSON_IsString(s) || strlen(s->valuestring) > FIELD_MAX))
			return 0;
	}
	return 1;
}

/* The pieces of a parsed document checked: those of another shape, or
 * under a name too long, dropped. 0, or -1 when it is no document. */
static int keep_pieces(cJSON *doc)
{
	cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
	if (!cJSON_IsObject(doc) || !cJSON_IsObject(nodes))
		return -1;
	cJSON *p = nodes->child;
	while (p) {
		cJSON *next = p->next;
		if (!p->string || !p->string[0] || strlen(p->string) > NODE_MAX || !piece_ok(p))
			cJSON_Delete(cJSON_DetachItemViaPointer(nodes, p));
		p = next;
	}
	return 0;
}

static cJSON *empty_doc(void)
{
	cJSON *d = cJSON_CreateObject();
	cJSON_AddNumberToObject(d, "v", 1);
	if (!cJSON_AddObjectToObject(d, "nodes")) {
		cJSON_Delete(d);
		return NULL;
	}
	return d;
}

int rt_ac_decode(const char *text, size_t len, cJSON **doc)
{
	*doc = NULL;
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' ' || text[len - 1] == '\r'))
		len--;
	if (len == 0)
		return (*doc = empty_doc()) ? 0 : -1;
	size_t pl = strlen(RT_AC_PREFIX);
	if (len < pl || strncasecmp(text, RT_AC_PREFIX, pl))
		return 1;
	if (len > RT_AC_MAX + pl)
		return -1;
	unsigned char *z = malloc((len - pl) * 5 / 8 + 1);
	long zn = z ? b32_decode(text + pl, len - pl, z) : -1;
	size_t jn = 0;
	char *json = zn > 0 ? inflate_bounded(z, (size_t)zn, &jn) : NULL;
	free(z);
	cJSON *d = json ? cJSON_ParseWithLength(json, jn) : NULL;
	free(json);
	if (!d || keep_pieces(d)) {
		cJSON_Delete(d);
		return -1;
	}
	*doc = d;
	return 0;
}

char *rt_ac_encode(const cJSON *doc)
{
	char *json = cJSON_PrintUnformatted(doc);
	if (!json)
		return NULL;
	uLong jn = (uLong)strlen(json), zn = compressBound(jn);
	unsigned char *z = malloc(zn);
	char *out = NULL;
	if (z && compress2(z, &zn, (const unsigned char *)json, jn, 9) == Z_OK &&
	    zn * 8 / 5 + 2 + strlen(RT_AC_PREFIX) <= RT_AC_MAX + 1 &&
	    (out = malloc(strlen(RT_AC_PREFIX) + zn * 8 / 5 + 2))) {
		strcpy(out, RT_AC_PREFIX);
		b32_encode(z, zn, out + strlen(RT_AC_PREFIX));
	}
	free(z);
	free(json);
	return out;
}

int rt_ac_put(cJSON *doc, const char *node, cJSON *piece)
{
	cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
	if (!nodes || !piece) {
		cJSON_Delete(piece);
		return -1;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(nodes, node);
	return cJSON_AddItemToObject(nodes, node, piece) ? 0 : (cJSON_Delete(piece), -1);
}

int rt_ac_has(const cJSON *doc, const char *node, const char *run, double at)
{
	const cJSON *p =
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "nodes"), node);
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(p, "run");
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(p, "at");
	return cJSON_IsString(r) && !strcmp(r->valuestring, run) && cJSON_IsNumber(t) &&
	       t->valuedouble == at;
}
