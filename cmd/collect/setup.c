/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Validate every option against the system before anything is registered:
 * each failure is one line naming the option, exit status 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector.h"
#include "output.h"
#include "workloads.h"
#include "webconfig.h"

/* --format once resolved: the only place the formats are told apart. */
static const struct out_ops *const formats[] = {
	[TSC_FMT_TABLE] = &out_table_ops,
	[TSC_FMT_JSONL] = &out_jsonl_ops,
	[TSC_FMT_CSV] = &out_csv_ops,
};

static int open_out(const char *path, int *fd)
{
	*fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	return *fd < 0 ? -errno : 0;
}

/* --check: could path be opened for writing? Neither truncated nor left
 * behind; *size: what is in it (-1: it does not exist). 0 or -errno. */
static int probe_out(const char *path, long long *size)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);

	*size = -1;
	if (fd < 0 && errno == ENOENT) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0)
			unlink(path);
	} else if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		*size = st.st_size;
	}
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* --check: --output and --record, as open_files would find them. */
static int probe_files(struct tsc *c, const struct tsc_opts *o)
{
	long long size;
	int r;

	if (o->output) {
		c->check_item = "output";
		r = probe_out(o->output, &size);
		if (r < 0)
			return tsc_usage_error("--output", "%s: %s", o->output,
					       strerror(-r));
		tsc_check_ok(c, "%s: writable", o->output);
	}
	if (o->record) {
		c->check_item = "record";
		r = probe_out(o->record, &size);
		if (r < 0)
			return tsc_usage_error("--record", "%s: %s", o->record,
					       strerror(-r));
		if (size > 0 && !o->force)
			return tsc_usage_error("--record", "%s: a file that is "
					       "not empty is there (--force)",
					       o->record);
		tsc_check_ok(c, "%s: writable%s", o->record, size > 0 ?
			     " (--force: would be replaced)" : "");
	}
	return 0;
}

/* --record: an existing capture is not truncated unless forced (an empty
 * file, a FIFO or a device is fine). 0, -EEXIST or -errno. */
static int open_capture(const char *path, bool force, int *fd)
{
	struct stat st;

	*fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (*fd < 0)
		return -errno;
	if (fstat(*fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		if (!force) {
			close(*fd);
			*fd = -1;
			return -EEXIST;
		}
		if (ftruncate(*fd, 0) < 0) {
			int r = -errno;
			close(*fd);
			*fd = -1;
			return r;
		}
	}
	return 0;
}

struct probe {
	const char *path;
};

/* Can we create the temp file next to the textfile and rename over it?
 * 0 or -errno (run by priv_run_as as the --user). */
static int probe_textfile(void *arg)
{
	const struct probe *p = arg;
	char *dup = strdup(p->path);
	if (!dup)
		return -ENOMEM;
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s/.taskstat-collect-probe.%ld",
		 dirname(dup), (long)getpid());
	free(dup);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	unlink(tmp);
	struct stat st;
	if (stat(p->path, &st) == 0 && S_ISDIR(st.st_mode))
		return -EISDIR;
	return 0;
}

/* 0, or TSC_EXIT_USAGE after tsc_usage_error(). */
static int bind_listen(struct tsc_opts *o, int *out)
{
	struct addrinfo hints, *res = NULL, *ai;
	const char *host = o->listen_host && *o->listen_host ? o->listen_host
							     : NULL;
	int fd = -1, err = 0, one = 1;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if (!host)
		hints.ai_family = AF_INET6; /* dual-stack any address */
	int r = getaddrinfo(host, o->listen_port, &hints, &res);
	if (r != 0 && !host) {
		hints.ai_family = AF_INET;
		r = getaddrinfo(host, o->listen_port, &hints, &res);
	}
	if (r != 0) /* a host name (addresses are checked in options.c) */
		return tsc_usage_error("--listen", "%s: cannot look up '%s': "
				       "%s", o->listen, host ? host : "",
				       gai_strerror(r));
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6 && !host) {
			int zero = 0;
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
				   sizeof(zero));
		}
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, 64) == 0)
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return tsc_usage_error("--listen", "cannot listen on %s: %s",
				       o->listen, strerror(err));
	*out = fd;
	return 0;
}

/* "http[s]://HOST:PORT" of the bound socket (port 0 picks a free one),
 * or "" */
static void listen_url(int fd, bool tls, char *out, size_t outlen)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[NI_MAXHOST], serv[NI_MAXSERV];

	*out = '\0';
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0 ||
	    getnameinfo((struct sockaddr *)&ss, len, host, sizeof(host), serv,
			sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV))
		return;
	bool v6 = strchr(host, ':') != NULL;
	snprintf(out, outlen, "http%s://%s%s%s:%s", tls ? "s" : "",
		 v6 ? "[" : "", host, v6 ? "]" : "", serv);
}

