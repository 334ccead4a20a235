/*
 * lmdbcheck.h - a structural check of an LMDB data file before rt writes
 * into it (shared/store/lmdbcheck.c says what is checked).
 */
#ifndef RT_LMDBCHECK_H
#define RT_LMDBCHECK_H

#include <stddef.h>
#include <stdint.h>

/*
 * Check every page that the snapshot of transaction txnid reaches in the
 * data file open on fd (its pages must not change meanwhile: hold a read
 * transaction of txnid while this runs). 0: sound; -1: damaged, with one
 * line in why saying where.
 */
int rt_lmdb_check(int fd, uint64_t txnid, char *why, size_t cap);

#endif
