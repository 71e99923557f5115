/*
 * import.h: load published or measured profiles into the profile database.
 *
 * Four importers, each all-or-nothing: it runs in ONE transaction of the
 * profile database, and any bad line, field or file rolls the whole import
 * back, so the database is exactly as it was before.  Errors are HB_EINPUT
 * with "FILE:LINE: field 'NAME': value 'V': reason" for tables and text, and
 * "FILE: field 'NAME': ..." for JSON.  Each import records one `run` row
 * (kind "import") that its compute and allreduce rows point to.
 *
 * hb_import_pollux(DIR): Pollux's published profiles (data/pollux/profiles),
 *   one sub-directory per application (or DIR itself if it holds
 *   placements.csv).  Model = directory name, or the catalog model of that
 *   name or "pollux-<name>"; a model the catalog lacks is kept with a warning.
 *   GPU = the catalog's "t4": Pollux measured everything on g4dn.12xlarge
 *   nodes, 4 x T4 each (notes/pollux.md 2.2).
 *     placements.csv   -> placement  (placement, local_bsz, step_time, sync_time)
 *     scalability.csv  -> scalability (num_nodes, num_replicas, local_bsz, ...)
 *     validation-B.csv -> gradstats, batch B, epoch = 0-based data row index
 *   and, for the single-GPU placement "1", one compute row per local batch:
 *   n_vsw 1, total_s = step_time, the phases (fwd/bwd/data/update/copy/bn)
 *   0 because Pollux does not split them: a reader needing the split must
 *   use total_s when fwd_s + bwd_s is 0.
 *
 * hb_import_sia(DIR): Sia's per-GPU-type profiles (SOSP'23 artifact
 *   siasosp23/artifacts, sia-simulator/traces), one sub-directory per
 *   application (or DIR itself if it holds a placements-<type>.csv).  The
 *   files keep Pollux's formats, once per GPU type <type>:
 *     placements-<type>.csv   -> placement (+ compute rows for "1"), as Pollux
 *     scalability-<type>.csv  -> scalability; a repeated (num_nodes,
 *                                num_replicas, local_bsz) keeps the mean of
 *                                its rows (the dgx-ext files repeat keys)
 *     validation-B.csv        -> gradstats (GPU-independent), as Pollux
 *   Types [paper 4.2; ART simulator_config.py]: aws -> t4 (4 per node), rtx
 *   -> rtx-2080ti (8), dgx-ext -> a100-40gb (8), quad -> quadro-rtx-6000 (4);
 *   a placement digit or scalability row beyond the type's node size is an
 *   error.  Skipped with a warning: dgx (the same A100 over a smaller batch
 *   range), azure (GPU undocumented), the unsuffixed placements.csv /
 *   scalability.csv (the artifact's copy of Pollux's aws files) and
 *   pipeline-parallel applications (a directory named *_pmp).  Any other
 *   type suffix is an error naming the file and the known types.  Model =
 *   the directory name (catalog name where it matches).  Source
 *   "import:sia".
 *
 * hb_import_jabas(DIR): a JABAS/IIDP profile set (notes/jabas.md 2.3):
 *     cluster_info.json                            hosts: GPU type, GPUs, bandwidths
 *     cluster_comp_profile_data/LBS/HOST/NAME_comp_profile.json -> compute (ms -> s,
 *                                                  n_vsw = num_models, bn_s = bn_sync_time)
 *     cluster_mem_profile_data/LBS/HOST/max_memory_profile_info.json -> memory
 *     bucket_profile_data/MODEL_bucket_size_profile.json -> bucket (MiB x 2^20 bytes)
 *     comm_profile_data/{intra,inter}_comm_profile_data.txt -> allreduce + allreduce_fit
 *   ("comp_profile_data"/"mem_profile_data", the per-node names before the
 *   artifact's sync step, are accepted too).  GPU names are mapped to catalog
 *   names through its aliases; an unknown one is kept as spelled, with a
 *   warning.  The memory file has no model field: the model is the one the
 *   compute profiles name (an error if they name several).
 *   All-reduce: each comm line is "theoretical_ms,measured_ms" with
 *   theoretical = bytes * 4(N-1)/N / K * 1000.  The importer inverts that
 *   with K and N from cluster_info.json, i.e. for the first host (in
 *   config.json's available_servers order when present, else file order):
 *     intra: K = intra_network_bandwidth, N = that host's GPUs
 *     inter: K = inter_network_bandwidth, N = GPUs of the first two hosts
 *   and stores bytes = theoretical_ms / 1000 * K * N / (4(N-1)), time_s =
 *   measured_ms / 1000, link = the class of K (15.75e9 "pcie3-x16", 12.5e9
 *   "ib-100g", 7e9 "ib-56g", else "bw-<K>").  The fit (JABAS Eq. 3, OLS of
 *   measured on theoretical ms) is then computed from the stored rows with
 *   the same K, so it reproduces the artifact's alpha and beta exactly.
 *   Caveat (notes/jabas.md 2.3 item 4, 10.2): the shipped *inter* x-values
 *   correspond to K = 7 GB/s, while cluster_info.json says 12.5 GB/s; the
 *   importer keeps cluster_info's K (as the artifact's predictor does, so
 *   predictions match the artifact) and warns when the recovered sizes are
 *   whole MiB only under another known link bandwidth.
 *
 * hb_import_nccl(FILE): nccl-tests all_reduce_perf output, as printed (text
 *   table; the '#' column header names the columns) or as written by its -J
 *   JSON option.  One allreduce row per size: bytes = size, time_s = the
 *   out-of-place time (us -> s).  Any "#wrong" > 0 (or "Out of bounds values"
 *   > 0) fails the import: the timings of a run that corrupted data are not
 *   a profile.  scope NULL: "inter" if the listed ranks span several hosts,
 *   else "intra"; n_gpus <= 0: the number of ranks the file lists.  link is
 *   required (the class name the cluster files use, e.g. "nvlink4").
 */
