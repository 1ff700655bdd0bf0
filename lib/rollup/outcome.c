/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Exit outcomes, signal names, histogram bounds and quantiles. */
#include "rollup/extra.h"
#include "rollup/wstatus.h"
#include "util/common.h"

enum cgs_exit_outcome cgs_exit_classify(uint32_t status, int *sig)
{
	unsigned s;
	enum cgs_exit_outcome o = cgsi_wstatus(status, &s);
	if (sig)
		*sig = (int)s;
	return o;
}

/* 1.1's name (CGSTATS_1.1), the same function: <cgstats/deprecated.h> */
enum cgs_exit_outcome cgs_exit_outcome(uint32_t status, int *sig)
	__attribute__((alias("cgs_exit_classify")));

/* Linux's numbers (x86, arm and most others); realtime signals from 34,
 * glibc's SIGRTMIN (32 and 33 are reserved by the C library). */
static const char *const signames[CGS_SIGNAL_SLOTS] = {
	NULL, "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT",
	"SIGBUS", "SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2",
	"SIGPIPE", "SIGALRM", "SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT",
	"SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGXCPU",
	"SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR",
	"SIGSYS", "SIG32", "SIG33", "SIGRTMIN", "SIGRTMIN+1", "SIGRTMIN+2",
	"SIGRTMIN+3", "SIGRTMIN+4", "SIGRTMIN+5", "SIGRTMIN+6", "SIGRTMIN+7",
	"SIGRTMIN+8", "SIGRTMIN+9", "SIGRTMIN+10", "SIGRTMIN+11",
	"SIGRTMIN+12", "SIGRTMIN+13", "SIGRTMIN+14", "SIGRTMIN+15",
	"SIGRTMIN+16", "SIGRTMIN+17", "SIGRTMIN+18", "SIGRTMIN+19",
	"SIGRTMIN+20", "SIGRTMIN+21", "SIGRTMIN+22", "SIGRTMIN+23",
	"SIGRTMIN+24", "SIGRTMIN+25", "SIGRTMIN+26", "SIGRTMIN+27",
	"SIGRTMIN+28", "SIGRTMIN+29", "SIGRTMIN+30", "SIGRTMIN+31",
	"SIGRTMIN+32", "SIGRTMIN+33", "SIGRTMIN+34", "SIGRTMIN+35",
	"SIGRTMIN+36", "SIGRTMIN+37", "SIGRTMIN+38", "SIGRTMIN+39",
	"SIGRTMIN+40", "SIGRTMIN+41", "SIGRTMIN+42", "SIGRTMIN+43",
	"SIGRTMIN+44", "SIGRTMIN+45", "SIGRTMIN+46", "SIGRTMIN+47",
	"SIGRTMIN+48", "SIGRTMIN+49", "SIGRTMIN+50", "SIGRTMIN+51",
	"SIGRTMIN+52", "SIGRTMIN+53", "SIGRTMIN+54", "SIGRTMIN+55",
	"SIGRTMIN+56", "SIGRTMIN+57", "SIGRTMIN+58", "SIGRTMIN+59",
	"SIGRTMIN+60", "SIGRTMIN+61", "SIGRTMIN+62", "SIGRTMIN+63",
	"SIGRTMIN+64", "SIGRTMIN+65", "SIGRTMIN+66", "SIGRTMIN+67",
	"SIGRTMIN+68", "SIGRTMIN+69", "SIGRTMIN+70", "SIGRTMIN+71",
	"SIGRTMIN+72", "SIGRTMIN+73", "SIGRTMIN+74", "SIGRTMIN+75",
	"SIGRTMIN+76", "SIGRTMIN+77", "SIGRTMIN+78", "SIGRTMIN+79",
	"SIGRTMIN+80", "SIGRTMIN+81", "SIGRTMIN+82", "SIGRTMIN+83",
	"SIGRTMIN+84", "SIGRTMIN+85", "SIGRTMIN+86", "SIGRTMIN+87",
	"SIGRTMIN+88", "SIGRTMIN+89", "SIGRTMIN+90", "SIGRTMIN+91",
	"SIGRTMIN+92", "SIGRTMIN+93",
};

const char *cgs_signal_name(int sig)
{
	return sig > 0 && sig < CGS_SIGNAL_SLOTS ? signames[sig] : NULL;
}

const char *cgs_hist_name(enum cgs_hist_kind k)
{
	static const char *const n[] = { "lifetime", "process_lifetime", "cpu",
					 "cpu_delay" };
	return (unsigned)k < CGS_ARRAY_SIZE(n) ? n[k] : NULL;
}

/*
 * Bucket bound e (2^(e - 19) s, e = 0..35, word 1 + e's upper bound) is
 * 1e9 * 2^(e - 19) = 5^9 * 2^e / 2^10 ns, 1.86 * 2^(e + 10): it has bit
 * length e + 11, slot b = e + 10 of cgsi_hist_steps (extra.h). Below
 * slot 10 (ns < 1024, under the first bound) every value but 0 is word 1;
 * from slot 46 (ns >= 2^46 > 2^16 s) the last word; no bound there: le
 * the largest value.
 */
#define HSTEP_E(b) ((b) < 10 ? 0 : (b) > 45 ? 0 : (b) - 10)
#define HSTEP_LE(b)                                                           \
	((b) == 0 ? 0                                                         \
	 : (b) < 10 || (b) > 45 ? UINT64_MAX                                  \
				: (1953125ull << HSTEP_E(b)) >> 10)
