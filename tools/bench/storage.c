/*
 * storage.c - rt-bench storage: what the store holds per sample of this
 * host (the store the steps' recorder step wrote): the record's size, the
 * LMDB pages in use and data.mdb's size.
 */
#include "bench.h"

int bench_storage(const struct bench_ctx *c)
{
	const struct bench_sampled *s = bench_sampled(c);
	uint64_t used = 0;
	struct rt_store *st;
	if (rt_store_open(s->store, RT_STORE_RDONLY, &st) == 0) {
		rt_store_used_bytes(st, &used);
		rt_store_close(st);
	}
	char datafile[4300];
	snprintf(datafile, sizeof(datafile), "%s/data.mdb", s->store);
	struct stat sb;
	stat(datafile, &sb);
	printf("Storage (%d samples of this host):\n", s->nstore + 1);
	printf("  record size                                        %8zu B\n", s->rec_size);
	printf("  LMDB pages in use per sample                       %8.0f B\n",
	       (double)used / (s->nstore + 1));
	printf("  data.mdb file size per sample                      %8.0f B\n\n",
	       (double)sb.st_size / (s->nstore + 1));
	return 0;
}
