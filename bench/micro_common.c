/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "micro_common.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double cgsb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double cgsb_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double cgsb_min(const double *v, int n)
{
	double m = n ? v[0] : 0;

	for (int i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

double cgsb_max(const double *v, int n)
{
	double m = n ? v[0] : 0;

	for (int i = 1; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

/* ---- synthetic messages --------------------------------------------- */

static void put16(uint8_t *p, size_t off, uint16_t v) { memcpy(p + off, &v, 2); }
static void put32(uint8_t *p, size_t off, uint32_t v) { memcpy(p + off, &v, 4); }
static void put64(uint8_t *p, size_t off, uint64_t v) { memcpy(p + off, &v, 8); }

/* Fill a struct taskstats payload with plausible values (v16 offsets; a
 * v8 payload is the same layout cut at 328 bytes). */
static void fill_payload(uint8_t *p, size_t len, unsigned version,
			 const struct cgsb_msg_spec *s, bool group)
{
	memset(p, 0, len);
	put16(p, 0, (uint16_t)version);
	put64(p, 16, 12);        /* cpu_count */
	put64(p, 24, 345678);    /* cpu_delay_total ns */
	put64(p, 64, 2345678);   /* cpu_run_real_total */
	put64(p, 72, 2345000);   /* cpu_run_virtual_total */
	put64(p, 144, 4321);     /* ac_etime us */
	put64(p, 152, 1200);     /* ac_utime us */
	put64(p, 160, 800);      /* ac_stime us */
	put64(p, 272, 3);        /* nvcsw */
	put64(p, 280, 1);        /* nivcsw */
	if (group)               /* TGID aggregate: no comm, ids, I/O */
		return;
	p[8] = s->flag;          /* ac_flag */
	memcpy(p + 80, "cgs-churn", 9); /* ac_comm */
	p[112] = 0;              /* ac_sched */
	put32(p, 120, 0);        /* uid */
	put32(p, 124, 0);        /* gid */
	put32(p, 128, s->pid);
	put32(p, 132, s->ppid);
	put32(p, 136, (uint32_t)s->btime_s);
	put64(p, 168, 17);       /* minflt */
	put64(p, 184, 100);      /* coremem */
	put64(p, 192, 900);      /* virtmem */
	put64(p, 200, 1024);     /* hiwater_rss KB */
	put64(p, 208, 8192);     /* hiwater_vm KB */
	put64(p, 216, 4096);     /* read_char */
	put64(p, 224, 512);      /* write_char */
	put64(p, 232, 4);
	put64(p, 240, 2);
	if (len >= 352)
		put64(p, 344, s->btime_s); /* ac_btime64 (v10+) */
	if (len >= 384) {
		put32(p, 368, s->tgid);    /* ac_tgid (v12+) */
		put64(p, 376, 5000);       /* ac_tgetime */
		put64(p, 384, 0x801);      /* exe dev */
		put64(p, 392, 123456);     /* exe inode */
	}
	if (len >= 560) {
		put64(p, 432, 61000 + s->pid % 977); /* cpu_delay_max (v16) */
		put64(p, 440, 9000);       /* cpu_delay_min */
	}
}

/* Append one netlink attribute header; returns the offset of its data. */
static size_t nla_put_hdr(uint8_t *buf, size_t off, uint16_t type,
			  size_t datalen)
{
	put16(buf, off, (uint16_t)(4 + datalen));
	put16(buf, off + 2, type);
	return off + 4;
}

#define NLA_ALIGN4(x) (((x) + 3) & ~(size_t)3)

static size_t put_aggr(uint8_t *buf, size_t off, uint16_t aggr_type,
		       uint16_t id_type, uint32_t id, unsigned version,
		       size_t plen, const struct cgsb_msg_spec *s, bool group)
{
	size_t nest = off, inner;

	inner = nla_put_hdr(buf, off, aggr_type, 8 + 4 + plen);
	inner = nla_put_hdr(buf, inner, id_type, 4);
	put32(buf, inner, id);
	inner += 4;
	inner = nla_put_hdr(buf, inner, 3 /* STATS */, plen);
	fill_payload(buf + inner, plen, version, s, group);
	inner = NLA_ALIGN4(inner + plen);
	(void)nest;
	return inner;
}

size_t cgsb_build_msg(uint8_t *buf, size_t cap, const struct cgsb_msg_spec *s)
{
	size_t plen = s->version >= 15 ? 560 : 328;
	size_t need = 16 + 4 + (4 + 8 + 4 + plen) * (s->with_tgid ? 2 : 1);
	size_t off;

	if (need > cap)
		return 0;
	memset(buf, 0, need);
	/* nlmsghdr: len, type (family id; any), flags, seq, portid */
	put16(buf, 4, 0x1a);
	put32(buf, 8, 7);
	buf[16] = 2; /* genlmsghdr.cmd = TASKSTATS_CMD_NEW */
	buf[17] = 1; /* version */
	off = 20;
	off = put_aggr(buf, off, 4 /* AGGR_PID */, 1 /* PID */, s->pid,
		       s->version, plen, s, false);
	if (s->with_tgid)
		off = put_aggr(buf, off, 5 /* AGGR_TGID */, 2 /* TGID */,
			       s->tgid, s->version, plen, s, true);
	put32(buf, 0, (uint32_t)off);
	return off;
}

/* ---- cgroups ---------------------------------------------------------- */

const char *cgsb_v2_mount(void)
{
	static char mnt[PATH_MAX];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096];

	if (!f)
		return NULL;
	mnt[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");
		char mp[PATH_MAX];

		if (!sep || strncmp(sep, " - cgroup2 ", 11))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1) {
			snprintf(mnt, sizeof(mnt), "%s", mp);
			break;
		}
	}
	fclose(f);
	return mnt[0] ? mnt : NULL;
}

uint64_t cgsb_proc_btime(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0, boot = 0;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* field 22 (starttime) is the 20th after the ") " */
	for (i = 0, p += 2; i < 19 && p; i++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || sscanf(p, "%llu", &start) != 1)
		return 0;
	f = fopen("/proc/stat", "r");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "btime %llu", &boot) == 1)
			break;
	fclose(f);
	return boot + start / (unsigned long long)sysconf(_SC_CLK_TCK);
}

