/* Streaming results (sim/results/results.h "Streaming"): a trace replay whose
 * records go to the files as it runs writes exactly the files written from
 * the same records kept in memory; --events summary and none write what
 * they say and leave the metrics alone; a run that stops with an error
 * leaves no row; an aborted stream leaves no file and no directory it made;
 * runs written into parts of their own and merged in run order give the
 * files one stream gives.
 * The replays are tests/trace_replay/small.csv on pollux-t4. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "default_db.h"
#include "fileio.h"
#include "metrics.h"
#include "policy.h"
#include "replay.h"
#include "results.h"
#include "sim.h"
#include "strutil.h"

static struct hb_catalog cat;
static struct hb_profdb *db;
static const struct hb_cluster *cl;
static struct hb_replay rp;
static char scratch[256];

/* ---- helpers ------------------------------------------------------------------------ */

/* The whole file, NUL-terminated; fails the test when unreadable. */
static char *slurp_path(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		fail_msg("%s: cannot open", path);
	do {
		if (n + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = 2 * cap + 4096 + 1);

			if (!nb)
				fail_msg("%s: out of memory", path);
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got > 0);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void path_in(char *buf, size_t size, const char *dir, const char *name)
{
	snprintf(buf, size, "%s/%s%s%s", scratch, dir, name ? "/" : "", name ? name : "");
}

/* Every table's rows in rowid order, as text with types: two databases
 * with the same content give the same string whatever their page layout. */
static char *db_dump(const char *dir)
{
	char path[1024], *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	sqlite3 *h;
	sqlite3_stmt *t;

	path_in(path, sizeof(path), dir, "results.db");
	assert_non_null(m);
	assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name",
					    -1, &t, NULL),
			 SQLITE_OK);
	while (sqlite3_step(t) == SQLITE_ROW) {
		char sql[256];
		sqlite3_stmt *r;

		fprintf(m, "TABLE %s\n%s\n", sqlite3_column_text(t, 0), sqlite3_column_text(t, 1));
		/* scan order: rowid, or the key of a WITHOUT ROWID table */
		snprintf(sql, sizeof(sql), "SELECT * FROM \"%s\"", sqlite3_column_text(t, 0));
		assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &r, NULL), SQLITE_OK);
		while (sqlite3_step(r) == SQLITE_ROW) {
			for (int c = 0; c < sqlite3_column_count(r); c++) {
				int ty = sqlite3_column_type(r, c);

				if (ty == SQLITE_FLOAT)
					fprintf(m, "%s%a", c ? "|" : "", sqlite3_column_double(r, c));
				else if (ty == SQLITE_NULL)
					fprintf(m, "%sNULL", c ? "|" : "");
				else
					fprintf(m, "%s%d:%s", c ? "|" : "", ty, sqlite3_column_text(r, c));
			}
			fputc('\n', m);
		}
		sqlite3_finalize(r);
	}
	sqlite3_finalize(t);
	sqlite3_close(h);
	fclose(m);
	return out;
}

static double query(const char *dir, const char *sql)
{
	char path[1024];
	sqlite3 *h;
	sqlite3_stmt *st;
	double v = NAN;

	path_in(path, sizeof(path), dir, "results.db");
	assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(h));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

/* The files of dir a and dir b are the same set, byte for byte (the
 * database by content). */
static void assert_same_files(const char *a, const char *b)
{
	char pa[1024], pb[1024];
	DIR *d;
	struct dirent *e;
	int n = 0;

	path_in(pa, sizeof(pa), a, NULL);
	d = opendir(pa);
	assert_non_null(d);
	while ((e = readdir(d))) {
		size_t la, lb;
		char *x, *y;

		if (e->d_name[0] == '.')
			continue;
		n++;
		if (strcmp(e->d_name, "results.db") == 0) {
			x = db_dump(a);
			y = db_dump(b);
			if (strcmp(x, y) != 0)
				fail_msg("results.db of %s and %s differ", a, b);
		} else {
			path_in(pa, sizeof(pa), a, e->d_name);
			path_in(pb, sizeof(pb), b, e->d_name);
			x = slurp_path(pa, &la);
			y = slurp_path(pb, &lb);
			if (la != lb || memcmp(x, y, la) != 0)
				fail_msg("%s differs between %s and %s", e->d_name, a, b);
		}
		free(x);
		free(y);
	}
	closedir(d);
	/* and b has nothing more */
	path_in(pb, sizeof(pb), b, NULL);
	d = opendir(pb);
	assert_non_null(d);
	while ((e = readdir(d)))
		n -= e->d_name[0] != '.';
	closedir(d);
	assert_int_equal(n, 0);
}