#define HSTEP_WORD(b)                                                         \
	((b) == 0 ? 0                                                         \
	 : (b) < 10 ? 1                                                       \
	 : (b) > 45 ? CGSI_HIST_BUCKETS - 1                                   \
		    : 1 + HSTEP_E(b))
#define HSTEP4(m, b) m(b), m(b + 1), m(b + 2), m(b + 3)
#define HSTEP16(m, b) HSTEP4(m, b), HSTEP4(m, b + 4), HSTEP4(m, b + 8),        \
		      HSTEP4(m, b + 12)
#define HSTEP64(m) HSTEP16(m, 0), HSTEP16(m, 16), HSTEP16(m, 32), HSTEP16(m, 48)
_Static_assert(CGSI_HIST_FINE_MIN == -19 && CGSI_HIST_FINE_MAX == 16,
	       "cgsi_hist_steps: bounds 2^-19 .. 2^16 s");

const struct cgsi_hist_steps cgsi_hist_steps = {
	.le = { HSTEP64(HSTEP_LE) },
	.word = { HSTEP64(HSTEP_WORD) },
};

/* Classic bound m (of 4^(m - 9) s), ns rounded down: 4^(m - 9) * 1e9 =
 * 5^9 * 2^(2m - 9). */
static uint64_t classic_le_ns(unsigned m)
{
	int e = 2 * (int)m - 9;
	uint64_t f = 1953125u; /* 5^9 */
	return e >= 0 ? f << e : f >> -e;
}

/* Classic bucket m: words 1 + 2m and 2 + 2m (and the zeros in the
 * first); the last the overflow. */
void cgsi_hist_fill(struct cgs_hist *h, const struct cgsi_xset *x,
		    enum cgs_hist_kind k)
{
	enum { NCLASSIC = (CGSI_HIST_BUCKETS - 2) / 2 + 1 };
	_Static_assert(NCLASSIC <= CGS_HIST_SLOTS &&
		       CGSI_HIST_BUCKETS - 1 <= CGS_HIST_FINE_SLOTS &&
		       (CGSI_HIST_BUCKETS - 2) % 2 == 0, "the public arrays");
	const uint64_t *w = x ? x->hist[k] : NULL;
	uint64_t c = 0;
	memset(h, 0, sizeof(*h));
	h->sz = sizeof(*h);
	h->nbuckets = NCLASSIC;
	h->schema = 0;
	h->fine_first = CGSI_HIST_FINE_MIN;
	h->nfine = CGSI_HIST_BUCKETS - 1;
	h->zero_count = w ? w[0] : 0;
	for (unsigned b = 1; w && b < CGSI_HIST_BUCKETS; b++)
		h->fine[b - 1] = w[b];
	c = h->zero_count;
	for (unsigned m = 0; m + 1 < NCLASSIC; m++) {
		c += h->fine[2 * m] + h->fine[2 * m + 1];
		h->le_ns[m] = classic_le_ns(m);
		h->cumulative[m] = c;
	}
	c += h->fine[CGSI_HIST_BUCKETS - 2];
	h->le_ns[NCLASSIC - 1] = UINT64_MAX;
	h->cumulative[NCLASSIC - 1] = c;
	h->count = c;
	h->sum_ns = x ? x->hist_sum_ns[k] : 0;
}

/* Upper bound of fine bucket fine_first + b, ns (as a double). */
static double fine_le_ns(const struct cgs_hist *h, unsigned b)
{
	int e = h->fine_first + (int)b;
	return e >= 0 ? 1e9 * (double)(1ull << e) : 1e9 / (double)(1ull << -e);
}

/* In the fine buckets: 0 .. (the zeros) then each bucket linearly. */
static uint64_t fine_quantile(const struct cgs_hist *h, double rank)
{
	uint64_t below = h->zero_count;
	double lo = 0;
	if ((double)below >= rank && below)
		return 0;
	for (unsigned b = 0; b < h->nfine; b++) {
		uint64_t c = below + h->fine[b];
		if ((double)c >= rank && c > below) {
			if (b + 1 == h->nfine) /* unbounded */
				return (uint64_t)lo;
			double f = (rank - (double)below) /
				   (double)(c - below);
			return (uint64_t)(lo + f * (fine_le_ns(h, b) - lo));
		}
		below = c;
		lo = fine_le_ns(h, b);
	}
	return (uint64_t)lo;
}

uint64_t cgs_hist_quantile(const struct cgs_hist *h, double q)
{
	if (!h || !h->nbuckets || !h->count || h->nbuckets > CGS_HIST_SLOTS)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	double rank = q * (double)h->count;
	if (h->sz >= sizeof(*h) && h->nfine && h->nfine <= CGS_HIST_FINE_SLOTS)
		return fine_quantile(h, rank);
	uint64_t below = 0, lo = 0;
	for (unsigned b = 0; b < h->nbuckets; b++) {
		uint64_t c = h->cumulative[b];
		if ((double)c >= rank && c > below) {
			if (h->le_ns[b] == UINT64_MAX) /* +Inf: the last bound */
				return lo;
			double f = (rank - (double)below) /
				   (double)(c - below);
			return lo + (uint64_t)(f * (double)(h->le_ns[b] - lo));
		}
		below = c;
		if (h->le_ns[b] != UINT64_MAX)
			lo = h->le_ns[b];
	}
	return lo;
}
