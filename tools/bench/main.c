/*
 * main.c - rt-bench: rt's figures, measured side by side in one run.
 *
 *   rt-bench [--quick] [SECTION...]   the sections of benches.def (all)
 *   rt-bench --answers     summary, recommend and report of long runs
 *   rt-bench --push        remote write of long runs into a local Prometheus
 *   rt-bench --disk        bytes the store makes the disk write (root: loop device)
 *   rt-bench gpu [SECONDS] NVML per sample on the fake H100 beside its floor
 *   rt-bench peers [SECONDS] rt beside the Python trackers
 *
 * Every figure is printed beside its floor or anchor measured in the same
 * run (docs/benchmarks.md says what each section measures). A benchmark,
 * not a test: it asserts nothing. Each benchmark is a file of this
 * directory and a row of benches.def; this file reads the command line
 * and runs the rows it names.
 */
#include <libgen.h>

#include "bench.h"

struct section {
	const char *name;
	int (*run)(const struct bench_ctx *c);
};
static const struct section sections[] = {
#define SECTION(name, fn, what) {#name, fn},
#define MODE(word, fn, secs, least, what)
#include "benches.def"
#undef SECTION
#undef MODE
};
enum { NSECTIONS = sizeof(sections) / sizeof(sections[0]) };

struct mode {
	const char *word;
	int (*run)(const struct bench_ctx *c);
	int secs, least;
};
static const struct mode modes[] = {
#define SECTION(name, fn, what)
#define MODE(word, fn, secs, least, what) {word, fn, secs, least},
#include "benches.def"
#undef SECTION
#undef MODE
};
enum { NMODES = sizeof(modes) / sizeof(modes[0]) };

static const struct mode *mode_named(const char *word)
{
	for (int k = 0; k < NMODES; k++)
		if (!strcmp(word, modes[k].word))
			return &modes[k];
	return NULL;
}

static int section_known(const char *name)
{
	for (int k = 0; k < NSECTIONS; k++)
		if (!strcmp(name, sections[k].name))
			return 1;
	return 0;
}

/* Whether the command line asks for section: named, or no section named. */
static int want(int argc, char **argv, const char *section)
{
	int any = 0;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		any = 1;
		if (!strcmp(argv[i], section))
			return 1;
	}
	return !any;
}

/* One line for a word rt-bench does not know; 0 when all are known. A mode
 * is argv[1] alone, with its SECONDS after it. */
static int check_args(int argc, char **argv)
{
	const struct mode *m = argc > 1 ? mode_named(argv[1]) : NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick") || (i == 1 && m) || (i == 2 && m && m->secs))
			continue;
		if (argv[i][0] == '-' && !(mode_named(argv[i]) && argv[i][1] == '-')) {
			fprintf(stderr, "usage: rt-bench [--quick] [SECTION...] | --answers | "
			                "--disk | --push\n");
			return 2;
		}
		if (argv[i][0] != '-' && !section_known(argv[i])) {
			fprintf(stderr, "rt-bench: unknown section '%s' (sections:", argv[i]);
			for (int k = 0; k < NSECTIONS; k++)
				fprintf(stderr, " %s", sections[k].name);
			fprintf(stderr, ")\n");
			return 2;
		}
	}
	return 0;
}

/* The sections asked for, in the table's order, in a scratch directory
 * (RT_SHM_DIR there too) removed at the end. */
static int run_sections(struct bench_ctx *c, int argc, char **argv)
{
	char tmp[] = "/tmp/rt-bench-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	c->tmp = tmp;
	char shm[4200];
	snprintf(shm, sizeof(shm), "%s/shm", tmp);
	mkdir(shm, 0700);
	setenv("RT_SHM_DIR", shm, 1);
	printf("rt-bench: %ld CPUs, %d samples per in-process measurement\n\n",
	       sysconf(_SC_NPROCESSORS_ONLN), c->n);
	for (int k = 0; k < NSECTIONS; k++)
		if (want(argc, argv, sections[k].name))
			sections[k].run(c);
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) != 0;
}

int main(int argc, char **argv)
{
	int rc = check_args(argc, argv);
	if (rc)
		return rc;
	struct bench_ctx c = {.n = 500};
	for (int i = 1; i < argc; i++)
		c.quick |= !strcmp(argv[i], "--quick");
	c.n = c.quick ? 500 : 5000;
	rt_sysroot_init();
	char self[4096], dir[4096], rec_bin[4200], exp_bin[4200], fake[4300];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[sl > 0 ? sl : 0] = '\0';
	snprintf(dir, sizeof(dir), "%s", dirname(self));
	snprintf(rec_bin, sizeof(rec_bin), "%s/rt-recorder", dir);
	snprintf(exp_bin, sizeof(exp_bin), "%s/rt-export", dir);
	snprintf(fake, sizeof(fake), "%s/libfake-nvml.so", dir);
	c.dir = dir, c.rec_bin = rec_bin, c.exp_bin = exp_bin, c.fake_nvml = fake;
	const struct mode *m = argc > 1 ? mode_named(argv[1]) : NULL;
	if (m) {
		int s = argc > 2 ? atoi(argv[2]) : 0;
		c.secs = s >= m->least && argc > 2 ? s : m->secs;
		return m->run(&c);
	}
	return run_sections(&c, argc, argv);
}
