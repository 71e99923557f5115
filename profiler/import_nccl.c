/*
 * import_nccl.c: nccl-tests all_reduce_perf output -> allreduce rows.
 *
 * The text form is a table whose '#' header names the columns:
 *   #       size   count  type  redop  root   time  algbw  busbw  #wrong   time  algbw  busbw  #wrong
 *   #        (B)  (elements)                  (us)  (GB/s) (GB/s)          (us)  (GB/s) (GB/s)
 *        1048576  262144  float  sum    -1   45.1  23.25  40.69       0   44.8  23.40  40.95       0
 * Versions differ (no "root" column in old ones, "error" instead of
 * "#wrong", per-iteration or timestamp columns in new ones), so columns are
 * found by name in the header rather than by position: "size", the first
 * "time" (or "cputime": out-of-place) and every "#wrong".  "#  Rank ... on
 * HOST device ..." lines give the number of ranks and the hosts.
 *
 * The JSON form (-J FILE) is one object: "config" {nthreads, ngpus,
 * devices: [{hostname, ...}]} (devices lists one entry per process),
 * "results": [{size, out_of_place: {time | cpu_time, alg_bw, bus_bw,
 * nwrong}, in_place: {...}}, ...], "out_of_bounds": {count, okay}.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "input.h" /* hb_read_text_file: directory, missing file, binary data, size cap */
#include "import.h"
#include "json.h"
#include "strutil.h"

#define SOURCE "import:nccl-tests"
#define MAX_TOKENS 64
#define MAX_BYTES 1e15           /* sanity bound on one message, bytes */
#define MAX_TIME_US 1e12         /* sanity bound on one all-reduce, us */

struct point {
	double bytes;
	double time_us;              /* out-of-place time */
	long line;                   /* source line (text) or results index + 1 (JSON) */
};

struct parsed {
	const char *path;
	struct point *pts;
	int n, cap;
	int nranks;                  /* highest rank listed + 1, 0 if the file does not say */
	char host0[256];             /* first host seen */
	int multi_host;              /* ranks on more than one host */
	int json;                    /* 1 for the JSON form */
};

/* Header layout of the text table. */
struct layout {
	int have;                    /* a header has been seen */
	int ntok;                    /* tokens a result line must have */
	int size;                    /* column of "size" */
	int time;                    /* column of the out-of-place time */
	int wrong[2];                /* columns of "#wrong", -1 if absent */
	char time_name[16];          /* "time" or "cputime", for messages */
};

static int add_point(struct parsed *p, double bytes, double time_us, long line, struct hb_error *err)
{
	if (p->n == p->cap) {
		int ncap = p->cap ? 2 * p->cap : 32;
		struct point *np = realloc(p->pts, (size_t)ncap * sizeof(*np));

		if (!np)
			return hb_runtime_error(err, "%s: out of memory", p->path);
		p->pts = np;
		p->cap = ncap;
	}
	p->pts[p->n].bytes = bytes;
	p->pts[p->n].time_us = time_us;
	p->pts[p->n].line = line;
	p->n++;
	return 0;
}

static void note_host(struct parsed *p, const char *host)
{
	if (!p->host0[0])
		hb_strlcpy(p->host0, host, sizeof(p->host0));
	else if (strcmp(p->host0, host) != 0)
		p->multi_host = 1;
}

/* Split s in place on blanks; returns the number of tokens (at most max). */
static int tokenize(char *s, char **tok, int max)
{
	int n = 0;

	for (;;) {
		while (*s && isspace((unsigned char)*s))
			s++;
		if (!*s || n == max)
			return n;
		tok[n++] = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		if (*s)
			*s++ = '\0';
	}
}

/* ------------------------------------------------------------------------ */
/* Text form                                                                  */