/* ---- replays ------------------------------------------------------------------------------ */

static const char *const policies[] = { "fifo", "pollux" };
#define NPOL 2

struct replays {
	struct hb_sim sims[NPOL];
	struct hb_trace_run runs[NPOL];
	struct hb_trace_results res;
};

/* Replay small.csv under each policy; streamed into out (when stream) or
 * with the records kept in memory.  fail_first: run 1 is made to stop with
 * an error (a simulated-time limit it cannot meet). */
static void replay_all(struct replays *x, int stream, struct hb_results_stream *out, enum hb_events_level lv,
		       int fail_first, int parts)
{
	struct hb_results_stream *part[NPOL] = { 0 };
	struct hb_error err = { 0 };
	struct hb_sim_opts o;

	memset(x, 0, sizeof(*x));
	hb_sim_opts_default(&o);
	o.quiet = 1;
	o.restart_const_s = 30.0;
	for (int k = 0; k < NPOL; k++) {
		/* parts: each run into a part of its own, the last run first (as
		 * runs on threads may end), merged in run order below */
		int i = parts ? NPOL - 1 - k : k;
		const struct hb_policy *p = hb_policy_find(policies[i]);
		struct hb_trace_run *ru = &x->runs[i];
		struct hb_sim_opts oi = o;
		int rc;

		assert_non_null(p);
		if (fail_first && i == 0)
			oi.max_sim_s = 100.0;
		hb_strlcpy(ru->policy, p->name, sizeof(ru->policy));
		if (hb_sim_init(&x->sims[i], &cat, cl, db, p->name, &oi, &err) < 0)
			fail_msg("%s", err.msg);
		hb_sim_set_arbiter(&x->sims[i], p->shared);
		if (stream)
			hb_sim_stream(&x->sims[i], NULL); /* before the jobs: their arrays come at arrival */
		assert_int_equal(hb_replay_build(&x->sims[i], &rp, p->agent, "small.csv", &err), 0);
		if (parts)
			assert_int_equal(hb_results_stream_part(out, i + 1, &part[i], &err), 0);
		if (stream)
			assert_int_equal(hb_trace_run_stream(ru, &x->sims[i], parts ? part[i] : out, i + 1, &err), 0);
		rc = hb_sim_run(&x->sims[i], &err);
		if (fail_first && i == 0) {
			assert_int_equal(rc, -1);
			hb_strlcpy(ru->why, err.msg, sizeof(ru->why));
		} else if (rc < 0) {
			fail_msg("%s: %s", p->name, err.msg);
		} else {
			ru->ran = 1;
			ru->sim = &x->sims[i];
		}
		if (out && !parts)
			assert_int_equal(hb_results_stream_end(out, rc == 0, &err), 0);
		if (ru->ran && hb_trace_run_metrics(ru, 1, 0, &err) < 0)
			fail_msg("%s", err.msg);
	}
	for (int i = 0; i < NPOL && parts; i++)
		if (hb_results_stream_merge(out, part[i], x->runs[i].ran, &err) < 0)
			fail_msg("%s", err.msg);
	hb_strlcpy(x->res.cluster, cl->name, sizeof(x->res.cluster));
	x->res.cluster_gpus = cl->ngpus;
	x->res.seed = o.seed;
	hb_strlcpy(x->res.trace, "small.csv", sizeof(x->res.trace));
	hb_strlcpy(x->res.format, "jobspec-csv", sizeof(x->res.format));
	hb_strlcpy(x->res.filters, "none", sizeof(x->res.filters));
	x->res.load = 1.0;
	x->res.read = rp.read;
	hb_sim_opts_default(&x->res.defaults);
	x->res.opts = o;
	x->res.runs = x->runs;
	x->res.nruns = NPOL;
	x->res.fairness = 1;
	x->res.events = lv;
	x->res.csv = 1; /* the CSV copies too: they must agree with the tables */
}

