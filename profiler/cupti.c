/*
 * cupti.c: the CUPTI Activity API tracer (see cupti.h).  Built only with
 * the CUDA toolkit.
 *
 * Buffers: CUPTI asks for an empty host buffer (buffer_requested), fills it
 * with activity records from its device buffers, and hands it back
 * (buffer_completed) from its worker thread, or from the thread in
 * cuptiActivityFlushAll.  The completed callback parses the buffer into the
 * tracer's hb_trace and frees it.
 *
 * Parsing uses cuptiActivityGetNextRecord.  Checked on a machine with the
 * CUDA 13.0 toolkit and no GPU (cudaGetDeviceCount: 35, every
 * cuptiActivityEnable: 999): it walks a hand-built buffer of
 * ExternalCorrelation, Kernel10, Memcpy6 and Memset4 records correctly
 * (strides = sizeof of each struct), before or after any other CUDA or
 * CUPTI call, stops with CUPTI_ERROR_MAX_LIMIT_REACHED at the end of the
 * valid bytes (a truncated last record included) and with
 * CUPTI_ERROR_INVALID_KIND on a kind it does not know.  So no hand-written
 * walker is needed, and tests can feed buffers through the same code.
 *
 * Record versions: the newest struct cupti_activity.h defines for each kind
 * enabled.  Only kind, start, end, streamId and correlationId are read;
 * they sit at the same offsets in every version since Kernel4, Memcpy4 and
 * Memset2 (asserted below), so a newer CUPTI that appends fields reads the
 * same, and the stride is CUPTI's business.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CUPTI by its specific headers: profiler/cupti.h shadows <cupti.h>. */
#include <cupti_activity.h>
#include <cupti_result.h>
#include <cupti_version.h>

#include "cupti.h"      /* defines: hb_cupti_init, _push, _pop, _flush, _take, _shutdown, _parse_buffer */
#include "trace.h"      /* defines: struct hb_trace, hb_trace_add_rec, hb_trace_add_corr, hb_trace_move */

#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 kernel_rec;  /* CONCURRENT_KERNEL (and KERNEL) */
typedef CUpti_ActivityMemcpy6 memcpy_rec;   /* MEMCPY */
typedef CUpti_ActivityMemset4 memset_rec;   /* MEMSET */
#define SAME_PREFIX(new, old)                                                                    \
	_Static_assert(offsetof(new, start) == offsetof(old, start) &&                          \
		       offsetof(new, end) == offsetof(old, end) &&                              \
		       offsetof(new, streamId) == offsetof(old, streamId) &&                    \
		       offsetof(new, correlationId) == offsetof(old, correlationId),            \
		       #new " reads like " #old)
SAME_PREFIX(CUpti_ActivityKernel10, CUpti_ActivityKernel4);
SAME_PREFIX(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy4);
SAME_PREFIX(CUpti_ActivityMemset4, CUpti_ActivityMemset2);
#else
/* CUDA 12 headers: the oldest versions still declared, same fields read. */
typedef CUpti_ActivityKernel4 kernel_rec;
typedef CUpti_ActivityMemcpy4 memcpy_rec;
typedef CUpti_ActivityMemset2 memset_rec;
#endif

/* The activity kinds enabled, in the order hb_cupti_init enables them. */
static const CUpti_ActivityKind traced_kinds[] = {
	CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,
};
#define NKINDS (sizeof(traced_kinds) / sizeof(traced_kinds[0]))

/*
 * The tracer's state: the one deliberate global of hetbatch.  CUPTI's
 * buffer callbacks take no user pointer, so the completed callback can only
 * reach the tracer through a static.  Callbacks run on CUPTI's worker
 * thread while the profiler's threads call hb_cupti_take, so every field is
 * read and written with `lock` held.
 */
static struct {
	pthread_mutex_t lock;
	int active;                 /* between a successful hb_cupti_init and hb_cupti_shutdown */
	struct hb_trace trace;      /* parsed records not yet taken */
	int failed;                 /* a completed buffer could not be parsed since the last take */
	struct hb_error failure;    /* the first such error */
} tracer = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ------------------------------------------------------------------------
 * Parsing
 */

static int add_interval(struct hb_trace *out, uint8_t kind, uint64_t start, uint64_t end, uint32_t stream,
			uint32_t corr, struct hb_error *err)
{
	struct hb_trace_rec r;

	if (start == 0 && end == 0) {
		out->untimed++;
		return 0;
	}
	r.start_ns = start;
	r.end_ns = end;
	r.stream = stream;
	r.corr = corr;
	r.kind = kind;
	return hb_trace_add_rec(out, &r, err);
}

/* One record into out; kinds not traced are skipped. */
static int convert(const CUpti_Activity *a, struct hb_trace *out, struct hb_error *err)
{
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: { /* never enabled here; same record if another tool did */
		const kernel_rec *k = (const kernel_rec *)a;

		return add_interval(out, HB_TRACE_KERNEL, k->start, k->end, k->streamId, k->correlationId, err);
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const memcpy_rec *m = (const memcpy_rec *)a;

		return add_interval(out, HB_TRACE_MEMCPY, m->start, m->end, m->streamId, m->correlationId, err);
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const memset_rec *m = (const memset_rec *)a;

		return add_interval(out, HB_TRACE_MEMSET, m->start, m->end, m->streamId, m->correlationId, err);
	}
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
		const CUpti_ActivityExternalCorrelation *e = (const CUpti_ActivityExternalCorrelation *)a;

		if (e->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
			return 0;
		return hb_trace_add_corr(out, e->correlationId, e->externalId, err);
	}
	default:
		return 0;
	}
}