/* A '#' line: the column header, a rank line, or the bounds check. */
static int comment_line(struct parsed *p, struct layout *lay, char *s, long lineno, struct hb_error *err)
{
	char *tok[MAX_TOKENS];
	int n = tokenize(s, tok, MAX_TOKENS);

	if (n >= 2 && strcmp(tok[0], "size") == 0) {
		memset(lay, 0, sizeof(*lay));
		lay->size = 0;
		lay->time = -1;
		lay->wrong[0] = lay->wrong[1] = -1;
		lay->ntok = n;
		for (int i = 0, w = 0; i < n; i++) {
			if (lay->time < 0 && (strcmp(tok[i], "time") == 0 || strcmp(tok[i], "cputime") == 0)) {
				lay->time = i;
				hb_strlcpy(lay->time_name, tok[i], sizeof(lay->time_name));
			} else if (strcmp(tok[i], "#wrong") == 0 && w < 2) {
				lay->wrong[w++] = i;
			} else if (strcmp(tok[i], "timestamp") == 0) {
				lay->ntok++; /* printed as "YYYY-MM-DD HH:MM:SS", two tokens */
			}
		}
		if (lay->time < 0)
			return hb_input_error(err, "%s:%ld: column header has no 'time' column", p->path, lineno);
		lay->have = 1;
		return 0;
	}
	if (n >= 2 && strcmp(tok[0], "Rank") == 0) {
		long r;

		/* Highest rank + 1, not a line count: logs get concatenated. */
		if (hb_parse_long_range(tok[1], 0, 1 << 24, &r) == 0 && r + 1 > p->nranks)
			p->nranks = (int)r + 1;
		for (int i = 1; i + 1 < n; i++)
			if (strcmp(tok[i], "on") == 0) {
				note_host(p, tok[i + 1]);
				break;
			}
		return 0;
	}
	if (n >= 6 && strcmp(tok[0], "Out") == 0 && strcmp(tok[2], "bounds") == 0) {
		long bad;

		if (hb_parse_long(tok[5], &bad) < 0)
			return hb_input_error(err, "%s:%ld: field 'Out of bounds values': value '%.32s' is not a count",
					      p->path, lineno, tok[5]);
		if (bad > 0)
			return hb_input_error(err, "%s:%ld: field 'Out of bounds values': value '%ld': nccl-tests "
					      "reports corrupted results; the run is not a profile", p->path, lineno, bad);
	}
	return 0;
}

static int result_line(struct parsed *p, const struct layout *lay, char *s, long lineno, struct hb_error *err)
{
	char *tok[MAX_TOKENS];
	int n = tokenize(s, tok, MAX_TOKENS);
	double bytes, t;

	if (!lay->have)
		return hb_input_error(err, "%s:%ld: result line before the column header ('#  size  count  type ...'); "
				      "not all_reduce_perf output?", p->path, lineno);
	if (n != lay->ntok)
		return hb_input_error(err, "%s:%ld: expected %d columns as the header names, found %d", p->path, lineno,
				      lay->ntok, n);
	if (hb_parse_double(tok[lay->size], &bytes) < 0 || bytes < 0 || bytes > MAX_BYTES || bytes != floor(bytes))
		return hb_input_error(err, "%s:%ld: field 'size': value '%.32s' is not a byte count", p->path, lineno,
				      tok[lay->size]);
	if (hb_parse_double(tok[lay->time], &t) < 0)
		return hb_input_error(err, "%s:%ld: field '%s': value '%.32s' is not a number", p->path, lineno,
				      lay->time_name, tok[lay->time]);
	if (!(t > 0) || t > MAX_TIME_US)
		return hb_input_error(err, "%s:%ld: field '%s': value '%.32s' must be > 0 (microseconds)", p->path,
				      lineno, lay->time_name, tok[lay->time]);
	for (int w = 0; w < 2; w++) {
		double wrong;
		const char *v;

		if (lay->wrong[w] < 0)
			continue;
		v = tok[lay->wrong[w]];
		if (strcmp(v, "N/A") == 0) /* run with -c 0: not checked */
			continue;
		if (hb_parse_double(v, &wrong) < 0 || wrong < 0)
			return hb_input_error(err, "%s:%ld: field '#wrong': value '%.32s' is not a count", p->path, lineno,
					      v);
		if (wrong > 0)
			return hb_input_error(err, "%s:%ld: field '#wrong': value '%.32s': the %s all-reduce of %.0f "
					      "bytes produced wrong elements; the run is not a profile", p->path, lineno,
					      v, w == 0 ? "out-of-place" : "in-place", bytes);
	}
	return add_point(p, bytes, t, lineno, err);
}

