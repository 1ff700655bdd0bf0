/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The executables' resolver (lib/attribute/exe.c) on temp files: known and
 * unknown, deleted (unlinked) and replaced (a new file renamed over the
 * path) detected at look-up, the re-check interval, the kernel's path
 * preferred to /proc's, paths of another mount namespace not checked, the
 * bound, and a scan of a fake /proc.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "attribute/exe.h"
#include "support/skip.h"

struct fx {
	char dir[64];
	char path[128];
	struct stat st;
	struct cgsi_exe *c;
};

static void touch(const char *p)
{
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs("#!/bin/true\n", f);
	fclose(f);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/cgs-test-exe-XXXXXX");
	if (!f || !mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/prog", f->dir);
	touch(f->path);
	if (stat(f->path, &f->st) < 0)
		return -1;
	f->c = cgsi_exe_new(f->dir, 64, NULL); /* no /proc in dir */
	if (!f->c)
		return -1;
	cgsi_exe_set_recheck(f->c, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];
	cgsi_exe_free(f->c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

/* the path of the fixture's file, and its flags */
static int get(struct fx *f, char *buf, size_t len, unsigned *fl)
{
	return cgsi_exe_get(f->c, (uint64_t)f->st.st_dev,
			    (uint64_t)f->st.st_ino, buf, len, fl);
}

static void test_known_unknown(void **state)
{
	struct fx *f = *state;
	char b[256];
	unsigned fl = 99;
	cgsi_exe_put(f->c, f->st.st_dev, f->st.st_ino, f->path, 0);
	assert_int_equal(get(f, b, sizeof(b), &fl), (int)strlen(f->path));
	assert_string_equal(b, f->path);
	assert_int_equal(fl, 0);
	assert_int_equal(cgsi_exe_get(f->c, f->st.st_dev, f->st.st_ino + 7777,
				      b, sizeof(b), &fl), -ENOENT);
	/* cut to the buffer, the full length returned */
	char small[8];
	assert_int_equal(get(f, small, sizeof(small), NULL),
			 (int)strlen(f->path));
	assert_int_equal(strlen(small), sizeof(small) - 1);
	struct cgs_exe_counts n = { .sz = sizeof(n) };
	cgsi_exe_counts(f->c, &n);
	assert_int_equal(n.known, 2);
	assert_int_equal(n.unknown, 1);
	assert_int_equal(n.entries, 1);
	assert_int_equal(n.deleted + n.replaced + n.exec, 0);
}

static void test_deleted(void **state)
{
	struct fx *f = *state;
	char b[256];
	unsigned fl;
	cgsi_exe_put(f->c, f->st.st_dev, f->st.st_ino, f->path, CGS_EXE_EXEC);
	assert_true(get(f, b, sizeof(b), &fl) > 0);
	assert_int_equal(fl, CGS_EXE_EXEC);
	assert_int_equal(unlink(f->path), 0);
	assert_true(get(f, b, sizeof(b), &fl) > 0);
	assert_string_equal(b, f->path); /* the path as it was */
	assert_int_equal(fl, CGS_EXE_EXEC | CGS_EXE_DELETED);
	struct cgs_exe_counts n = { .sz = sizeof(n) };
	cgsi_exe_counts(f->c, &n);
	assert_int_equal(n.deleted, 1);
	assert_int_equal(n.exec, 2);
}

static void test_replaced(void **state)
{
	struct fx *f = *state;
	char b[256], nw[160];
	unsigned fl;
	cgsi_exe_put(f->c, f->st.st_dev, f->st.st_ino, f->path, 0);
	/* the old file stays open, as a running program keeps its inode */
	FILE *keep = fopen(f->path, "r");
	assert_non_null(keep);
	snprintf(nw, sizeof(nw), "%s.new", f->path);
	touch(nw);
	assert_int_equal(rename(nw, f->path), 0); /* an upgrade in place */
	assert_true(get(f, b, sizeof(b), &fl) > 0);
	assert_string_equal(b, f->path);
	assert_int_equal(fl, CGS_EXE_REPLACED);
	/* the new file is another executable: unknown until learnt */
	struct stat st2;
	assert_int_equal(stat(f->path, &st2), 0);
	assert_int_equal(cgsi_exe_get(f->c, st2.st_dev, st2.st_ino, b,
				      sizeof(b), &fl), -ENOENT);
	fclose(keep);
	struct cgs_exe_counts n = { .sz = sizeof(n) };
	cgsi_exe_counts(f->c, &n);
	assert_int_equal(n.replaced, 1);
}

/* checked at most once per interval: a deletion within it shows later */
static void test_recheck(void **state)
{
	struct fx *f = *state;
	char b[256];
	unsigned fl;
	cgsi_exe_set_recheck(f->c, 3600 * 1000);
	cgsi_exe_put(f->c, f->st.st_dev, f->st.st_ino, f->path, 0);
	assert_true(get(f, b, sizeof(b), &fl) > 0);
	assert_int_equal(fl, 0);
	assert_int_equal(unlink(f->path), 0);
	assert_true(get(f, b, sizeof(b), &fl) > 0);
	assert_int_equal(fl, 0); /* cached */
	cgsi_exe_set_recheck(f->c, 0);
	assert_true(get(f, b, sizeof(b), &fl) > 0);
	assert_int_equal(fl, CGS_EXE_DELETED);
}

/* the kernel's exec-time path wins over /proc's, not the other way */
static void test_kernel_wins(void **state)
{
	struct fx *f = *state;
	char b[256];
	unsigned fl;
	uint64_t dev = 0x803, ino = 4242;
	cgsi_exe_put(f->c, dev, ino, "/proc/said", CGS_EXE_FOREIGN);
	cgsi_exe_put(f->c, dev, ino, "/kernel/said",
		     CGS_EXE_EXEC | CGS_EXE_FOREIGN);
	cgsi_exe_put(f->c, dev, ino, "/proc/again", CGS_EXE_FOREIGN);
	assert_true(cgsi_exe_get(f->c, dev, ino, b, sizeof(b), &fl) > 0);
	assert_string_equal(b, "/kernel/said");
	/* another namespace's path: not checked (it names nothing here) */
	assert_int_equal(fl, CGS_EXE_EXEC | CGS_EXE_FOREIGN);
	/* ... but unlinked at exec (or at a scan) is deleted */
	cgsi_exe_put(f->c, dev, ino, "/proc/again",
		     CGS_EXE_FOREIGN | CGS_EXE_DELETED);
	assert_true(cgsi_exe_get(f->c, dev, ino, b, sizeof(b), &fl) > 0);
	assert_string_equal(b, "/kernel/said");
	assert_true(fl & CGS_EXE_DELETED);
}

/* at most max held; the newest always kept; a freed slot's neighbours
 * stay reachable (deletion without tombstones) */
static void test_bounded(void **state)
{
	(void)state;
	struct cgsi_exe *c = cgsi_exe_new("/nonexistent", 8, NULL);
	char b[64], p[32];
	assert_non_null(c);
	for (unsigned i = 1; i <= 200; i++) {
		snprintf(p, sizeof(p), "/x/%u", i);
		cgsi_exe_put(c, 1, i, p, CGS_EXE_TRUNCATED);
		assert_true(cgsi_exe_get(c, 1, i, b, sizeof(b), NULL) > 0);
		assert_string_equal(b, p);
	}
	struct cgs_exe_counts n = { .sz = sizeof(n) };
	cgsi_exe_counts(c, &n);
	assert_int_equal(n.entries, 8);
	assert_int_equal(n.evicted, 192);
	unsigned found = 0;
	for (unsigned i = 1; i <= 200; i++) {
		if (cgsi_exe_get(c, 1, i, b, sizeof(b), NULL) > 0) {
			snprintf(p, sizeof(p), "/x/%u", i);
			assert_string_equal(b, p);
			found++;
		}
	}
	assert_int_equal(found, 8);
	cgsi_exe_free(c);
}

/* /proc/<pid>/exe of a fake tree: the path read, dev and inode stat'd
 * through the link */
static void test_scan(void **state)
{
	struct fx *f = *state;
	char d[160], l[192], b[256];
	unsigned fl;
	snprintf(d, sizeof(d), "%s/4321", f->dir);
	assert_int_equal(mkdir(d, 0755), 0);
	snprintf(l, sizeof(l), "%s/exe", d);
	assert_int_equal(symlink(f->path, l), 0);
	assert_int_equal(cgsi_exe_scan(f->c), 1);
	assert_true(get(f, b, sizeof(b), &fl) > 0);
	assert_string_equal(b, f->path);
	assert_int_equal(fl, 0);
	struct cgs_exe_counts n = { .sz = sizeof(n) };
	cgsi_exe_counts(f->c, &n);
	assert_int_equal(n.scans, 1);
}

/* A copy of sleep(1) at path, running (exec'd: /proc/PID/exe names it). */
static pid_t run_copy(const char *path)
{
	char cmd[512], l[256], t[256];
	snprintf(cmd, sizeof(cmd), "cp \"$(readlink -f \"$(command -v sleep)\")\" %s",
		 path);
	if (system(cmd))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		execl(path, "sleep", "30", (char *)NULL);
		_exit(127);
	}
	snprintf(l, sizeof(l), "/proc/%d/exe", (int)pid);
	for (int i = 0; pid > 0 && i < 400; i++) {
		ssize_t n = readlink(l, t, sizeof(t) - 1);
		if (n > 0 && (t[n] = '\0', !strcmp(t, path)))
			return pid;
		usleep(5000);
	}
	return -1;
}

static void stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* the public calls: the rollup made with exe_paths (the /proc source
 * here) names a process running before it was made, and one started
 * after it once cgs_rollup_scan_exe() ran; without exe_paths,
 * -EOPNOTSUPP */
static void test_rollup_api(void **state)
{
	struct fx *f = *state;
	char p1[160], p2[160], b[512];
	snprintf(p1, sizeof(p1), "%s/cgs-exe-one", f->dir);
	snprintf(p2, sizeof(p2), "%s/cgs-exe-two", f->dir);
	pid_t c1 = run_copy(p1);
	if (c1 < 0)
		cgt_skip("cannot run a copy of sleep(1)");
	struct cgs_rollup *r = NULL;
	CGS_OPTS(cgs_rollup_opts, o);
	o.attribution = CGS_ATTRIBUTION_PROC;
	o.exe_paths = 64;
	if (cgs_rollup_new(&r, &o) < 0) {
		stop(c1);
		cgt_skip("no rollup here (no cgroup mount?)");
	}
	pid_t c2 = run_copy(p2);
	struct stat s1, s2;
	assert_int_equal(stat(p1, &s1), 0);
	assert_int_equal(stat(p2, &s2), 0);
	unsigned fl = 99;
	int n1 = cgs_rollup_get_exe(b, sizeof(b), &fl, r, s1.st_dev, s1.st_ino);
	int n2 = cgs_rollup_get_exe(b, sizeof(b), &fl, r, s2.st_dev, s2.st_ino);
	int sc = cgs_rollup_scan_exe(r);
	int n3 = cgs_rollup_get_exe(b, sizeof(b), &fl, r, s2.st_dev, s2.st_ino);
	stop(c1);
	stop(c2);
	assert_int_equal(n1, (int)strlen(p1));
	assert_int_equal(n2, -ENOENT); /* started after the rollup's scan */
	assert_true(sc > 0);
	assert_int_equal(n3, (int)strlen(p2));
	assert_string_equal(b, p2);
	assert_int_equal(fl, 0);
	assert_int_equal(cgs_rollup_get_exe(b, sizeof(b), &fl, r, s1.st_dev,
					    0), -ENOENT);
	assert_int_equal(cgs_rollup_get_exe(b, 0, &fl, r, 1, 1), -EINVAL);
	struct cgs_exe_counts c = { .sz = sizeof(c) };
	assert_int_equal(cgs_rollup_get_exe_counts(&c, r), 0);
	assert_int_equal(c.known, 2);
	assert_int_equal(c.unknown, 2);
	assert_true(c.scans >= 2 && c.entries >= 1 && c.bytes > 0);
	assert_int_equal(c.exec_on, 0); /* the /proc source only */
	cgs_rollup_free(r);
	o.exe_paths = 0;
	assert_int_equal(cgs_rollup_new(&r, &o), 0);
	assert_int_equal(cgs_rollup_get_exe(b, sizeof(b), &fl, r, 1, 1),
			 -EOPNOTSUPP);
	assert_int_equal(cgs_rollup_scan_exe(r), -EOPNOTSUPP);
	assert_int_equal(cgs_rollup_get_exe_counts(&c, r), -EOPNOTSUPP);
	cgs_rollup_free(r);
	o.exe_paths = CGSI_EXE_MAX + 1;
	assert_int_equal(cgs_rollup_new(&r, &o), -EINVAL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_known_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deleted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recheck, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_wins, setup, teardown),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test_setup_teardown(test_scan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollup_api, setup, teardown),
	};
	return CGT_RUN(argc, argv, tests);
}
