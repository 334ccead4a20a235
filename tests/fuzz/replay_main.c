/* replay_main.c - runs a fuzz target's LLVMFuzzerTestOneInput over files
 * and directories of inputs without libFuzzer, so the ordinary builds
 * (gcc, the ASan build) replay the seed and regression corpora as tests:
 * replay_TARGET DIR|FILE...  Exit 0 when every input ran; a crash is the
 * test's failure. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static long ran;

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return -1;
	}
	size_t cap = 1 << 16, n = 0;
	uint8_t *b = malloc(cap);
	size_t got;
	while (b && (got = fread(b + n, 1, cap - n, f)) > 0)
		if ((n += got) == cap)
			b = realloc(b, cap *= 2);
	fclose(f);
	if (!b)
		return -1;
	/* an exact-size copy, as libFuzzer hands it over */
	uint8_t *exact = malloc(n ? n : 1);
	memcpy(exact, b, n);
	free(b);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	ran++;
	return 0;
}

int main(int argc, char **argv)
{
	int bad = 0;
	for (int a = 1; a < argc; a++) {
		struct stat st;
		if (stat(argv[a], &st) != 0)
			continue; /* an empty regression corpus has no directory */
		if (!S_ISDIR(st.st_mode)) {
			bad |= run_file(argv[a]);
			continue;
		}
		struct dirent **names;
		int n = scandir(argv[a], &names, NULL, alphasort);
		for (int i = 0; i < n; i++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[a], names[i]->d_name);
			if (names[i]->d_name[0] != '.' && stat(path, &st) == 0 &&
			    S_ISREG(st.st_mode))
				bad |= run_file(path);
			free(names[i]);
		}
		free(names);
	}
	printf("replayed %ld inputs\n", ran);
	return bad ? 1 : 0;
}
