/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * JSON output, one object per line: "task" or "tgid" for a query,
 * "interval" for a --watch interval, "cgroup" for cgroupstats. Field
 * names and units are the collector's (issue 38): times in seconds with
 * "_s" (exact decimals), sizes in bytes, delays flat as
 * delay_<class>_count / _s. --json-names 1.2 writes the names of 1.2
 * instead (utime_us, cpu_run_real_ns, hiwater_rss_kb, read_char, a
 * "delays" object): kept for one release.
 */
#include <inttypes.h>
#include <string.h>

#include "escape.h"
#include "query.h"

bool tsq_json_names_12;

static void key_u64(struct buf *b, const char *k, uint64_t v)
{
	buf_printf(b, ",\"%s\":%" PRIu64, k, v);
}

static void key_num(struct buf *b, const char *k, double v)
{
	buf_printf(b, ",\"%s\":%.3f", k, v);
}

static void key_str(struct buf *b, const char *k, const char *s)
{
	buf_printf(b, ",\"%s\":", k);
	esc_json(b, s, strlen(s));
}

/* A duration v in 10^-digits s: "<name>" in seconds, or (1.2) "<old>" in
 * its own unit. */
static void key_time(struct buf *b, const char *name, const char *old,
		     uint64_t v, unsigned digits)
{
	if (tsq_json_names_12) {
		key_u64(b, old, v);
		return;
	}
	buf_printf(b, ",\"%s\":", name);
	buf_fixed(b, v, digits);
}

/* A count renamed (1.2: old), or a size in KiB written in bytes. */
static void key_as(struct buf *b, const char *name, const char *old,
		   uint64_t v)
{
	key_u64(b, tsq_json_names_12 ? old : name, v);
}

static void key_kib(struct buf *b, const char *name, const char *old,
		    uint64_t kib)
{
	key_u64(b, tsq_json_names_12 ? old : name,
		tsq_json_names_12 ? kib : kib * 1024);
}

static void put_head(struct buf *b, const char *type, uint64_t real_ns)
{
	buf_printf(b, "{\"type\":\"%s\"", type);
	key_num(b, "time", (double)real_ns / 1e9);
}

/* One class's delays as 1.2 wrote them: "cpu":{"count":..,"total_ns"..} */
static void put_delay_12(struct buf *b, const char *name, uint64_t count,
			 uint64_t total, const struct cgs_delay *d, bool maxmin,
			 double pct, bool first)
{
	buf_printf(b, "%s\"%s\":{\"count\":%" PRIu64, first ? "" : ",",
		   name, count);
	key_u64(b, "total_ns", total);
	key_u64(b, "avg_ns", count ? total / count : 0);
	if (maxmin) {
		key_u64(b, "max_ns", d->max_ns);
		key_u64(b, "min_ns", d->min_ns);
	}
	key_num(b, "percent", pct);
	buf_putc(b, '}');
}

/* One class's delays, flat: delay_<c>_count, _s, _avg_s, _max_s, _min_s
 * (a query without --watch, where the kernel has them), _percent. */
static void put_delay(struct buf *b, const char *name, uint64_t count,
		      uint64_t total, const struct cgs_delay *d, bool maxmin,
		      double pct)
{
	char k[64];

	snprintf(k, sizeof(k), "delay_%s_count", name);
	key_u64(b, k, count);
	snprintf(k, sizeof(k), "delay_%s_s", name);
	key_time(b, k, k, total, 9);
	snprintf(k, sizeof(k), "delay_%s_avg_s", name);
	key_time(b, k, k, count ? total / count : 0, 9);
	if (maxmin) {
		snprintf(k, sizeof(k), "delay_%s_max_s", name);
		key_time(b, k, k, d->max_ns, 9);
		snprintf(k, sizeof(k), "delay_%s_min_s", name);
		key_time(b, k, k, d->min_ns, 9);
	}
	snprintf(k, sizeof(k), "delay_%s_percent", name);
	key_num(b, k, pct);
}

/* The delays per carried class, with the average per delay (total/count)
 * and the share of `whole_ns` spent delayed. prev: the interval's start
 * (deltas), or NULL (totals since the start). */
static void put_delays(struct buf *b, const struct cgs_record *r,
		       const struct cgs_record *prev, uint64_t whole_ns)
{
	unsigned n = tsq_delay_classes();
	bool maxmin = !prev && (r->fields & CGS_HAS_DELAY_MAXMIN);
	bool first = true;

	if (tsq_json_names_12)
		buf_puts(b, ",\"delays\":{");
	for (unsigned c = 0; c < n; c++) {
		const struct cgs_delay *d = &r->delay[c];
		uint64_t count = d->count, total = d->total_ns;
		const char *name = cgs_delay_name(c);

		if (!tsq_delay_carried(r, c) || !name)
			continue;
		if (prev) {
			count = tsq_sub(count, prev->delay[c].count);
			total = tsq_sub(total, prev->delay[c].total_ns);
		}
		if (tsq_json_names_12)
			put_delay_12(b, name, count, total, d, maxmin,
				     tsq_pct(total, whole_ns), first);
		else
			put_delay(b, name, count, total, d, maxmin,
				  tsq_pct(total, whole_ns));
		first = false;
	}
	if (tsq_json_names_12)
		buf_putc(b, '}');
}

/* What the kernel fills for a thread group too. */
static void put_group_fields(struct buf *b, const struct cgs_record *r)
{
	key_time(b, "etime_s", "etime_us", r->etime_us, 6);
	key_time(b, "utime_s", "utime_us", r->utime_us, 6);
	key_time(b, "stime_s", "stime_us", r->stime_us, 6);
	key_u64(b, "nvcsw", r->nvcsw);
	key_u64(b, "nivcsw", r->nivcsw);
}

