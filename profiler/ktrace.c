/*
 * ktrace.c: the kernel trace files of the CUPTI injection library, read and
 * attributed to NVTX phases (see ktrace.h for the format and the rules).
 *
 * Parsing is one pass over the lines; attribution is sorts and binary
 * searches (O(n log n) in records and ranges), then trace.c's
 * hb_trace_group does the interval arithmetic, with external id
 * iteration x HB_TRACE_EXT_SLOTS + phase, exactly as for the synthetic
 * workloads' CUPTI runs.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"      /* defines: hb_read_text_file */
#include "ktrace.h"
#include "trace.h"      /* defines: hb_trace_group, hb_trace_ext_id */

_Static_assert(HB_KT_NPHASES <= HB_TRACE_EXT_SLOTS, "every phase needs an external-id slot");

static const char *const phase_names[HB_KT_NPHASES] = { HB_KTRACE_PHASE_NAMES, "other" };

const char *hb_kt_phase_name(int phase)
{
	return phase >= 0 && phase < HB_KT_NPHASES ? phase_names[phase] : "?";
}

int hb_kt_phase_of(const char *name)
{
	for (int p = 0; p < HB_KT_OTHER; p++)
		if (strcmp(name, phase_names[p]) == 0)
			return p;
	return -1;
}

/* ------------------------------------------------------------------------
 * Storage
 */

void hb_ktrace_free(struct hb_ktrace *t)
{
	free(t->ranges);
	free(t->apis);
	free(t->dev_line);
	free(t->names);
	hb_trace_free(&t->dev);
	memset(t, 0, sizeof(*t));
}

const char *hb_ktrace_range_name(const struct hb_ktrace *t, const struct hb_ktrace_range *r)
{
	return t->names + r->name;
}

/* Room for need elements of elem bytes in *arr (capacity *cap). */
static int grow(void **arr, size_t *cap, size_t need, size_t elem, struct hb_error *err)
{
	size_t ncap = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return hb_runtime_error(err, "ktrace: %zu entries do not fit in memory", need);
		ncap *= 2;
	}
	p = realloc(*arr, ncap * elem);
	if (!p)
		return hb_runtime_error(err, "ktrace: out of memory for %zu entries", ncap);
	*arr = p;
	*cap = ncap;
	return 0;
}

/* ------------------------------------------------------------------------
 * Parsing
 */

/* The parser's position, for messages. */
struct pos {
	const char *path;
	long line;
};

/* Next space-separated field of *s (advanced past it); NULL at the end. */
static char *next_field(char **s)
{
	char *p = *s, *start;

	while (*p == ' ')
		p++;
	if (!*p) {
		*s = p;
		return NULL;
	}
	start = p;
	while (*p && *p != ' ')
		p++;
	if (*p)
		*p++ = '\0';
	*s = p;
	return start;
}

/* A decimal unsigned number of at most `max` into *out. */
static int parse_u64(const struct pos *ps, const char *kind, const char *field, const char *s, uint64_t max,
		     uint64_t *out, struct hb_error *err)
{
	char *end;
	unsigned long long v;

	if (!s)
		return hb_input_error(err, "%s:%ld: %s: field %s missing", ps->path, ps->line, kind, field);
	if (*s < '0' || *s > '9')
		return hb_input_error(err, "%s:%ld: %s: field %s '%s' is not an unsigned decimal number", ps->path,
				      ps->line, kind, field, s);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return hb_input_error(err, "%s:%ld: %s: field %s '%s' is not an unsigned decimal number", ps->path,
				      ps->line, kind, field, s);
	if (errno == ERANGE || v > max)
		return hb_input_error(err, "%s:%ld: %s: field %s '%s' is out of range (at most %" PRIu64 ")",
				      ps->path, ps->line, kind, field, s, max);
	*out = v;
	return 0;
}

static int no_more(const struct pos *ps, const char *kind, char *rest, struct hb_error *err)
{
	char *extra = next_field(&rest);

	if (extra)
		return hb_input_error(err, "%s:%ld: %s: unexpected extra field '%s'", ps->path, ps->line, kind, extra);
	return 0;
}

