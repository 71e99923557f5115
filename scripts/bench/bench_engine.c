/*
 * bench_engine.c: the simulator's event queue on its own, the ceiling of
 * `hetbatch sim`'s event rate (issue "Philly scale": fifo's events per
 * CPU-second, printed by `sim -v`, within 5x of this).
 *
 *   bench_engine [REPEATS]
 *
 * 82,247 events queued (philly.csv's jobs), then 2,000,000 pop + schedule
 * pairs, each re-scheduling the popped event a random 1 s - 1 day later, as
 * a milestone or round does.  Prints the median CPU time of the pairs and
 * the pairs per CPU-second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"
#include "engine.h"
#include "rng.h"

#define QUEUED 82247
#define PAIRS 2000000

static double cpu_now(void)
{
	return (double)clock() / CLOCKS_PER_SEC;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 11;
	double *sec;
	struct bench_table t;
	char note[96];
	double med;

	if (reps < 1) {
		fprintf(stderr, "bench_engine: REPEATS must be a positive integer, not '%s'\n", argv[1]);
		return 2;
	}
	sec = malloc(sizeof(double) * (size_t)reps);
	if (!sec)
		return 1;
	for (int r = 0; r < reps; r++) {
		struct hb_engine e;
		struct hb_rng rng;
		struct hb_event ev;
		double t0;

		hb_engine_init(&e);
		hb_rng_seed(&rng, 1, 1);
		for (int k = 0; k < QUEUED; k++)
			if (hb_engine_schedule(&e, 86400.0 * 109 * hb_rng_uniform(&rng), HB_EV_ARRIVAL, k, 0, NULL) < 0)
				return 1;
		t0 = cpu_now();
		for (int k = 0; k < PAIRS; k++) {
			if (!hb_engine_pop(&e, &ev))
				return 1;
			if (hb_engine_schedule(&e, ev.t + 1.0 + 86400.0 * hb_rng_uniform(&rng), HB_EV_MILESTONE, ev.job,
					       ev.gen + 1, NULL) < 0)
				return 1;
		}
		sec[r] = cpu_now() - t0;
		hb_engine_free(&e);
	}
	bench_table_start(&t, "event queue (CPU time)", reps);
	med = bench_median(sec, reps);
	snprintf(note, sizeof(note), "%.3g pop+schedule pairs per CPU-second", PAIRS / med);
	bench_row(&t, "engine 82k queued, 2M pairs", sec, reps, note);
	free(sec);
	return 0;
}
