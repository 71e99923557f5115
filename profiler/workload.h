/*
 * workload.h: synthetic training steps, one per catalog model.
 *
 * Two halves:
 *
 *  1. The spec (workload_spec.c, pure): a catalog model becomes a list of
 *     layers of its architecture class: transformer blocks with real
 *     attention GEMMs (BERT, GPT3-XL, LLaMA2-7B, ViT), convolutions as
 *     implicit-GEMM shapes per stage (ResNet, YOLOv3, Faster-R-CNN, VGG,
 *     AlexNet), LSTM cells (GNMT, DeepSpeech2), embeddings plus an MLP
 *     (NeuMF).  The shape template comes from the model's "arch" entry in
 *     the catalog; its widths and token counts are solved so that the
 *     workload's parameters and forward FLOPs per sample match the
 *     catalog's (within 5 %, tested for every model).  A scale F < 1
 *     multiplies every width by F, so parameters and FLOPs shrink about
 *     F^2 and any model fits a CPU or a small GPU.
 *
 *  2. The executor (workload.c): the buffers of n virtual stream workers
 *     (VSWs) at a local batch on a device (struct hb_wl_state), and the
 *     phases of one iteration as IIDP runs them: data (host to device),
 *     forward, backward (input and weight gradients; the gradient buffer
 *     is laid out so the buckets come out in reduction order), local
 *     aggregation of the VSWs' gradients into the main VSW, the optimizer
 *     step of the main VSW (SGD with momentum or Adam on real parameter
 *     buffers), and the weight copy to the other VSWs.
 *
 * Data flow between layers: layer l reads a per-sample input of
 * tokens_in(l) x in(l) floats, the previous layer's output of tokens x out.
 * When the two sizes differ (a CNN stage that halves the resolution and
 * doubles the channels), the executor inserts a resize (device.h
 * HB_K_RESIZE_FWD/BWD, a real linear map with its exact adjoint), so
 * gradients stay real gradients of a real function.
 *
 * Parameter layout: one contiguous float32 buffer per VSW, layers in
 * forward order; the gradient buffer has the same layout.  Backward fills
 * it from the end, so reduction order (the order buckets become ready) is
 * from the end of the buffer towards its start: bucket 0 is the last
 * buckets[0] bytes of the buffer, bucket 1 the bytes before them, and so on.
 */
#ifndef HB_WORKLOAD_H
#define HB_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "device.h"
#include "error.h"

enum hb_wl_kind {
	HB_WL_DENSE,      /* y[tok][out] = x[tok][in] W[in][out]; params in*out, flops 2 tok in out */
	HB_WL_CONV,       /* implicit GEMM: IM2COL of x[tok][in] over `taps`, then W[in*taps][out];
			   * params in*taps*out, flops 2 tok in taps out */
	HB_WL_ATTENTION,  /* x[tok][3 d] packed Q|K|V (d = out, heads h, dh = d/h): per head
			   * S = Q K^T / sqrt(dh), P = softmax(S), O = P V; y[tok][d]; no params,
			   * flops 4 tok^2 d (in = 3 out) */
	HB_WL_LSTM,       /* one LSTM layer over tok time steps: gates = x_t Wx + h_{t-1} Wh,
			   * Wx[in][4H], Wh[H][4H] (out = H); params 4H(in+H), flops 8 tok H (in+H) */
	HB_WL_EMBEDDING,  /* first layer only: y[tok][out] = table[idx[tok]], table[vocab][out];
			   * params vocab*out, flops 0; its input is tok int32 indices per sample */
};

struct hb_wl_layer {
	enum hb_wl_kind kind;
	char name[32];            /* "block3.attn", "stage2.conv1", for messages and traces */
	long tokens;              /* rows per sample of input and output (positions, time steps, lookups) */
	long in;                  /* features per token of the input (CONV: channels; ATTENTION: 3 d) */
	long out;                 /* features per token of the output */
	int taps;                 /* CONV: kernel positions (9 = 3x3, 1 = 1x1); else 0 */
	int heads;                /* ATTENTION: heads (divides out); else 0 */
	long vocab;               /* EMBEDDING: table rows; else 0 */
	int relu;                 /* 1: ReLU on the output */
	int residual;             /* 1: output += input (needs in == out) */
	double params;            /* weights of this layer (no biases), from the formulas above */
	double flops;             /* forward FLOPs per sample, from the formulas above */
};

