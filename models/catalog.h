/*
 * catalog.h: GPU types, DNN models and clusters, loaded from validated JSON.
 *
 * The built-in catalog is the JSON in models/data/ compiled into the binary
 * (see models/meson.build); a user's own file is accepted anywhere a built-in
 * name is.  Every number in the data carries a "source" (paper table, artifact
 * file, or "assumed: why"), kept here so `hetbatch catalog` can show it.
 *
 * Lifetime: a struct hb_catalog owns everything it points to; lookups return
 * pointers into it that stay valid until hb_catalog_free().  Clusters refer to
 * GPU types by index into cat->gpus, so a cluster is only meaningful together
 * with the catalog that loaded it.
 */
#ifndef HB_CATALOG_H
#define HB_CATALOG_H

#include <stddef.h>

#include "error.h"

#define HB_NAME_MAX 64
#define HB_TEXT_MAX 256
#define HB_MAX_ALIASES 8
#define HB_MAX_GNS_POINTS 32
#define HB_MAX_BUCKETS 512
#define HB_MAX_OVERRIDES 8

/* JABAS Eq. 8 default price: $3.06 per V100-hour (AWS p3.8xlarge / 4),
 * scaled by FP32 TFLOPS with V100 = 14.13 TFLOPS. */
#define HB_PRICE_V100_PER_HOUR 3.06
#define HB_PRICE_V100_TFLOPS 14.13

struct hb_gpu {
	char name[HB_NAME_MAX];        /* catalog key, lower-case: "v100", "rtx-a6000-pc50" */
	char display[HB_TEXT_MAX];     /* vendor name: "Tesla V100-PCIE-16GB" */
	char aliases[HB_MAX_ALIASES][HB_NAME_MAX]; /* other names profilers report (matched case-insensitively) */
	int naliases;
	char base[HB_NAME_MAX];        /* for a power-capped variant, the uncapped type; else "" */
	double power_cap;              /* fraction of board power, 1.0 = uncapped */
	double fp32_tflops;            /* effective FP32 TFLOPS (after any power cap) */
	double nominal_tflops;         /* FP32 TFLOPS of the uncapped card, used for the Eq. 8 price */
	double tensor_tflops;          /* dense FP16/BF16 tensor-core TFLOPS, 0 if none */
	double tf32_tflops;            /* dense TF32 tensor-core TFLOPS (Ampere and later), 0 if none */
	double mem_bytes;              /* device memory usable by one process, bytes */
	double mem_bw;                 /* memory bandwidth, bytes/s */
	double price_per_hour;         /* $ per GPU-hour (Eq. 8 unless the data overrides it) */
	int price_overridden;          /* 1 if price_per_hour came from the data, not Eq. 8 */
	char source[HB_TEXT_MAX];      /* where the numbers come from */
};

/* Per-cluster settings a paper varies by cluster (JABAS Table 4). */
struct hb_model_override {
	char cluster[HB_NAME_MAX];     /* cluster name the override applies to */
	double gamma;                  /* similarity threshold, < 0 if not overridden */
	long min_gbs, max_gbs;         /* global batch bounds, < 0 if not overridden */
};

/* Architecture template of a model (models.json "arch"): the structure the
 * synthetic workload (profiler/workload.h) follows.  Depth, kernel sizes,
 * heads, vocabularies and classes are fixed here; the widths and token
 * counts are solved by the workload builder so that the layers' parameters
 * and FLOPs match the model's params and flops_per_sample.  Widths in a CNN
 * template are in units of the solved base width c; an LSTM's are in units
 * of the solved hidden width H, except its conv front end's (channels). */
#define HB_ARCH_MAX_CONVS 32      /* convolutions in a CNN's "convs" or "head_convs" */
#define HB_ARCH_MAX_LIST 16       /* residual stages, dense layers, LSTM layers, front-end convs */
#define HB_ARCH_CLASS_MAX 16

/* One convolution of a template: [taps, in, out, level] in the data.
 * CNN: in/out in units of c, 0 = the input channels (in) or the classes
 * (out); it runs at T / 4^level positions, T being the positions of level 0
 * (solved from the FLOPs), so level -1 is the 4x finer stem of an ImageNet
 * ResNet.  LSTM front end: in/out in channels (in 0 = the input channels),
 * and `level` is the positions (e.g. frequency rows) per time step. */
