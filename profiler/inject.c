/*
 * inject.c: libhetbatch_inject.so, a CUPTI injection library.  The CUDA
 * driver loads it into an unmodified process (a PyTorch worker) when
 * CUDA_INJECTION64_PATH names it, and calls InitializeInjection while the
 * process initialises CUDA.  It records, with CUPTI's Activity API:
 *
 *   CONCURRENT_KERNEL, MEMCPY, MEMSET   device work: stream, start, end,
 *                                       correlation id (never KIND_KERNEL,
 *                                       which serialises kernels and would
 *                                       hide the VSWs' overlap);
 *   RUNTIME, DRIVER, INTERNAL_LAUNCH_API
 *                                       the API calls that launched it: the
 *                                       calling thread and time, matched to
 *                                       device work by correlation id (only
 *                                       calls some device record names are
 *                                       written);
 *   MARKER                              NVTX ranges (torch.cuda.nvtx.range_push
 *                                       / range_pop): name, thread, time.
 *
 * and writes them, once, to the file HETBATCH_TRACE_OUT names, in the
 * ktrace format (ktrace.h; hb_ktrace_attribute turns it into phase times).
 * The file is written when the process calls hb_inject_finish() (the
 * worker does, through ctypes, after synchronising the device) or else at
 * exit (atexit, after a forced flush), to PATH.tmp.PID renamed to PATH, so
 * a file at PATH is complete (and its last line, `end N`, says so).  A
 * process measuring several points writes one file per point with
 * hb_inject_write_to(path); HETBATCH_TRACE_OUT then gets what is left at
 * exit.
 *
 * NVTX: CUPTI sees NVTX calls only when the NVTX library of the process
 * loads CUPTI as its injection (NVTX_INJECTION64_PATH = libcupti.so, read
 * at the first NVTX call).  hetbatch profile --backend torch sets it;
 * InitializeInjection sets it too when it is unset (to the libcupti this
 * library was linked with), which works when CUDA initialises before the
 * first NVTX call (the worker makes sure of that).  The NVTX callback
 * domain is enabled as well, with a callback that does nothing, as CUPTI's
 * NVTX support asks.
 *
 * Thread ids: CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM (gettid), so the API
 * records' and the markers' thread ids are the same numbers.
 *
 * Global state: this is a separate shared object loaded into someone
 * else's process, with CUPTI callbacks that carry no user pointer, so its
 * state is one static struct guarded by a mutex (CUPTI's worker thread
 * delivers buffers while the process's threads run).  Nothing of
 * libhetbatch is linked in.  Messages go to stderr, prefixed
 * "hetbatch-inject:".
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_result.h>
#include <cupti_version.h>

#define API __attribute__((visibility("default")))
#define TAG "hetbatch-inject: "
#define BUFFER_BYTES ((size_t)8 << 20)

#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 kernel_rec;
typedef CUpti_ActivityMemcpy6 memcpy_rec;
typedef CUpti_ActivityMemset4 memset_rec;
#else
typedef CUpti_ActivityKernel4 kernel_rec;
typedef CUpti_ActivityMemcpy4 memcpy_rec;
typedef CUpti_ActivityMemset2 memset_rec;
#endif

struct marker {
	uint64_t ts;
	size_t seq;         /* arrival order: breaks ties of ts when sorting */
	uint32_t id, tid;
	int start;          /* 1 start, 0 end */
	char *name;         /* start: a copy of the name (CUPTI's pointer is not ours to keep) */
};

struct api_call {
	uint64_t start, end;
	uint32_t corr, tid;
};

struct dev_rec {
	uint64_t start, end;
	uint32_t corr, stream, device;
	char kind;          /* 'k' kernel, 'c' memcpy, 's' memset */
};

static struct {
	pthread_mutex_t lock;
	int active;         /* tracing: InitializeInjection succeeded */
	int written;        /* hb_inject_finish ran */
	char out[4096];     /* HETBATCH_TRACE_OUT */
	struct marker *m;
	size_t nm, cm;
	struct api_call *a;
	size_t na, ca;
	struct dev_rec *d;
	size_t nd, cd;
	long dropped;       /* from the completed-buffer callbacks */
	long untimed;       /* records without timestamps */
	long oom;           /* records lost for want of host memory here: counted as dropped */
	CUpti_SubscriberHandle sub;
} st = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const char *res_name(CUptiResult r)
{
	const char *s = NULL;

	return cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s ? s : "?";
}