enum hb_wl_optimizer { HB_WL_SGD, HB_WL_ADAM };

struct hb_workload {
	char model[HB_NAME_MAX];  /* catalog name */
	char arch[16];            /* "transformer", "cnn", "lstm", "mlp" */
	double scale;             /* width multiplier applied (1 = the catalog's size) */
	struct hb_wl_layer *layers; /* owned, forward order */
	int nlayers;
	double params;            /* sum of layers' params */
	double flops_per_sample;  /* sum of layers' forward flops */
	double input_floats;      /* floats of input per sample (0 when the first layer is EMBEDDING) */
	long input_indices;       /* int32 indices per sample (EMBEDDING first), else 0 */
	double target_floats;     /* floats of the regression target per sample (= last layer's output) */
	double buckets[HB_MAX_BUCKETS]; /* gradient buckets in bytes, reduction order; sum = 4 params */
	int nbuckets;
	enum hb_wl_optimizer optimizer; /* from the catalog: "sgd" -> SGD, "adam"/"adamw"/"lamb" -> Adam */
	double lr, momentum, weight_decay, beta1, beta2, eps;
	char note[256];           /* what the builder had to adjust (clamped widths), "" if nothing */
};

/* Build the spec of a catalog model at a width scale in (0, 1].  The model
 * must have an "arch" entry in the catalog (every built-in model has).
 * Buckets: the catalog's bucket sizes scaled by the workload's parameter
 * bytes over the catalog's (same count, same proportions).  Fails, naming
 * the model and value, on a missing or inconsistent arch or a bad scale. */
int hb_workload_build(const struct hb_model *m, double scale, struct hb_workload *w, struct hb_error *err);
void hb_workload_free(struct hb_workload *w);

/* Floats per sample kept for backward, summed over layers (tok = tokens):
 *   DENSE      its input, tok x in
 *   CONV       its input and its im2col buffer, tok x in + tok x in x taps
 *   ATTENTION  q, k, v (3 tok x out), the probabilities (heads x tok^2) and
 *              the output (tok x out)
 *   LSTM       gates (4 out per step), cell (out per step), input:
 *              tok x 5 out + tok x in
 *   EMBEDDING  its output, tok x out
 * An output is counted as the next layer's input; resize outputs, gradient
 * ping-pong buffers and backward scratch are not included.  For tests and
 * the memory search. */
double hb_workload_saved_floats(const struct hb_workload *w);

/* ------------------------------------------------------------------------ */
/* Executor                                                                 */

struct hb_wl_state;          /* buffers of n VSWs at one local batch on one device (workload.c) */

/* Allocate weights, gradients, activations and scratch for n_vsw VSWs at
 * local_bs, plus the main VSW's optimizer state, and initialise weights
 * (seeded, identical on every VSW).  Returns 0, HB_DEV_NOMEM when it does
 * not fit (nothing stays allocated), or -1 on error.  Streams are the
 * caller's: one per VSW, streams[0] the main VSW's; the state keeps the
 * pointer array, which must outlive it. */
int hb_wl_state_create(const struct hb_device_ops *ops, struct hb_device *dev, const struct hb_workload *w,
		       int local_bs, int n_vsw, struct hb_stream *const *streams, uint64_t seed,
		       struct hb_wl_state **out, struct hb_error *err);
void hb_wl_state_free(struct hb_wl_state *st);
/* Device bytes the state holds (with its teacher's, task TEACHER). */
double hb_wl_state_bytes(const struct hb_wl_state *st);

/* The phases of one iteration; VSW i runs on streams[i].  They only
 * enqueue (cpu: run) work; the caller synchronises.  Data: batch `iter` of
 * the task (hb_wl_set_task below; seeded inputs and targets) copied from a
 * host staging buffer.  Backward writes VSW i's own gradient buffer.  Aggregate sums
 * every VSW's gradients into the main VSW's (on streams[0]; the caller
 * makes sure all backward passes have finished).  Update: the optimizer
 * step on the main VSW's weights with gradients divided by n_vsw.  Copy:
 * the main VSW's weights to VSW i (i >= 1). */
