/*
 * lmdbcarve.h - every record left in an LMDB data file's leaf pages,
 * found by reading the pages one by one rather than through the tree.
 *
 * When a page of the tree is damaged (zeroed by a disk, a torn write), the
 * records under it cannot be reached from the root, though their own
 * pages are intact. `rt-export recover` finds them here. A leaf page is
 * taken as one when its header names its own number and its kind, and
 * each node is read only within the page (a value in overflow pages only
 * within those pages and the file): hostile bytes give no record, never a
 * read out of bounds. Pages no longer in use (older copies, freed pages)
 * are found too: the caller decides what a record is worth (rt's records
 * carry a checksum; several versions of one key can be found).
 */
#ifndef RT_LMDBCARVE_H
#define RT_LMDBCARVE_H

#include <stddef.h>
#include <stdint.h>

/* One record: its key and value, and the page it was found in; or, with
 * no key (klen 0), the first bytes of an overflow page run found by
 * itself (a value whose leaf may be lost: what it is, its own bytes must
 * say). A non-zero return stops the scan and is returned. */
#define RT_LMDB_CARVE_LOOSE_MAX 65536
typedef int (*rt_lmdb_carve_cb)(void *ctx, const uint8_t *key, size_t klen, const uint8_t *val,
                                size_t vlen, uint64_t pgno);

/*
 * Read every page of the LMDB data file open on fd and hand each record
 * of each leaf page to cb (records that name a sub-database are not
 * handed), and each overflow page run's bytes. 0, the callback's code, or -errno (the file cannot be read, or
 * its meta page names no plausible page size).
 */
int rt_lmdb_carve(int fd, rt_lmdb_carve_cb cb, void *ctx);

#endif
