/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Human-readable output: one query's record, a --watch row, cgroupstats. */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "escape.h"
#include "query.h"

static double sec_us(uint64_t us)
{
	return (double)us / 1e6;
}

static double ms_ns(uint64_t ns)
{
	return (double)ns / 1e6;
}

static void put_text(struct buf *b, const char *comm)
{
	esc_text(b, comm, strlen(comm));
}

/* Local wall-clock time, "%F %T" or (short) "%T.mmm". */
static void put_time(struct buf *b, uint64_t real_ns, bool short_form)
{
	time_t t = (time_t)(real_ns / 1000000000u);
	struct tm tm;
	char s[32];

	if (!localtime_r(&t, &tm) ||
	    !strftime(s, sizeof(s), short_form ? "%T" : "%F %T", &tm)) {
		buf_printf(b, "@%" PRIu64, (uint64_t)t);
		return;
	}
	buf_puts(b, s);
	if (short_form)
		buf_printf(b, ".%03u",
			   (unsigned)(real_ns / 1000000u % 1000u));
}

/* The delay table of once: average per delay (total/count), as getdelays
 * -d has it, and the share of the lifetime spent delayed. */
static void put_delays(struct buf *b, const struct cgs_record *r)
{
	unsigned n = tsq_delay_classes();
	bool maxmin = r->fields & CGS_HAS_DELAY_MAXMIN;
	uint64_t life_ns = r->etime_us * 1000u;

	buf_printf(b, "  %-10s %10s %12s %10s %10s %10s %9s\n", "delay",
		   "count", "total ms", "avg ms", "max ms", "min ms",
		   r->kind == CGS_KIND_TGID ? "%lives" : "%life");
	for (unsigned c = 0; c < n; c++) {
		const struct cgs_delay *d = &r->delay[c];
		const char *name = cgs_delay_name(c);

		if (!tsq_delay_carried(r, c))
			continue;
		buf_printf(b, "  %-10s %10" PRIu64 " %12.3f %10.3f", name ? name
			   : "?", d->count, ms_ns(d->total_ns),
			   d->count ? ms_ns(d->total_ns) / (double)d->count
				    : 0.0);
		if (maxmin)
			buf_printf(b, " %10.3f %10.3f", ms_ns(d->max_ns),
				   ms_ns(d->min_ns));
		else
			buf_printf(b, " %10s %10s", "-", "-");
		buf_printf(b, " %9.2f\n", tsq_pct(d->total_ns, life_ns));
	}
}

/* --threads: one row per thread, delays as % of the thread's life. */
static void put_threads(struct buf *b, const struct tsq_sample *t, unsigned n)
{
	unsigned nc = tsq_delay_classes();

	buf_puts(b, "  threads; delay columns: % of the thread's lifetime "
		    "spent delayed\n");
	buf_printf(b, "  %8s %-16s %9s %9s", "tid", "comm", "user s",
		   "system s");
	for (unsigned c = 0; c < nc; c++)
		if (tsq_delay_carried(&t[0].rec, c))
			buf_printf(b, " %7.7s", cgs_delay_name(c));
	buf_putc(b, '\n');
	for (unsigned i = 0; i < n; i++) {
		const struct cgs_record *r = &t[i].rec;
		size_t at;

		buf_printf(b, "  %8" PRIu32 " ", r->pid);
		at = b->len;
		put_text(b, t[i].comm);
		for (size_t w = b->len - at; w < 16; w++)
			buf_putc(b, ' ');
		buf_printf(b, " %9.3f %9.3f", sec_us(r->utime_us),
			   sec_us(r->stime_us));
		for (unsigned c = 0; c < nc; c++)
			if (tsq_delay_carried(&t[0].rec, c))
				buf_printf(b, " %7.2f",
					   tsq_pct(r->delay[c].total_ns,
						   r->etime_us * 1000u));
		buf_putc(b, '\n');
	}
}