int hb_wl_data(struct hb_wl_state *st, int vsw, long iter, struct hb_error *err);
int hb_wl_forward(struct hb_wl_state *st, int vsw, struct hb_error *err);
int hb_wl_backward(struct hb_wl_state *st, int vsw, struct hb_error *err);
/* Backward that adds into the gradient buffer instead of overwriting it
 * (gradient accumulation: every micro-step after the first). */
int hb_wl_backward_acc(struct hb_wl_state *st, int vsw, int accumulate, struct hb_error *err);
int hb_wl_aggregate(struct hb_wl_state *st, struct hb_error *err);

/* Overlapping the gradient all-reduce with backward (live runs, as DDP's
 * bucket hooks do).  hb_wl_backward_hooked is hb_wl_backward_acc that
 * calls ready(arg, vsw, lo, err) on the VSW's calling thread after each
 * layer's weight gradient has been enqueued on its stream: once the
 * stream has reached that point, every gradient float of VSW vsw at
 * offsets >= lo is final for this pass (lo falls layer by layer to 0, the
 * last call).  A non-zero return stops backward and is returned as -1.
 * hb_wl_aggregate_range sums VSWs 1..n-1's gradients in [off, off + n)
 * into the main VSW's on stream s (NULL: streams[0]; the caller orders it
 * after those VSWs' backward, by synchronising their streams), so each
 * bucket can be aggregated as soon as every VSW has filled it. */
typedef int hb_wl_grad_ready_fn(void *arg, int vsw, long lo, struct hb_error *err);
int hb_wl_backward_hooked(struct hb_wl_state *st, int vsw, int accumulate, hb_wl_grad_ready_fn *ready, void *arg,
			  struct hb_error *err);
int hb_wl_aggregate_range(struct hb_wl_state *st, struct hb_stream *s, long off, long n, struct hb_error *err);
int hb_wl_update(struct hb_wl_state *st, struct hb_error *err);
int hb_wl_copy(struct hb_wl_state *st, int vsw, struct hb_error *err);

/* The optimizer step on one slice [off, off + n) of the main VSW's
 * parameters (overlapping weight sync updates each bucket as its
 * all-reduce ends): gradients scaled by grad_scale first, Adam's bias
 * correction at `step` (1-based, the same for every slice of one
 * iteration).  hb_wl_update is this over everything with 1/n_vsw. */
int hb_wl_update_range(struct hb_wl_state *st, long off, long n, float grad_scale, long step, struct hb_error *err);
/* The same on stream s (NULL: streams[0]), so a communication thread can
 * update buckets while VSW 0's stream still runs backward (the update of
 * [off, off + n) touches only that slice of weights, gradients and
 * optimizer state; backward of the layers below reads none of it). */
int hb_wl_update_range_on(struct hb_wl_state *st, struct hb_stream *s, long off, long n, float grad_scale, long step,
			  struct hb_error *err);
/* Seed of the data batches (default: the weights' seed), so ranks that
 * share initial weights train on different data.  Drops made and staged
 * batches. */
void hb_wl_set_data_seed(struct hb_wl_state *st, uint64_t seed);
/* Optimizer steps taken (checkpoints keep it). */
long hb_wl_step(const struct hb_wl_state *st);
void hb_wl_set_step(struct hb_wl_state *st, long step);
/* VSW vsw's gradient buffer on the device (all-reduce in place). */
float *hb_wl_grads_device(struct hb_wl_state *st, int vsw);
/* The main VSW's optimizer state as one host array (SGD: momentum;
 * Adam: m then v), hb_wl_opt_floats() floats. */
long hb_wl_opt_floats(const struct hb_wl_state *st);
int hb_wl_read_opt_state(struct hb_wl_state *st, float *host, size_t nfloats, struct hb_error *err);
int hb_wl_write_opt_state(struct hb_wl_state *st, const float *host, size_t nfloats, struct hb_error *err);

/* The main VSW's weights and the last forward's loss (mean squared error
 * of VSW `vsw`'s output, computed on the host): for tests and live runs. */
