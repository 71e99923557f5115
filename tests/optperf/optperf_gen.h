/*
 * optperf_gen.h: random OptPerf instances for tests and benchmarks.
 *
 * Scales follow a ResNet-class job on mixed GPUs: about 0.1 ms forward and
 * 0.2 ms backward per sample on the fastest node, nodes up to 8x slower,
 * millisecond fixed costs, all-reduce times from microseconds to a second,
 * memory caps of 8 to 1024 samples.  Each kind forces one situation so a test
 * can count on covering it (the three regimes of Cannikin §3.3, Appendix A).
 */
#ifndef OPTPERF_GEN_H
#define OPTPERF_GEN_H

#include <stddef.h>

#include "optperf.h"
#include "rng.h"

enum optperf_gen_kind {
	OPTPERF_GEN_ANY = 0,  /* T_o log-uniform over 1e-5..1 s: whatever regime falls out */
	OPTPERF_GEN_COMPUTE,  /* T_o <= (1-γ)·min_i m_i: every node compute-bound at every b */
	OPTPERF_GEN_COMM,     /* T_o > (1-γ)·max_i P_i(cap_i): every node communication-bound */
	OPTPERF_GEN_MIXED,    /* n >= 2: node 0 always compute-bound, node 1 always comm-bound */
	OPTPERF_GEN_SWITCH,   /* T_o puts some node's switch point inside its batch range */
	OPTPERF_GEN_FLOOR,    /* one node with large fixed costs: OptPerf is often its T_i(min_batch) */
	OPTPERF_GEN_KINDS     /* number of kinds */
};

/* Fill node[0..n-1] and *cl (cl->node = node).  n >= 1. */
void optperf_gen_cluster(struct hb_rng *r, size_t n, enum optperf_gen_kind kind,
			 struct hb_optperf_node *node, struct hb_optperf_cluster *cl);

/* A feasible total batch: uniform over [max(1, Σ min_batch), Σ max_batch],
 * or in its top 10 % one time in five so that caps bind. */
long optperf_gen_batch(struct hb_rng *r, const struct hb_optperf_cluster *cl);

#endif
