/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * JSON output, one object per line: "task" or "tgid" for a query,
 * "interval" for a --watch interval, "cgroup" for cgroupstats. Field
 * names are struct cgs_record's; durations keep their units in the name.
 */
#include <inttypes.h>
#include <string.h>

#include "escape.h"
#include "query.h"

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

static void put_head(struct buf *b, const char *type, uint64_t real_ns)
{
	buf_printf(b, "{\"type\":\"%s\"", type);
	key_num(b, "time", (double)real_ns / 1e9);
}

/* "delays":{"cpu":{...},...}: per carried class, with the average per
 * delay (total/count) and the share of `whole_ns` spent delayed. prev:
 * the interval's start (deltas), or NULL (totals since the start). */
static void put_delays(struct buf *b, const struct cgs_record *r,
		       const struct cgs_record *prev, uint64_t whole_ns)
{
	unsigned n = tsq_delay_classes();
	bool maxmin = !prev && (r->fields & CGS_HAS_DELAY_MAXMIN);
	bool first = true;

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
		buf_printf(b, "%s\"%s\":{\"count\":%" PRIu64, first ? "" : ",",
			   name, count);
		key_u64(b, "total_ns", total);
		key_u64(b, "avg_ns", count ? total / count : 0);
		if (maxmin) {
			key_u64(b, "max_ns", d->max_ns);
			key_u64(b, "min_ns", d->min_ns);
		}
		key_num(b, "percent", tsq_pct(total, whole_ns));
		buf_putc(b, '}');
		first = false;
	}
	buf_putc(b, '}');
}

/* What the kernel fills for a thread group too. */
static void put_group_fields(struct buf *b, const struct cgs_record *r)
{
	key_u64(b, "etime_us", r->etime_us);
	key_u64(b, "utime_us", r->utime_us);
	key_u64(b, "stime_us", r->stime_us);
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
	key_u64(b, "btime_s", r->btime_s);
	put_group_fields(b, r);
	key_u64(b, "cpu_run_real_ns", r->cpu_run_real_ns);
	key_u64(b, "cpu_run_virtual_ns", r->cpu_run_virtual_ns);
	key_u64(b, "minflt", r->minflt);
	key_u64(b, "majflt", r->majflt);
	key_u64(b, "hiwater_rss_kb", r->hiwater_rss_kb);
	key_u64(b, "hiwater_vm_kb", r->hiwater_vm_kb);
	key_u64(b, "read_char", r->read_char);
	key_u64(b, "write_char", r->write_char);
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
	key_u64(b, "wall_ns", wall);
	key_u64(b, "utime_us", du);
	key_u64(b, "stime_us", ds);
	key_num(b, "cpu_percent", tsq_pct((du + ds) * 1000u, wall));
	key_u64(b, "nvcsw", tsq_sub(r->nvcsw, p->nvcsw));
	key_u64(b, "nivcsw", tsq_sub(r->nivcsw, p->nivcsw));
	if (task) {
		key_u64(b, "cpu_run_real_ns",
			tsq_sub(r->cpu_run_real_ns, p->cpu_run_real_ns));
		key_u64(b, "cpu_run_virtual_ns",
			tsq_sub(r->cpu_run_virtual_ns,
				p->cpu_run_virtual_ns));
		key_u64(b, "minflt", tsq_sub(r->minflt, p->minflt));
		key_u64(b, "majflt", tsq_sub(r->majflt, p->majflt));
		key_u64(b, "read_char", tsq_sub(r->read_char, p->read_char));
		key_u64(b, "write_char",
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
