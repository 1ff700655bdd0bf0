/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel source on a cgroup v1 hierarchy; see cgid_v1.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute/cgid_v1.h"
#include "util/common.h"

#ifdef CGS_HAVE_BPF
#include <bpf/btf.h>

#include "attribute/bpf/exitcg_abi.h"
#endif

/* Whether `want` is one of the comma-separated names of list [s, end). */
static bool in_list(const char *s, const char *end, const char *want)
{
	size_t wl = strlen(want);
	while (s < end) {
		const char *c = memchr(s, ',', (size_t)(end - s));
		const char *e = c ? c : end;
		if ((size_t)(e - s) == wl && !memcmp(s, want, wl))
			return true;
		s = e + 1;
	}
	return false;
}

/* The next line of f into buf; *whole false when it did not fit (its
 * rest is read and dropped, so it never reads as lines of its own). */
static bool next_line(FILE *f, char *buf, size_t n, bool *whole)
{
	if (!fgets(buf, (int)n, f))
		return false;
	size_t l = strlen(buf);
	*whole = !l || buf[l - 1] == '\n' || feof(f);
	if (!*whole) {
		int c;
		while ((c = getc(f)) != EOF && c != '\n')
			;
	}
	return true;
}

int cgsi_cgv1_hier_id(const char *path, const char *hier)
{
	FILE *f = fopen(path, "re");
	char line[PATH_MAX + 256];
	bool v2 = !strcmp(hier, "v2");
	int id = -1;
	bool whole;
	if (!f)
		return -1;
	/* a line longer than a cgroup path's is not the kernel's: skipped */
	while (id < 0 && next_line(f, line, sizeof(line), &whole)) {
		if (!whole)
			continue;
		char *end;
		long v = strtol(line, &end, 10);
		if (end == line || v < 0 || v > INT32_MAX || *end != ':')
			continue;
		char *list = end + 1, *lend = strchr(list, ':');
		if (!lend)
			continue;
		if (v2 ? lend == list : in_list(list, lend, hier))
			id = (int)v;
	}
	fclose(f);
	return id;
}

int cgsi_cgv1_ssid(const char *path, const char *ctrl, int *hier_out)
{
	FILE *f = fopen(path, "re");
	char line[256], name[64];
	int idx = 0, found = -1, hier;
	bool whole;
	if (!f)
		return -1;
	while (found < 0 && next_line(f, line, sizeof(line), &whole)) {
		if (line[0] == '#')
			continue;
		if (whole && sscanf(line, "%63s %d", name, &hier) == 2 &&
		    !strcmp(name, ctrl)) {
			found = idx;
			if (hier_out)
				*hier_out = hier;
		}
		idx++;
	}
	fclose(f);
	return found;
}

#ifdef CGS_HAVE_BPF
/* Elements of css_set.subsys[] (CGROUP_SUBSYS_COUNT), 0 if not found. */
static unsigned subsys_count(const struct btf *b)
{
	int id = btf__find_by_name_kind(b, "css_set", BTF_KIND_STRUCT);
	if (id < 0)
		return 0;
	const struct btf_type *t = btf__type_by_id(b, (__u32)id);
	const struct btf_member *mb = btf_members(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, mb++) {
		if (strcmp(btf__name_by_offset(b, mb->name_off), "subsys"))
			continue;
		const struct btf_type *a = btf__type_by_id(b, mb->type);
		return a && btf_is_array(a) ? btf_array(a)->nelems : 0;
	}
	return 0;
}

int cgsi_cgv1_plan(const struct cgsi_cg_mount *m, const char *proc_self_cgroup,
		   const char *proc_cgroups, const char *btf_path,
		   struct cgsi_cgv1 *p, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->hier = cgsi_cgv1_hier_id(proc_self_cgroup ? proc_self_cgroup
						     : "/proc/self/cgroup",
				    m->hier);
	if (p->hier <= 0) {
		snprintf(err, errlen, "the cgroup v1 hierarchy %s is not in "
			 "/proc/self/cgroup", m->hier);
		return -ENOENT;
	}
	int on = -1;
	p->ssid = strncmp(m->hier, "name=", 5)
			  ? cgsi_cgv1_ssid(proc_cgroups ? proc_cgroups
							: "/proc/cgroups",
					   m->hier, &on)
			  : -1;
	if (on != p->hier)
		p->ssid = -1; /* not the controller of that hierarchy */
	struct btf *b = btf__parse_raw(btf_path ? btf_path
					       : "/sys/kernel/btf/vmlinux");
	if (!b) {
		snprintf(err, errlen, "the kernel's BTF is unreadable (%s)",
			 strerror(errno));
		return -EOPNOTSUPP;
	}
	if (p->ssid >= 0 && (unsigned)p->ssid >= subsys_count(b))
		p->ssid = -1;
	p->kfunc = btf__find_by_name_kind(b, "bpf_task_get_cgroup1",
					  BTF_KIND_FUNC) >= 0 &&
		   btf__find_by_name_kind(b, "bpf_cgroup_release",
					  BTF_KIND_FUNC) >= 0;
	btf__free(b);
	if (p->ssid >= 0) {
		p->how = CGSK_HOW_CSS;
		return 0;
	}
	if (p->kfunc) {
		p->how = CGSK_HOW_KFUNC;
		return 0;
	}
	snprintf(err, errlen, "the cgroup v1 hierarchy %s has no controller "
		 "whose css the program could read, and the kernel has no "
		 "bpf_task_get_cgroup1 (Linux 6.8+)", m->hier);
	return -EOPNOTSUPP;
}
#endif
