/*
 * idqueue.h: a FIFO of job ids (a growing ring buffer), the wait queue of
 * the FIFO-admission arbiters (fifo, jabas-share).  Zero-initialised is
 * empty; hb_idq_free releases it.
 */
#ifndef HB_IDQUEUE_H
#define HB_IDQUEUE_H

struct hb_idq {
	int *v;         /* ring buffer of cap ids, owned */
	int head;       /* index of the oldest id */
	int n;          /* ids queued */
	int cap;        /* allocated entries */
};

/* Append id; -1 when out of memory (the queue is unchanged). */
int hb_idq_push(struct hb_idq *q, int id);
/* The oldest id; the queue must not be empty. */
int hb_idq_front(const struct hb_idq *q);
/* Remove the oldest id; the queue must not be empty. */
void hb_idq_pop(struct hb_idq *q);
void hb_idq_free(struct hb_idq *q);

#endif
