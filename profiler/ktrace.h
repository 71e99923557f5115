/*
 * ktrace.h: kernel traces of an unmodified process (a PyTorch worker),
 * recorded by the CUPTI injection library (inject.c, loaded by the CUDA
 * driver through CUDA_INJECTION64_PATH), and their attribution to the
 * training phases the process marked with NVTX ranges.
 *
 * The file ("ktrace", text, one record a line, written once at exit):
 *
 *   hetbatch-ktrace 1                       format and version (first line)
 *   device NVIDIA H100 80GB HBM3            device name (rest of the line)
 *   cupti 130001                            CUPTI API version
 *   dropped 0                               activity records CUPTI dropped
 *   untimed 0                               records delivered without timestamps
 *   range_start ID TID TS NAME              NVTX range opened (push or start)
 *   range_end ID TID TS                     NVTX range closed (pop or end)
 *   api CORR TID START END                  a runtime or driver API call
 *   kernel CORR STREAM START END            a kernel (CONCURRENT_KERNEL)
 *   memcpy CORR STREAM START END            a memory copy
 *   memset CORR STREAM START END            a memory set
 *   end N                                   last line: N record lines above
 *
 * The five header lines come first (after the version, in any order, each
 * exactly once); then records in any order; then `end N`.  A file that
 * lacks the end line, or whose count disagrees, was cut short (the process
 * died before the injection library finished writing) and is refused.
 * Lines that start with '#' are comments (the hand-made test fixtures say
 * so in them).  Numbers are decimal: ID, CORR, STREAM and TID unsigned
 * 32-bit (CUPTI's marker id, correlation id, stream id and thread id),
 * TS/START/END unsigned 64-bit ns of CUPTI's one clock (markers, API
 * calls and device records share it).  NAME is the rest of the line
 * (spaces kept; the writer replaced control characters by '?').
 *
 * Ranges: a range_end closes the open range_start with the same ID (NVTX
 * start/end ranges, which may cross threads); when no open range has that
 * ID it closes the innermost open range of its thread (push/pop, which
 * nest per thread, whatever ids CUPTI gave them).  A range still open at
 * the end of the file is counted (`unclosed`) and treated as open until
 * the trace's last timestamp.
 *
 * Attribution (hb_ktrace_attribute):
 *   launching thread  a device record's correlation id names the API call
 *                     that launched it (api CORR): its thread and start
 *                     time.  Records with no api line are `unmatched`.
 *   iteration         ranges named HB_KTRACE_ITER_NAME, on any thread,
 *                     must not overlap; a record belongs to the iteration
 *                     whose range contains its launch time; records launched
 *                     outside every iteration (warm-up, set-up) are counted
 *                     in `outside` and left out.
 *   phase             the innermost range open on the launching thread at
 *                     the launch time whose name is a phase name
 *                     (HB_KTRACE_PHASE_NAMES); ranges with other names are
 *                     transparent (a model's own NVTX ranges inside a phase
 *                     do not hide it).
 *   by stream         a record launched in no phase range of its own
 *                     thread, onto a stream that another thread owns, takes
 *                     the phase open on the owner at the launch time (the
 *                     owner of a stream: the thread that launched the most
 *                     of its records inside its own phase ranges).  This is
 *                     PyTorch's backward: the autograd engine launches every
 *                     VSW's backward kernels from its own device thread onto
 *                     the stream of the forward, while the VSW's thread
 *                     waits in backward() with its "backward" range open.
 *                     Counted in `by_stream`.  A record of an iteration that
 *                     still has no phase is `unattributed` and goes to the
 *                     phase HB_KT_OTHER.
 *   times             per iteration and phase, through hb_trace_group
 *                     (trace.h): union_s (device wall time of the phase,
 *                     the VSWs' overlap counted once), sum_s (sum of the
 *                     record lengths) and busy_max_s (the busiest stream's
 *                     union: the slowest VSW); iter_s is the length of the
 *                     iteration range (the worker synchronises the device
 *                     before closing it, so it is the iteration's wall time).
 *
 * Pure C, no CUDA headers: builds everywhere, and tests feed it hand-made
 * files (tests/fixtures/ktrace/).
 */
#ifndef HB_KTRACE_H
#define HB_KTRACE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "profile_rows.h" /* defines: struct hb_compute_row */
#include "trace.h"

#define HB_KTRACE_MAGIC "hetbatch-ktrace"
#define HB_KTRACE_VERSION 1

/* The range that delimits one measured iteration. */
#define HB_KTRACE_ITER_NAME "iteration"

/* Phases, in the order of enum hb_kt_phase.  The Python worker
 * (profiler/torch_worker.py, PHASES) names its NVTX ranges exactly so;
 * tests/torch/check_worker.py reads this line to check that they agree. */
#define HB_KTRACE_PHASE_NAMES "data", "forward", "backward", "aggregation", "optimizer", "weight_copy"

enum hb_kt_phase {
	HB_KT_DATA,        /* input batch to the device */
	HB_KT_FWD,         /* forward of every VSW */
	HB_KT_BWD,         /* backward of every VSW (gradient accumulation included) */
	HB_KT_AGG,         /* local aggregation of the VSWs' gradients into the main VSW */
	HB_KT_OPT,         /* the main VSW's optimizer step */
	HB_KT_COPY,        /* weight copy from the main VSW to the others */
	HB_KT_OTHER,       /* inside an iteration, in no phase range */
	HB_KT_NPHASES
};