static const char *result_name(CUptiResult r)
{
	const char *s = NULL;

	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI result";
	return s;
}

int hb_cupti_parse_buffer(const uint8_t *buf, size_t valid, struct hb_trace *out, struct hb_error *err)
{
	/* CUPTI's walker takes a non-const buffer but only reads it. */
	uint8_t *b = (uint8_t *)(uintptr_t)buf;
	CUpti_Activity *a = NULL;
	size_t nread = 0;   /* records read so far */

	if (valid == 0)
		return 0;
	if (!buf)
		return hb_input_error(err, "activity buffer: NULL with %zu valid bytes", valid);
	for (;;) {
		CUptiResult r = cuptiActivityGetNextRecord(b, valid, &a);

		if (r == CUPTI_ERROR_MAX_LIMIT_REACHED)
			return 0;
		if (r != CUPTI_SUCCESS) {
			char where[96];

			if (nread == 0)
				snprintf(where, sizeof(where), "kind %u at offset 0",
					 valid >= sizeof(CUpti_ActivityKind) ? (unsigned)((CUpti_Activity *)b)->kind : 0u);
			else
				snprintf(where, sizeof(where), "the one after offset %zu", (size_t)((uint8_t *)a - b));
			return hb_fail(err, r == CUPTI_ERROR_INVALID_KIND ? HB_EINPUT : HB_ERUNTIME,
				       "activity buffer of %zu valid bytes: record %zu (%s): "
				       "cuptiActivityGetNextRecord: %s (%d)", valid, nread, where, result_name(r), (int)r);
		}
		if (convert(a, out, err)) {
			hb_error_prefix(err, "activity buffer: record %zu at offset %zu", nread, (size_t)((uint8_t *)a - b));
			return -1;
		}
		nread++;
	}
}

/* ------------------------------------------------------------------------
 * CUPTI callbacks (CUPTI's threads)
 */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	/* Records are 8-byte aligned (ACTIVITY_RECORD_ALIGNMENT).  On failure
	 * CUPTI gets no buffer and counts the records it drops. */
	*buffer = aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, HB_CUPTI_HOST_BUFFER_BYTES);
	*size = *buffer ? HB_CUPTI_HOST_BUFFER_BYTES : 0;
	*max_records = 0;   /* as many as fit */
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	struct hb_error e = { 0 };
	size_t dropped = 0;

	(void)size;
	pthread_mutex_lock(&tracer.lock);
	if (hb_cupti_parse_buffer(buffer, valid, &tracer.trace, &e) && !tracer.failed) {
		tracer.failed = 1;
		tracer.failure = e;
	}
	/* Since CUDA 6 buffers are global and CUPTI passes ctx = NULL, stream 0:
	 * the queue whose lack of buffer space drops records. */
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		tracer.trace.dropped += (long)dropped;
	pthread_mutex_unlock(&tracer.lock);
	free(buffer);
}

/* ------------------------------------------------------------------------
 * The tracer
 */

static int cupti_error(struct hb_error *err, const char *call, CUptiResult r)
{
	return hb_runtime_error(err, "CUPTI: %s: %s (%d)%s", call, result_name(r), (int)r,
				r == CUPTI_ERROR_UNKNOWN ? "; CUPTI cannot trace here (no GPU or no driver?)" : "");
}

