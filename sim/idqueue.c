/*
 * idqueue.c: the job-id FIFO of idqueue.h.
 */
#include <stdlib.h>

#include "idqueue.h"

int hb_idq_push(struct hb_idq *q, int id)
{
	if (q->n == q->cap) {
		int ncap = q->cap ? 2 * q->cap : 64;
		int *nv = malloc(sizeof(int) * (size_t)ncap);

		if (!nv)
			return -1;
		for (int k = 0; k < q->n; k++)
			nv[k] = q->v[(q->head + k) % q->cap];
		free(q->v);
		q->v = nv;
		q->head = 0;
		q->cap = ncap;
	}
	q->v[(q->head + q->n) % q->cap] = id;
	q->n++;
	return 0;
}

int hb_idq_front(const struct hb_idq *q)
{
	return q->v[q->head];
}

void hb_idq_pop(struct hb_idq *q)
{
	q->head = (q->head + 1) % q->cap;
	q->n--;
}

void hb_idq_free(struct hb_idq *q)
{
	free(q->v);
	q->v = NULL;
	q->head = q->n = q->cap = 0;
}