/* Fields CORR-or-ID, TID-or-STREAM, START, END of api and device lines. */
struct four {
	uint64_t a, b, start, end;
};

static int parse_four(const struct pos *ps, const char *kind, const char *fa, const char *fb, char *rest,
		      struct four *f, struct hb_error *err)
{
	if (parse_u64(ps, kind, fa, next_field(&rest), UINT32_MAX, &f->a, err) ||
	    parse_u64(ps, kind, fb, next_field(&rest), UINT32_MAX, &f->b, err) ||
	    parse_u64(ps, kind, "START", next_field(&rest), UINT64_MAX, &f->start, err) ||
	    parse_u64(ps, kind, "END", next_field(&rest), UINT64_MAX, &f->end, err) || no_more(ps, kind, rest, err))
		return -1;
	if (f->end < f->start)
		return hb_input_error(err, "%s:%ld: %s: END %" PRIu64 " is before START %" PRIu64, ps->path, ps->line,
				      kind, f->end, f->start);
	return 0;
}

static int add_name(struct hb_ktrace *t, const char *name, size_t *off, struct hb_error *err)
{
	size_t n = strlen(name) + 1;

	if (grow((void **)&t->names, &t->names_cap, t->names_len + n, 1, err))
		return -1;
	memcpy(t->names + t->names_len, name, n);
	*off = t->names_len;
	t->names_len += n;
	return 0;
}

/* Header keys, in the order of the `seen` flags. */
static const char *const header_keys[] = { "device", "cupti", "dropped", "untimed" };
#define NHEADER 4

static int parse_header(struct hb_ktrace *t, const struct pos *ps, const char *key, char *rest, int *seen,
			struct hb_error *err)
{
	uint64_t v;
	int k;

	for (k = 0; k < NHEADER; k++)
		if (strcmp(key, header_keys[k]) == 0)
			break;
	if (k == NHEADER)
		return hb_input_error(err, "%s:%ld: unknown line kind '%s' in the header (expected device, cupti, "
				      "dropped, untimed)", ps->path, ps->line, key);
	if (seen[k])
		return hb_input_error(err, "%s:%ld: header: %s given twice", ps->path, ps->line, key);
	seen[k] = 1;
	if (k == 0) {
		while (*rest == ' ')
			rest++;
		if (!*rest)
			return hb_input_error(err, "%s:%ld: header: device: name missing", ps->path, ps->line);
		if (strlen(rest) >= sizeof(t->device))
			return hb_input_error(err, "%s:%ld: header: device: name longer than %zu bytes", ps->path,
					      ps->line, sizeof(t->device) - 1);
		memcpy(t->device, rest, strlen(rest) + 1);
		return 0;
	}
	if (parse_u64(ps, key, "value", next_field(&rest), (uint64_t)LONG_MAX, &v, err) || no_more(ps, key, rest, err))
		return -1;
	if (k == 1)
		t->cupti_version = (long)v;
	else if (k == 2)
		t->dropped = (long)v;
	else
		t->untimed = (long)v;
	return 0;
}

/* Open ranges: indices into t->ranges of ranges not yet closed, in the
 * order they opened. */
struct open_set {
	size_t *idx;
	size_t n, cap;
};

