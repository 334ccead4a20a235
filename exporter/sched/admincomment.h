/*
 * admincomment.h - rt's answer for a Slurm job in the job's own record
 * (its AdminComment), one piece a node.
 *
 * The field holds "rt1:" and the base32 (lower case, no padding) of the
 * zlib stream of one JSON object: {"v":1,"nodes":{NODE:PIECE,...}}, each
 * PIECE {"run", "answer", "sbatch", "seff", "end", "at"} (strings but
 * "at", seconds since the epoch). Lower case because slurmdbd's
 * `sacctmgr update job ... set AdminComment=` lowercases what it is given
 * and base32 reads back the same either way; compressed because a
 * job on many nodes holds every node's piece.
 */
#ifndef RT_ADMINCOMMENT_H
#define RT_ADMINCOMMENT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#define RT_AC_PREFIX "rt1:"
#define RT_AC_MAX 60000 /* characters written, at most (the field is text) */

/* What a field holds: rt's pieces into *doc (0; an empty field gives an
 * empty document), another tool's value (1: *doc NULL), or rt's prefix
 * before damaged bytes (-1: *doc NULL). Bounded: len up to RT_AC_MAX+,
 * the JSON up to 1 MiB; the document's pieces checked for their shape
 * (a node's piece that is not one is dropped). */
int rt_ac_decode(const char *text, size_t len, cJSON **doc);

/* The field's text for doc (malloc'd), or NULL (no memory, or longer
 * than RT_AC_MAX). */
char *rt_ac_encode(const cJSON *doc);

/* node's piece put into doc, replacing that node's alone (piece is
 * taken over). 0, or -1 (no memory: piece freed). */
int rt_ac_put(cJSON *doc, const char *node, cJSON *piece);

/* Whether doc holds node's piece with this run and time. */
int rt_ac_has(const cJSON *doc, const char *node, const char *run, double at);

#endif