static void replays_free(struct replays *x)
{
	for (int i = 0; i < NPOL; i++) {
		hb_trace_run_free(&x->runs[i]);
		hb_sim_free(&x->sims[i]);
	}
}

/* Streamed into dir at level lv (parts: each run into a part of its own),
 * committed. */
static void write_streamed_parts(const char *dir, enum hb_events_level lv, int fail_first, int parts)
{
	struct replays x;
	struct hb_results_stream *st;
	struct hb_error err = { 0 };
	char path[1024];

	path_in(path, sizeof(path), dir, NULL);
	assert_int_equal(hb_results_stream_open(&st, path, 1, lv, 1, &err), 0);
	replay_all(&x, 1, st, lv, fail_first, parts);
	if (hb_trace_results_commit(&x.res, st, 1, &err) < 0)
		fail_msg("%s", err.msg);
	/* a streamed run keeps no record */
	for (int i = 0; i < NPOL; i++)
		assert_true(x.sims[i].nevents == 0 && x.sims[i].nsamples == 0);
	replays_free(&x);
}

static void write_streamed(const char *dir, enum hb_events_level lv, int fail_first)
{
	write_streamed_parts(dir, lv, fail_first, 0);
}

/* No ".run-*" temporary of a part is left in dir. */
static void assert_no_parts(const char *dir)
{
	char path[1024];
	struct dirent *e;
	DIR *d;

	path_in(path, sizeof(path), dir, NULL);
	assert_non_null(d = opendir(path));
	while ((e = readdir(d)))
		if (strncmp(e->d_name, ".run-", 5) == 0)
			fail_msg("%s/%s left behind", dir, e->d_name);
	closedir(d);
}

/* ---- tests ------------------------------------------------------------------------------------ */

static void test_streamed_equals_in_memory(void **state)
{
	struct replays x;
	struct hb_error err = { 0 };
	char path[1024];

	(void)state;
	replay_all(&x, 0, NULL, HB_EVENTS_ALL, 0, 0);
	assert_true(x.sims[0].nevents > 0 && x.sims[0].nsamples > 0);
	path_in(path, sizeof(path), "mem", NULL);
	if (hb_trace_results_write(&x.res, path, 1, &err) < 0)
		fail_msg("%s", err.msg);
	replays_free(&x);

	write_streamed("streamed", HB_EVENTS_ALL, 0);
	assert_same_files("mem", "streamed");
	/* no meta row for the default level: the default's files are today's */
	assert_int_equal((int)query("streamed", "SELECT count(*) FROM meta WHERE key = 'events'"), 0);
}