/* Append one element to a growable array; 0 when memory runs out. */
static int push(void **arr, size_t *n, size_t *cap, size_t elem, const void *x)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 4096;
		void *p = realloc(*arr, nc * elem);

		if (!p)
			return 0;
		*arr = p;
		*cap = nc;
	}
	memcpy((char *)*arr + *n * elem, x, elem);
	(*n)++;
	return 1;
}

/* ------------------------------------------------------------------------
 * Records (CUPTI's worker thread, lock held)
 */

static void take_dev(char kind, uint64_t start, uint64_t end, uint32_t corr, uint32_t stream, uint32_t device)
{
	struct dev_rec r = { start, end, corr, stream, device, kind };

	if (start == 0 && end == 0)
		st.untimed++;
	else if (!push((void **)&st.d, &st.nd, &st.cd, sizeof(r), &r))
		st.oom++;
}

static void take(const CUpti_Activity *rec)
{
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: {
		const kernel_rec *k = (const kernel_rec *)rec;

		take_dev('k', k->start, k->end, k->correlationId, k->streamId, k->deviceId);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const memcpy_rec *c = (const memcpy_rec *)rec;

		take_dev('c', c->start, c->end, c->correlationId, c->streamId, c->deviceId);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const memset_rec *s = (const memset_rec *)rec;

		take_dev('s', s->start, s->end, s->correlationId, s->streamId, s->deviceId);
		break;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: {
		const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)rec;
		struct api_call c = { a->start, a->end, a->correlationId, a->threadId };

		if (a->start == 0 && a->end == 0)
			st.untimed++;
		else if (!push((void **)&st.a, &st.na, &st.ca, sizeof(c), &c))
			st.oom++;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MARKER: {
		const CUpti_ActivityMarker2 *mk = (const CUpti_ActivityMarker2 *)rec;
		struct marker m = { mk->timestamp, st.nm, mk->id, 0, 0, NULL };

		/* instantaneous markers (nvtxMark) carry no range */
		if (!(mk->flags & (CUPTI_ACTIVITY_FLAG_MARKER_START | CUPTI_ACTIVITY_FLAG_MARKER_END)))
			break;
		if (mk->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || mk->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
			m.tid = mk->objectId.pt.threadId;
		m.start = (mk->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) != 0;
		if (m.ts == 0) {
			st.untimed++;
			break;
		}
		if (m.start) {
			m.name = strdup(mk->name ? mk->name : "?");
			if (!m.name) {
				st.oom++;
				break;
			}
		}
		if (!push((void **)&st.m, &st.nm, &st.cm, sizeof(m), &m)) {
			free(m.name);
			st.oom++;
		}
		break;
	}
	default:
		break;
	}
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, BUFFER_BYTES);
	*size = *buffer ? BUFFER_BYTES : 0;   /* no buffer: CUPTI counts what it drops */
	*max_records = 0;
}

/* Every record of one completed buffer into the state. */
static void consume(uint8_t *buffer, size_t valid)
{
	CUpti_Activity *rec = NULL;
	CUptiResult r;

	pthread_mutex_lock(&st.lock);
	while ((r = cuptiActivityGetNextRecord(buffer, valid, &rec)) == CUPTI_SUCCESS)
		take(rec);
	if (r != CUPTI_ERROR_MAX_LIMIT_REACHED) {
		/* an unreadable record: the rest of the buffer is lost, and the
		 * trace must not look complete */
		fprintf(stderr, TAG "activity buffer: cuptiActivityGetNextRecord: %s (%d); the rest of the buffer "
			"is counted as 1 dropped record\n", res_name(r), (int)r);
		st.dropped++;
	}
	pthread_mutex_unlock(&st.lock);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	size_t dropped = 0;

	(void)size;
	consume(buffer, valid);
	pthread_mutex_lock(&st.lock);
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		st.dropped += (long)dropped;
	pthread_mutex_unlock(&st.lock);
	free(buffer);
}

