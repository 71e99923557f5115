/*
 * optperf_oracle.h: brute-force references for the OptPerf solver.
 *
 * They use only Eq. 7 as the paper writes it, T_i(b) = a_i + γP_i +
 * max((1-γ)P_i, T_o) + T_u, and bisection: no branch slopes, no breakpoints,
 * so they share no logic with solver/optperf.c.
 */
#ifndef OPTPERF_ORACLE_H
#define OPTPERF_ORACLE_H

#include <stddef.h>

#include "optperf.h"

/* Eq. 7 for node i, written term by term. */
double optperf_oracle_node_time(const struct hb_optperf_cluster *cl, size_t i, double b);

/* Largest b in [min_batch, max_batch] with T_i(b) <= t (bisection on b), or
 * -1 when even min_batch takes longer than t. */
double optperf_oracle_max_batch(const struct hb_optperf_cluster *cl, size_t i, double t);

/* Smallest t at which the nodes' feasible ranges cover total (bisection on t). */
double optperf_oracle_time(const struct hb_optperf_cluster *cl, double total);

/* Exhaustive integer min-max split for small instances: best[] receives one
 * optimal split, the return value its time. */
double optperf_oracle_int_split(const struct hb_optperf_cluster *cl, long total, long *best);

#endif
