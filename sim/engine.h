/*
 * engine.h: the discrete-event queue of the simulator.
 *
 * A binary min-heap of events ordered by (time, kind priority, sequence
 * number): equal times pop in the priority order of enum hb_event_kind and
 * then in the order they were scheduled, so a run is deterministic.  The
 * engine knows nothing about jobs or policies; the simulator (sim.c)
 * dispatches popped events.  Cancelling is lazy: each event carries the
 * generation of its job at scheduling time and the simulator drops an event
 * whose generation is stale (cheaper than deleting from the heap).
 */
#ifndef HB_ENGINE_H
#define HB_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Kinds in tie-break priority order (lower value pops first at equal time). */
enum hb_event_kind {
	HB_EV_FAILURE = 0,      /* a node fails */
	HB_EV_REALLOC_DONE = 1, /* a job's restart/reallocation finished */
	HB_EV_MILESTONE = 2,    /* a job reaches its next iteration milestone
				   (adaptation point, epoch end or completion) */
	HB_EV_ROUND = 3,        /* a periodic agent or scheduler round */
	HB_EV_ARRIVAL = 4,      /* a job is submitted */
	HB_EV_NKINDS
};

struct hb_event {
	double t;               /* simulated time, s */
	uint64_t seq;           /* scheduling order, breaks remaining ties */
	int kind;               /* enum hb_event_kind */
	int job;                /* job index, -1 for cluster-wide events */
	uint64_t gen;           /* job generation when scheduled (lazy cancel) */
};

struct hb_engine {
	struct hb_event *heap;  /* 1-based binary heap in heap[1..n] */
	size_t n;               /* events queued */
	size_t cap;             /* allocated slots (heap[0] unused) */
	uint64_t next_seq;      /* sequence number of the next schedule */
	double now;             /* time of the last popped event */
	uint64_t popped;        /* events popped so far */
};

void hb_engine_init(struct hb_engine *e);
void hb_engine_free(struct hb_engine *e);
/* Queue an event; t must not be earlier than e->now (a past time is an
 * error: it would make time run backwards). */
int hb_engine_schedule(struct hb_engine *e, double t, int kind, int job, uint64_t gen, struct hb_error *err);
/* Pop the earliest event into *ev and advance now; 0 when empty. */
int hb_engine_pop(struct hb_engine *e, struct hb_event *ev);
/* Earliest event without removing it; 0 when empty. */
int hb_engine_peek(const struct hb_engine *e, struct hb_event *ev);

#endif