static int write_pid(const char *dir, pid_t pid)
{
	char path[4200];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ok = fprintf(f, "%d\n", (int)pid) > 0;
	ok &= fclose(f) == 0;
	return ok ? 0 : -EIO;
}

int cgsb_cgchain_make(struct cgsb_cgchain *c, const char *tag, unsigned depth)
{
	const char *mnt = cgsb_v2_mount();
	size_t n;
	int err;

	memset(c, 0, sizeof(*c));
	c->child = -1;
	c->depth = depth;
	if (!mnt)
		return -ENOENT;
	if (depth > CGSB_MAX_DEPTH)
		return -E2BIG;
	snprintf(c->leaf, sizeof(c->leaf), "%s", mnt);
	c->cg_path[0] = '\0';
	for (unsigned d = 0; d < depth; d++) {
		n = strlen(c->cg_path);
		if (d == 0)
			snprintf(c->cg_path + n, sizeof(c->cg_path) - n,
				 "/cgs-bench-%s-%d", tag, (int)getpid());
		else
			snprintf(c->cg_path + n, sizeof(c->cg_path) - n,
				 "/l%u", d);
		snprintf(c->leaf, sizeof(c->leaf), "%s%s", mnt, c->cg_path);
		if (d == 0)
			snprintf(c->base, sizeof(c->base), "%s", c->leaf);
		if (mkdir(c->leaf, 0755) < 0 && errno != EEXIST)
			return -errno;
	}
	if (!depth)
		snprintf(c->cg_path, sizeof(c->cg_path), "/");

	c->child = fork();
	if (c->child < 0)
		return -errno;
	if (c->child == 0) {
		for (;;)
			pause();
	}
	err = write_pid(c->leaf, c->child);
	if (err)
		return err;
	c->child_btime_s = cgsb_proc_btime(c->child);
	return 0;
}

void cgsb_cgchain_destroy(struct cgsb_cgchain *c)
{
	const char *mnt = cgsb_v2_mount();
	char dir[4200];

	if (c->child > 0) {
		kill(c->child, SIGKILL);
		waitpid(c->child, NULL, 0);
		c->child = -1;
	}
	if (!mnt || !c->depth)
		return;
	/* Remove from the deepest directory up. */
	snprintf(dir, sizeof(dir), "%s", c->leaf);
	for (unsigned d = c->depth; d > 0; d--) {
		char *slash;

		rmdir(dir);
		slash = strrchr(dir, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
}

void cgsb_report(const char *bench, const char *kase, long param, double *ns,
		 int reps, long iters, const char *extra_json)
{
	double lo = cgsb_min(ns, reps), hi = cgsb_max(ns, reps);
	double med = cgsb_median(ns, reps);

	printf("{\"bench\":\"%s\",\"case\":\"%s\",\"param\":%ld,"
	       "\"ns_per_record\":%.2f,\"min\":%.2f,\"max\":%.2f,"
	       "\"reps\":%d,\"iters\":%ld%s%s}\n",
	       bench, kase, param, med, lo, hi, reps, iters,
	       extra_json && *extra_json ? "," : "",
	       extra_json ? extra_json : "");
	fflush(stdout);
}