/* The NVTX domain's callback: CUPTI records the markers itself. */
static void CUPTIAPI nvtx_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				   const void *cbdata)
{
	(void)userdata;
	(void)domain;
	(void)cbid;
	(void)cbdata;
}

/* ------------------------------------------------------------------------
 * Writing
 */

/* The temporary, new and never through a symbolic link (issue 40): a link
 * at its name is refused (ELOOP), another file there (a dead process that
 * had our PID) is unlinked once, which touches no file's data. */
static FILE *create_tmp(const char *tmp)
{
	for (int tries = 0; tries < 2; tries++) {
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		struct stat st;
		FILE *f;

		if (fd >= 0) {
			if (!(f = fdopen(fd, "w")))
				close(fd);
			return f;
		}
		if (errno != EEXIST || lstat(tmp, &st) != 0)
			return NULL;
		if (S_ISLNK(st.st_mode)) {
			errno = ELOOP;
			return NULL;
		}
		if (unlink(tmp) != 0)
			return NULL;
	}
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Markers by time, then arrival: a range_end must come after the
 * range_start it closes, and CUPTI's buffers from several threads need not
 * arrive in time order. */
static int cmp_marker(const void *a, const void *b)
{
	const struct marker *x = a, *y = b;

	if (x->ts != y->ts)
		return (x->ts > y->ts) - (x->ts < y->ts);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int has_corr(const uint32_t *v, size_t n, uint32_t c)
{
	return bsearch(&c, v, n, sizeof(*v), cmp_u32) != NULL;
}

/* Name of CUDA device `ordinal` through the driver the process loaded. */
static void device_name(uint32_t ordinal, char *out, size_t n)
{
	typedef int (*get_fn)(int *, int);
	typedef int (*name_fn)(char *, int, int);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	get_fn get = h ? (get_fn)dlsym(h, "cuDeviceGet") : NULL;
	name_fn name = h ? (name_fn)dlsym(h, "cuDeviceGetName") : NULL;
	int dev = 0;

	snprintf(out, n, "unknown CUDA device %u", ordinal);
	if (get && name && get(&dev, (int)ordinal) == 0 && name(out, (int)n, dev) == 0)
		out[n - 1] = '\0';
	if (h)
		dlclose(h);
}

/* A name on one line: control characters become '?'. */
static void put_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
	fputc('\n', f);
}

/* Write the records held to path (lock held). */
static int write_trace(const char *path)
{
	char tmp[4200], dev[128];
	uint32_t *corrs = NULL, version = 0;
	size_t i, nrec = 0;
	size_t dropped = 0;
	CUptiResult r;
	FILE *f;
	int ok;

	if (cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS)
		st.dropped += (long)dropped;
	if ((r = cuptiGetVersion(&version)) != CUPTI_SUCCESS) {
		fprintf(stderr, TAG "cuptiGetVersion: %s (%d); the trace says cupti 0\n", res_name(r), (int)r);
		version = 0;
	}
	device_name(st.nd ? st.d[0].device : 0, dev, sizeof(dev));
	corrs = malloc((st.nd ? st.nd : 1) * sizeof(*corrs));
	if (!corrs) {
		fprintf(stderr, TAG "out of memory writing %s\n", path);
		return -1;
	}
	for (i = 0; i < st.nd; i++)
		corrs[i] = st.d[i].corr;
	qsort(corrs, st.nd, sizeof(*corrs), cmp_u32);
	if (st.nm > 1)   /* qsort takes no NULL base, even for 0 elements */
		qsort(st.m, st.nm, sizeof(*st.m), cmp_marker);

	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	f = create_tmp(tmp);
	if (!f) {
		fprintf(stderr, TAG "cannot write %s: ", tmp);
		perror(NULL);
		free(corrs);
		return -1;
	}
	fprintf(f, "hetbatch-ktrace 1\n");
	fprintf(f, "device ");
	put_name(f, dev[0] ? dev : "unknown");
	fprintf(f, "cupti %u\ndropped %ld\nuntimed %ld\n", version, st.dropped + st.oom, st.untimed);
	for (i = 0; i < st.nm; i++) {
		const struct marker *m = &st.m[i];

		if (m->start) {
			fprintf(f, "range_start %u %u %llu ", m->id, m->tid, (unsigned long long)m->ts);
			put_name(f, m->name[0] ? m->name : "?");
		} else {
			fprintf(f, "range_end %u %u %llu\n", m->id, m->tid, (unsigned long long)m->ts);
		}
		nrec++;
	}
	for (i = 0; i < st.na; i++)
		if (has_corr(corrs, st.nd, st.a[i].corr)) {
			fprintf(f, "api %u %u %llu %llu\n", st.a[i].corr, st.a[i].tid, (unsigned long long)st.a[i].start,
				(unsigned long long)st.a[i].end);
			nrec++;
		}
	for (i = 0; i < st.nd; i++) {
		const struct dev_rec *d = &st.d[i];

		fprintf(f, "%s %u %u %llu %llu\n", d->kind == 'k' ? "kernel" : d->kind == 'c' ? "memcpy" : "memset",
			d->corr, d->stream, (unsigned long long)d->start, (unsigned long long)d->end);
		nrec++;
	}
	fprintf(f, "end %zu\n", nrec);
	free(corrs);
	ok = !ferror(f);
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp, path) != 0) {
		fprintf(stderr, TAG "writing %s failed: ", path);
		perror(NULL);
		unlink(tmp);
		return -1;
	}
	fprintf(stderr, TAG "%s: %zu records (%zu ranges, %zu device records), %ld dropped\n", path, nrec, st.nm,
		st.nd, st.dropped + st.oom);
	return 0;
}

