/*
 * results_writer.c: a result stream's rows written on a thread of their
 * own (results_priv.h, "The writer thread"), so that a replay's events and
 * samples go into results.db (and events.csv, timeseries.csv) while the
 * simulation goes on, instead of in its time: on the whole Pollux
 * philly.csv under tiresias the inserts are a second of the replay's
 * 2.4 CPU-s.
 *
 * Two batches, double-buffered: the stream's thread copies each record
 * (its detail into the batch's text) into the batch it fills; a full one
 * is handed to the writer, which writes it while the other fills.  The
 * hand-off is the only synchronisation (one mutex, one condition), so the
 * writer alone touches the database and the CSV files between hand-offs,
 * and the stream's thread touches them only after a drain (begin, end,
 * merge, commit: hb_res_writer_drain).  A write that fails is kept in the
 * writer and returned by the next hand-off or drain; the rows after it are
 * dropped, as the command stops with that error.  Records go in the order
 * they came, so the files are the same bytes as written inline.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "results_priv.h"

#define WBATCH_RECS 4096          /* records per batch */
#define WBATCH_TEXT (512 * 1024)  /* detail bytes per batch: a detail is at most a few hundred */

struct wrec {
	int sample;                   /* 0: an event, 1: a sample */
	size_t seq;                   /* its row number in the run */
	struct hb_sim_event_rec ev;   /* detail: an offset into the batch's text until written */
	size_t off;
	struct hb_sim_sample x;
};

struct wbatch {
	struct wrec rec[WBATCH_RECS];
	int n;
	char text[WBATCH_TEXT];
	size_t used;
};

struct hb_res_writer {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct wbatch b[2];
	int cur;                      /* the batch the stream's thread fills */
	struct wbatch *full;          /* handed to the writer; NULL: it is idle */
	int stop;                     /* the writer exits when idle */
	int failed;                   /* under mu: fail holds the first failure */
	struct hb_error fail;
	struct hb_results_stream *st;
};

static void write_batch(struct hb_res_writer *w, struct wbatch *b)
{
	struct hb_error err = { 0 };

	for (int i = 0; i < b->n && !w->failed; i++) {
		struct wrec *r = &b->rec[i];
		int rc;

		if (r->sample) {
			rc = hb_res_stream_put_sample(w->st, r->seq, &r->x, &err);
		} else {
			r->ev.detail = b->text + r->off;
			rc = hb_res_stream_put_event(w->st, r->seq, &r->ev, &err);
		}
		if (rc < 0) {
			pthread_mutex_lock(&w->mu);
			w->failed = 1;
			w->fail = err;
			pthread_mutex_unlock(&w->mu);
		}
	}
	b->n = 0;
	b->used = 0;
}

static void *writer_main(void *arg)
{
	struct hb_res_writer *w = arg;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		struct wbatch *b;

		while (!w->full && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->full)
			break; /* stop, and nothing left */
		b = w->full;
		pthread_mutex_unlock(&w->mu);
		write_batch(w, b);
		pthread_mutex_lock(&w->mu);
		w->full = NULL;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static int writer_start(struct hb_results_stream *st, struct hb_error *err)
{
	struct hb_res_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return hb_runtime_error(err, "results: out of memory");
	w->st = st;
	if (pthread_mutex_init(&w->mu, NULL) != 0) {
		free(w);
		return hb_runtime_error(err, "results: cannot make the writer's lock");
	}
	if (pthread_cond_init(&w->cv, NULL) != 0) {
		pthread_mutex_destroy(&w->mu);
		free(w);
		return hb_runtime_error(err, "results: cannot make the writer's condition");
	}
	if (pthread_create(&w->th, NULL, writer_main, w) != 0) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return hb_runtime_error(err, "results: cannot start the writer thread");
	}
	st->w = w;
	return 0;
}

/* Hand the batch being filled to the writer (waiting for it to finish the
 * other) and start filling the other; the writer's failure, if any. */
static int hand_off(struct hb_res_writer *w, struct hb_error *err)
{
	int failed;

	pthread_mutex_lock(&w->mu);
	while (w->full)
		pthread_cond_wait(&w->cv, &w->mu);
	failed = w->failed;
	if (failed)
		*err = w->fail;
	if (w->b[w->cur].n > 0) {
		w->full = &w->b[w->cur];
		w->cur ^= 1;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return failed ? -1 : 0;
}

/* A free record of the batch being filled, with room for len text bytes. */
static struct wrec *slot(struct hb_results_stream *st, size_t len, struct hb_error *err)
{
	struct wbatch *b;

	if (len > WBATCH_TEXT) {
		hb_runtime_error(err, "results: an event's detail of %zu bytes", len);
		return NULL;
	}
	if (!st->w && writer_start(st, err) < 0)
		return NULL;
	b = &st->w->b[st->w->cur];
	if ((b->n == WBATCH_RECS || b->used + len > WBATCH_TEXT) && hand_off(st->w, err) < 0)
		return NULL;
	b = &st->w->b[st->w->cur];
	return &b->rec[b->n++];
}

int hb_res_writer_event(struct hb_results_stream *st, size_t seq, const struct hb_sim_event_rec *e,
			struct hb_error *err)
{
	size_t len = strlen(e->detail) + 1;
	struct wrec *r = slot(st, len, err);
	struct wbatch *b;

	if (!r)
		return -1;
	b = &st->w->b[st->w->cur];
	r->sample = 0;
	r->seq = seq;
	r->ev = *e;
	r->ev.detail = NULL;
	r->off = b->used;
	memcpy(b->text + b->used, e->detail, len);
	b->used += len;
	return 0;
}

int hb_res_writer_sample(struct hb_results_stream *st, size_t seq, const struct hb_sim_sample *x,
			 struct hb_error *err)
{
	struct wrec *r = slot(st, 0, err);

	if (!r)
		return -1;
	r->sample = 1;
	r->seq = seq;
	r->x = *x;
	return 0;
}

int hb_res_writer_drain(struct hb_results_stream *st, struct hb_error *err)
{
	struct hb_res_writer *w = st->w;
	int failed;

	if (!w)
		return 0;
	if (hand_off(w, err) < 0)
		return -1;
	pthread_mutex_lock(&w->mu);
	while (w->full)
		pthread_cond_wait(&w->cv, &w->mu);
	failed = w->failed;
	if (failed)
		*err = w->fail;
	pthread_mutex_unlock(&w->mu);
	return failed ? -1 : 0;
}

void hb_res_writer_stop(struct hb_results_stream *st)
{
	struct hb_res_writer *w = st->w;

	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
	st->w = NULL;
}
