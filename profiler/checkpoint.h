/*
 * checkpoint.h: checkpoints of live training runs (--checkpoint DIR).
 *
 * One file per rank, DIR/rank-<rank>.ckpt, holds what the rank needs to
 * continue bit-identically on the same configuration: the main VSW's
 * parameters, the optimizer state (SGD momentum, or Adam's m and v), the
 * optimizer step (Adam's bias correction uses it), the iteration count,
 * the data position, the RNG streams and the configuration string.
 * Gradients and activations are not kept: a checkpoint is taken between
 * iterations, and the next backward pass overwrites the gradient buffer.
 *
 * Writes are atomic (common/fileio.h: DIR/rank-R.ckpt.tmp.PID, fsync,
 * rename, then an fsync of DIR): a crash leaves the previous checkpoint or
 * the new one, never a mix.  Loads verify everything before they touch the
 * state, so a refused file leaves the state as it was.
 *
 * File layout, version 1.  Integers and floats in the writer's byte order
 * (the byte-order mark refuses a file from a host of the other order);
 * every field at a fixed offset, no padding left to the compiler.
 *
 *   header, 64 bytes
 *     0   char[8]  magic "HBCKPT1\0"
 *     8   u32      format version (HB_CKPT_VERSION)
 *    12   u32      byte-order mark 0x01020304
 *    16   u32      header bytes (64)
 *    20   u32      metadata bytes (576)
 *    24   u64      parameter floats P (hb_wl_param_floats)
 *    32   u64      optimizer floats O (hb_wl_opt_floats)
 *    40   u64      file bytes: 64 + 576 + 4 P + 4 O + 8
 *    48   u64      reserved, 0
 *    56   u64      FNV-1a 64 of bytes 0..55 (sizes are trusted only after it)
 *   metadata, 576 bytes (struct hb_ckpt_meta)
 *    64   char[64] model, NUL-terminated
 *   128   f64      scale
 *   136   i32 x 4  local_bs, n_vsw, rank, nranks
 *   152   i64 x 3  step, iteration, data_pos
 *   176   u64      seed
 *   184   i32 x 2  nrng, 0
 *   192   4 x 48   rng[k]: u64 s[4], i32 have_spare, i32 0, f64 spare
 *   384   char[256] config, NUL-terminated
 *   weights        P x f32, the main VSW's parameter buffer
 *   optimizer      O x f32, hb_wl_read_opt_state's array
 *   checksum       u64, FNV-1a 64 of every byte before it
 */
#ifndef HB_CHECKPOINT_H
#define HB_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "rng.h"
#include "workload.h"

#define HB_CKPT_VERSION 1      /* format version written; the only one read */
#define HB_CKPT_MAX_RNG 4      /* RNG streams one checkpoint holds */

/*
 * What a live rank needs besides the tensors.  hb_ckpt_save records it;
 * hb_ckpt_load takes the fields marked "checked" as what the restarting
 * rank is, refuses a file that disagrees, and on success overwrites the
 * whole struct with the file's values.
 */
struct hb_ckpt_meta {
	char model[HB_NAME_MAX];  /* catalog model the state trains; checked */
	double scale;             /* the workload's width scale; checked when the caller's is > 0 */
	int local_bs;             /* local batch of one VSW (> 0); checked */
	int n_vsw;                /* VSWs of the state (> 0); checked, and load writes the weights into
				   * VSWs 0 .. n_vsw-1 */
	int rank;                 /* save: ignored (the rank argument is recorded); load: the file's */
	int nranks;               /* ranks of the run (> 0 on save); checked when the caller's is > 0 */
	long step;                /* optimizer steps taken; save: ignored (hb_wl_step is recorded);
				   * load: the file's, also restored with hb_wl_set_step */
	long iteration;           /* training iterations completed (>= 0; differs from step when an
				   * iteration accumulates gradients or skips its update) */
	long data_pos;            /* index of the next batch the data stream yields (>= 0) */
	uint64_t seed;            /* the run's seed.  hb_wl_state_create derives the initial weights and
				   * the data batches from its seed, so a restart creates its state with
				   * this one; not checked */
	int nrng;                 /* RNG streams in rng[], 0 .. HB_CKPT_MAX_RNG */
	struct hb_rng rng[HB_CKPT_MAX_RNG]; /* their states, spare normal deviate included */
	char config[256];         /* the run's configuration string, for messages; not checked (a restart
				   * may legitimately differ in, say, its iteration limit) */
};

/* DIR/rank-<rank>.ckpt into buf; -1 (err filled) when it does not fit. */
int hb_ckpt_path(const char *dir, int rank, char *buf, size_t size, struct hb_error *err);

/* Write DIR/rank-<rank>.ckpt atomically from the main VSW's weights and
 * optimizer state of st and from meta (DIR is created as by mkdir -p).
 * On failure the previous checkpoint, if any, is untouched and no
 * temporary file stays behind. */
int hb_ckpt_save(const char *dir, int rank, struct hb_wl_state *st, const struct hb_ckpt_meta *meta,
		 struct hb_error *err);

/* Read and verify DIR/rank-<rank>.ckpt (magic, version, byte order,
 * sizes, checksums; then model, local batch, VSWs, ranks, scale, rank and
 * the state's parameter and optimizer floats against the file), then write
 * the weights into every VSW of st, the optimizer state, and the step.
 * meta: in, what this rank is (the fields marked "checked" above; model,
 * local_bs and n_vsw are required); out, the file's values.  Every failure
 * names the file and what is wrong; meta and st are then unchanged (except
 * after a device copy failure, which the message says). */
int hb_ckpt_load(const char *dir, int rank, struct hb_wl_state *st, struct hb_ckpt_meta *meta,
		 struct hb_error *err);

/* hb_ckpt_load for a state of another layout (a relaunch on a new
 * configuration): the model, scale and tensor sizes are checked, not the
 * local batch, VSWs, ranks or writer's rank; the weights go into VSWs
 * 0 .. n_vsw-1 of st.  meta: in, model and scale; out, the file's. */
int hb_ckpt_load_any(const char *dir, int rank, struct hb_wl_state *st, int n_vsw, struct hb_ckpt_meta *meta,
		     struct hb_error *err);

/* 1 if DIR/rank-<rank>.ckpt exists as a regular file (not verified). */
int hb_ckpt_exists(const char *dir, int rank);

#endif