struct hb_arch_conv {
	int taps;                      /* kernel positions: 9 = 3x3, 1 = 1x1, 49 = 7x7 */
	int in, out;                   /* widths, see above */
	int level;                     /* CNN: resolution level; LSTM front end: positions per time step */
};

struct hb_model_arch {
	char cls[HB_ARCH_CLASS_MAX];   /* "transformer", "cnn", "lstm", "mlp"; "" when the data has no "arch" */
	char source[HB_TEXT_MAX * 2];  /* where the template comes from */
	long vocab;                    /* embedding rows (first layer; transformer, lstm, mlp); 0: no embedding */
	long classes;                  /* outputs of the prediction layer; 0: none (transformer, lstm) */
	/* transformer: [embedding or patch DENSE], layers x (qkv, attention, projection, FFN), [head] */
	int layers;                    /* blocks */
	int heads;                     /* attention heads (the solved width d is a multiple) */
	double ffn_ratio;              /* FFN width / d before rounding (4; SwiGLU 8/3) */
	int ffn_matrices;              /* 2: up, down; 3: SwiGLU gate, up, down */
	int ffn_multiple;              /* FFN width rounded up to a multiple of this (LLaMA 256), default 1 */
	long patch_dim;                /* input floats per token of a patch-embedding DENSE (ViT); 0: none */
	int pooled;                    /* 1: the head reads one pooled token (class token); 0: every token */
	/* cnn: convs, residual stages, head_convs, [flatten -> dense... -> classes] */
	int in_channels;               /* image channels (cnn), input features per position (lstm front end) */
	struct hb_arch_conv convs[HB_ARCH_MAX_CONVS]; /* before the stages: a ResNet's stem, a plain net's features */
	int nconvs;
	char block[HB_ARCH_CLASS_MAX]; /* "bottleneck", "basic", "darknet"; "" without stages */
	int width0;                    /* stage 0's width in units of c; stage k has width0 x 2^k at level k */
	int stages[HB_ARCH_MAX_LIST];  /* blocks per stage */
	int nstages;
	struct hb_arch_conv head_convs[HB_ARCH_MAX_CONVS]; /* after the stages: FPN, RPN, detection heads */
	int nhead_convs;
	int flatten;                   /* positions pooled into the dense head (AlexNet 36 = 6x6); 0: no dense head */
	int dense[HB_ARCH_MAX_LIST];   /* hidden dense widths in units of c, before the classes layer */
	int ndense;
	long dense_tokens;             /* rows per sample of the dense head (Faster R-CNN: sampled RoIs), default 1 */
	/* lstm: [embedding], [front-end convs], LSTM layers ([attention projections]), [classes] */
	struct hb_arch_conv frontend[HB_ARCH_MAX_LIST]; /* conv front end (DeepSpeech2) */
	int nfrontend;
	int rnn_in[HB_ARCH_MAX_LIST];  /* input width of each LSTM layer in units of H; 0: the input features */
	int rnn_dirs[HB_ARCH_MAX_LIST];/* 1, or 2 for a bidirectional layer (two LSTM layers) */
	int nrnn;
	int attention_after;           /* LSTM layers before the two H x H attention projections; 0: none */
	/* mlp: embedding, mlp_layers DENSE halving in width, classes */
	int lookups;                   /* embedding lookups per sample (user, item) */
	int mlp_layers;                /* hidden layers */
};