static int range_start(struct hb_ktrace *t, struct open_set *open, const struct pos *ps, char *rest,
		       uint64_t *ts_out, struct hb_error *err)
{
	struct hb_ktrace_range *r;
	uint64_t id, tid, ts;

	if (parse_u64(ps, "range_start", "ID", next_field(&rest), UINT32_MAX, &id, err) ||
	    parse_u64(ps, "range_start", "TID", next_field(&rest), UINT32_MAX, &tid, err) ||
	    parse_u64(ps, "range_start", "TS", next_field(&rest), UINT64_MAX - 1, &ts, err))
		return -1;
	while (*rest == ' ')
		rest++;
	if (!*rest)
		return hb_input_error(err, "%s:%ld: range_start: field NAME missing", ps->path, ps->line);
	if (grow((void **)&t->ranges, &t->ranges_cap, t->nranges + 1, sizeof(*t->ranges), err) ||
	    grow((void **)&open->idx, &open->cap, open->n + 1, sizeof(*open->idx), err))
		return -1;
	r = &t->ranges[t->nranges];
	r->start_ns = ts;
	r->end_ns = UINT64_MAX;   /* open */
	r->id = (uint32_t)id;
	r->tid = (uint32_t)tid;
	r->line = ps->line;
	if (add_name(t, rest, &r->name, err))
		return -1;
	open->idx[open->n++] = t->nranges++;
	*ts_out = ts;
	return 0;
}

static int range_end(struct hb_ktrace *t, struct open_set *open, const struct pos *ps, char *rest,
		     uint64_t *ts_out, struct hb_error *err)
{
	uint64_t id, tid, ts;
	size_t k, found = SIZE_MAX;
	struct hb_ktrace_range *r;

	if (parse_u64(ps, "range_end", "ID", next_field(&rest), UINT32_MAX, &id, err) ||
	    parse_u64(ps, "range_end", "TID", next_field(&rest), UINT32_MAX, &tid, err) ||
	    parse_u64(ps, "range_end", "TS", next_field(&rest), UINT64_MAX - 1, &ts, err) ||
	    no_more(ps, "range_end", rest, err))
		return -1;
	/* By id first (start/end ranges), else the thread's innermost (push/pop). */
	for (k = open->n; k-- > 0;)
		if (t->ranges[open->idx[k]].id == id) {
			found = k;
			break;
		}
	if (found == SIZE_MAX)
		for (k = open->n; k-- > 0;)
			if (t->ranges[open->idx[k]].tid == tid) {
				found = k;
				break;
			}
	if (found == SIZE_MAX)
		return hb_input_error(err, "%s:%ld: range_end: ID %" PRIu64 " TID %" PRIu64 " closes no open range "
				      "(no open range has that id, and thread %" PRIu64 " has none open)", ps->path,
				      ps->line, id, tid, tid);
	r = &t->ranges[open->idx[found]];
	if (ts < r->start_ns)
		return hb_input_error(err, "%s:%ld: range_end: TS %" PRIu64 " is before the start %" PRIu64
				      " of the range it closes (line %ld)", ps->path, ps->line, ts, r->start_ns, r->line);
	r->end_ns = ts;
	*ts_out = ts;
	memmove(open->idx + found, open->idx + found + 1, (open->n - found - 1) * sizeof(*open->idx));
	open->n--;
	return 0;
}

static int record(struct hb_ktrace *t, struct open_set *open, const struct pos *ps, const char *kind, char *rest,
		  uint64_t *last_ts, struct hb_error *err)
{
	struct four f;

	if (strcmp(kind, "range_start") == 0 || strcmp(kind, "range_end") == 0) {
		uint64_t ts = 0;

		if (kind[6] == 's' ? range_start(t, open, ps, rest, &ts, err) : range_end(t, open, ps, rest, &ts, err))
			return -1;
		if (ts > *last_ts)
			*last_ts = ts;
		return 0;
	}
	if (strcmp(kind, "api") == 0) {
		struct hb_ktrace_api *a;

		if (parse_four(ps, kind, "CORR", "TID", rest, &f, err) ||
		    grow((void **)&t->apis, &t->apis_cap, t->napis + 1, sizeof(*t->apis), err))
			return -1;
		a = &t->apis[t->napis++];
		a->corr = (uint32_t)f.a;
		a->tid = (uint32_t)f.b;
		a->start_ns = f.start;
		a->end_ns = f.end;
		a->line = ps->line;
	} else if (strcmp(kind, "kernel") == 0 || strcmp(kind, "memcpy") == 0 || strcmp(kind, "memset") == 0) {
		struct hb_trace_rec r;

		if (parse_four(ps, kind, "CORR", "STREAM", rest, &f, err) ||
		    grow((void **)&t->dev_line, &t->dev_line_cap, t->dev.nrecs + 1, sizeof(*t->dev_line), err))
			return -1;
		r.start_ns = f.start;
		r.end_ns = f.end;
		r.corr = (uint32_t)f.a;
		r.stream = (uint32_t)f.b;
		r.kind = kind[0] == 'k' ? HB_TRACE_KERNEL : kind[3] == 'c' ? HB_TRACE_MEMCPY : HB_TRACE_MEMSET;
		if (hb_trace_add_rec(&t->dev, &r, err))
			return -1;
		t->dev_line[t->dev.nrecs - 1] = ps->line;
	} else {
		return hb_input_error(err, "%s:%ld: unknown record kind '%s' (expected range_start, range_end, api, "
				      "kernel, memcpy, memset or end)", ps->path, ps->line, kind);
	}
	if (f.end > *last_ts)
		*last_ts = f.end;
	return 0;
}