/* Print where the metrics are served, or (--check) would be. */
static void say_listen(struct tsc *c)
{
	char url[NI_MAXHOST + NI_MAXSERV + 16];

	listen_url(c->net.listen_fd, c->net.web && c->net.web->tls, url, sizeof(url));
	if (!*url)
		return;
	if (c->o->check)
		tsc_check_ok(c, "%s/metrics: bound", url);
	else
		tsc_info("serving metrics on %s/metrics\n", url);
}

/* The hierarchy: a throw-away rollup proves it can be used. */
static int probe_rollup(struct tsc *c, const struct tsc_opts *o)
{
	struct cgs_rollup_opts ro;
	memset(&ro, 0, sizeof(ro));
	ro.sz = sizeof(ro);
	ro.shards = 1;
	ro.hierarchy = o->hierarchy;
	ro.flags = o->no_tgid ? CGS_NO_TGID : 0;
	ro.attribution = CGS_ATTRIBUTION_PROC; /* no BPF for a probe */
	/* --replay keeps this one: the same distributions and commands */
	if (!o->no_histograms)
		ro.flags |= CGS_ROLLUP_HISTOGRAMS;
	if (o->no_delay_peaks)
		ro.flags |= CGS_ROLLUP_NO_DELAY_PEAKS;
	ro.comms = o->comms ? TSC_COMMS_SUMMARY(o->comms) : 0;
	ro.exes = o->exes ? TSC_COMMS_SUMMARY(o->exes) : 0;
	int r = cgs_rollup_new(&c->src.rollup, &ro);
	if (r < 0) {
		if (o->hierarchy)
			return tsc_usage_error("--hierarchy", "'%s': %s",
					       o->hierarchy, r == -ENOENT ?
					       "no such cgroup hierarchy is "
					       "mounted" : cgs_strerror(r));
		tsc_err("cannot find a cgroup hierarchy: %s\n",
			cgs_strerror(r));
		return TSC_EXIT_ERROR;
	}
	return 0;
}

/* --output and --record, opened last. */
static int open_files(struct tsc *c, const struct tsc_opts *o)
{
	int r;
	if (o->check)
		return probe_files(c, o);
	if (o->output) {
		struct stat st;
		if (stat(o->output, &st) == 0 && S_ISDIR(st.st_mode))
			return tsc_usage_error("--output", "%s: %s", o->output,
					       strerror(EISDIR));
		r = open_out(o->output, &c->io.out_fd);
		if (r < 0)
			return tsc_usage_error("--output", "%s: %s", o->output,
					       strerror(-r));
	}
	if (o->record) {
		r = open_capture(o->record, o->force, &c->io.cap_fd);
		if (r == -EEXIST)
			return tsc_usage_error("--record", "%s: a file that is "
					       "not empty is there: not "
					       "overwriting it (move it away, "
					       "or --force)", o->record);
		if (r < 0)
			return tsc_usage_error("--record", "%s: %s", o->record,
					       strerror(-r));
		tsc_ostate_init(c, TSC_OUT_RECORD, c->io.cap_fd);
	}
	return 0;
}

const struct tsc_export *tsc_export;

/* The handle's initial state: no fd, no output yet, the locks and buffers
 * made, the main output's format and stream mode chosen. */
static void setup_init(struct tsc *c, struct tsc_opts *o)
{
	memset(c, 0, sizeof(*c));
	c->o = o;
	c->io.out_fd = STDOUT_FILENO;
	c->io.cap_fd = -1;
	c->net.listen_fd = -1;
	c->src.wake_fd = -1;
	c->notify.fd = -1;
	c->start_ns = tsc_real_ns();
	pthread_mutex_init(&c->io.out_lock, NULL);
	pthread_mutex_init(&c->io.cap_lock, NULL);
	pthread_mutex_init(&c->srv.prom_lock, NULL);
	pthread_mutex_init(&c->net.webstate.lock, NULL);
	buf_init(&c->srv.prom);
	buf_init(&c->srv.pb);
	buf_init(&c->srv.json);
	buf_init(&c->io.snap);
	buf_init(&c->io.promw);

	enum tsc_format fmt = o->format;
	if (fmt == TSC_FMT_AUTO)
		fmt = !o->output && isatty(STDOUT_FILENO) ? TSC_FMT_TABLE
							  : TSC_FMT_JSONL;
	c->io.out = formats[fmt];
	c->io.stream.on = !o->stream_full;
	c->io.stream.every = o->full_every;
	c->io.stream.full_due = true; /* the first line */
}