static void put_task(struct buf *b, const struct tsq_sample *s)
{
	const struct cgs_record *r = &s->rec;

	buf_printf(b, "\"pid\":%" PRIu32, r->pid); /* first: no comma */
	key_u64(b, "tgid", r->tgid);
	key_u64(b, "ppid", r->ppid);
	key_str(b, "comm", s->comm);
	key_u64(b, "uid", r->uid);
	key_u64(b, "gid", r->gid);
	key_u64(b, "version", r->version);
	key_u64(b, "layout", r->layout);
	key_as(b, "btime", "btime_s", r->btime_s);
	put_group_fields(b, r);
	key_time(b, "cpu_run_real_s", "cpu_run_real_ns", r->cpu_run_real_ns,
		 9);
	key_time(b, "cpu_run_virtual_s", "cpu_run_virtual_ns",
		 r->cpu_run_virtual_ns, 9);
	key_u64(b, "minflt", r->minflt);
	key_u64(b, "majflt", r->majflt);
	key_kib(b, "hiwater_rss_bytes", "hiwater_rss_kb", r->hiwater_rss_kb);
	key_kib(b, "hiwater_vm_bytes", "hiwater_vm_kb", r->hiwater_vm_kb);
	key_as(b, "read_char_bytes", "read_char", r->read_char);
	key_as(b, "write_char_bytes", "write_char", r->write_char);
	key_u64(b, "read_syscalls", r->read_syscalls);
	key_u64(b, "write_syscalls", r->write_syscalls);
	key_u64(b, "read_bytes", r->read_bytes);
	key_u64(b, "write_bytes", r->write_bytes);
	key_u64(b, "cancelled_write_bytes", r->cancelled_write_bytes);
	put_delays(b, r, NULL, r->etime_us * 1000u);
}

void tsq_json_record(struct buf *b, const struct tsq_sample *s,
		     const struct tsq_sample *threads, unsigned n)
{
	const struct cgs_record *r = &s->rec;

	if (r->kind != CGS_KIND_TGID) {
		put_head(b, "task", s->real_ns);
		buf_putc(b, ',');
		put_task(b, s);
		buf_puts(b, "}\n");
		return;
	}
	put_head(b, "tgid", s->real_ns);
	key_u64(b, "tgid", r->tgid);
	key_str(b, "comm", s->comm);
	key_u64(b, "version", r->version);
	put_group_fields(b, r);
	put_delays(b, r, NULL, r->etime_us * 1000u);
	if (threads) {
		buf_puts(b, ",\"threads\":[");
		for (unsigned i = 0; i < n; i++) {
			buf_puts(b, i ? ",{" : "{");
			put_task(b, &threads[i]);
			buf_putc(b, '}');
		}
		buf_putc(b, ']');
	}
	buf_puts(b, "}\n");
}

void tsq_json_delta(struct buf *b, const struct tsq_sample *prev,
		    const struct tsq_sample *cur, unsigned long long seq)
{
	const struct cgs_record *p = &prev->rec, *r = &cur->rec;
	bool task = r->kind != CGS_KIND_TGID;
	uint64_t wall = cur->mono_ns - prev->mono_ns;
	uint64_t du = tsq_sub(r->utime_us, p->utime_us);
	uint64_t ds = tsq_sub(r->stime_us, p->stime_us);

	put_head(b, "interval", cur->real_ns);
	key_u64(b, "seq", seq);
	key_u64(b, task ? "pid" : "tgid", task ? r->pid : r->tgid);
	key_str(b, "comm", cur->comm);
	key_time(b, "wall_s", "wall_ns", wall, 9);
	key_time(b, "utime_s", "utime_us", du, 6);
	key_time(b, "stime_s", "stime_us", ds, 6);
	key_num(b, "cpu_percent", tsq_pct((du + ds) * 1000u, wall));
	key_u64(b, "nvcsw", tsq_sub(r->nvcsw, p->nvcsw));
	key_u64(b, "nivcsw", tsq_sub(r->nivcsw, p->nivcsw));
	if (task) {
		key_time(b, "cpu_run_real_s", "cpu_run_real_ns",
			 tsq_sub(r->cpu_run_real_ns, p->cpu_run_real_ns), 9);
		key_time(b, "cpu_run_virtual_s", "cpu_run_virtual_ns",
			 tsq_sub(r->cpu_run_virtual_ns,
				 p->cpu_run_virtual_ns), 9);
		key_u64(b, "minflt", tsq_sub(r->minflt, p->minflt));
		key_u64(b, "majflt", tsq_sub(r->majflt, p->majflt));
		key_as(b, "read_char_bytes", "read_char",
		       tsq_sub(r->read_char, p->read_char));
		key_as(b, "write_char_bytes", "write_char",
		       tsq_sub(r->write_char, p->write_char));
		key_u64(b, "read_bytes",
			tsq_sub(r->read_bytes, p->read_bytes));
		key_u64(b, "write_bytes",
			tsq_sub(r->write_bytes, p->write_bytes));
	}
	put_delays(b, r, p, wall);
	buf_puts(b, "}\n");
}

void tsq_json_cgroup(struct buf *b, const char *dir,
		     const struct cgs_task_states *cs, uint64_t real_ns,
		     unsigned long long seq)
{
	put_head(b, "cgroup", real_ns);
	if (seq)
		key_u64(b, "seq", seq);
	key_str(b, "cgroup", dir);
	key_u64(b, "nr_sleeping", cs->nr_sleeping);
	key_u64(b, "nr_running", cs->nr_running);
	key_u64(b, "nr_stopped", cs->nr_stopped);
	key_u64(b, "nr_uninterruptible", cs->nr_uninterruptible);
	key_u64(b, "nr_io_wait", cs->nr_io_wait);
	buf_puts(b, "}\n");
}