#ifndef HB_IMPORT_H
#define HB_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "error.h"
#include "profdb.h"

#define HB_IMPORT_MAX_WARN 32
#define HB_IMPORT_MAX_FITS 4

/* What an import wrote: distinct rows per table.  When two inputs of one
 * import give the same natural key (two JABAS hosts with the same GPU, a
 * size repeated in an nccl-tests file), the later replaces the earlier, is
 * counted once, and a warning says so.  On failure the counters are 0 and
 * the warnings gathered before the error are kept. */
struct hb_import_stats {
	long compute;          /* compute rows */
	long memory;           /* memory rows */
	long bucket;           /* bucket rows (one per bucket) */
	long allreduce;        /* allreduce rows */
	long allreduce_fit;    /* allreduce_fit rows */
	long placement;        /* placement rows */
	long scalability;      /* scalability rows */
	long gradstats;        /* gradstats rows */
	long files;            /* input files read */
	int64_t run_id;        /* the import's run row, 0 if the import failed */
	struct hb_allreduce_fit fits[HB_IMPORT_MAX_FITS]; /* fits stored, for the report */
	int nfits;
	char warn[HB_IMPORT_MAX_WARN][512]; /* non-fatal findings, one line each */
	int nwarn;             /* entries used in warn[] */
	int nwarn_dropped;     /* further warnings not kept */
};

/* cat may be NULL: names are then stored as the files spell them. */
int hb_import_pollux(struct hb_profdb *db, const struct hb_catalog *cat, const char *dir,
		     struct hb_import_stats *stats, struct hb_error *err);
int hb_import_sia(struct hb_profdb *db, const struct hb_catalog *cat, const char *dir,
		  struct hb_import_stats *stats, struct hb_error *err);
int hb_import_jabas(struct hb_profdb *db, const struct hb_catalog *cat, const char *dir,
		    struct hb_import_stats *stats, struct hb_error *err);
int hb_import_nccl(struct hb_profdb *db, const char *path, const char *scope, const char *link, int n_gpus,
		   struct hb_import_stats *stats, struct hb_error *err);

/* Link class name for a bandwidth in bytes/s (see hb_import_jabas). */
void hb_import_link_class(double bandwidth, char *out, size_t size);

/* ---- shared by the importers (defined in import_pollux.c; the table
 * readers are in import_priv.h) ---- */

/* Append a warning to stats (printf-style, truncated to one line). */
void hb_import_warn(struct hb_import_stats *stats, const char *fmt, ...) HB_PRINTF(2, 3);

/* Begin the transaction and record the import's run row in stats->run_id
 * (importers zero stats first, so early warnings are kept). */
int hb_import_begin(struct hb_profdb *db, const char *source, const char *path, struct hb_import_stats *stats,
		    struct hb_error *err);
/* Commit, or on failure roll back and zero the counters. */
int hb_import_end(struct hb_profdb *db, int ok, struct hb_import_stats *stats, struct hb_error *err);

/* out = "a/b" (no doubled slash); fails if it does not fit. */
int hb_import_join(char *out, size_t size, const char *a, const char *b, struct hb_error *err);

/* Sorted names in dir (no hidden entries): directories if want_dirs, else
 * regular files.  Free with hb_import_free_names. */
int hb_import_list_dir(const char *dir, int want_dirs, char ***names, int *n, struct hb_error *err);
void hb_import_free_names(char **names, int n);

/* Catalog name for a GPU or model, or the name as given plus a warning. */
void hb_import_gpu_name(const struct hb_catalog *cat, const char *raw, char *out, size_t size,
			struct hb_import_stats *stats);
void hb_import_model_name(const struct hb_catalog *cat, const char *raw, char *out, size_t size,
			  struct hb_import_stats *stats);

#endif