int hb_wl_read_weights(struct hb_wl_state *st, int vsw, float *host, size_t nfloats, struct hb_error *err);
/* Overwrite VSW vsw's weights (checkpoint restore, gradient checks). */
int hb_wl_write_weights(struct hb_wl_state *st, int vsw, const float *host, size_t nfloats, struct hb_error *err);
/* VSW vsw's gradient buffer (after backward; the main VSW's after aggregate). */
int hb_wl_read_grads(struct hb_wl_state *st, int vsw, float *host, size_t nfloats, struct hb_error *err);
/* Floats in the parameter buffer (layers' weights plus alignment padding)
 * and where a layer's weights start in it. */
long hb_wl_param_floats(const struct hb_wl_state *st);
long hb_wl_param_offset(const struct hb_wl_state *st, int layer);
int hb_wl_loss(struct hb_wl_state *st, int vsw, double *loss, struct hb_error *err);

/* ------------------------------------------------------------------------ */
/* Tasks: what the data phase feeds                                         */

enum hb_wl_task {
	/* The default, what profiling measures: two batches per VSW made once
	 * from the data seed (inputs uniform in [-1, 1) or uniform indices,
	 * targets uniform in [-0.5, 0.5)), batch `iter` is the one of iter's
	 * parity.  Training on it memorises two batches. */
	HB_WL_TASK_FIXED,
	/* A teacher-student regression task.  The teacher is a network of the
	 * same spec with weights from its own seed (initialised as the
	 * student's are), 1 VSW at the student's local batch, forward only
	 * (weights and activations on the same device; no gradients or
	 * optimizer state), and its device bytes count in
	 * hb_wl_state_bytes.  Samples come from an unbounded seeded stream:
	 * batch b of VSW v is a function of (data seed, v, b) only, so every
	 * iteration sees fresh samples, VSWs and ranks (data seeds) differ,
	 * and a restart at a batch index sees the same batches.  Per batch:
	 *   inputs     uniform in [-1, 1) (or uniform indices), as FIXED's
	 *   targets    gain * teacher(inputs) + sigma * N(0, 1), per element
	 * with gain = 1 / RMS of the teacher's outputs over a calibration set
	 * of 64 samples drawn from the teacher seed alone (so every rank and
	 * local batch gets the same task), so the clean targets have unit mean
	 * square.  The last layer's weights absorb the gain, so the student's
	 * architecture can represent the clean targets exactly, and the
	 * loss (0.5 mean squared error) on fresh samples cannot fall below
	 * sigma^2 / 2 (the noise floor). */
	HB_WL_TASK_TEACHER,
};

/* Choose the task (the state starts with HB_WL_TASK_FIXED).  TEACHER
 * builds the teacher now on the student's device with its own stream
 * (teacher_seed must differ from the student's weight seed; sigma >= 0)
 * and runs the calibration; it returns HB_DEV_NOMEM, the teacher not
 * kept, when the teacher does not fit beside the student.  Staged batches
 * are dropped.  FIXED frees the teacher. */
int hb_wl_set_task(struct hb_wl_state *st, enum hb_wl_task task, double sigma, uint64_t teacher_seed,
		   struct hb_error *err);
enum hb_wl_task hb_wl_task(const struct hb_wl_state *st);

/* The teacher's batches count `count` from `first` of every VSW, made now
 * (teacher forwards on the device, noise on the host) into host staging
 * buffers, so that hb_wl_data of those indices is only the host-to-device
 * copy, as with a prefetching data loader: callers that time the data
 * phase call this outside the timed region.  hb_wl_data of a batch that
 * is not staged makes it inside the data phase (the teacher's forward is
 * then part of the phase's time; VSW threads take turns on the teacher).
 * Replaces the batches staged before: the VSWs' streams must have
 * finished their data copies (synchronised) first.  No-op for FIXED. */
int hb_wl_prefetch(struct hb_wl_state *st, long first, int count, struct hb_error *err);

/* VSW vsw's current batch on the device (after hb_wl_data): inputs
 * local_bs x (layer 0's tokens x in) 4-byte values (floats, or int32
 * indices when layer 0 is an EMBEDDING), targets local_bs x (last layer's
 * tokens x out) floats; either may be NULL.  For tests. */
int hb_wl_read_batch(struct hb_wl_state *st, int vsw, void *inputs, float *targets, struct hb_error *err);

#endif