static int parse_text(struct parsed *p, char *text, struct hb_error *err)
{
	struct layout lay;
	char *line, *next;
	long lineno = 0;

	memset(&lay, 0, sizeof(lay));
	for (line = text; line; line = next) {
		char *nl = strchr(line, '\n'), *s;

		next = nl ? nl + 1 : NULL;
		if (nl) {
			*nl = '\0';
			if (nl > line && nl[-1] == '\r')
				nl[-1] = '\0';
		}
		lineno++;
		s = line;
		while (*s && isspace((unsigned char)*s))
			s++;
		if (!*s)
			continue;
		if (*s == '#') {
			if (comment_line(p, &lay, s + 1, lineno, err) < 0)
				return -1;
			continue;
		}
		/* NCCL_DEBUG=INFO/WARN log lines are interleaved with the table. */
		if (strstr(s, " NCCL INFO ") || strstr(s, " NCCL WARN "))
			continue;
		if (result_line(p, &lay, s, lineno, err) < 0)
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* JSON form                                                                  */

static int json_nwrong(const cJSON *op, const char *where, struct hb_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(op, "nwrong");

	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
		return hb_input_error(err, "%s: field 'nwrong': expected a count", where);
	if (v->valuedouble > 0)
		return hb_input_error(err, "%s: field 'nwrong': value %g: the all-reduce produced wrong elements; the "
				      "run is not a profile", where, v->valuedouble);
	return 0;
}

static int parse_json(struct parsed *p, const char *text, size_t len, struct hb_error *err)
{
	const cJSON *results, *res, *config, *bounds;
	cJSON *root = hb_json_parse(text, len, p->path, err);
	char where[4200];
	int i = 0, rc = -1;

	if (!root)
		return -1;
	if (!cJSON_IsObject(root)) {
		hb_input_error(err, "%s: expected a JSON object (nccl-tests -J output)", p->path);
		goto out;
	}
	if (hb_json_array(root, "results", p->path, &results, err) < 0)
		goto out;
	config = cJSON_GetObjectItemCaseSensitive(root, "config");
	if (cJSON_IsObject(config)) {
		const cJSON *devices = cJSON_GetObjectItemCaseSensitive(config, "devices"), *d;
		long nthreads, ngpus;

		snprintf(where, sizeof(where), "%s: config", p->path);
		if (hb_json_int_opt(config, "nthreads", where, 1, 1 << 20, 1, &nthreads, err) < 0 ||
		    hb_json_int_opt(config, "ngpus", where, 1, 1 << 20, 1, &ngpus, err) < 0)
			goto out;
		if (cJSON_IsArray(devices) && cJSON_GetArraySize(devices) > 0) {
			/* One device entry per process, each driving nthreads x ngpus GPUs. */
			p->nranks = (int)(cJSON_GetArraySize(devices) * nthreads * ngpus);
			cJSON_ArrayForEach(d, devices) {
				const cJSON *h = cJSON_GetObjectItemCaseSensitive(d, "hostname");

				if (cJSON_IsString(h) && h->valuestring[0])
					note_host(p, h->valuestring);
			}
		}
	}
	bounds = cJSON_GetObjectItemCaseSensitive(root, "out_of_bounds");
	if (cJSON_IsObject(bounds)) {
		long bad;

		snprintf(where, sizeof(where), "%s: out_of_bounds", p->path);
		if (hb_json_int_opt(bounds, "count", where, 0, 0x7fffffffL, 0, &bad, err) < 0)
			goto out;
		if (bad > 0) {
			hb_input_error(err, "%s: field 'count': value %ld: nccl-tests reports corrupted results; the run "
				       "is not a profile", where, bad);
			goto out;
		}
	}
	cJSON_ArrayForEach(res, results) {
		const cJSON *op, *in;
		const char *key;
		double bytes, t;

		snprintf(where, sizeof(where), "%s: results[%d]", p->path, i);
		if (!cJSON_IsObject(res)) {
			hb_input_error(err, "%s: expected an object", where);
			goto out;
		}
		if (hb_json_num(res, "size", where, 0, MAX_BYTES, &bytes, err) < 0)
			goto out;
		op = cJSON_GetObjectItemCaseSensitive(res, "out_of_place");
		in = cJSON_GetObjectItemCaseSensitive(res, "in_place");
		if (cJSON_IsObject(in)) {
			snprintf(where, sizeof(where), "%s: results[%d].in_place", p->path, i);
			if (json_nwrong(in, where, err) < 0)
				goto out;
		}
		/* Trace replays print only in-place results. */
		snprintf(where, sizeof(where), "%s: results[%d].%s", p->path, i,
			 cJSON_IsObject(op) ? "out_of_place" : "in_place");
		if (!cJSON_IsObject(op))
			op = in;
		if (!cJSON_IsObject(op)) {
			hb_input_error(err, "%s: results[%d]: field 'out_of_place': expected an object", p->path, i);
			goto out;
		}
		key = cJSON_GetObjectItemCaseSensitive(op, "cpu_time") ? "cpu_time" : "time";
		if (hb_json_num(op, key, where, 1e-9, MAX_TIME_US, &t, err) < 0 || json_nwrong(op, where, err) < 0)
			goto out;
		if (add_point(p, bytes, t, i + 1, err) < 0)
			goto out;
		i++;
	}
	rc = 0;
out:
	cJSON_Delete(root);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* The import                                                                */

static int parse_file(struct parsed *p, struct hb_error *err)
{
	char *text = NULL;
	const char *s;
	size_t len;
	int rc;

	if (hb_read_text_file(p->path, 0, &text, &len, err) < 0)
		return -1;
	if (memchr(text, '\0', len)) {
		free(text);
		return hb_input_error(err, "%s: NUL byte in a text file", p->path);
	}
	for (s = text; *s && isspace((unsigned char)*s); s++)
		;
	if (!*s) {
		free(text);
		return hb_input_error(err, "%s: empty file (expected nccl-tests all_reduce_perf output)", p->path);
	}
	p->json = *s == '{';
	rc = p->json ? parse_json(p, text, len, err) : parse_text(p, text, err);
	free(text);
	if (rc == 0 && p->n == 0)
		return hb_input_error(err, "%s: no all_reduce_perf result %s", p->path,
				      p->json ? "entries in 'results'" : "lines");
	return rc;
}

int hb_import_nccl(struct hb_profdb *db, const char *path, const char *scope, const char *link, int n_gpus,
		   struct hb_import_stats *stats, struct hb_error *err)
{
	struct parsed p;
	char sc[8];
	int ok = 1;

	memset(stats, 0, sizeof(*stats));
	if (!link || !*link)
		return hb_input_error(err, "%s: the link class is required (e.g. 'nvlink4', 'pcie4-x16', 'ib-100g'): "
				      "the all-reduce rows and fits are keyed by it", path);
	if (strlen(link) >= sizeof(((struct hb_allreduce_row *)0)->link))
		return hb_input_error(err, "link class '%.80s' is too long (at most %zu characters)", link,
				      sizeof(((struct hb_allreduce_row *)0)->link) - 1);
	if (scope && strcmp(scope, "intra") != 0 && strcmp(scope, "inter") != 0)
		return hb_input_error(err, "scope '%s' is not 'intra' or 'inter'", scope);
	memset(&p, 0, sizeof(p));
	p.path = path;
	stats->files = 1;
	if (parse_file(&p, err) < 0) {
		free(p.pts);
		return -1;
	}
	if (n_gpus <= 0) {
		n_gpus = p.nranks;
		if (n_gpus <= 0) {
			free(p.pts);
			return hb_input_error(err, "%s: the file does not list its ranks; pass the number of GPUs "
					      "(--gpus N)", path);
		}
	} else if (p.nranks > 0 && p.nranks != n_gpus) {
		hb_import_warn(stats, "%s lists %d ranks; using the %d GPUs given", path, p.nranks, n_gpus);
	}
	if (n_gpus < 2) {
		free(p.pts);
		return hb_input_error(err, "%s: an all-reduce on %d GPU moves no data; profile 2 or more GPUs", path,
				      n_gpus);
	}
	if (scope) {
		hb_strlcpy(sc, scope, sizeof(sc));
	} else {
		hb_strlcpy(sc, p.multi_host ? "inter" : "intra", sizeof(sc));
		if (!p.host0[0])
			hb_import_warn(stats, "%s names no hosts; taken as an intra-node run (use --scope)", path);
	}
	if (hb_import_begin(db, SOURCE, path, stats, err) < 0) {
		free(p.pts);
		return -1;
	}
	for (int i = 0; ok && i < p.n; i++) {
		struct hb_allreduce_row r;
		int dup = 0;

		for (int j = 0; j < i; j++)
			if (p.pts[j].bytes == p.pts[i].bytes) {
				hb_import_warn(stats, "%s: size %.0f bytes appears at %s %ld and %ld; the later is kept",
					       path, p.pts[i].bytes, p.json ? "results entries" : "lines", p.pts[j].line,
					       p.pts[i].line);
				dup = 1;
				break;
			}
		memset(&r, 0, sizeof(r));
		hb_strlcpy(r.scope, sc, sizeof(r.scope));
		hb_strlcpy(r.link, link, sizeof(r.link));
		hb_strlcpy(r.source, SOURCE, sizeof(r.source));
		r.n_gpus = n_gpus;
		r.bytes = p.pts[i].bytes;
		r.time_s = p.pts[i].time_us * 1e-6;
		r.run_id = stats->run_id;
		ok = hb_profdb_put_allreduce(db, &r, err) == 0;
		stats->allreduce += ok && !dup;
	}
	free(p.pts);
	return hb_import_end(db, ok, stats, err);
}
