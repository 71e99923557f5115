/*
 * engine.c: the simulator's event queue, a 1-based binary min-heap.
 *
 * Order is (t, kind, seq): the sequence number makes every key unique, so
 * the pop order is a total order that does not depend on the heap's shape,
 * and equal-time events of one kind come out in the order they were
 * scheduled (FIFO).  The heap grows by doubling and never shrinks; a
 * simulation keeps a few events per job queued, so the memory is small.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define HB_ENGINE_INITIAL_CAP 64

/* Strict "a pops before b". */
static int before(const struct hb_event *a, const struct hb_event *b)
{
	if (a->t != b->t)
		return a->t < b->t;
	if (a->kind != b->kind)
		return a->kind < b->kind;
	return a->seq < b->seq;
}

void hb_engine_init(struct hb_engine *e)
{
	memset(e, 0, sizeof(*e));
}

void hb_engine_free(struct hb_engine *e)
{
	free(e->heap);
	memset(e, 0, sizeof(*e));
}

static int grow(struct hb_engine *e, struct hb_error *err)
{
	size_t cap = e->cap ? e->cap * 2 : HB_ENGINE_INITIAL_CAP;
	struct hb_event *h;

	if (cap <= e->cap || cap > (size_t)-1 / sizeof(*h))
		return hb_runtime_error(err, "event queue: cannot grow beyond %zu events", e->n);
	h = realloc(e->heap, cap * sizeof(*h));
	if (!h)
		return hb_runtime_error(err, "event queue: out of memory growing to %zu events", cap - 1);
	e->heap = h;
	e->cap = cap;
	return 0;
}

int hb_engine_schedule(struct hb_engine *e, double t, int kind, int job, uint64_t gen, struct hb_error *err)
{
	struct hb_event ev;
	size_t i;

	if (kind < 0 || kind >= HB_EV_NKINDS)
		return hb_input_error(err, "event queue: event kind %d for job %d is not one of 0..%d", kind, job,
				      HB_EV_NKINDS - 1);
	if (!isfinite(t))
		return hb_input_error(err, "event queue: event time %g s (kind %d, job %d) is not finite", t, kind,
				      job);
	if (t < e->now)
		return hb_input_error(err,
				      "event queue: event time %.17g s (kind %d, job %d) is earlier than the "
				      "current time %.17g s: time would run backwards",
				      t, kind, job, e->now);
	/* Slot 0 is unused, so n + 1 slots must fit after the insert. */
	if (e->n + 2 > e->cap && grow(e, err) < 0)
		return -1;
	ev.t = t;
	ev.seq = e->next_seq++;
	ev.kind = kind;
	ev.job = job;
	ev.gen = gen;
	/* Sift up: move parents down until ev's place is found. */
	for (i = ++e->n; i > 1 && before(&ev, &e->heap[i / 2]); i /= 2)
		e->heap[i] = e->heap[i / 2];
	e->heap[i] = ev;
	return 0;
}

int hb_engine_peek(const struct hb_engine *e, struct hb_event *ev)
{
	if (e->n == 0)
		return 0;
	*ev = e->heap[1];
	return 1;
}

int hb_engine_pop(struct hb_engine *e, struct hb_event *ev)
{
	struct hb_event last;
	size_t i, c;

	if (e->n == 0)
		return 0;
	*ev = e->heap[1];
	last = e->heap[e->n--];
	/* Sift the former last element down from the root. */
	for (i = 1; (c = 2 * i) <= e->n; i = c) {
		if (c < e->n && before(&e->heap[c + 1], &e->heap[c]))
			c++;
		if (!before(&e->heap[c], &last))
			break;
		e->heap[i] = e->heap[c];
	}
	if (e->n > 0)
		e->heap[i] = last;
	e->now = ev->t;
	e->popped++;
	return 1;
}