int hb_ktrace_parse(const char *text, size_t len, const char *path, struct hb_ktrace *out, struct hb_error *err)
{
	struct hb_ktrace t = { 0 };
	struct open_set open = { 0 };
	struct pos ps = { path, 0 };
	int seen[NHEADER] = { 0 }, nseen = 0, got_magic = 0, got_end = 0;
	long nrecords = 0;
	uint64_t last_ts = 0;
	size_t i = 0;
	char *line = NULL;
	size_t line_cap = 0;
	int rc = -1;

	snprintf(t.path, sizeof(t.path), "%s", path);
	while (i < len) {
		size_t e = i, n;
		char *rest, *kind;

		while (e < len && text[e] != '\n')
			e++;
		n = e - i;
		ps.line++;
		/* n + 1 must not wrap to a size grow() already has (GCC's LTO
		 * warned about a memcpy of SIZE_MAX on that path) */
		if (n == SIZE_MAX) {
			hb_input_error(err, "%s:%ld: line too long", path, ps.line);
			goto out;
		}
		if (grow((void **)&line, &line_cap, n + 1, 1, err))
			goto out;
		memcpy(line, text + i, n);
		line[n] = '\0';
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		i = e + 1;
		if (memchr(line, '\0', n)) {
			hb_input_error(err, "%s:%ld: a NUL byte: not a text trace", path, ps.line);
			goto out;
		}
		if (!got_magic) {
			char want[32];

			snprintf(want, sizeof(want), "%s ", HB_KTRACE_MAGIC);
			if (strncmp(line, want, strlen(want)) != 0) {
				hb_input_error(err, "%s:%ld: not a hetbatch kernel trace: the first line is '%.60s', "
					       "expected '%s %d'", path, ps.line, line, HB_KTRACE_MAGIC, HB_KTRACE_VERSION);
				goto out;
			}
			if (strcmp(line + strlen(want), "1") != 0) {
				hb_input_error(err, "%s:%ld: version '%.20s' of the kernel trace format is not supported "
					       "(this hetbatch reads version %d)", path, ps.line, line + strlen(want),
					       HB_KTRACE_VERSION);
				goto out;
			}
			got_magic = 1;
			continue;
		}
		if (n == 0 || line[0] == '#')
			continue;
		rest = line;
		kind = next_field(&rest);
		if (!kind)
			continue;   /* spaces only */
		if (got_end) {
			hb_input_error(err, "%s:%ld: '%s' after the end line", path, ps.line, kind);
			goto out;
		}
		if (nseen < NHEADER) {
			if (parse_header(&t, &ps, kind, rest, seen, err))
				goto out;
			nseen++;
			continue;
		}
		if (strcmp(kind, "end") == 0) {
			uint64_t v;

			if (parse_u64(&ps, "end", "N", next_field(&rest), (uint64_t)LONG_MAX, &v, err) ||
			    no_more(&ps, "end", rest, err))
				goto out;
			if ((long)v != nrecords) {
				hb_input_error(err, "%s:%ld: end: N %" PRIu64 " but %ld record lines precede it (lines "
					       "lost or added)", path, ps.line, v, nrecords);
				goto out;
			}
			got_end = 1;
			continue;
		}
		if (record(&t, &open, &ps, kind, rest, &last_ts, err))
			goto out;
		nrecords++;
	}
	if (!got_magic) {
		hb_input_error(err, "%s: empty file: not a hetbatch kernel trace", path);
		goto out;
	}
	if (nseen < NHEADER) {
		for (int k = 0; k < NHEADER; k++)
			if (!seen[k]) {
				hb_input_error(err, "%s:%ld: header: %s missing (file cut short?)", path, ps.line,
					       header_keys[k]);
				goto out;
			}
	}
	if (!got_end) {
		hb_input_error(err, "%s:%ld: no end line after %ld records: the file was cut short (the traced "
			       "process died before the injection library finished writing)", path, ps.line, nrecords);
		goto out;
	}
	/* Ranges never closed: open until the trace's last timestamp. */
	for (size_t k = 0; k < open.n; k++) {
		struct hb_ktrace_range *r = &t.ranges[open.idx[k]];

		r->end_ns = last_ts > r->start_ns ? last_ts : r->start_ns;
		t.unclosed++;
	}
	*out = t;
	memset(&t, 0, sizeof(t));
	rc = 0;
out:
	free(line);
	free(open.idx);
	hb_ktrace_free(&t);
	return rc;
}

