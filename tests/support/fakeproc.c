/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/fakeproc.h"

static void die(const char *what, const char *path)
{
	fprintf(stderr, "fakeproc: %s %s: %s\n", what, path, strerror(errno));
	abort();
}

static void mkdir_p(const char *path)
{
	char tmp[1024];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			die("mkdir", tmp);
		*p = '/';
	}
	if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
		die("mkdir", tmp);
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	if (!fp)
		die("fopen", path);
	fputs(text, fp);
	fclose(fp);
}

int fp_init(struct fakeproc *f)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->root, sizeof(f->root), "/tmp/cgs-rollup-XXXXXX");
	if (!mkdtemp(f->root))
		return -errno;
	snprintf(f->proc, sizeof(f->proc), "%s/proc", f->root);
	snprintf(f->mnt, sizeof(f->mnt), "%s/cg", f->root);
	snprintf(f->mountinfo, sizeof(f->mountinfo), "%s/proc/self/mountinfo",
		 f->root);
	char p[512], text[1024];
	snprintf(p, sizeof(p), "%s/self", f->proc);
	mkdir_p(p);
	snprintf(p, sizeof(p), "%s/sys/kernel", f->proc);
	mkdir_p(p);
	snprintf(p, sizeof(p), "%s/sys/kernel/pid_max", f->proc);
	write_file(p, "4194304\n");
	mkdir_p(f->mnt);
	snprintf(p, sizeof(p), "%s/mem", f->root);
	mkdir_p(p);
	snprintf(text, sizeof(text),
		 "22 1 0:20 / /proc rw - proc proc rw\n"
		 "35 31 0:32 / %s/mem rw,relatime - cgroup cgroup rw,memory\n"
		 "41 31 0:38 / %s rw,relatime shared:9 - cgroup2 cgroup2 rw\n",
		 f->root, f->mnt);
	write_file(f->mountinfo, text);
	f->now_ms = 1000000;
	return 0;
}

static int rm_cb(const char *path, const struct stat *sb, int flag,
		 struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void fp_fini(struct fakeproc *f)
{
	nftw(f->root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

int fp_setup(void **state)
{
	return fp_init(*state);
}

int fp_teardown(void **state)
{
	fp_fini(*state);
	return 0;
}

void fp_mkdir(struct fakeproc *f, const char *cgpath)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s%s", f->mnt, cgpath);
	mkdir_p(p);
}

void fp_rmdir(struct fakeproc *f, const char *cgpath)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s%s", f->mnt, cgpath);
	if (rmdir(p) < 0)
		die("rmdir", p);
}

void fp_set_text(struct fakeproc *f, uint32_t pid, const char *text)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%u", f->proc, pid);
	mkdir_p(p);
	snprintf(p, sizeof(p), "%s/%u/cgroup", f->proc, pid);
	write_file(p, text);
	fp_set_stat(f, pid, 'Z', 0x4, 0);
}

void fp_set_stat(struct fakeproc *f, uint32_t pid, char state,
		 uint32_t flags, uint64_t start_ticks)
{
	char p[512], text[512];
	snprintf(p, sizeof(p), "%s/%u/stat", f->proc, pid);
	snprintf(text, sizeof(text),
		 "%u (fake (a) b) %c 1 %u %u 0 -1 %u 0 0 0 0 0 0 0 0 20 0 1 0 "
		 "%llu 1000 10 18446744073709551615\n",
		 pid, state, pid, pid, flags, (unsigned long long)start_ticks);
	write_file(p, text);
}

void fp_set(struct fakeproc *f, uint32_t pid, const char *path)
{
	char text[1200];
	snprintf(text, sizeof(text), "4:memory:%s\n1:name=systemd:/\n0::%s\n",
		 path, path);
	fp_set_text(f, pid, text);
	if (strcmp(path, "/")) {
		char p[1024];
		fp_mkdir(f, path);
		snprintf(p, sizeof(p), "%s/mem%s", f->root, path);
		mkdir_p(p);
	}
}

void fp_reap(struct fakeproc *f, uint32_t pid)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%u/cgroup", f->proc, pid);
	unlink(p);
	snprintf(p, sizeof(p), "%s/%u/stat", f->proc, pid);
	unlink(p);
	snprintf(p, sizeof(p), "%s/%u", f->proc, pid);
	rmdir(p);
}

uint64_t fp_clock(void *ctx)
{
	return ((struct fakeproc *)ctx)->now_ms;
}

struct cgs_rollup_opts fp_opts(struct fakeproc *f)
{
	struct cgs_rollup_opts o = {
		.sz = sizeof(o),
		.proc_root = f->proc,
		.mountinfo = f->mountinfo,
		.clock_ms = fp_clock,
		.clock_ctx = f,
	};
	return o;
}

struct cgs_rollup *fp_rollup(struct fakeproc *f, unsigned shards,
			     unsigned flags)
{
	struct cgs_rollup_opts o = fp_opts(f);
	struct cgs_rollup *r = NULL;

	o.shards = shards;
	o.flags = flags;
	assert_int_equal(cgs_rollup_new(&r, &o), 0);
	return r;
}

struct cgs_record fp_record(enum cgs_kind kind, uint32_t pid, uint32_t tgid,
			    uint32_t ppid, uint64_t seed)
{
	CGS_OPTS(cgs_record, r);
	r.kind = kind;
	r.version = 16;
	r.pid = kind == CGS_KIND_TGID ? 0 : pid;
	r.tgid = tgid;
	r.ppid = ppid;
	r.flag = kind == CGS_KIND_PROCESS ? 0x20 : 0;
	uint64_t s = seed * 1000;
	r.utime_us = s + 1;
	r.stime_us = s + 2;
	r.cpu_run_real_ns = s + 3;
	r.cpu_run_virtual_ns = s + 4;
	for (int i = 0; i < CGS_DELAY__COUNT; i++) {
		r.delay[i].count = s + 10 + i;
		r.delay[i].total_ns = s + 20 + i;
	}
	r.minflt = s + 30;
	r.majflt = s + 31;
	r.coremem_mbus = s + 32;
	r.virtmem_mbus = s + 33;
	r.hiwater_rss_kb = s + 34;
	r.hiwater_vm_kb = s + 35;
	r.read_char = s + 36;
	r.write_char = s + 37;
	r.read_syscalls = s + 38;
	r.write_syscalls = s + 39;
	r.read_bytes = s + 40;
	r.write_bytes = s + 41;
	r.cancelled_write_bytes = s + 42;
	r.nvcsw = s + 43;
	r.nivcsw = s + 44;
	return r;
}
