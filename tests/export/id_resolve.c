// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * id_resolve CONTAINERD CRIO DOCKER LOGS CGROUP...: the library's identity
 * resolver (public API only) run with whatever credentials it was started
 * with (id_privs.py runs it as root, as root without capabilities, as
 * nobody, as nobody with CAP_DAC_READ_SEARCH). One line per cgroup:
 * "<source>\t<namespace>/<pod>/<container>\t<image>" ("-" when unnamed),
 * then "io_error <n>".
 */
#include <stdio.h>

#include "cgstats.h"

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: id_resolve CONTAINERD CRIO DOCKER LOGS "
			"CGROUP...\n");
		return 2;
	}
	struct cgs_identity_opts o = {
		.sz = sizeof(o), .containerd_state = argv[1],
		.crio_storage = argv[2], .docker_root = argv[3],
		.kubelet_logs = argv[4],
	};
	struct cgs_identity_src *s;
	if (cgs_identity_src_new(&s, &o) < 0)
		return 1;
	for (int i = 5; i < argc; i++) {
		struct cgs_identity id = { .sz = sizeof(id) };
		if (cgs_identity_src_resolve(s, argv[i], &id) > 0 && id.source[0])
			printf("%s\t%s/%s/%s\t%s\n", id.source, id.k8s_namespace,
			       id.pod, id.container, id.image);
		else
			printf("-\n");
	}
	struct cgs_identity_counts c = { .sz = sizeof(c) };
	cgs_identity_src_get_counts(s, &c);
	printf("io_error %llu\n", (unsigned long long)c.io_error);
	cgs_identity_src_free(s);
	return 0;
}