int hb_ktrace_read(const char *path, struct hb_ktrace *out, struct hb_error *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc;

	/* A trace of a long run is large; 4 GiB is far beyond any kept one. */
	if (hb_read_text_file(path, (size_t)4 << 30, &data, &len, err))
		return -1;
	rc = hb_ktrace_parse(data, len, path, out, err);
	free(data);
	return rc;
}

/* ------------------------------------------------------------------------
 * Attribution
 */

void hb_kt_result_free(struct hb_kt_result *r)
{
	free(r->iters);
	memset(r, 0, sizeof(*r));
}

/* Sort keys: copies of the values needed (qsort passes no context). */
struct iter_ix {
	uint64_t start, end;
	long line;
};

static int cmp_iter(const void *a, const void *b)
{
	const struct iter_ix *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

struct api_ix {
	uint32_t corr, tid;
	uint64_t start;
	long line;
};

static int cmp_api(const void *a, const void *b)
{
	const struct api_ix *x = a, *y = b;

	if (x->corr != y->corr)
		return (x->corr > y->corr) - (x->corr < y->corr);
	return (x->start > y->start) - (x->start < y->start);
}

struct phase_ix {
	uint32_t tid;
	int phase;
	uint64_t start, end;
	uint64_t max_end;   /* the largest end of this thread's entries up to this one */
};

static int cmp_phase(const void *a, const void *b)
{
	const struct phase_ix *x = a, *y = b;

	if (x->tid != y->tid)
		return (x->tid > y->tid) - (x->tid < y->tid);
	return (x->start > y->start) - (x->start < y->start);
}

/* The first api entry with this corr, or NULL. */
static const struct api_ix *find_api(const struct api_ix *a, size_t n, uint32_t corr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid].corr < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && a[lo].corr == corr ? &a[lo] : NULL;
}

/* The iteration containing launch time ts, or -1. */
static long find_iter(const struct iter_ix *it, size_t n, uint64_t ts)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {   /* first start > ts */
		size_t mid = lo + (hi - lo) / 2;

		if (it[mid].start <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || ts > it[lo - 1].end)
		return -1;
	return (long)(lo - 1);
}

/* The phase of the innermost phase range of thread tid open at ts, or
 * HB_KT_OTHER. */
static int find_phase(const struct phase_ix *p, size_t n, uint32_t tid, uint64_t ts)
{
	size_t lo = 0, hi = n;

	/* first entry after (tid, ts) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p[mid].tid < tid || (p[mid].tid == tid && p[mid].start <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* walk back through this thread's ranges that started at or before ts:
	 * the first that still contains ts started last, so it is the
	 * innermost; once no earlier range reaches ts (max_end), stop. */
	while (lo-- > 0 && p[lo].tid == tid) {
		if (p[lo].max_end < ts)
			break;
		if (p[lo].end >= ts)
			return p[lo].phase;
	}
	return HB_KT_OTHER;
}