struct hb_model {
	char name[HB_NAME_MAX];        /* catalog key: "resnet50", "gnmt", "pollux-imagenet" */
	char display[HB_TEXT_MAX];     /* "ResNet-50 / ImageNet" */
	char task[HB_NAME_MAX];        /* "image classification", ... */
	char dataset[HB_NAME_MAX];     /* "ImageNet" */
	char family[HB_NAME_MAX];      /* which paper's benchmark set: "jabas", "pollux", "ibm" */
	double params;                 /* trainable parameters */
	double flops_per_sample;       /* forward FLOPs per sample (backward taken as 2x) */
	double act_bytes_per_sample;   /* activation memory kept for backward, bytes/sample */
	double param_bytes;            /* bytes per weight and per gradient on the GPU (4 fp32, 2 fp16) */
	int opt_offload;               /* 1: optimizer state lives in host memory (ZeRO-Offload), not on the GPU */
	double buckets[HB_MAX_BUCKETS];/* gradient bucket sizes in bytes, reduction order */
	int nbuckets;                  /* derived from params and a 25 MiB cap when the data has none */
	char optimizer[HB_NAME_MAX];   /* "sgd", "adam", "adamw", "lamb" */
	double opt_state_bytes_per_param; /* optimizer state, bytes/param (SGD momentum 4, Adam 8) */
	double dataset_size;           /* samples per epoch */
	long m0;                       /* initial / base global batch (Pollux M0, JABAS B_G^init) */
	long min_gbs, max_gbs;         /* global batch bounds (JABAS Table 4) */
	long min_lbs;                  /* minimum local batch; candidate local batches are its multiples */
	long max_lbs;                  /* largest per-GPU batch the model's own study allows, 0 = memory decides
					* (Pollux's YOLOv3: 8; Pollux fidelity's batch rule) */
	char lr_rule[HB_NAME_MAX];     /* "sqrt", "linear", "adascale", "none" */
	double gamma;                  /* SimiGrad/JABAS similarity threshold */
	double adapt_rate;             /* SimiGrad/JABAS alpha (0.1) */
	long adapt_interval;           /* p, iterations between adaptations (100) */
	double target_epochs;          /* target progress in M0-equivalent epochs */
	/* Gradient-noise-scale trajectory: phi (samples) at training fraction f,
	 * piecewise log-linear in between; f strictly increasing from 0 to 1. */
	double gns_frac[HB_MAX_GNS_POINTS];
	double gns_phi[HB_MAX_GNS_POINTS];
	int ngns;
	double sim_noise_sigma;        /* std. dev. of per-observation similarity noise */
	double fwd_fraction;           /* zeta: forward share of fwd+bwd compute */
	double data_s_per_sample;      /* data loading time per sample on one worker, s */
	double bn_sync_s;              /* BN-sync constant per VSW per iteration, s (0 if none) */
	double init_s;                 /* model-specific start-up on restart, s */
	struct hb_model_override overrides[HB_MAX_OVERRIDES];
	int noverrides;
	char source[HB_TEXT_MAX * 4];  /* where the numbers come from */
	struct hb_model_arch arch;     /* architecture template; arch.cls "" when the data has none */
};

struct hb_node {
	char name[HB_NAME_MAX];        /* "node0", or "<group>-<k>" when expanded from a group */
	int gpu;                       /* index into hb_catalog.gpus */
	int ngpus;                     /* GPUs in this node (even for JABAS pairing) */
	double intra_bw;               /* intra-node link bandwidth, bytes/s */
	double inter_bw;               /* node's network bandwidth, bytes/s */
	char intra_link[HB_NAME_MAX];  /* link class name, keys allreduce fits: "pcie3-x16" */
	char inter_link[HB_NAME_MAX];  /* "ib-100g", "ib-56g", "eth-25g" */
	int rack;                      /* rack id, 0 if unspecified */
};

struct hb_cluster {
	char name[HB_NAME_MAX];        /* "jabas-a", "pollux-t4", or the file's "name" */
	char display[HB_TEXT_MAX];
	struct hb_node *nodes;         /* owned */
	int nnodes;
	int ngpus;                     /* total GPUs */
	double storage_bw;             /* checkpoint storage bandwidth, bytes/s */
	double restart_latency_s;      /* fixed start-up cost of a restart, s */
	char source[HB_TEXT_MAX * 2];
};

struct hb_catalog {
	struct hb_gpu *gpus;           /* owned arrays */
	int ngpus;
	struct hb_model *models;
	int nmodels;
	struct hb_cluster *clusters;
	int nclusters;
};

/* Load the built-in catalog (compiled-in JSON).  Never fails on a correct
 * build; the tests validate the embedded data. */
int hb_catalog_load_builtin(struct hb_catalog *cat, struct hb_error *err);
void hb_catalog_free(struct hb_catalog *cat);

/* Load catalog JSON text; `name` is used in messages.  A document may hold any
 * of the top-level arrays "gpus", "models", "clusters"; entries are appended to
 * cat (a name already present is an error).  Exposed for tests and files. */
int hb_catalog_load_json(struct hb_catalog *cat, const char *text, size_t len, const char *name,
			 struct hb_error *err);
int hb_catalog_load_file(struct hb_catalog *cat, const char *path, struct hb_error *err);