/* Flush CUPTI's buffers (not under the lock: the completed callback takes
 * it).  A failed flush leaves records in CUPTI's buffers that the trace
 * will lack: counted as one dropped record, as consume() counts an
 * unreadable buffer, so the point is not kept as complete. */
static void flush_all(void)
{
	CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);

	if (r == CUPTI_SUCCESS)
		return;
	fprintf(stderr, TAG "cuptiActivityFlushAll(FLUSH_FORCED): %s (%d); records still in CUPTI's buffers are lost: "
		"counted as 1 dropped record\n", res_name(r), (int)r);
	pthread_mutex_lock(&st.lock);
	st.dropped++;
	pthread_mutex_unlock(&st.lock);
}

/* Flush CUPTI's buffers and write the trace, once.  Callers synchronise
 * the device first (records of unfinished work are lost).  0 on success
 * (or when already written), -1 when tracing is off or writing failed. */
API int hb_inject_finish(void)
{
	int rc;

	pthread_mutex_lock(&st.lock);
	if (!st.active || st.written) {
		rc = st.written ? 0 : -1;
		pthread_mutex_unlock(&st.lock);
		return rc;
	}
	pthread_mutex_unlock(&st.lock);
	flush_all();
	pthread_mutex_lock(&st.lock);
	rc = st.written ? 0 : write_trace(st.out);
	st.written = 1;
	pthread_mutex_unlock(&st.lock);
	return rc;
}

/* Drop every record held (lock held). */
static void reset_records(void)
{
	for (size_t i = 0; i < st.nm; i++)
		free(st.m[i].name);
	free(st.m);
	free(st.a);
	free(st.d);
	st.m = NULL;
	st.a = NULL;
	st.d = NULL;
	st.nm = st.cm = st.na = st.ca = st.nd = st.cd = 0;
	st.dropped = st.untimed = st.oom = 0;
}

/* Test hooks (tests/cupti/test_inject.c, no GPU needed): feed one activity
 * buffer as CUPTI hands it back, then write what was fed to path and
 * forget it.  A traced process never calls them. */
API void hb_inject_test_feed(uint8_t *buffer, size_t valid)
{
	consume(buffer, valid);
}

API int hb_inject_test_write(const char *path)
{
	int rc = -1;

	pthread_mutex_lock(&st.lock);
	rc = write_trace(path);
	reset_records();
	pthread_mutex_unlock(&st.lock);
	return rc;
}