/* A device record during attribution. */
struct rec_ix {
	uint32_t stream, tid;   /* its stream; the thread that launched it */
	uint64_t launch;        /* launch time */
	long iter;              /* its iteration, -1 outside every one (or unmatched) */
	int phase;              /* its phase, HB_KT_OTHER while none */
};

/* A stream and the thread that owns it. */
struct owner {
	uint32_t stream, tid;
};

struct vote {
	uint32_t stream, tid;
};

static int cmp_vote(const void *a, const void *b)
{
	const struct vote *x = a, *y = b;

	if (x->stream != y->stream)
		return (x->stream > y->stream) - (x->stream < y->stream);
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Each stream's owner: the thread that launched the most of the stream's
 * records inside its own phase ranges (ties: the smaller thread id).
 * *owners sorted by stream. */
static int stream_owners(const struct rec_ix *recs, size_t n, struct owner **owners, size_t *nowners,
			 struct hb_error *err)
{
	struct vote *v = malloc((n ? n : 1) * sizeof(*v));
	struct owner *o = malloc((n ? n : 1) * sizeof(*o));
	size_t nv = 0, no = 0, i, j;

	if (!v || !o) {
		free(v);
		free(o);
		return hb_runtime_error(err, "out of memory for %zu records", n);
	}
	for (i = 0; i < n; i++)
		if (recs[i].iter >= 0 && recs[i].phase != HB_KT_OTHER)
			v[nv++] = (struct vote){ recs[i].stream, recs[i].tid };
	qsort(v, nv, sizeof(*v), cmp_vote);
	for (i = 0; i < nv; i = j) {
		size_t best = 0;
		uint32_t best_tid = 0;

		for (j = i; j < nv && v[j].stream == v[i].stream;) {
			size_t k = j;

			while (k < nv && v[k].stream == v[i].stream && v[k].tid == v[j].tid)
				k++;
			if (k - j > best) {   /* ascending tids: a tie keeps the smaller */
				best = k - j;
				best_tid = v[j].tid;
			}
			j = k;
		}
		o[no++] = (struct owner){ v[i].stream, best_tid };
	}
	free(v);
	*owners = o;
	*nowners = no;
	return 0;
}

static int owner_of(const struct owner *o, size_t n, uint32_t stream, uint32_t *tid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o[mid].stream < stream)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && o[lo].stream == stream) {
		*tid = o[lo].tid;
		return 1;
	}
	return 0;
}

int hb_ktrace_attribute(const struct hb_ktrace *t, const struct hb_kt_opts *opts, struct hb_kt_result *out,
			struct hb_error *err)
{
	struct hb_kt_result res = { 0 };
	struct iter_ix *its = NULL;
	struct api_ix *apis = NULL;
	struct phase_ix *phs = NULL;
	struct hb_trace tr = { 0 };
	struct hb_trace_group *groups = NULL;
	struct rec_ix *recs = NULL;
	struct owner *owners = NULL;
	size_t nits = 0, nphs = 0, nowners = 0, k;
	int ngroups = 0, rc = -1;

	memset(out, 0, sizeof(*out));
	if (t->dropped > 0 && !(opts && opts->allow_dropped))
		return hb_input_error(err, "%s: header: dropped %ld: CUPTI dropped activity records, so phase times "
				      "would be short; a run with dropped records is not kept (record it again with "
				      "fewer iterations or a larger CUPTI buffer)", t->path, t->dropped);