/* Lookup by name or alias (case-insensitive); NULL if none. */
const struct hb_gpu *hb_catalog_gpu(const struct hb_catalog *cat, const char *name);
int hb_catalog_gpu_index(const struct hb_catalog *cat, const char *name);
const struct hb_model *hb_catalog_model(const struct hb_catalog *cat, const char *name);
const struct hb_cluster *hb_catalog_cluster(const struct hb_catalog *cat, const char *name);
/* For a name no entry of kind ('g' GPU, 'm' model, 'c' cluster) has: "; did
 * you mean 'resnet50'?" with the closest names by edit distance, or "" when
 * none is close.  Returns buf. */
char *hb_catalog_suggest(const struct hb_catalog *cat, char kind, const char *name, char *buf, size_t size);

/* Accept a built-in name or a path to the user's JSON file (a file holding one
 * object, or a document with a one-element "models"/"clusters" array).  A file
 * is loaded into cat and the pointer refers to the copy there.  Unknown names
 * fail with the list of known ones. */
/* 1 when a name the user gave is meant as a file: it has a '/' or ends in
 * ".json" (any case).  The resolvers below then report what is wrong with
 * the file rather than suggest catalog names. */
int hb_catalog_is_file_name(const char *name_or_path);
int hb_catalog_resolve_model(struct hb_catalog *cat, const char *name_or_path,
			     const struct hb_model **out, struct hb_error *err);
int hb_catalog_resolve_cluster(struct hb_catalog *cat, const char *name_or_path,
			       const struct hb_cluster **out, struct hb_error *err);

/* The most GPUs a cluster may have for each command, so a cluster file of
 * 100,000 GPUs is refused at once instead of running out of memory.  The
 * cost is the allocation search, candidates x nodes (alloc.h), which grows
 * with the square of the nodes; measured with 8-GPU V100 nodes and
 * resnet50: sim --policy jabas 0.7 s / 53 MB at 4096 GPUs, 7.7 s / 204 MB at
 * 10,000, over 20 s at 16,384 and out of memory (over 4.9 GB) at 100,000;
 * plan --gbs 32768 1.5 s at 4096, 2.5 s / 88 MB at 16,384, 18.5 s / 2.4 GB at
 * 100,000.  The largest built-in cluster, philly, has 2048. */
#define HB_SIM_MAX_GPUS 8192   /* sim and sweep (every policy) */
#define HB_PLAN_MAX_GPUS 16384 /* plan */

/* An input error when cl has more than max_gpus GPUs: "COMMAND: cluster
 * 'NAME' has N GPUs on K nodes, more than the limit of MAX for COMMAND". */
int hb_cluster_check_size(const struct hb_cluster *cl, int max_gpus, const char *command, struct hb_error *err);
int hb_catalog_resolve_gpu(struct hb_catalog *cat, const char *name_or_path,
			   const struct hb_gpu **out, struct hb_error *err);

/* 1 when node k of cl is the first of its GPU type (so a walk over the
 * nodes meets each type once, in node order); 0 for a later node of a type
 * or a GPU index outside cat. */
int hb_cluster_first_of_type(const struct hb_catalog *cat, const struct hb_cluster *cl, int k);

/* The model's settings on a cluster: gamma and batch bounds after applying a
 * matching override (cluster may be NULL). */
void hb_model_bounds(const struct hb_model *m, const char *cluster, double *gamma, long *min_gbs,
		     long *max_gbs);

/* Gradient noise scale phi (samples) at training fraction f in [0, 1]. */
double hb_model_gns(const struct hb_model *m, double f);

/* Bytes of a checkpoint: weights (params x param_bytes) + optimizer state. */
double hb_model_checkpoint_bytes(const struct hb_model *m);

/* Relative FP32 speed of a GPU held to `cap` of its board power (0 < cap <= 1):
 * cap^(1/3), see catalog_gpu.c.  A variant's "perf_scale" overrides it. */
double hb_power_cap_perf(double cap);

/* $ per hour of all GPUs of a cluster. */
double hb_cluster_price_per_hour(const struct hb_catalog *cat, const struct hb_cluster *c);

/* An entry as a JSON object in the form the loader reads back (stable key
 * order; derived numbers are left out so a round trip gives the same entry).
 * NULL when out of memory; the caller cJSON_Delete()s it. */
struct cJSON;
struct cJSON *hb_gpu_to_json(const struct hb_gpu *g);
struct cJSON *hb_model_to_json(const struct hb_model *m);
struct cJSON *hb_cluster_to_json(const struct hb_catalog *cat, const struct hb_cluster *c);

/* Eq. 8 price for a card of the given nominal TFLOPS. */
double hb_price_eq8(double nominal_tflops);

#endif