/* Name of a phase ("forward", ...; "other" for HB_KT_OTHER). */
const char *hb_kt_phase_name(int phase);
/* The phase a range name stands for, or -1. */
int hb_kt_phase_of(const char *name);

/* One NVTX range, closed (or treated as closed at the trace's end). */
struct hb_ktrace_range {
	uint64_t start_ns, end_ns;  /* CUPTI timestamps */
	uint32_t id;                /* CUPTI marker id of the start */
	uint32_t tid;               /* thread that opened it */
	size_t name;                /* offset of its name in the trace's name pool */
	long line;                  /* line of its range_start, for messages */
};

/* One runtime/driver API call (the launch of device records). */
struct hb_ktrace_api {
	uint64_t start_ns, end_ns;
	uint32_t corr;              /* correlation id */
	uint32_t tid;               /* calling thread */
	long line;
};

/* A parsed file.  hb_ktrace_free releases it; a zero-filled struct is empty. */
struct hb_ktrace {
	char path[512];             /* the file read, for messages */
	char device[128];           /* header: device name */
	long cupti_version;         /* header: CUPTI API version */
	long dropped;               /* header: records CUPTI dropped */
	long untimed;               /* header: records without timestamps */
	struct hb_ktrace_range *ranges; /* closed ranges, in the order their range_start lines came */
	size_t nranges;
	long unclosed;              /* ranges still open at the end of the file */
	struct hb_ktrace_api *apis;
	size_t napis;
	struct hb_trace dev;        /* kernels, memcpys, memsets (recs; corrs unused) */
	long *dev_line;             /* line of each dev.recs entry */
	char *names;                /* name pool (NUL-separated) */
	size_t names_len, names_cap;
	size_t ranges_cap, apis_cap, dev_line_cap;
};

/* Parse text (len bytes; need not be NUL-terminated) read from `path` (for
 * messages).  Input errors name path, line, field and value: a wrong first
 * line or version, a header key missing, repeated or unknown, a record
 * before the header is complete, an unknown record kind, a missing, extra
 * or non-numeric field, a number out of range, end < start, a range_end
 * that closes nothing, a missing or disagreeing end line (truncation). */
int hb_ktrace_parse(const char *text, size_t len, const char *path, struct hb_ktrace *out, struct hb_error *err);
/* Read and parse a file. */
int hb_ktrace_read(const char *path, struct hb_ktrace *out, struct hb_error *err);
void hb_ktrace_free(struct hb_ktrace *t);
const char *hb_ktrace_range_name(const struct hb_ktrace *t, const struct hb_ktrace_range *r);

/* The times of one phase in one iteration (or their means over iterations). */
struct hb_kt_phase_time {
	double union_s;             /* union of the phase's records over all streams */
	double sum_s;               /* sum of the records' lengths */
	double busy_max_s;          /* the busiest stream's union */
	int nstreams;               /* streams the phase ran on */
	long nrecs;                 /* records */
};

struct hb_kt_iter {
	double iter_s;              /* length of the iteration range */
	struct hb_kt_phase_time ph[HB_KT_NPHASES];
};

struct hb_kt_result {
	int niters;                 /* iteration ranges */
	struct hb_kt_iter *iters;   /* per iteration, in time order (malloc'd; hb_kt_result_free) */
	struct hb_kt_iter mean;     /* means over the iterations (nstreams: the largest seen) */
	long records;               /* device records in the file */
	long attributed;            /* in an iteration and a phase */
	long by_stream;             /* of those, attributed through their stream's owner thread */
	long unattributed;          /* in an iteration, no phase range open (phase HB_KT_OTHER) */
	long outside;               /* launched outside every iteration (warm-up, set-up) */
	long unmatched;             /* no api line with their correlation id */
	long ignored_ranges;        /* ranges whose name is neither a phase nor the iteration */
};

/* Options of the attribution. */
struct hb_kt_opts {
	int allow_dropped;          /* 0: a trace with dropped > 0 is refused (issue 12: zero dropped
				     * records in every kept run); 1: attribute anyway (diagnostics) */
};

/*
 * Attribute t's device records (see the top of this file) into *out.
 * Errors (input, naming the file and line): dropped > 0 unless allowed; no
 * iteration range; two iteration ranges that overlap; one correlation id
 * on two api lines of different threads.  Out of memory (runtime).
 */
int hb_ktrace_attribute(const struct hb_ktrace *t, const struct hb_kt_opts *opts, struct hb_kt_result *out,
			struct hb_error *err);
void hb_kt_result_free(struct hb_kt_result *r);

/* A compute row's times from an attribution (profile --backend torch,
 * source "torch"): fwd_s forward, bwd_s backward + aggregation (the
 * profile database's bwd_s includes the local aggregation), data_s data,
 * update_s optimizer, copy_s weight_copy, each the mean per-iteration
 * union over the VSWs' streams; total_s the mean iteration range.  Other
 * fields of row are left as they are. */
void hb_kt_compute_times(const struct hb_kt_result *r, struct hb_compute_row *row);

#endif
