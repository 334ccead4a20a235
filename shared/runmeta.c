/* runmeta.c - the JSON writer of run metadata (see runmeta.h). */
#include "rt/runmeta.h"

#include "rt/common.h"

static void key(struct rt_buf *b, const char *k)
{
	rt_buf_putc(b, ',');
	rt_buf_json_str(b, k);
	rt_buf_putc(b, ':');
}

static void str_or_null(struct rt_buf *b, const char *s)
{
	if (s)
		rt_buf_json_str(b, s);
	else
		rt_buf_puts(b, "null");
}

static void time_or_null(struct rt_buf *b, uint64_t ns)
{
	char iso[32];
	if (!ns) {
		rt_buf_puts(b, "null");
		return;
	}
	rt_fmt_iso8601(iso, sizeof(iso), ns);
	rt_buf_json_str(b, iso);
}

void rt_runmeta_write(struct rt_buf *b, const struct rt_run_meta *m)
{
	rt_buf_puts(b, "{\"run_id\":");
	rt_buf_u64(b, m->run_id);
	key(b, "status");
	str_or_null(b, m->status);
	key(b, "start");
	time_or_null(b, m->start_ns);
	key(b, "end");
	time_or_null(b, m->end_ns);
	key(b, "start_ns");
	rt_buf_u64(b, m->start_ns);
	key(b, "end_ns");
	if (m->end_ns)
		rt_buf_u64(b, m->end_ns);
	else
		rt_buf_puts(b, "null");
	key(b, "interval_secs");
	rt_buf_f64_json(b, m->interval_secs);
	key(b, "recorder_pid");
	rt_buf_i64(b, m->recorder_pid);
	key(b, "command");
	if (m->command) {
		rt_buf_putc(b, '[');
		for (int i = 0; i < m->ncommand; i++) {
			if (i)
				rt_buf_putc(b, ',');
			rt_buf_json_str(b, m->command[i]);
		}
		rt_buf_putc(b, ']');
	} else {
		rt_buf_puts(b, "null");
	}
	key(b, "tracked_pid");
	if (m->tracked_pid > 0)
		rt_buf_i64(b, m->tracked_pid);
	else
		rt_buf_puts(b, "null");
	key(b, "exit_code");
	if (m->has_exit_code)
		rt_buf_i64(b, m->exit_code);
	else
		rt_buf_puts(b, "null");
	key(b, "metadata");
	rt_buf_putc(b, '{');
	int first = 1;
	for (int k = 0; k < RT_META_COUNT; k++) {
		if (!m->meta[k])
			continue;
		if (!first)
			rt_buf_putc(b, ',');
		first = 0;
		rt_buf_json_str(b, rt_meta_name((enum rt_meta_key)k));
		rt_buf_putc(b, ':');
		rt_buf_json_str(b, m->meta[k]);
	}
	rt_buf_putc(b, '}');
	key(b, "tags");
	rt_buf_putc(b, '[');
	for (int i = 0; i < m->ntags; i++) {
		if (i)
			rt_buf_putc(b, ',');
		rt_buf_json_str(b, m->tags[i]);
	}
	rt_buf_putc(b, ']');
	key(b, "host");
	rt_buf_puts(b, "{\"hostname\":");
	str_or_null(b, m->hostname);
	rt_buf_puts(b, ",\"vcpus\":");
	rt_buf_u64(b, m->vcpus);
	rt_buf_puts(b, ",\"cpu_model\":");
	str_or_null(b, m->cpu_model);
	rt_buf_puts(b, ",\"memory_mib\":");
	rt_buf_u64(b, m->memory_mib);
	rt_buf_puts(b, ",\"host_id\":");
	str_or_null(b, m->host_id);
	rt_buf_puts(b, ",\"ip\":");
	str_or_null(b, m->ip);
	rt_buf_puts(b, ",\"storage_gb\":");
	rt_buf_f64_json(b, m->storage_gb);
	rt_buf_puts(b, ",\"gpu_model\":");
	str_or_null(b, m->gpu_model);
	rt_buf_puts(b, ",\"gpu_count\":");
	rt_buf_u64(b, m->gpu_count);
	rt_buf_puts(b, ",\"gpu_memory_mib\":");
	rt_buf_u64(b, m->gpu_memory_mib);
	rt_buf_putc(b, '}');
	key(b, "last_seq");
	if (m->has_last_seq)
		rt_buf_u64(b, m->last_seq);
	else
		rt_buf_puts(b, "null");
	key(b, "version");
	rt_buf_json_str(b, RT_VERSION);
	rt_buf_putc(b, '}');
}