void tsq_text_record(struct buf *b, const struct tsq_sample *s,
		     const struct tsq_sample *threads, unsigned n)
{
	const struct cgs_record *r = &s->rec;

	if (r->kind == CGS_KIND_TGID) {
		buf_printf(b, "thread group %" PRIu32 " (", r->tgid);
		put_text(b, s->comm);
		buf_printf(b, "): taskstats version %u\n", r->version);
		buf_printf(b, "  cpu: user %.3f s, system %.3f s (threads "
			   "alive now)\n", sec_us(r->utime_us),
			   sec_us(r->stime_us));
		buf_printf(b, "  context switches: %" PRIu64 " voluntary, %"
			   PRIu64 " involuntary (threads alive now)\n",
			   r->nvcsw, r->nivcsw);
		buf_printf(b, "  lifetimes of the threads alive now: %.3f s "
			   "summed\n", sec_us(r->etime_us));
	} else {
		buf_printf(b, "pid %" PRIu32 " (", r->pid);
		put_text(b, s->comm);
		buf_printf(b, "): thread group %" PRIu32 ", parent %" PRIu32
			   ", uid %" PRIu32 ", gid %" PRIu32 "\n", r->tgid,
			   r->ppid, r->uid, r->gid);
		buf_printf(b, "  taskstats version %u (%" PRIu32 " bytes",
			   r->version, r->payload_len);
		if (r->layout != r->version)
			buf_printf(b, ", decoded as layout %u", r->layout);
		buf_puts(b, ")\n  started ");
		put_time(b, r->btime_s * 1000000000u, false);
		buf_printf(b, ", running for %.3f s\n", sec_us(r->etime_us));
		buf_printf(b, "  cpu: user %.3f s, system %.3f s; on a cpu "
			   "%.3f s\n", sec_us(r->utime_us),
			   sec_us(r->stime_us),
			   (double)r->cpu_run_real_ns / 1e9);
		buf_printf(b, "  context switches: %" PRIu64 " voluntary, %"
			   PRIu64 " involuntary\n", r->nvcsw, r->nivcsw);
		buf_printf(b, "  page faults: %" PRIu64 " minor, %" PRIu64
			   " major\n", r->minflt, r->majflt);
		buf_printf(b, "  memory peaks: rss %" PRIu64 " KiB, vm %"
			   PRIu64 " KiB\n", r->hiwater_rss_kb,
			   r->hiwater_vm_kb);
		/* the kernel rounds rchar, wchar, syscr, syscw down to a
		 * multiple of 1024 (KB_MASK): the calls as their range */
		buf_printf(b, "  read: %" PRIu64 " bytes in %" PRIu64 "-%"
			   PRIu64 " calls, %" PRIu64 " from storage\n",
			   r->read_char, r->read_syscalls,
			   r->read_syscalls + 1023, r->read_bytes);
		buf_printf(b, "  written: %" PRIu64 " bytes in %" PRIu64 "-%"
			   PRIu64 " calls, %" PRIu64 " to storage, %" PRIu64
			   " cancelled\n", r->write_char, r->write_syscalls,
			   r->write_syscalls + 1023, r->write_bytes,
			   r->cancelled_write_bytes);
		buf_puts(b, "  (the kernel counts read and written bytes and "
			 "calls in steps of 1024)\n");
	}
	put_delays(b, r);
	if (threads && n)
		put_threads(b, threads, n);
}

void tsq_text_delta(struct buf *b, const struct tsq_sample *prev,
		    const struct tsq_sample *cur, bool header)
{
	const struct cgs_record *p = &prev->rec, *r = &cur->rec;
	bool task = r->kind != CGS_KIND_TGID;
	uint64_t wall = cur->mono_ns - prev->mono_ns;
	double wall_s = (double)wall / 1e9;
	unsigned nc = tsq_delay_classes();

	if (header) {
		buf_printf(b, "# %s %" PRIu32 " (", task ? "pid" : "tgid",
			   task ? r->pid : r->tgid);
		put_text(b, cur->comm);
		buf_puts(b, "): cpu% = user + system; delay columns: % of "
			    "the wall time spent delayed\n");
		buf_printf(b, "%-12s %7s %7s %7s %9s %9s", "time", "cpu%",
			   "user%", "sys%", "cswch/s", "icswch/s");
		if (task)
			buf_printf(b, " %9s %9s", "rd_kB/s", "wr_kB/s");
		for (unsigned c = 0; c < nc; c++)
			if (tsq_delay_carried(r, c))
				buf_printf(b, " %9.9s", cgs_delay_name(c));
		buf_putc(b, '\n');
	}
	uint64_t du = tsq_sub(r->utime_us, p->utime_us) * 1000u;
	uint64_t ds = tsq_sub(r->stime_us, p->stime_us) * 1000u;

	put_time(b, cur->real_ns, true);
	buf_printf(b, " %7.1f %7.1f %7.1f %9.1f %9.1f", tsq_pct(du + ds, wall),
		   tsq_pct(du, wall), tsq_pct(ds, wall),
		   (double)tsq_sub(r->nvcsw, p->nvcsw) / wall_s,
		   (double)tsq_sub(r->nivcsw, p->nivcsw) / wall_s);
	if (task)
		buf_printf(b, " %9.1f %9.1f",
			   (double)tsq_sub(r->read_bytes, p->read_bytes) /
				   1024 / wall_s,
			   (double)tsq_sub(r->write_bytes, p->write_bytes) /
				   1024 / wall_s);
	for (unsigned c = 0; c < nc; c++)
		if (tsq_delay_carried(r, c))
			buf_printf(b, " %9.2f",
				   tsq_pct(tsq_sub(r->delay[c].total_ns,
						   p->delay[c].total_ns),
					   wall));
	buf_putc(b, '\n');
}

void tsq_text_cgroup(struct buf *b, const char *dir,
		     const struct cgs_task_states *cs, uint64_t real_ns,
		     bool watch, bool header)
{
	if (header || !watch) {
		buf_puts(b, watch ? "# cgroup " : "cgroup ");
		put_text(b, dir);
		buf_puts(b, watch ? ": tasks by state\n" : "\n");
	}
	if (!watch) {
		buf_printf(b, "  sleeping %" PRIu64 ", running %" PRIu64
			   ", stopped %" PRIu64 ", uninterruptible %" PRIu64
			   ", waiting for I/O %" PRIu64 "\n", cs->nr_sleeping,
			   cs->nr_running, cs->nr_stopped,
			   cs->nr_uninterruptible, cs->nr_io_wait);
		return;
	}
	if (header)
		buf_printf(b, "%-12s %9s %9s %9s %9s %9s\n", "time",
			   "sleeping", "running", "stopped", "uninterr",
			   "io_wait");
	put_time(b, real_ns, true);
	buf_printf(b, " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64
		   " %9" PRIu64 "\n", cs->nr_sleeping, cs->nr_running,
		   cs->nr_stopped, cs->nr_uninterruptible, cs->nr_io_wait);
}
