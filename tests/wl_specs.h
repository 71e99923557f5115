/* wl_specs.h: small hand-written workload specs (one per layer kind) that
 * the executor, checkpoint and memory tests share.  Header-only; include
 * after workload.h.  Each spec fills caller-owned layers (8 is enough). */
#ifndef HB_TEST_WL_SPECS_H
#define HB_TEST_WL_SPECS_H

#include <stdio.h>

#include "workload.h"

static inline struct hb_wl_layer L_dense(const char *name, long tok, long in, long out, int relu, int res)
{
	struct hb_wl_layer l = { .kind = HB_WL_DENSE, .tokens = tok, .in = in, .out = out, .relu = relu,
				 .residual = res };

	snprintf(l.name, sizeof(l.name), "%s", name);
	l.params = (double)in * out;
	l.flops = 2.0 * tok * in * out;
	return l;
}

static inline void finish_spec(struct hb_workload *w, const char *name, enum hb_wl_optimizer opt)
{
	snprintf(w->model, sizeof(w->model), "%s", name);
	w->params = 0;
	for (int l = 0; l < w->nlayers; l++)
		w->params += w->layers[l].params;
	w->nbuckets = 1;
	w->buckets[0] = 4 * w->params;
	w->optimizer = opt;
	w->lr = opt == HB_WL_ADAM ? 1e-2 : 0.05;
	w->momentum = 0.9;
	w->weight_decay = 1e-3;
	w->beta1 = 0.9;
	w->beta2 = 0.999;
	w->eps = 1e-8;
	w->scale = 1;
}

/* Transformer-like: embedding, QKV, attention, residual projection, MLP. */
static inline void spec_transformer(struct hb_workload *w, struct hb_wl_layer *ls)
{
	int n = 0;

	ls[n] = (struct hb_wl_layer){ .kind = HB_WL_EMBEDDING, .name = "emb", .tokens = 4, .in = 1, .out = 8,
				      .vocab = 11, .params = 88 };
	n++;
	ls[n++] = L_dense("qkv", 4, 8, 24, 0, 0);
	ls[n] = (struct hb_wl_layer){ .kind = HB_WL_ATTENTION, .name = "attn", .tokens = 4, .in = 24, .out = 8,
				      .heads = 2 };
	n++;
	ls[n++] = L_dense("proj", 4, 8, 8, 0, 1);
	ls[n++] = L_dense("ffn1", 4, 8, 12, 1, 0);
	ls[n++] = L_dense("ffn2", 4, 12, 3, 0, 0);
	w->layers = ls;
	w->nlayers = n;
	finish_spec(w, "t-transformer", HB_WL_ADAM);
}

/* CNN-like: convs with taps, a residual 1x1, a resize to a smaller grid,
 * then a dense head after another resize. */
static inline void spec_cnn(struct hb_workload *w, struct hb_wl_layer *ls)
{
	int n = 0;

	ls[n] = (struct hb_wl_layer){ .kind = HB_WL_CONV, .name = "c1", .tokens = 6, .in = 3, .out = 4, .taps = 3,
				      .relu = 1, .params = 36 };
	n++;
	ls[n] = (struct hb_wl_layer){ .kind = HB_WL_CONV, .name = "c2", .tokens = 6, .in = 4, .out = 4, .taps = 1,
				      .residual = 1, .params = 16 };
	n++;
	ls[n] = (struct hb_wl_layer){ .kind = HB_WL_CONV, .name = "c3", .tokens = 2, .in = 8, .out = 5, .taps = 3,
				      .params = 120 };
	n++;
	ls[n++] = L_dense("fc", 1, 7, 3, 0, 0);
	w->layers = ls;
	w->nlayers = n;
	finish_spec(w, "t-cnn", HB_WL_SGD);
}

static inline void spec_lstm(struct hb_workload *w, struct hb_wl_layer *ls)
{
	int n = 0;

	ls[n] = (struct hb_wl_layer){ .kind = HB_WL_LSTM, .name = "l1", .tokens = 3, .in = 4, .out = 5,
				      .params = 4 * 5 * 9 };
	n++;
	ls[n] = (struct hb_wl_layer){ .kind = HB_WL_LSTM, .name = "l2", .tokens = 3, .in = 5, .out = 5,
				      .params = 4 * 5 * 10 };
	n++;
	ls[n++] = L_dense("out", 1, 15, 2, 0, 0);
	w->layers = ls;
	w->nlayers = n;
	finish_spec(w, "t-lstm", HB_WL_SGD);
}

#endif
