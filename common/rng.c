#include <math.h>

#include "rng.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void hb_rng_seed(struct hb_rng *r, uint64_t seed, uint64_t stream)
{
	/* Mix the stream id in through a second SplitMix64 pass so that
	 * (seed, stream) and (seed + 1, stream - 1) give unrelated states. */
	uint64_t x = seed, y;

	y = splitmix64(&x) ^ (stream * 0xd1342543de82ef95ULL + 0x2545f4914f6cdd1dULL);
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&y);
	if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
		r->s[0] = 1;
	r->have_spare = 0;
	r->spare = 0.0;
}

uint64_t hb_rng_u64(struct hb_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

void hb_rng_skip(struct hb_rng *r, long n)
{
	/* The state update of hb_rng_u64 alone, in one loop: callers that
	 * must keep a stream aligned skip hundreds of draws at a time. */
	uint64_t s0 = r->s[0], s1 = r->s[1], s2 = r->s[2], s3 = r->s[3];

	for (; n > 0; n--) {
		uint64_t t = s1 << 17;

		s2 ^= s0;
		s3 ^= s1;
		s1 ^= s2;
		s0 ^= s3;
		s2 ^= t;
		s3 = rotl(s3, 45);
	}
	r->s[0] = s0;
	r->s[1] = s1;
	r->s[2] = s2;
	r->s[3] = s3;
}

double hb_rng_uniform(struct hb_rng *r)
{
	return (double)(hb_rng_u64(r) >> 11) * 0x1.0p-53;
}

uint64_t hb_rng_below(struct hb_rng *r, uint64_t n)
{
	uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;

	do
		x = hb_rng_u64(r);
	while (x >= limit);
	return x % n;
}

double hb_rng_normal(struct hb_rng *r)
{
	double u, v, s, f;

	if (r->have_spare) {
		r->have_spare = 0;
		return r->spare;
	}
	do {
		u = 2.0 * hb_rng_uniform(r) - 1.0;
		v = 2.0 * hb_rng_uniform(r) - 1.0;
		s = u * u + v * v;
	} while (s >= 1.0 || s == 0.0);
	f = sqrt(-2.0 * log(s) / s);
	r->spare = v * f;
	r->have_spare = 1;
	return u * f;
}

double hb_rng_exponential(struct hb_rng *r, double rate)
{
	/* 1 - U lies in (0, 1], so log never sees zero. */
	return -log(1.0 - hb_rng_uniform(r)) / rate;
}