	/* Iterations and phase ranges. */
	its = malloc((t->nranges ? t->nranges : 1) * sizeof(*its));
	phs = malloc((t->nranges ? t->nranges : 1) * sizeof(*phs));
	apis = malloc((t->napis ? t->napis : 1) * sizeof(*apis));
	if (!its || !phs || !apis) {
		hb_runtime_error(err, "%s: out of memory attributing %zu ranges", t->path, t->nranges);
		goto out;
	}
	for (k = 0; k < t->nranges; k++) {
		const struct hb_ktrace_range *r = &t->ranges[k];
		const char *name = hb_ktrace_range_name(t, r);
		int p;

		if (strcmp(name, HB_KTRACE_ITER_NAME) == 0) {
			its[nits++] = (struct iter_ix){ r->start_ns, r->end_ns, r->line };
		} else if ((p = hb_kt_phase_of(name)) >= 0) {
			phs[nphs++] = (struct phase_ix){ r->tid, p, r->start_ns, r->end_ns, 0 };
		} else {
			res.ignored_ranges++;
		}
	}
	if (nits == 0) {
		hb_input_error(err, "%s: no '%s' range: the worker marks each measured iteration with one", t->path,
			       HB_KTRACE_ITER_NAME);
		goto out;
	}
	qsort(its, nits, sizeof(*its), cmp_iter);
	for (k = 1; k < nits; k++)
		if (its[k].start < its[k - 1].end) {
			hb_input_error(err, "%s:%ld: the '%s' range starting here overlaps the one of line %ld: "
				       "iterations must follow each other", t->path, its[k].line, HB_KTRACE_ITER_NAME,
				       its[k - 1].line);
			goto out;
		}
	qsort(phs, nphs, sizeof(*phs), cmp_phase);
	for (k = 0; k < nphs; k++)
		phs[k].max_end = (k > 0 && phs[k - 1].tid == phs[k].tid && phs[k - 1].max_end > phs[k].end) ?
				 phs[k - 1].max_end : phs[k].end;

	/* API calls by correlation id; a runtime call and the driver call it
	 * made may share one: same thread, and the earlier start is the launch. */
	for (k = 0; k < t->napis; k++)
		apis[k] = (struct api_ix){ t->apis[k].corr, t->apis[k].tid, t->apis[k].start_ns, t->apis[k].line };
	qsort(apis, t->napis, sizeof(*apis), cmp_api);
	for (k = 1; k < t->napis; k++)
		if (apis[k].corr == apis[k - 1].corr && apis[k].tid != apis[k - 1].tid) {
			hb_input_error(err, "%s:%ld: api: CORR %" PRIu32 " on thread %" PRIu32 ", but line %ld gives it "
				       "thread %" PRIu32 ": one correlation id, one launching thread", t->path,
				       apis[k].line, apis[k].corr, apis[k].tid, apis[k - 1].line, apis[k - 1].tid);
			goto out;
		}

	res.niters = (int)nits;
	res.iters = calloc(nits, sizeof(*res.iters));
	if (!res.iters) {
		hb_runtime_error(err, "%s: out of memory for %zu iterations", t->path, nits);
		goto out;
	}
	for (k = 0; k < nits; k++)
		res.iters[k].iter_s = (double)(its[k].end - its[k].start) * 1e-9;

