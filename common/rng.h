/*
 * rng.h: seeded pseudo-random numbers with independent streams.
 *
 * Generator: xoshiro256** (Blackman & Vigna), state seeded by SplitMix64 from
 * (seed, stream).  Each subsystem owns its own struct hb_rng, seeded with the
 * user's --seed and a fixed stream id below, so adding a draw in one subsystem
 * never shifts the numbers another one sees.  Same seed, same stream, same
 * sequence, on every platform: the normal deviates use the polar method with
 * only IEEE-exact operations plus log/sqrt.
 */
#ifndef HB_RNG_H
#define HB_RNG_H

#include <stdint.h>

/* Stream ids: append new ones, never renumber (results would change). */
enum hb_rng_stream {
	HB_STREAM_DEFAULT = 0,
	HB_STREAM_ARRIVALS = 1,    /* synthetic trace arrivals */
	HB_STREAM_JOBMIX = 2,      /* synthetic trace model/size draws */
	HB_STREAM_SIMILARITY = 3,  /* noise on observed gradient similarity */
	HB_STREAM_GNS = 4,         /* noise on observed gradient noise scale */
	HB_STREAM_FAILURES = 5,    /* node failures */
	HB_STREAM_SCHED = 6,       /* scheduler search (genetic algorithm) */
	HB_STREAM_FIT = 7,         /* optimiser restarts in model fits */
	HB_STREAM_PROFILE = 8,     /* measurement noise in generated profiles */
	HB_STREAM_POLLUX_SCHED = 9,/* PolluxSched's genetic search */
	HB_STREAM_POLLUX_OBS = 10, /* a Pollux agent's measurement noise, one stream per job */
};

struct hb_rng {
	uint64_t s[4];     /* xoshiro256** state, never all zero */
	int have_spare;    /* polar method yields two normals; 1 if spare is valid */
	double spare;      /* the second normal deviate */
};

void hb_rng_seed(struct hb_rng *r, uint64_t seed, uint64_t stream);
uint64_t hb_rng_u64(struct hb_rng *r);
/* Advance by n draws of hb_rng_u64 whose values nobody reads (n <= 0: none). */
void hb_rng_skip(struct hb_rng *r, long n);
/* Uniform in [0, 1) with 53 random bits. */
double hb_rng_uniform(struct hb_rng *r);
/* Uniform integer in [0, n), unbiased (rejection); n > 0. */
uint64_t hb_rng_below(struct hb_rng *r, uint64_t n);
/* Standard normal N(0, 1). */
double hb_rng_normal(struct hb_rng *r);
/* Exponential with the given rate (mean 1/rate); rate > 0. */
double hb_rng_exponential(struct hb_rng *r, double rate);

#endif