/* Flush, write every record so far to path and forget them: a worker
 * that measures several points in one process (torch_worker.py, through
 * ctypes, after synchronising the device) writes one file per point.
 * Each file carries the drops CUPTI reports when it is written (whether
 * CUPTI's global count restarts after a read or not, a file never shows
 * fewer drops than happened during its point, so a point with drops is
 * never kept).  0, or -1 (not tracing, write failed). */
API int hb_inject_write_to(const char *path)
{
	int rc;

	pthread_mutex_lock(&st.lock);
	if (!st.active || st.written) {
		pthread_mutex_unlock(&st.lock);
		return -1;
	}
	pthread_mutex_unlock(&st.lock);
	flush_all();
	pthread_mutex_lock(&st.lock);
	rc = write_trace(path);
	reset_records();
	pthread_mutex_unlock(&st.lock);
	return rc;
}

static void at_exit(void)
{
	hb_inject_finish();
}

/* ------------------------------------------------------------------------
 * Entry point
 */

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_MARKER,
};
static const char *const kind_names[] = {
	"CONCURRENT_KERNEL", "MEMCPY", "MEMSET", "RUNTIME", "DRIVER", "MARKER",
};

/* Point NVTX at libcupti unless the user did: the libcupti that defines
 * cuptiActivityEnable in this process. */
static void nvtx_to_cupti(void)
{
	Dl_info info;

	if (getenv("NVTX_INJECTION64_PATH"))
		return;
	if (dladdr((void *)(uintptr_t)cuptiActivityEnable, &info) && info.dli_fname && info.dli_fname[0] == '/')
		setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
	else
		fprintf(stderr, TAG "NVTX_INJECTION64_PATH is unset and libcupti's path is unknown: NVTX ranges may "
			"not be recorded\n");
}

/* Called by the CUDA driver (CUDA_INJECTION64_PATH) during cuInit.
 * Returns 1 (success) even when tracing cannot start: a missing trace
 * file is reported by whoever reads it, and the traced process runs on. */
API int InitializeInjection(void)
{
	const char *out = getenv("HETBATCH_TRACE_OUT");
	CUptiResult r;
	size_t i;

	if (!out || !out[0]) {
		fprintf(stderr, TAG "HETBATCH_TRACE_OUT is not set: not tracing\n");
		return 1;
	}
	if (strlen(out) >= sizeof(st.out)) {
		fprintf(stderr, TAG "HETBATCH_TRACE_OUT is longer than %zu bytes: not tracing\n", sizeof(st.out) - 1);
		return 1;
	}
	nvtx_to_cupti();
	r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	if (r != CUPTI_SUCCESS)
		fprintf(stderr, TAG "cuptiSetThreadIdType(SYSTEM): %s (%d); API and marker thread ids may not match\n",
			res_name(r), (int)r);
	r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		fprintf(stderr, TAG "cuptiActivityRegisterCallbacks: %s (%d): not tracing\n", res_name(r), (int)r);
		return 1;
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		r = cuptiActivityEnable(kinds[i]);
		if (r != CUPTI_SUCCESS) {
			fprintf(stderr, TAG "cuptiActivityEnable(%s): %s (%d): not tracing\n", kind_names[i], res_name(r),
				(int)r);
			while (i-- > 0)
				(void)cuptiActivityDisable(kinds[i]);  /* undoing: the failure above is reported */
			return 1;
		}
	}
	/* launches from inside the driver, outside any API call: optional */
	r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API);
	if (r != CUPTI_SUCCESS)
		fprintf(stderr, TAG "cuptiActivityEnable(INTERNAL_LAUNCH_API): %s (%d); going on without it\n",
			res_name(r), (int)r);
	r = cuptiSubscribe(&st.sub, nvtx_callback, NULL);
	if (r == CUPTI_SUCCESS)
		r = cuptiEnableDomain(1, st.sub, CUPTI_CB_DOMAIN_NVTX);
	if (r != CUPTI_SUCCESS)
		fprintf(stderr, TAG "NVTX callback domain: %s (%d); relying on the MARKER activity alone\n",
			res_name(r), (int)r);
	pthread_mutex_lock(&st.lock);
	memcpy(st.out, out, strlen(out) + 1);
	st.active = 1;
	pthread_mutex_unlock(&st.lock);
	atexit(at_exit);
	return 1;
}