int tsc_setup(struct tsc *c, struct tsc_opts *o)
{
	char err[256];
	int r;

	if ((o->listen || o->web_config) && !tsc_export) {
		memset(c, 0, sizeof(*c));
		return tsc_usage_error(o->listen ? "--listen" : "--web-config",
				       "not served by %s", tsc_prog);
	}
	setup_init(c, o);

	c->check_item = "options";
	tsc_check_ok(c, "valid");
	if (o->replay) {
		c->check_item = "replay";
		r = cap_open(&c->src.replay, o->replay, err, sizeof(err));
		if (r < 0)
			return tsc_usage_error("--replay", "%s: %s", o->replay,
					       err);
		tsc_check_ok(c, "%s: a capture", o->replay);
	}
	c->check_item = "cpus";
	if (!o->replay && o->cpus) {
		r = cgs_cpulist_validate(o->cpus, err, sizeof(err));
		if (r < 0)
			return tsc_usage_error("--cpus", "'%s': %s", o->cpus,
					       *err ? err : strerror(-r));
		if (r == 0)
			return tsc_usage_error("--cpus", "'%s' lists no CPU",
					       o->cpus);
	}
	if (o->user) {
		c->check_item = "user";
		r = priv_lookup(o->user, &c->user, err, sizeof(err));
		if (r < 0)
			return tsc_usage_error("--user", "%s", err);
		c->drop = true;
		tsc_check_ok(c, "%s: uid %u, gid %u", o->user,
			     (unsigned)c->user.uid, (unsigned)c->user.gid);
	}
	if (o->textfile) {
		struct probe p = { o->textfile };
		c->check_item = "textfile";
		r = priv_run_as(c->drop ? &c->user : NULL, probe_textfile, &p);
		if (r < 0)
			return tsc_usage_error("--textfile", "%s: %s%s",
					       o->textfile, strerror(-r), c->drop ?
					       " (as the --user)" : "");
		tsc_check_ok(c, "%s: its directory is writable%s",
			     o->textfile, c->drop ? " by the --user" : "");
	}

	c->check_item = "hierarchy";
	r = probe_rollup(c, o);
	if (r)
		return r;
	c->src.hierarchy = cgs_rollup_hierarchy(c->src.rollup);
	tsc_check_ok(c, "%s", c->src.hierarchy ? c->src.hierarchy : "?");
	c->check_item = "workloads";
	r = tsc_workloads_open(c);
	if (r < 0) {
		tsc_err("workload view: %s\n", strerror(-r));
		return TSC_EXIT_ERROR;
	}
	tsc_check_ok(c, "%s", !c->names.wl ? "off" : c->names.ident ? "named from the "
		     "runtimes' state and systemd units" : "systemd units");

	if (o->listen) {
		c->check_item = "listen";
		r = bind_listen(o, &c->net.listen_fd);
		if (r)
			return r;
	}
	if (o->web_config) { /* before --user: the key may be root's only */
		c->check_item = "web-config";
		r = tsc_export->webcfg_load(o->web_config, &c->net.web, err,
					    sizeof(err));
		if (r < 0)
			return tsc_usage_error("--web-config", "%s", err);
		tsc_export->web_loaded(c);
		tsc_export->web_describe(c->net.web, err, sizeof(err));
		tsc_check_ok(c, "%s: %s", o->web_config, err);
	}
	if (o->listen && o->check) {
		c->check_item = "listen";
		say_listen(c);
	}
	/* Files last: a rejected command line leaves none behind. */
	r = open_files(c, o);
	if (r)
		return r;
	tsc_ostate_init(c, TSC_OUT_OUTPUT, c->io.out_fd);
	c->io.ost[TSC_OUT_TEXTFILE].on = o->textfile != NULL;
	if (o->listen && !o->check)
		say_listen(c);
	c->srv.prom_on = o->listen || o->textfile;
	c->srv.json_on = o->listen != NULL; /* GET /snapshot */
	return 0;
}

void tsc_teardown(struct tsc *c)
{
	if (tsc_export) {
		tsc_export->http_stop(c);
		tsc_export->webcfg_free(c->net.web);
	}
	c->net.web = NULL;
	pthread_mutex_destroy(&c->net.webstate.lock);
	cgs_listener_close(c->src.l);
	c->src.l = NULL;
	tsc_workloads_close(c);
	cgs_rollup_free(c->src.rollup);
	c->src.rollup = NULL;
	cap_close(c->src.replay);
	c->src.replay = NULL;
	for (unsigned i = 0; c->src.shards && i < c->src.nshards; i++) {
		buf_free(&c->src.shards[i].ev);
		buf_free(&c->src.shards[i].cap);
		buf_free(&c->src.shards[i].path);
		tsc_hold_free(&c->src.shards[i].hold);
		pthread_mutex_destroy(&c->src.shards[i].lock);
	}
	free(c->src.shards);
	c->src.shards = NULL;
	free(c->src.rcvbuf);
	free(c->src.shard_cpus);
	if (c->net.listen_fd >= 0)
		close(c->net.listen_fd);
	if (c->io.cap_fd >= 0)
		close(c->io.cap_fd);
	if (c->io.out_fd > STDERR_FILENO)
		close(c->io.out_fd);
	if (c->src.wake_fd >= 0)
		close(c->src.wake_fd);
	tsc_notify_close(&c->notify);
	tsc_sink_free(c);
	buf_free(&c->io.snap);
	buf_free(&c->io.promw);
	free(c->src.hostinfo);
	c->src.hostinfo = NULL;
	priv_user_free(&c->user);
}
