/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The collector's own build and process, as the Prometheus client
 * libraries name them: build_info, and process_* read from the kernel
 * when the text is made (each snapshot).
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cgstats.h"
#include "escape.h"
#include "prom_family.h"

#ifndef TSC_REVISION
#define TSC_REVISION "unknown"
#endif
#ifdef TSC_HAVE_BPF
#define TSC_KERNEL_SOURCE "yes"
#else
#define TSC_KERNEL_SOURCE "no"
#endif

static void label(struct buf *b, const char *k, const char *v, bool first)
{
	buf_printf(b, "%s%s=\"", first ? "" : ",", k);
	esc_prom_label(b, v, strlen(v));
	buf_putc(b, '"');
}

void prom_build_info(struct buf *b)
{
	prom_head(b, "build_info", "gauge",
		  "1, labelled with the collector's version and revision, the "
		  "libcgstats it runs with, and whether the kernel "
		  "attribution source (BPF) was compiled in.");
	buf_puts(b, PROM_PREFIX "build_info{");
	label(b, "version", TSC_VERSION, true);
	label(b, "revision", TSC_REVISION, false);
	label(b, "libcgstats", cgs_version(), false);
	label(b, "kernel_source", TSC_KERNEL_SOURCE, false);
	buf_puts(b, "} 1\n");
}

static void gauge(struct buf *b, const char *name, const char *type,
		  const char *help, uint64_t v)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n%s ", name, help, name,
		   type, name);
	buf_u64(b, v);
	buf_putc(b, '\n');
}

static uint64_t open_fds(void)
{
	uint64_t n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n ? n - 1 : 0; /* not the one opendir() holds */
}

void prom_process_metrics(struct buf *b)
{
	struct rusage ru;
	unsigned long long size = 0, resident = 0;
	struct rlimit rl = { 0, 0 };
	long page = sysconf(_SC_PAGESIZE);
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%llu %llu", &size, &resident) != 2)
			size = resident = 0;
		fclose(f);
	}
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		uint64_t us = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
				      1000000u +
			      (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
		buf_puts(b, "# HELP process_cpu_seconds_total Total user and "
			 "system CPU time spent in seconds.\n"
			 "# TYPE process_cpu_seconds_total counter\n"
			 "process_cpu_seconds_total ");
		buf_fixed(b, us * 1000u, 9);
		buf_putc(b, '\n');
	}
	gauge(b, "process_resident_memory_bytes", "gauge",
	      "Resident memory size in bytes.",
	      (uint64_t)resident * (uint64_t)page);
	gauge(b, "process_virtual_memory_bytes", "gauge",
	      "Virtual memory size in bytes.", (uint64_t)size * (uint64_t)page);
	gauge(b, "process_open_fds", "gauge",
	      "Number of open file descriptors.", open_fds());
	getrlimit(RLIMIT_NOFILE, &rl);
	gauge(b, "process_max_fds", "gauge",
	      "Maximum number of open file descriptors.",
	      rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur);
}