static void test_events_levels(void **state)
{
	char path[1024], *s, *line;
	size_t len;
	int n = 0;

	(void)state;
	write_streamed("all", HB_EVENTS_ALL, 0);
	write_streamed("summary", HB_EVENTS_SUMMARY, 0);
	write_streamed("none", HB_EVENTS_NONE, 0);

	/* summary: job-level events only, every job's arrival and end, no sample */
	path_in(path, sizeof(path), "summary", "events.csv");
	s = slurp_path(path, &len);
	assert_non_null(strchr(s, '\n'));
	for (size_t off = (size_t)(strchr(s, '\n') - s) + 1, end; off < len; off = end + 1) {
		char kind[32] = "";
		const char *p = s + off;

		line = strchr(s + off, '\n');
		end = line ? (size_t)(line - s) : len;

		for (int c = 0; c < 5 && p; c++)
			p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
		assert_non_null(p);
		sscanf(p, "%31[^,]", kind);
		if (!hb_events_level_keeps(HB_EVENTS_SUMMARY, kind))
			fail_msg("summary wrote a '%s' event", kind);
		n++;
	}
	free(s);
	assert_true(n > 0);
	assert_int_equal((int)query("summary", "SELECT count(*) FROM events"), n);
	assert_int_equal((int)query("summary", "SELECT count(*) FROM events WHERE kind = 'done'"), 20);
	assert_int_equal((int)query("summary", "SELECT count(*) FROM events WHERE kind = 'arrival'"), 20);
	assert_int_equal((int)query("summary", "SELECT count(*) FROM events WHERE kind IN ('epoch', 'adapt', "
						 "'reconfig', 'sched')"),
			 0);
	assert_true(query("all", "SELECT count(*) FROM events") > n);
	assert_int_equal((int)query("summary", "SELECT sum(nevents) FROM runs"), n);
	assert_int_equal((int)query("summary", "SELECT count(*) FROM timeseries"), 0);
	assert_int_equal((int)query("summary", "SELECT sum(nsamples) FROM runs"), 0);
	/* seq numbers the rows written */
	assert_int_equal((int)query("summary", "SELECT max(seq) + 1 FROM events WHERE run_id = 1"),
			 (int)query("summary", "SELECT count(*) FROM events WHERE run_id = 1"));
	assert_int_equal((int)query("summary", "SELECT count(*) FROM meta WHERE key = 'events' AND value = 'summary'"),
			 1);

	/* the default level: every event up to HB_EVENTS_ALL_MAX_JOBS jobs, summary above */
	assert_int_equal(hb_events_level_default(1), HB_EVENTS_ALL);
	assert_int_equal(hb_events_level_default(HB_EVENTS_ALL_MAX_JOBS), HB_EVENTS_ALL);
	assert_int_equal(hb_events_level_default(HB_EVENTS_ALL_MAX_JOBS + 1), HB_EVENTS_SUMMARY);

	/* none: headers only */
	path_in(path, sizeof(path), "none", "events.csv");
	s = slurp_path(path, &len);
	assert_string_equal(s, "run_id,model,policy,t_s,job,kind,detail\n");
	free(s);
	path_in(path, sizeof(path), "none", "timeseries.csv");
	s = slurp_path(path, &len);
	assert_int_equal(count_lines(s), 1);
	free(s);
	assert_int_equal((int)query("none", "SELECT count(*) FROM events"), 0);

	/* the metrics do not depend on what is written */
	for (int k = 0; k < 2; k++) {
		static const char *const same[] = { "utilisation.csv", "cluster_summary.csv", "jobs.csv", "by_model.csv" };
		const char *lv = k ? "none" : "summary";

		for (int f = 0; f < 4; f++) {
			char pa[1024], pb[1024], *x, *y;
			size_t la, lb;

			path_in(pa, sizeof(pa), "all", same[f]);
			path_in(pb, sizeof(pb), lv, same[f]);
			x = slurp_path(pa, &la);
			y = slurp_path(pb, &lb);
			if (la != lb || memcmp(x, y, la) != 0)
				fail_msg("%s differs between all and %s", same[f], lv);
			free(x);
			free(y);
		}
	}
}

/* --events summary keeps exactly the job-level kinds (results.h), of every
 * kind docs/outputs.md lists and a few it does not; all keeps all, none
 * none. */
static void test_summary_kinds(void **state)
{
	static const char *const kept[] = { "arrival", "admit", "start", "restart", "resize", "move", "preempt",
					    "drop", "done" };
	static const char *const dropped[] = { "reconfig", "resume", "epoch", "adapt", "offer", "autoscale",
					       "sched", "scale", "demote", "grant", "fallback", "shrink",
					       "revoke", "capacity", "", "a", "arrivals", "star", "moved", "x" };

	(void)state;
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		assert_true(hb_events_level_keeps(HB_EVENTS_SUMMARY, kept[i]));
		assert_true(hb_events_level_keeps(HB_EVENTS_ALL, kept[i]));
		assert_false(hb_events_level_keeps(HB_EVENTS_NONE, kept[i]));
	}
	for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++) {
		if (hb_events_level_keeps(HB_EVENTS_SUMMARY, dropped[i]))
			fail_msg("summary keeps '%s'", dropped[i]);
		assert_true(hb_events_level_keeps(HB_EVENTS_ALL, dropped[i]));
	}
}

