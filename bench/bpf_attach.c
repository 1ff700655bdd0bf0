/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bpf_attach OBJECT: load a BPF object, attach its programs, say "ready"
 * on stderr, hold them until SIGTERM/SIGINT. For run-bpfcost.py. */
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_sig(int s)
{
	(void)s;
	stop = 1;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: bpf_attach OBJECT\n");
		return 2;
	}
	struct bpf_object *o = bpf_object__open_file(argv[1], NULL);
	if (!o || bpf_object__load(o)) {
		fprintf(stderr, "bpf_attach: cannot load %s\n", argv[1]);
		return 1;
	}
	struct bpf_program *p;
	int n = 0;
	bpf_object__for_each_program(p, o) {
		if (!bpf_program__attach(p)) {
			fprintf(stderr, "bpf_attach: cannot attach %s\n",
				bpf_program__name(p));
			return 1;
		}
		n++;
	}
	signal(SIGTERM, on_sig);
	signal(SIGINT, on_sig);
	fprintf(stderr, "ready: %d programs\n", n);
	while (!stop)
		pause();
	bpf_object__close(o);
	return 0;
}