static const char *kind_name(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return "EXTERNAL_CORRELATION";
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "CONCURRENT_KERNEL";
	case CUPTI_ACTIVITY_KIND_MEMCPY: return "MEMCPY";
	case CUPTI_ACTIVITY_KIND_MEMSET: return "MEMSET";
	default: return "?";
	}
}

static void disable_kinds(size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		(void)cuptiActivityDisable(traced_kinds[i]);  /* undoing or shutting down: nothing to report to */
}

int hb_cupti_init(size_t device_buffer_bytes, struct hb_error *err)
{
	CUptiResult r;
	size_t i;

	pthread_mutex_lock(&tracer.lock);
	if (tracer.active) {
		pthread_mutex_unlock(&tracer.lock);
		return hb_runtime_error(err, "CUPTI tracer: already initialised (one per process)");
	}
	hb_trace_free(&tracer.trace);
	tracer.failed = 0;
	pthread_mutex_unlock(&tracer.lock);

	if (device_buffer_bytes > 0) {
		size_t vsize = sizeof(device_buffer_bytes);

		r = cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &vsize, &device_buffer_bytes);
		if (r != CUPTI_SUCCESS)
			return cupti_error(err, "cuptiActivitySetAttribute(DEVICE_BUFFER_SIZE)", r);
	}
	r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS)
		return cupti_error(err, "cuptiActivityRegisterCallbacks", r);
	for (i = 0; i < NKINDS; i++) {
		r = cuptiActivityEnable(traced_kinds[i]);
		if (r != CUPTI_SUCCESS) {
			char call[64];

			snprintf(call, sizeof(call), "cuptiActivityEnable(%s)", kind_name(traced_kinds[i]));
			disable_kinds(i);
			return cupti_error(err, call, r);
		}
	}
	pthread_mutex_lock(&tracer.lock);
	tracer.active = 1;
	pthread_mutex_unlock(&tracer.lock);
	return 0;
}

int hb_cupti_push(uint64_t ext_id)
{
	return cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, ext_id) ==
	       CUPTI_SUCCESS ? 0 : -1;
}

int hb_cupti_pop(void)
{
	uint64_t last;

	return cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last) ==
	       CUPTI_SUCCESS ? 0 : -1;
}

/* Report (once) a parse failure of the completed callback; lock held. */
static int take_failure(struct hb_error *err)
{
	if (!tracer.failed)
		return 0;
	tracer.failed = 0;
	if (err)
		*err = tracer.failure;
	return -1;
}

int hb_cupti_flush(struct hb_error *err)
{
	CUptiResult r;
	int rc;

	/* Not under the lock: the completed callback, which takes it, runs
	 * before cuptiActivityFlushAll returns, possibly on another thread. */
	r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (r != CUPTI_SUCCESS)
		return cupti_error(err, "cuptiActivityFlushAll(FLUSH_FORCED)", r);
	pthread_mutex_lock(&tracer.lock);
	rc = tracer.failed ? -1 : 0;
	if (rc && err)
		*err = tracer.failure;   /* kept for hb_cupti_take too */
	pthread_mutex_unlock(&tracer.lock);
	return rc;
}

int hb_cupti_take(struct hb_trace *out, struct hb_error *err)
{
	size_t dropped = 0;
	CUptiResult r;
	int rc;

	r = cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped);
	if (r != CUPTI_SUCCESS)
		return cupti_error(err, "cuptiActivityGetNumDroppedRecords", r);
	pthread_mutex_lock(&tracer.lock);
	tracer.trace.dropped += (long)dropped;
	rc = take_failure(err);
	if (rc)
		hb_trace_clear(&tracer.trace);
	else
		rc = hb_trace_move(out, &tracer.trace, err);
	pthread_mutex_unlock(&tracer.lock);
	return rc;
}

void hb_cupti_shutdown(void)
{
	int active;

	pthread_mutex_lock(&tracer.lock);
	active = tracer.active;
	pthread_mutex_unlock(&tracer.lock);
	if (active) {
		/* The records are freed below either way: the flush only lets
		 * CUPTI hand back its buffers before it is finalised. */
		(void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		disable_kinds(NKINDS);
		(void)cuptiFinalize();  /* shutdown cannot report; the process's exit detaches CUPTI anyway */
	}
	pthread_mutex_lock(&tracer.lock);
	tracer.active = 0;
	tracer.failed = 0;
	hb_trace_free(&tracer.trace);
	pthread_mutex_unlock(&tracer.lock);
}