static void test_failed_run_writes_no_row(void **state)
{
	char path[1024], *s;
	size_t len;

	(void)state;
	write_streamed("failed", HB_EVENTS_ALL, 1);
	assert_int_equal((int)query("failed", "SELECT count(*) FROM events WHERE run_id = 1"), 0);
	assert_int_equal((int)query("failed", "SELECT count(*) FROM timeseries WHERE run_id = 1"), 0);
	assert_true(query("failed", "SELECT count(*) FROM events WHERE run_id = 2") > 0);
	assert_int_equal((int)query("failed", "SELECT count(*) FROM runs WHERE run_id = 1 AND status = 'cannot run' "
						"AND nevents = 0"),
			 1);
	path_in(path, sizeof(path), "failed", "events.csv");
	s = slurp_path(path, &len);
	assert_null(strstr(s, "\n1,trace,fifo,"));
	assert_non_null(strstr(s, "\n2,trace,pollux,"));
	free(s);
	path_in(path, sizeof(path), "failed", "timeseries.csv");
	s = slurp_path(path, &len);
	assert_null(strstr(s, "\n1,trace,fifo,"));
	free(s);
}

/* Runs on threads (results.h "Runs on threads"): each run into a part of
 * its own, the runs ending in reverse order, merged in run order: the files
 * a single stream writes (the database by content); a run that stopped
 * with an error (merged with ok 0) leaves no row, as with one stream; no
 * part's temporary stays. */
static void test_parts_merged_in_order(void **state)
{
	(void)state;
	write_streamed("one", HB_EVENTS_ALL, 0);
	write_streamed_parts("parts", HB_EVENTS_ALL, 0, 1);
	assert_same_files("one", "parts");
	assert_no_parts("parts");
	write_streamed("one-failed", HB_EVENTS_ALL, 1);
	write_streamed_parts("parts-failed", HB_EVENTS_ALL, 1, 1);
	assert_same_files("one-failed", "parts-failed");
	assert_no_parts("parts-failed");
	assert_int_equal((int)query("parts-failed", "SELECT count(*) FROM events WHERE run_id = 1"), 0);
	assert_true(query("parts-failed", "SELECT count(*) FROM events WHERE run_id = 2") > 0);
	/* a level that drops records drops them in parts too */
	write_streamed("one-summary", HB_EVENTS_SUMMARY, 0);
	write_streamed_parts("parts-summary", HB_EVENTS_SUMMARY, 0, 1);
	assert_same_files("one-summary", "parts-summary");
}

static void test_abort_leaves_nothing(void **state)
{
	struct hb_results_stream *st;
	struct hb_error err = { 0 };
	struct hb_sim_event_rec e = { .t = 1.0, .job = 0, .kind = "start", .detail = "x" };
	struct hb_sim_sample x = { .t = 1.0, .job = 0, .ngpus = 2 };
	char path[1024], top[1024], keep[1024];
	DIR *d;
	struct dirent *de;

	(void)state;
	/* a directory the stream made goes, parents included */
	path_in(top, sizeof(top), "made", NULL);
	path_in(path, sizeof(path), "made", "a/out");
	assert_int_equal(hb_results_stream_open(&st, path, 1, HB_EVENTS_ALL, 1, &err), 0);
	assert_true(hb_path_is_dir(path));
	assert_int_equal(hb_results_stream_begin(st, 1, "trace", "fifo", &err), 0);
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(hb_results_stream_event(st, &e, &err), 0);
		assert_int_equal(hb_results_stream_sample(st, &x, &err), 0);
	}
	hb_results_stream_abort(st);
	assert_false(hb_path_exists(top));

	/* an existing directory stays, with what was in it, and nothing else */
	path_in(path, sizeof(path), "existing", NULL);
	assert_int_equal(mkdir(path, 0755), 0);
	path_in(keep, sizeof(keep), "existing", "mine.txt");
	assert_int_equal(hb_write_file_atomic(keep, "mine\n", 5, &err), 0);
	assert_int_equal(hb_results_stream_open(&st, path, 0, HB_EVENTS_ALL, 1, &err), 0);
	assert_int_equal(hb_results_stream_begin(st, 1, "resnet50", "jabas", &err), 0);
	assert_int_equal(hb_results_stream_event(st, &e, &err), 0);
	hb_results_stream_abort(st);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && strcmp(de->d_name, "mine.txt") != 0)
			fail_msg("%s left in the directory", de->d_name);
	closedir(d);
	hb_results_stream_abort(NULL); /* no-op */
}

/* The streamed GPU stretches are the in-memory ones, stretch for stretch. */
static int acc_event(void *ctx, const struct hb_sim_event_rec *e, struct hb_error *err)
{
	return hb_gpu_acc_event(ctx, e, err);
}

