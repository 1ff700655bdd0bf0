/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Runs a libFuzzer target's LLVMFuzzerTestOneInput() over files and
 * directories given on the command line, without libFuzzer: the seed
 * corpora (fuzz/corpus/<target>) and every crash input kept there become
 * a plain regression test, built with the project's compiler and run in
 * the ASan/UBSan suite too. Exits non-zero if a target aborts.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../fuzz/fuzz_common.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		perror(path);
		return -1;
	}
	do {
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap = cap ? 2 * cap : 65536);
			if (!nb) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	fclose(f);
	/* exact-size copy so ASan sees reads past the end */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

static int run_path(const char *path, unsigned *count)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return run_file(path);
	}
	struct dirent **names;
	int n = scandir(path, &names, NULL, alphasort), rc = 0;
	if (n < 0) {
		perror(path);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && !rc) {
			char sub[4096];
			snprintf(sub, sizeof(sub), "%s/%s", path,
				 names[i]->d_name);
			rc = run_path(sub, count);
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned count = 0;

	for (int i = 1; i < argc; i++)
		if (run_path(argv[i], &count) < 0)
			return 1;
	if (!count) {
		fprintf(stderr, "no inputs\n");
		return 1;
	}
	printf("%u inputs ran clean\n", count);
	return 0;
}
