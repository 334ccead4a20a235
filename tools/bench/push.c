/*
 * push.c - rt-bench --push: the same two long runs pushed into a local
 * Prometheus by remote write (and to a minimal OTLP endpoint): wall time,
 * CPU and bytes on the wire per sample, beside the anchor of replay -f csv.
 */
#include "bench.h"

/* A minimal OTLP/HTTP endpoint for --push: reads each request and answers
 * 200 {} (keep-alive), so the figures are rt's alone. */
static void *otlp_sink(void *arg)
{
	int ls = *(int *)arg;
	for (;;) {
		int c = accept(ls, NULL, NULL);
		if (c < 0)
			return NULL;
		static char buf[1 << 16];
		size_t have = 0;
		for (;;) {
			ssize_t n = read(c, buf + have, sizeof(buf) - 1 - have);
			if (n <= 0)
				break;
			have += (size_t)n;
			buf[have] = '\0';
			char *end = strstr(buf, "\r\n\r\n");
			if (!end)
				continue;
			const char *cl = strcasestr(buf, "content-length:");
			size_t body = cl ? strtoul(cl + 15, NULL, 10) : 0,
			       head = (size_t)(end + 4 - buf);
			while (have - head < body) { /* drain the body */
				size_t want = body - (have - head);
				char sink[1 << 16];
				n = read(c, sink, want < sizeof(sink) ? want : sizeof(sink));
				if (n <= 0)
					break;
				have += (size_t)n;
			}
			static const char ok[] =
			    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
			    "Content-Length: 2\r\n\r\n{}";
			if (write(c, ok, sizeof(ok) - 1) < 0)
				break;
			have = 0;
		}
		close(c);
	}
}

/* --push: a stored run into a local Prometheus by remote write, beside the
 * family's own cost (replay -f csv of the same run). */
static void bench_push_run(const char *rec_bin, const char *exp_bin, const char *tmp,
                           const char *url, const char *otlp_url, const char *what,
                           const char *interval, const char *count, double secs)
{
	char store[4300], clock[32], log[4400];
	snprintf(store, sizeof(store), "%s/push-%s", tmp, interval);
	/* ended an hour ago: inside the engine's out-of-order window */
	snprintf(clock, sizeof(clock), "%lld", (long long)time(NULL) - (long long)secs - 3600);
	int rc = record_fake_clock(rec_bin, store, interval, count, clock, NULL);
	if (rc) {
		printf("  %s: recording failed\n", what);
		return;
	}
	char *replay[] = {(char *)exp_bin, "--store", store, "replay", "1", "-f", "csv", NULL};
	double rcpu, rwall;
	run_cmd(replay, &rcpu, &rwall);
	double n = atof(count);
	unsigned series = 0;
	for (unsigned id = 0; id < RT_NV; id++)
		series += rt_value_info(id)->fleet != NULL;
	printf("%s (%s samples, up to %u series each):\n", what, count, series);
	printf("  replay -f csv > /dev/null (anchor)        %8.0f ms  %6.2f us CPU per sample\n",
	       rwall * 1e3, rcpu / n * 1e6);
	static const char *const sinks[] = {"prometheus", "otlp"};
	for (int k = 0; k < 2; k++) {
		snprintf(log, sizeof(log), "%s/push-%s.log", store, sinks[k]);
		char cmd[9000];
		snprintf(cmd, sizeof(cmd), "'%s' --store '%s' push 1 --to %s --url '%s' -v 2> '%s'",
		         exp_bin, store, sinks[k], k ? otlp_url : url, log);
		char *push[] = {"/bin/sh", "-c", cmd, NULL};
		double pcpu, pwall;
		rc = run_cmd(push, &pcpu, &pwall);
		char line[1000] = "";
		FILE *f = fopen(log, "r");
		unsigned long long lines = 0, reqs = 0, bytes = 0;
		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, " lines in "))
				sscanf(strstr(line, "run 1: "),
				       "run 1: %llu lines in %llu requests, %llu bytes", &lines,
				       &reqs, &bytes);
		if (f)
			fclose(f);
		if (rc || !lines) {
			printf("  push --to %s: failed: %s\n", sinks[k], line);
			continue;
		}
		printf("  push --to %-10s                      %8.0f ms  %6.2f us CPU per sample "
		       "(%.1fx replay)\n",
		       sinks[k], pwall * 1e3, pcpu / n * 1e6, pcpu / rcpu);
		printf("    on the wire (%s)%*s%8.1f bytes per sample, %llu requests\n",
		       k ? "JSON + gzip" : "protobuf + snappy", k ? 17 : 11, "",
		       (double)bytes / (double)lines, reqs);
	}
	putchar('\n');
}

static int bench_push(const char *rec_bin, const char *exp_bin)
{
	char tmp[] = "/tmp/rt-bench-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	char shm[4200], cfg[4200], cmd[13000], url[128];
	snprintf(shm, sizeof(shm), "%s/shm", tmp);
	mkdir(shm, 0700);
	setenv("RT_SHM_DIR", shm, 1);
	snprintf(cfg, sizeof(cfg), "%s/prom.yml", tmp);
	FILE *f = fopen(cfg, "w");
	if (!f)
		return 1;
	fputs("storage:\n  tsdb:\n    out_of_order_time_window: 3d\n", f);
	fclose(f);
	int port = 29000 + (int)(getpid() % 1000);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/write", port);
	snprintf(
	    cmd, sizeof(cmd),
	    "prometheus --config.file=%s --storage.tsdb.path=%s/tsdb "
	    "--web.listen-address=127.0.0.1:%d --web.enable-remote-write-receiver "
	    "> %s/prom.log 2>&1 & echo $! > %s/prom.pid; "
	    "for i in $(seq 100); do curl -sf http://127.0.0.1:%d/-/ready >/dev/null && exit 0; "
	    "sleep 0.1; done; exit 1",
	    cfg, tmp, port, tmp, tmp, port);
	if (system(cmd)) {
		printf("rt-bench --push: no Prometheus (apt-get install prometheus)\n");
		return 1;
	}
	printf("rt-bench --push: a stored run into Debian's Prometheus on 127.0.0.1 (remote "
	       "write) and into an OTLP endpoint in this process that answers 200 (batches of "
	       "500 lines), this process tracked\n\n");
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
	socklen_t sl = sizeof(sa);
	char otlp_url[128] = "";
	pthread_t th;
	if (ls >= 0 && bind(ls, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(ls, 8) == 0 &&
	    getsockname(ls, (struct sockaddr *)&sa, &sl) == 0 &&
	    pthread_create(&th, NULL, otlp_sink, &ls) == 0)
		snprintf(otlp_url, sizeof(otlp_url), "http://127.0.0.1:%d/v1/metrics",
		         ntohs(sa.sin_port));
	bench_push_run(rec_bin, exp_bin, tmp, url, otlp_url, "24 h at 1 Hz", "1", "86400", 86400);
	bench_push_run(rec_bin, exp_bin, tmp, url, otlp_url, "1 h at 100 Hz", "0.01", "360000",
	               3600);
	snprintf(cmd, sizeof(cmd), "kill $(cat %s/prom.pid); sleep 1; rm -rf '%s'", tmp, tmp);
	return system(cmd) != 0;
}

int bench_push_mode(const struct bench_ctx *c)
{
	return bench_push(c->rec_bin, c->exp_bin);
}