static int acc_sample(void *ctx, const struct hb_sim_sample *s, struct hb_error *err)
{
	return hb_gpu_acc_sample(ctx, s, err);
}

static void test_stretches_equal(void **state)
{
	for (int i = 0; i < NPOL; i++) {
		const struct hb_policy *p = hb_policy_find(policies[i]);
		struct hb_sim a, b;
		struct hb_sim_opts o;
		struct hb_gpu_acc acc;
		struct hb_sim_sink sink = { 0 };
		struct hb_gpu_interval *ia, *ib;
		size_t na, nb;
		struct hb_error err = { 0 };

		(void)state;
		hb_sim_opts_default(&o);
		o.quiet = 1;
		assert_int_equal(hb_sim_init(&a, &cat, cl, db, p->name, &o, &err), 0);
		assert_int_equal(hb_sim_init(&b, &cat, cl, db, p->name, &o, &err), 0);
		hb_sim_set_arbiter(&a, p->shared);
		hb_sim_set_arbiter(&b, p->shared);
		sink.ctx = &acc;
		sink.event = acc_event;
		sink.sample = acc_sample;
		hb_sim_stream(&b, &sink);
		assert_int_equal(hb_replay_build(&a, &rp, p->agent, "small.csv", &err), 0);
		assert_int_equal(hb_replay_build(&b, &rp, p->agent, "small.csv", &err), 0);
		assert_int_equal(hb_gpu_acc_init(&acc, b.njobs, &err), 0);
		assert_int_equal(hb_sim_run(&a, &err), 0);
		assert_int_equal(hb_sim_run(&b, &err), 0);
		assert_int_equal(hb_metrics_gpu_intervals(&a, &ia, &na, &err), 0);
		assert_int_equal(hb_gpu_acc_finish(&acc, &b, &ib, &nb, &err), 0);
		assert_true(na >= (size_t)a.njobs);
		assert_int_equal(na, nb);
		assert_memory_equal(ia, ib, na * sizeof(*ia));
		/* the same run: finished jobs kept their accounting */
		for (int j = 0; j < a.njobs; j++) {
			assert_memory_equal(&a.jobs[j].finish_s, &b.jobs[j].finish_s, sizeof(double));
			assert_memory_equal(&a.jobs[j].cost_usd, &b.jobs[j].cost_usd, sizeof(double));
			assert_string_equal(a.jobs[j].cfg.layout, b.jobs[j].cfg.layout);
			assert_null(b.jobs[j].grant); /* released once done */
		}
		free(ia);
		free(ib);
		hb_gpu_acc_free(&acc);
		hb_sim_free(&a);
		hb_sim_free(&b);
	}
}

static int setup(void **state)
{
	struct hb_error err = { 0 };
	struct hb_replay_opts ro;
	struct hb_trace_options topt;
	char fixture[1024];
	const char *root = getenv("HB_SOURCE_ROOT");

	(void)state;
	if (!root)
		return -1;
	snprintf(fixture, sizeof(fixture), "%s/tests/trace_replay/small.csv", root);
	snprintf(scratch, sizeof(scratch), "/tmp/hb-stream-XXXXXX");
	if (!mkdtemp(scratch))
		return -1;
	if (hb_catalog_load_builtin(&cat, &err) < 0 || hb_default_profdb(&cat, NULL, &db, &err) < 0 ||
	    !(cl = hb_catalog_cluster(&cat, "pollux-t4"))) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	hb_replay_opts_init(&ro);
	hb_trace_options_init(&topt);
	if (hb_replay_read(&cat, cl, fixture, HB_TRACE_AUTO, &topt, &ro, &rp, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	hb_replay_free(&rp);
	hb_profdb_close(db);
	hb_catalog_free(&cat);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_streamed_equals_in_memory),
		cmocka_unit_test(test_events_levels),
		cmocka_unit_test(test_summary_kinds),
		cmocka_unit_test(test_failed_run_writes_no_row),
		cmocka_unit_test(test_parts_merged_in_order),
		cmocka_unit_test(test_abort_leaves_nothing),
		cmocka_unit_test(test_stretches_equal),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
