/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * micro_rollup: per-record cost of attribution + rollup (cgs_rollup_add)
 * on synthetic records, at cgroup depth 0, 3 and 30, and with 1 vs 2
 * receive shards fed concurrently.
 *
 * A fake /proc and cgroup2 mount are built in a temp dir (no root needed,
 * nothing of the host's /proc involved): NPROC processes, each in a cgroup
 * of the requested depth (8 sibling leaves). Modes:
 *   hot    thread-exit records of known processes (the steady state: cache
 *          hit, no syscall; /proc re-read once per revalidate_ms per process)
 *   churn  every record the exit of a new short-lived child already reaped
 *          (its /proc/<pid> is missing): one failed open, then the
 *          parent's cache entry
 *
 * usage: micro_rollup [-n RECORDS] [-r REPS] [-d 0,3,30] [-m hot,churn]
 *                     [-s 1,2] [--callgrind] [--no-delay-peaks]
 *                     [--comms N] [--exes N] [--histograms]
 * Prints one JSON line per (mode, depth, shards): median ns/record over REPS
 * runs interleaved across the points (wall time per record and thread;
 * aggregate; CPU time per record), for 2 shards the aggregate speedup and
 * cpu_cost_vs_1_shard (CPU per record with 2 shards / with 1: 1.0 means
 * the shards do not slow each other down, i.e. linear scaling given free
 * cores; the wall-clock speedup also depends on what else the host runs).
 * --callgrind re-runs each (mode, depth) with one shard under
 * `valgrind --tool=callgrind --toggle-collect=cgsb_rollup_feed` and adds
 * instructions/record (Ir of the fed records / their count).
 * --histograms keeps the distributions (CGS_ROLLUP_HISTOGRAMS), as the
 * collector does by default (no --no-histograms): what users pay.
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgstats.h"

#define NPROC 256
#define NREC 4096
#define MAXD 8
/* depth index j: processes PBASE(j).., the churn children's parent PARENT(j) */
#define PBASE(j) (1000u + 1000u * (unsigned)(j))
#define PARENT(j) (10u + (unsigned)(j))

static char root[256], procdir[320], mnt[320], mountinfo[400];
static long nrec = 2000000;
static int reps = 7;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void mkdir_p(const char *path)
{
	char tmp[8192];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	mkdir(tmp, 0755);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void cg_path(unsigned depth, unsigned leaf, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = '\0';
	if (depth == 0) {
		snprintf(buf, len, "/");
		return;
	}
	for (unsigned d = 1; d < depth; d++)
		o += (size_t)snprintf(buf + o, len - o, "/level%02u", d);
	snprintf(buf + o, len - o, "/leaf%u", leaf);
}

/* The fake tree for one depth: processes PBASE(j).. and PARENT(j). */
static void build_tree(unsigned j, unsigned depth)
{
	char p[8192], cg[4096], text[4300];
	for (unsigned k = 0; k <= NPROC; k++) {
		uint32_t pid = k == NPROC ? PARENT(j) : PBASE(j) + k;
		cg_path(depth, k % 8, cg, sizeof(cg));
		snprintf(p, sizeof(p), "%s%s", mnt, cg);
		mkdir_p(p);
		snprintf(p, sizeof(p), "%s/%u", procdir, pid);
		mkdir_p(p);
		snprintf(p, sizeof(p), "%s/%u/cgroup", procdir, pid);
		snprintf(text, sizeof(text), "1:name=systemd:/\n0::%s\n", cg);
		write_file(p, text);
		/* a zombie (PF_EXITING), start not checked: what the
		 * fallback's pid-reuse check accepts for a process exit */
		snprintf(p, sizeof(p), "%s/%u/stat", procdir, pid);
		snprintf(text, sizeof(text),
			 "%u (w) Z 1 1 1 0 -1 4 0 0 0 0 0 0 0 0 20 0 1 0 0\n",
			 pid);
		write_file(p, text);
	}
}

static int rm_cb(const char *path, const struct stat *sb, int flag,
		 struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void setup_root(void)
{
	snprintf(root, sizeof(root), "/tmp/cgs-micro-rollup-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(procdir, sizeof(procdir), "%s/proc", root);
	snprintf(mnt, sizeof(mnt), "%s/cg", root);
	snprintf(mountinfo, sizeof(mountinfo), "%s/mountinfo", root);
	char p[512], text[1024];
	snprintf(p, sizeof(p), "%s/sys/kernel", procdir);
	mkdir_p(p);
	snprintf(p, sizeof(p), "%s/sys/kernel/pid_max", procdir);
	write_file(p, "4194304\n");
	snprintf(text, sizeof(text),
		 "41 31 0:38 / %s rw,relatime - cgroup2 cgroup2 rw\n", mnt);
	write_file(mountinfo, text);
}

static void fill(struct cgs_record *r, enum cgs_kind kind, uint32_t pid,
		 uint32_t tgid, uint32_t ppid, uint64_t seed)
{
	memset(r, 0, sizeof(*r));
	r->sz = sizeof(*r);
	r->kind = kind;
	r->version = 16;
	r->pid = pid;
	r->tgid = tgid;
	r->ppid = ppid;
	r->flag = kind == CGS_KIND_PROCESS ? CGS_AC_AGROUP : 0;
	r->utime_us = seed % 997;
	r->stime_us = seed % 991;
	r->cpu_run_real_ns = seed * 31;
	r->cpu_run_virtual_ns = seed * 29;
	/* as a v16 kernel sends them: every field group, the delays' maxima
	 * (the cpu one always non-zero: scheduler stats) */
	r->fields = CGS_HAS_DELAY | CGS_HAS_BASIC | CGS_HAS_XACCT |
		    CGS_HAS_IO | CGS_HAS_CTXSW | CGS_HAS_TGID |
		    CGS_HAS_DELAY_MAXMIN;
	for (int i = 0; i < CGS_DELAY__COUNT; i++) {
		r->delay[i].count = seed % 7;
		r->delay[i].total_ns = seed * 3;
		r->delay[i].max_ns = i ? 0 : seed % 4099 + 1;
	}
	r->minflt = seed % 100;
	r->hiwater_rss_kb = seed % 4096;
	r->hiwater_vm_kb = seed % 8192;
	r->read_char = seed;
	r->write_char = seed / 2;
	r->nvcsw = seed % 13;
	r->nivcsw = seed % 5;
	/* v12+: the executable (8 distinct ones: --exes ranks them) */
	r->exe_dev = 0x803;
	r->exe_inode = 1000 + seed % 8;
}

struct feeder {
	struct cgs_rollup *r;
	unsigned shard;
	bool churn;
	uint32_t parent;
	const struct cgs_record *recs; /* hot mode: NREC records cycled */
	uint32_t next_child;          /* churn mode: pids handed out */
	long n;
	double secs, cpu_secs;
};

/* The measured loop (callgrind collects only inside it). */
__attribute__((noinline)) void cgsb_rollup_feed(struct feeder *f, long n);
__attribute__((noinline)) void cgsb_rollup_feed(struct feeder *f, long n)
{
	if (!f->churn) {
		for (long i = 0; i < n; i++)
			cgs_rollup_add(f->r, f->shard, &f->recs[i & (NREC - 1)], NULL, NULL);
		return;
	}
	CGS_OPTS(cgs_record, rec);
	fill(&rec, CGS_KIND_PROCESS, 0, 0, f->parent, 12345);
	for (long i = 0; i < n; i++) {
		/* distinct pids per shard, never in the fake /proc */
		uint32_t pid = 100000 + f->shard * 1500000 +
			       (f->next_child++ % 1400000);
		rec.pid = rec.tgid = pid;
		cgs_rollup_add(f->r, f->shard, &rec, NULL, NULL);
	}
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *feeder_main(void *arg)
{
	struct feeder *f = arg;
	double t0 = now_s(), c0 = cpu_s();
	cgsb_rollup_feed(f, f->n);
	f->cpu_secs = cpu_s() - c0;
	f->secs = now_s() - t0;
	return NULL;
}

static struct cgs_record hot[MAXD][NREC];

/* --no-delay-peaks: CGS_ROLLUP_NO_DELAY_PEAKS; --histograms:
 * CGS_ROLLUP_HISTOGRAMS */
static unsigned rflags;
static unsigned rcomms, rexes; /* --comms N, --exes N: summaries' size */

static struct cgs_rollup *new_rollup(unsigned shards)
{
	struct cgs_rollup_opts o = { .sz = sizeof(o), .shards = shards,
				     .flags = rflags,
				     .comms = rcomms, .exes = rexes,
				     .proc_root = procdir,
				     .mountinfo = mountinfo };
	struct cgs_rollup *r = NULL;
	int rc = cgs_rollup_new(&r, &o);
	if (rc < 0) {
		fprintf(stderr, "cgs_rollup_new: %s\n", cgs_strerror(rc));
		exit(1);
	}
	return r;
}

/* Warm-up: every process resolved on every shard (not measured). */
static void warm(struct cgs_rollup *r, unsigned shards, bool churn,
		 unsigned j)
{
	for (unsigned s = 0; s < shards; s++) {
		for (int i = 0; i < NREC; i++)
			cgs_rollup_add(r, s, &hot[j][i], NULL, NULL);
		if (churn) {
			struct feeder f = { r, s, true, PARENT(j), hot[j], 0,
					    1, 0, 0 };
			cgsb_rollup_feed(&f, 1);
		}
	}
}

/* One run of a (mode, depth, shards) point: ns per record per thread, and
 * per record in aggregate. */
static void run_once(bool churn, unsigned j, unsigned shards, long n,
		     double *ns, double *agg, double *cpu,
		     struct cgs_rollup_totals *tot)
{
	struct cgs_rollup *r = new_rollup(shards);
	warm(r, shards, churn, j);
	struct feeder f[2];
	pthread_t th[2];
	for (unsigned s = 0; s < shards; s++) {
		f[s] = (struct feeder){ r, s, churn, PARENT(j), hot[j], 1, n,
					0, 0 };
		pthread_create(&th[s], NULL, feeder_main, &f[s]);
	}
	double worst = 0, cpus = 0;
	for (unsigned s = 0; s < shards; s++) {
		pthread_join(th[s], NULL);
		if (f[s].secs > worst)
			worst = f[s].secs;
		cpus += f[s].cpu_secs;
	}
	*ns = worst * 1e9 / (double)n;
	*agg = worst * 1e9 / (double)(n * shards);
	*cpu = cpus * 1e9 / (double)(n * shards);
	tot->sz = sizeof(*tot);
	cgs_rollup_get_totals(r, tot);
	cgs_rollup_free(r);
}

static long long callgrind_ir(const char *self, const char *mode,
			      unsigned depth, long n)
{
	char out[512], cmd[2048];
	snprintf(out, sizeof(out), "%s/callgrind.out", root);
	snprintf(cmd, sizeof(cmd),
		 "valgrind --tool=callgrind --toggle-collect=cgsb_rollup_feed "
		 "--callgrind-out-file=%s %s --inner -m %s -d %u -n %ld %s%s"
		 "--comms %u --exes %u >/dev/null 2>&1",
		 out, self, mode, depth, n,
		 rflags & CGS_ROLLUP_NO_DELAY_PEAKS ? "--no-delay-peaks " : "",
		 rflags & CGS_ROLLUP_HISTOGRAMS ? "--histograms " : "",
		 rcomms, rexes);
	if (system(cmd) != 0)
		return -1;
	FILE *f = fopen(out, "r");
	if (!f)
		return -1;
	char line[512];
	long long ir = -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "summary:", 8) ||
		    !strncmp(line, "totals:", 7))
			ir = atoll(strchr(line, ':') + 1);
	fclose(f);
	unlink(out);
	return ir;
}

static bool has(const char *list, const char *item)
{
	size_t l = strlen(item);
	for (const char *p = list; (p = strstr(p, item)); p += l)
		if ((p == list || p[-1] == ',') && (p[l] == ',' || !p[l]))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	const char *depths = "0,3,30", *modes = "hot,churn", *shardl = "1,2";
	bool cg = false, inner = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			nrec = atol(argv[++i]);
		else if (!strcmp(argv[i], "-r") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-d") && i + 1 < argc)
			depths = argv[++i];
		else if (!strcmp(argv[i], "-m") && i + 1 < argc)
			modes = argv[++i];
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			shardl = argv[++i];
		else if (!strcmp(argv[i], "--callgrind"))
			cg = true;
		else if (!strcmp(argv[i], "--inner"))
			inner = true;
		else if (!strcmp(argv[i], "--no-delay-peaks"))
			rflags |= CGS_ROLLUP_NO_DELAY_PEAKS;
		else if (!strcmp(argv[i], "--histograms"))
			rflags |= CGS_ROLLUP_HISTOGRAMS;
		else if (!strcmp(argv[i], "--comms") && i + 1 < argc)
			rcomms = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--exes") && i + 1 < argc)
			rexes = (unsigned)atoi(argv[++i]);
		else {
			fprintf(stderr,
				"usage: %s [-n RECORDS] [-r REPS] [-d 0,3,30] "
				"[-m hot,churn] [-s 1,2] [--callgrind] "
				"[--no-delay-peaks] [--comms N] [--exes N] "
				"[--histograms]\n",
				argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > 64 || nrec < 1)
		return 2;
	unsigned D[MAXD], nd = 0;
	for (const char *d = depths; d && *d && nd < MAXD;) {
		D[nd++] = (unsigned)atoi(d);
		d = strchr(d, ',');
		if (d)
			d++;
	}
	setup_root();
	for (unsigned j = 0; j < nd; j++) {
		build_tree(j, D[j]);
		for (int i = 0; i < NREC; i++) {
			uint32_t k = (uint32_t)(i * 7) % NPROC;
			fill(&hot[j][i], CGS_KIND_THREAD, 20000 + (uint32_t)i,
			     PBASE(j) + k, PARENT(j),
			     (uint64_t)i * 2654435761u);
		}
	}
	if (inner) {
		/* under callgrind: per depth and mode, warm up, then one run
		 * through the collected function */
		for (unsigned j = 0; j < nd; j++)
			for (int m = 0; m < 2; m++) {
				if (!has(modes, m ? "churn" : "hot"))
					continue;
				struct cgs_rollup *r = new_rollup(1);
				warm(r, 1, m, j);
				struct feeder f = { r, 0, m, PARENT(j), hot[j],
						    1, nrec, 0, 0 };
				cgsb_rollup_feed(&f, nrec);
				cgs_rollup_free(r);
			}
		nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
		return 0;
	}
	/* reps interleaved over depths and shard counts: drifts of a shared
	 * machine hit every point alike */
	static double ns[2][MAXD][3][64], agg[2][MAXD][3][64],
		cpu[2][MAXD][3][64];
	static struct cgs_rollup_totals tot[2][MAXD][3];
	for (int k = 0; k < reps; k++)
		for (int m = 0; m < 2; m++) {
			if (!has(modes, m ? "churn" : "hot"))
				continue;
			long n = m ? nrec / 20 : nrec;
			for (unsigned jj = 0; jj < nd; jj++) {
				unsigned j = (jj + (unsigned)k) % nd;
				for (unsigned sh = 1; sh <= 2; sh++) {
					char sn[4];
					snprintf(sn, sizeof(sn), "%u", sh);
					if (has(shardl, sn))
						run_once(m, j, sh, n,
							 &ns[m][j][sh][k],
							 &agg[m][j][sh][k],
							 &cpu[m][j][sh][k],
							 &tot[m][j][sh]);
				}
			}
		}
	for (int m = 0; m < 2; m++) {
		const char *mode = m ? "churn" : "hot";
		if (!has(modes, mode))
			continue;
		long n = m ? nrec / 20 : nrec;
		double base1 = 0;
		for (unsigned j = 0; j < nd; j++) {
			double one = 0, one_cpu = 0;
			for (unsigned sh = 1; sh <= 2; sh++) {
				char sn[4];
				snprintf(sn, sizeof(sn), "%u", sh);
				if (!has(shardl, sn))
					continue;
				double med = median(ns[m][j][sh], reps);
				double amed = median(agg[m][j][sh], reps);
				double cmed = median(cpu[m][j][sh], reps);
				if (sh == 1) {
					one = med;
					one_cpu = cmed;
				}
				if (sh == 1 && j == 0)
					base1 = med;
				printf("{\"bench\":\"micro_rollup\",\"mode\":\"%s\","
				       "\"depth\":%u,\"shards\":%u,"
				       "\"ns_per_record\":%.2f,"
				       "\"ns_per_record_aggregate\":%.2f,"
				       "\"cpu_ns_per_record\":%.2f,",
				       mode, D[j], sh, med, amed, cmed);
				if (sh == 1 && base1 > 0)
					printf("\"ratio_to_depth_%u\":%.3f,", D[0],
					       med / base1);
				if (sh == 2 && one > 0)
					printf("\"speedup_vs_1_shard\":%.2f,"
					       "\"cpu_cost_vs_1_shard\":%.3f,",
					       one / amed, cmed / one_cpu);
				printf("\"records\":%ld,\"reps\":%d,"
				       "\"proc_reads\":%llu,\"unattributed\":%llu",
				       n, reps,
				       (unsigned long long)tot[m][j][sh].proc_reads,
				       (unsigned long long)tot[m][j][sh].unattributed);
				if (cg && sh == 1) {
					long cn = m ? 20000 : 200000;
					long long ir = callgrind_ir(argv[0],
								    mode, D[j],
								    cn);
					printf(",\"instructions_per_record\":%.1f",
					       ir < 0 ? -1.0 : (double)ir / cn);
				}
				printf("}\n");
				fflush(stdout);
			}
		}
	}
	nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
