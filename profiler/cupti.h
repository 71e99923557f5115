/*
 * cupti.h: the CUPTI Activity API tracer of the profiler (GPU builds only:
 * cupti.c is compiled when HB_HAVE_GPU is 1).
 *
 * It records every kernel (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, never
 * ..._KIND_KERNEL, which serialises kernels and would hide the overlap of
 * the virtual stream workers being measured), memcpy and memset that runs
 * on the device, with the external correlation id the launching host thread
 * had pushed, into a struct hb_trace (trace.h) for hb_trace_group.
 *
 * Use, per process:
 *
 *   hb_cupti_init(bytes, err);        before the CUDA context exists
 *   ... per VSW thread, per phase:
 *       hb_cupti_push(hb_trace_ext_id(iter, phase));
 *       enqueue the phase's work on the VSW's stream
 *       hb_cupti_pop();
 *   cudaDeviceSynchronize();          the caller's (device_sync)
 *   hb_cupti_flush(err);              completed buffers reach the tracer
 *   hb_cupti_take(&trace, err);       the records so far move into trace
 *   hb_cupti_shutdown();
 *
 * CUPTI calls the buffer callbacks from its own worker thread (and from
 * the thread in hb_cupti_flush); the tracer parses each completed buffer
 * into its own hb_trace under a mutex, so hb_cupti_take may be called from
 * any thread.  There is one tracer per process (CUPTI's callbacks carry no
 * user pointer): see the state in cupti.c.
 *
 * The device buffer CUPTI allocates per context takes device memory, which
 * matters to the memory search; the host buffers handed to CUPTI are
 * HB_CUPTI_HOST_BUFFER_BYTES each, allocated as CUPTI asks for them.
 *
 * Include this header as "cupti.h" from the profiler; CUPTI's own headers
 * are reached by their specific names (<cupti_activity.h>, ...), since this
 * file shadows <cupti.h> on the project's include path.
 */
#ifndef HB_CUPTI_H
#define HB_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "trace.h"

/* Size of each host buffer CUPTI fills with activity records before handing
 * it back (a CUDA 13 kernel record is 216 bytes: ~38,000 kernels). */
#define HB_CUPTI_HOST_BUFFER_BYTES ((size_t)8 << 20)

/*
 * Start tracing.  Must run before the CUDA context is created (before the
 * first cudaMalloc, cudaSetDevice, ... of the process) so the device buffer
 * size applies.  device_buffer_bytes: CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE
 * (0 keeps CUPTI's default, 3.2 MB, about 100,000 activities).  Registers
 * the buffer callbacks and enables CONCURRENT_KERNEL, MEMCPY, MEMSET and
 * EXTERNAL_CORRELATION.  Fails (runtime error naming the CUPTI call and
 * result) where CUPTI cannot trace, e.g. with no GPU or driver (CUPTI
 * answers CUPTI_ERROR_UNKNOWN, 999), or when already initialised.
 */
int hb_cupti_init(size_t device_buffer_bytes, struct hb_error *err);

/* Push / pop an external id on the calling thread's stack (CUPTI keeps one
 * per thread; kind CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0): work launched
 * in between is paired with ext_id.  0, or -1 when CUPTI refuses (not
 * initialised, nothing to pop); cheap enough for every phase. */
int hb_cupti_push(uint64_t ext_id);
int hb_cupti_pop(void);

/* Hand every buffer CUPTI holds to the tracer, complete or not
 * (cuptiActivityFlushAll with CUPTI_ACTIVITY_FLAG_FLUSH_FORCED).  Callers
 * synchronise the device first, or records of unfinished work are lost.
 * Reports a buffer the callback could not parse since the last take. */
int hb_cupti_flush(struct hb_error *err);

/* Move the records parsed so far (and the dropped count, which includes
 * cuptiActivityGetNumDroppedRecords for the global queue now) to the end of
 * out; the tracer starts afresh.  If a completed buffer could not be parsed
 * since the last take, its error is returned and the records of that window
 * are discarded. */
int hb_cupti_take(struct hb_trace *out, struct hb_error *err);

/* Flush, disable the activity kinds, detach CUPTI (cuptiFinalize, which
 * releases its device buffers) and drop records not taken.  Callers
 * synchronise the device first, as for hb_cupti_flush (CUPTI asks for that
 * when detaching outside an API callback).  Safe to call when not
 * initialised; hb_cupti_init may be called again afterwards (CUPTI
 * re-attaches after cuptiFinalize).  hb_cupti_init and hb_cupti_shutdown
 * are called from one thread, the profiler's main one. */
void hb_cupti_shutdown(void);

/*
 * Parse one activity buffer (valid bytes of records as CUPTI delivers them
 * to the buffer-completed callback) and append its kernel, memcpy and
 * memset records and CUSTOM0 external-correlation pairs to out.  Records
 * without timestamps (start = end = 0) are counted in out->untimed; other
 * kinds and other external-correlation kinds are skipped.  Uses
 * cuptiActivityGetNextRecord, which walks a buffer without a GPU or an
 * initialised CUPTI, so tests can feed hand-built buffers.  Errors: a
 * record CUPTI cannot walk (invalid or unknown kind; input error naming the
 * offset), out of memory.  Records before the bad one stay in out.
 */
int hb_cupti_parse_buffer(const uint8_t *buf, size_t valid, struct hb_trace *out, struct hb_error *err);

#endif