	/* Pass 1: each record's launch, iteration and phase on its own thread;
	 * votes for each stream's owner (the thread that launched the most of
	 * its records inside its own phase ranges). */
	recs = malloc((t->dev.nrecs ? t->dev.nrecs : 1) * sizeof(*recs));
	if (!recs) {
		hb_runtime_error(err, "%s: out of memory for %zu records", t->path, t->dev.nrecs);
		goto out;
	}
	res.records = (long)t->dev.nrecs;
	for (k = 0; k < t->dev.nrecs; k++) {
		const struct api_ix *a = find_api(apis, t->napis, t->dev.recs[k].corr);

		recs[k] = (struct rec_ix){ t->dev.recs[k].stream, a ? a->tid : 0, a ? a->start : 0, -1, HB_KT_OTHER };
		if (!a) {
			res.unmatched++;
			continue;
		}
		recs[k].iter = find_iter(its, nits, a->start);
		if (recs[k].iter < 0) {
			res.outside++;
			continue;
		}
		recs[k].phase = find_phase(phs, nphs, a->tid, a->start);
	}
	if (stream_owners(recs, t->dev.nrecs, &owners, &nowners, err)) {
		hb_error_prefix(err, "%s", t->path);
		goto out;
	}
	/* Pass 2: a record launched in no phase range of its own thread, on a
	 * stream another thread owns, takes the phase open on the owner at the
	 * launch (the autograd engine's device thread launches every VSW's
	 * backward kernels onto the VSW's stream while the VSW's thread waits
	 * in backward()). */
	for (k = 0; k < t->dev.nrecs; k++) {
		struct hb_trace_rec r = t->dev.recs[k];
		struct rec_ix *x = &recs[k];

		if (x->iter < 0)
			continue;
		if (x->phase == HB_KT_OTHER) {
			uint32_t owner;

			if (owner_of(owners, nowners, x->stream, &owner) && owner != x->tid) {
				x->phase = find_phase(phs, nphs, owner, x->launch);
				if (x->phase != HB_KT_OTHER)
					res.by_stream++;
			}
		}
		if (x->phase == HB_KT_OTHER)
			res.unattributed++;
		else
			res.attributed++;
		r.corr = (uint32_t)tr.nrecs;   /* its own id, paired with iteration x slots + phase */
		if (hb_trace_add_rec(&tr, &r, err) ||
		    hb_trace_add_corr(&tr, r.corr, hb_trace_ext_id((uint64_t)x->iter, (unsigned)x->phase), err))
			goto out;
	}
	if (hb_trace_group(&tr, &groups, &ngroups, err)) {
		hb_error_prefix(err, "%s", t->path);
		goto out;
	}
	for (int g = 0; g < ngroups; g++) {
		const struct hb_trace_group *gr = &groups[g];
		struct hb_kt_phase_time *pt = &res.iters[gr->ext_id / HB_TRACE_EXT_SLOTS].ph[gr->ext_id %
											       HB_TRACE_EXT_SLOTS];

		pt->union_s = gr->union_s;
		pt->sum_s = gr->sum_s;
		pt->nrecs = gr->nrecs;
		pt->nstreams = gr->nstreams;
		for (int s = 0; s < gr->nstreams; s++)
			if (gr->streams[s].busy_s > pt->busy_max_s)
				pt->busy_max_s = gr->streams[s].busy_s;
	}
	/* Means over the iterations; nrecs in the mean is the total. */
	for (k = 0; k < nits; k++) {
		const struct hb_kt_iter *i = &res.iters[k];

		res.mean.iter_s += i->iter_s / (double)nits;
		for (int p = 0; p < HB_KT_NPHASES; p++) {
			struct hb_kt_phase_time *m = &res.mean.ph[p];

			m->union_s += i->ph[p].union_s / (double)nits;
			m->sum_s += i->ph[p].sum_s / (double)nits;
			m->busy_max_s += i->ph[p].busy_max_s / (double)nits;
			m->nrecs += i->ph[p].nrecs;
			if (i->ph[p].nstreams > m->nstreams)
				m->nstreams = i->ph[p].nstreams;
		}
	}
	*out = res;
	memset(&res, 0, sizeof(res));
	rc = 0;
out:
	hb_trace_group_free(groups);
	hb_trace_free(&tr);
	free(recs);
	free(owners);
	free(its);
	free(phs);
	free(apis);
	hb_kt_result_free(&res);
	return rc;
}

void hb_kt_compute_times(const struct hb_kt_result *r, struct hb_compute_row *row)
{
	row->data_s = r->mean.ph[HB_KT_DATA].union_s;
	row->fwd_s = r->mean.ph[HB_KT_FWD].union_s;
	row->bwd_s = r->mean.ph[HB_KT_BWD].union_s + r->mean.ph[HB_KT_AGG].union_s;
	row->update_s = r->mean.ph[HB_KT_OPT].union_s;
	row->copy_s = r->mean.ph[HB_KT_COPY].union_s;
	row->bn_s = 0;
	row->total_s = r->mean.iter_s;
}
