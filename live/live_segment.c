/*
 * live_segment.c: one launch of an adaptive live run (live_segment.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "fileio.h"
#include "json.h"
#include "input.h" /* hb_read_text_file: directory, missing file, binary data, size cap */
#include "live_segment.h"
#include "strutil.h"

enum action { ACT_CONTINUE = 0, ACT_INPLACE = 1, ACT_RELAUNCH = 2, ACT_DONE = 3 };

double hb_live_wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void hb_live_segment_free(struct hb_live_segment *s)
{
	hb_live_pstate_free(&s->st);
	free(s->rows);
	s->rows = NULL;
	s->nrows = s->cap_rows = 0;
}

int hb_live_segment_add_row(struct hb_live_segment *s, const struct hb_live_row *r, struct hb_error *err)
{
	if (s->nrows == s->cap_rows) {
		int cap = s->cap_rows ? 2 * s->cap_rows : 64;
		struct hb_live_row *n = realloc(s->rows, (size_t)cap * sizeof(*n));

		if (!n)
			return hb_runtime_error(err, "live: out of memory for %d trajectory rows", cap);
		s->rows = n;
		s->cap_rows = cap;
	}
	s->rows[s->nrows++] = *r;
	return 0;
}

/* ---- the state file --------------------------------------------------------- */

static void add_num(cJSON *o, const char *k, double v)
{
	/* JSON has no NaN: a missing measurement is null */
	if (isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

/* v bit for bit: cJSON prints the shortest text within a relative
 * epsilon of it (0.1 + 0.2 comes out as 0.3), which a replay of the
 * blocks (live_policy.h) must not see; %.17g reads back exactly. */
static void add_exact(cJSON *o, const char *k, double v)
{
	char text[40];

	if (!isfinite(v)) {
		cJSON_AddNullToObject(o, k);
		return;
	}
	snprintf(text, sizeof(text), "%.17g", v);
	cJSON_AddRawToObject(o, k, text);
}

int hb_live_segment_write(const char *path, const struct hb_live_segment *s, struct hb_error *err)
{
	cJSON *root = cJSON_CreateObject(), *a, *h, *rows;
	char *text;
	int rc;

	if (!root)
		return hb_runtime_error(err, "live: out of memory");
	cJSON_AddStringToObject(root, "format", "hetbatch-live-state/2");
	cJSON_AddStringToObject(root, "policy", s->policy);
	cJSON_AddNumberToObject(root, "segment", s->segment);
	cJSON_AddBoolToObject(root, "done", s->done);
	cJSON_AddNumberToObject(root, "spawn_wall", s->spawn_wall);
	cJSON_AddNumberToObject(root, "save_s", s->save_s);
	cJSON_AddStringToObject(root, "change", s->change);
	cJSON_AddStringToObject(root, "ended", s->ended);
	a = cJSON_AddArrayToObject(root, "alloc");
	for (int i = 0; i < s->st.nnodes; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(s->st.alloc[i]));
	cJSON_AddNumberToObject(root, "global_bs", (double)s->st.global_bs);
	cJSON_AddNumberToObject(root, "iteration", (double)s->st.iteration);
	cJSON_AddNumberToObject(root, "epoch", (double)s->st.epoch);
	cJSON_AddNumberToObject(root, "epoch_samples", s->st.epoch_samples);
	/* what the next launch replays into a fresh agent (live_policy.h) */
	h = cJSON_AddArrayToObject(root, "blocks");
	for (size_t i = 0; i < s->st.nblocks; i++) {
		const struct hb_live_block *b = &s->st.blocks[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddItemToArray(h, o);
		cJSON_AddNumberToObject(o, "iters", (double)b->iters);
		add_exact(o, "elapsed_s", b->elapsed_s);
		add_exact(o, "similarity", b->similarity);
	}
	rows = cJSON_AddArrayToObject(root, "rows");
	for (int i = 0; i < s->nrows; i++) {
		const struct hb_live_row *r = &s->rows[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddItemToArray(rows, o);
		cJSON_AddNumberToObject(o, "segment", r->segment);
		cJSON_AddNumberToObject(o, "epoch", (double)r->epoch);
		cJSON_AddNumberToObject(o, "iteration", (double)r->iteration);
		cJSON_AddNumberToObject(o, "iters", r->iters);
		cJSON_AddNumberToObject(o, "global_bs", (double)r->global_bs);
		cJSON_AddNumberToObject(o, "gpus", r->ngpus);
		cJSON_AddStringToObject(o, "alloc", r->alloc);
		cJSON_AddStringToObject(o, "method", r->method);
		cJSON_AddStringToObject(o, "config", r->config);
		add_num(o, "predicted_s", r->predicted_s);
		add_num(o, "measured_s", r->measured_s);
		add_num(o, "sum_s", r->sum_s);
		cJSON_AddStringToObject(o, "change", r->change);
		add_num(o, "change_s", r->change_s);
		add_num(o, "similarity", r->similarity);
		add_num(o, "noise_scale", r->noise_scale);
		add_num(o, "loss", r->loss);
		cJSON_AddStringToObject(o, "decision", r->decision);
	}
	text = cJSON_Print(root);
	cJSON_Delete(root);
	if (!text)
		return hb_runtime_error(err, "live: out of memory");
	rc = hb_write_file_atomic(path, text, strlen(text), err);
	free(text);
	return rc;
}

static int need(const char *path, const cJSON *o, const char *key, int (*is)(const cJSON *), const cJSON **out,
		struct hb_error *err)
{
	*out = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!*out || !is(*out))
		return hb_input_error(err, "%s: field '%s' missing or of the wrong type", path, key);
	return 0;
}

static int is_num(const cJSON *v) { return cJSON_IsNumber(v); }
static int is_num_or_null(const cJSON *v) { return cJSON_IsNumber(v) || cJSON_IsNull(v); }
static int is_str(const cJSON *v) { return cJSON_IsString(v); }
static int is_arr(const cJSON *v) { return cJSON_IsArray(v); }
static int is_bool(const cJSON *v) { return cJSON_IsBool(v); }

static double num(const cJSON *v)
{
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int read_row(const char *path, const cJSON *o, struct hb_live_row *r, struct hb_error *err)
{
	const cJSON *v[18];
	static const char *const keys[18] = { "segment", "epoch", "iteration", "iters", "global_bs", "gpus", "alloc",
					      "method", "config", "predicted_s", "measured_s", "sum_s", "change",
					      "change_s", "similarity", "noise_scale", "loss", "decision" };

	memset(r, 0, sizeof(*r));
	for (int k = 0; k < 18; k++) {
		int str = k == 6 || k == 7 || k == 8 || k == 12 || k == 17;

		if (need(path, o, keys[k], str ? is_str : k >= 9 ? is_num_or_null : is_num, &v[k], err) < 0)
			return -1;
	}
	r->segment = (int)num(v[0]);
	r->epoch = (long)num(v[1]);
	r->iteration = (long)num(v[2]);
	r->iters = (int)num(v[3]);
	r->global_bs = (long)num(v[4]);
	r->ngpus = (int)num(v[5]);
	hb_strlcpy(r->alloc, v[6]->valuestring, sizeof(r->alloc));
	hb_strlcpy(r->method, v[7]->valuestring, sizeof(r->method));
	hb_strlcpy(r->config, v[8]->valuestring, sizeof(r->config));
	r->predicted_s = num(v[9]);
	r->measured_s = num(v[10]);
	r->sum_s = num(v[11]);
	hb_strlcpy(r->change, v[12]->valuestring, sizeof(r->change));
	r->change_s = num(v[13]);
	r->similarity = num(v[14]);
	r->noise_scale = num(v[15]);
	r->loss = num(v[16]);
	hb_strlcpy(r->decision, v[17]->valuestring, sizeof(r->decision));
	return 0;
}

int hb_live_segment_read(const char *path, struct hb_live_segment *s, struct hb_error *err)
{
	char *text = NULL;
	size_t len;
	cJSON *root;
	const cJSON *v, *it;
	int rc = -1, i = 0;

	memset(s, 0, sizeof(*s));
	if (hb_read_text_file(path, 0, &text, &len, err) < 0)
		return -1;
	/* hb_json_parse: syntax errors with line and column, text after the
	 * plan's object (a second object) and duplicate keys refused. */
	root = hb_json_parse(text, len, path, err);
	free(text);
	if (!root)
		return -1;
	if (need(path, root, "format", is_str, &v, err) < 0)
		goto out;
	if (strcmp(v->valuestring, "hetbatch-live-state/2") != 0) {
		hb_input_error(err, "%s: format '%s', not hetbatch-live-state/2", path, v->valuestring);
		goto out;
	}
	if (need(path, root, "policy", is_str, &v, err) < 0)
		goto out;
	hb_strlcpy(s->policy, v->valuestring, sizeof(s->policy));
	if (need(path, root, "change", is_str, &v, err) < 0)
		goto out;
	hb_strlcpy(s->change, v->valuestring, sizeof(s->change));
	if (need(path, root, "ended", is_str, &v, err) < 0)
		goto out;
	hb_strlcpy(s->ended, v->valuestring, sizeof(s->ended));
	if (need(path, root, "done", is_bool, &v, err) < 0)
		goto out;
	s->done = cJSON_IsTrue(v);
	{
		static const char *const keys[] = { "segment", "spawn_wall", "save_s", "global_bs", "iteration", "epoch",
						    "epoch_samples" };
		double x[7];

		for (int k = 0; k < 7; k++) {
			if (need(path, root, keys[k], is_num, &v, err) < 0)
				goto out;
			x[k] = v->valuedouble;
		}
		s->segment = (int)x[0];
		s->spawn_wall = x[1];
		s->save_s = x[2];
		s->st.global_bs = (long)x[3];
		s->st.iteration = (long)x[4];
		s->st.epoch = (long)x[5];
		s->st.epoch_samples = x[6];
	}
	if (need(path, root, "alloc", is_arr, &v, err) < 0)
		goto out;
	if (cJSON_GetArraySize(v) < 1 || cJSON_GetArraySize(v) > HB_LIVE_MAX_NODES) {
		hb_input_error(err, "%s: field 'alloc': 1 to %d nodes", path, HB_LIVE_MAX_NODES);
		goto out;
	}
	cJSON_ArrayForEach(it, v) {
		if (!cJSON_IsNumber(it) || it->valuedouble < 0) {
			hb_input_error(err, "%s: field 'alloc': GPU counts must be numbers >= 0", path);
			goto out;
		}
		s->st.alloc[i++] = (int)it->valuedouble;
	}
	s->st.nnodes = i;
	if (need(path, root, "blocks", is_arr, &v, err) < 0)
		goto out;
	cJSON_ArrayForEach(it, v) {
		const cJSON *n = NULL, *t = NULL, *sim = NULL;
		struct hb_live_block b;

		if (need(path, it, "iters", is_num, &n, err) < 0 || need(path, it, "elapsed_s", is_num, &t, err) < 0 ||
		    need(path, it, "similarity", is_num_or_null, &sim, err) < 0)
			goto out;
		if (!(n->valuedouble >= 1) || !(t->valuedouble >= 0)) {
			hb_input_error(err, "%s: field 'blocks': %g iterations in %g s (>= 1 iterations, >= 0 s)", path,
				       n->valuedouble, t->valuedouble);
			goto out;
		}
		b.iters = (long)n->valuedouble;
		b.elapsed_s = t->valuedouble;
		b.similarity = num(sim);
		if (hb_live_pstate_add_block(&s->st, &b, err) < 0)
			goto out;
	}
	if (need(path, root, "rows", is_arr, &v, err) < 0)
		goto out;
	cJSON_ArrayForEach(it, v) {
		struct hb_live_row r;

		if (read_row(path, it, &r, err) < 0 || hb_live_segment_add_row(s, &r, err) < 0)
			goto out;
	}
	rc = 0;
out:
	cJSON_Delete(root);
	if (rc < 0)
		hb_live_segment_free(s);
	return rc;
}

/* ---- running ---------------------------------------------------------------- */

/* Rank 0's plan to every rank. */
static int bcast_plan(const struct hb_ar_team *t, struct hb_live_plan *p, struct hb_error *err)
{
	struct hb_live_plan head;

	if (t->rank == 0) {
		head = *p;
		head.slots = NULL;
	}
	hb_ar_team_bcast(t, &head, (int)sizeof(head));
	if (t->rank != 0) {
		*p = head;
		p->slots = calloc((size_t)(head.nslots > 0 ? head.nslots : 1), sizeof(*p->slots));
	}
	if (hb_ar_team_agree(t, p->slots ? 0 : hb_runtime_error(err, "live: out of memory"), err) < 0)
		return -1;
	hb_ar_team_bcast(t, p->slots, (int)((size_t)head.nslots * sizeof(*p->slots)));
	return 0;
}

static void format_alloc(const struct hb_live_policy *pol, const int *alloc, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < pol->cl->nnodes && len < n; i++)
		if (alloc[i] > 0)
			len += (size_t)snprintf(buf + len, n - len, "%s%s=%d", len ? " " : "", pol->cl->nodes[i].name,
						alloc[i]);
}

/* Rank 0: the row of a finished block. */
static void block_row(const struct hb_live_policy *pol, const struct hb_live_segment *seg,
		      const struct hb_live_plan *plan, const struct hb_live_result *r, int adapt_point,
		      struct hb_live_row *row)
{
	memset(row, 0, sizeof(*row));
	row->segment = seg->segment;
	row->epoch = seg->st.epoch;
	row->iteration = r->first_iter;
	row->iters = r->iters;
	row->global_bs = plan->global_batch;
	row->ngpus = plan->nslots;
	format_alloc(pol, seg->st.alloc, row->alloc, sizeof(row->alloc));
	hb_strlcpy(row->method, plan->method, sizeof(row->method));
	hb_strlcpy(row->config, plan->config, sizeof(row->config));
	row->predicted_s = plan->pred_iter_s;
	row->measured_s = r->critical_s;
	row->sum_s = r->sum_critical_s;
	row->change_s = NAN;
	row->similarity = NAN;
	row->noise_scale = NAN;
	row->loss = r->loss_last;
	if (adapt_point && r->nmetrics > 0) {
		row->similarity = r->metrics[r->nmetrics - 1].similarity;
		row->noise_scale = r->metrics[r->nmetrics - 1].gns.noise_scale;
	}
}

/* Rank 0 after a block: the policy's decisions, the action for everyone. */
static int decide(struct hb_live_policy *pol, struct hb_live_segment *seg, long n, struct hb_live_row *row,
		  int relaunch_always, struct hb_live_plan *next, int *action, struct hb_error *err)
{
	struct hb_live_pstate *st = &seg->st;
	const struct hb_live_block b = { n, row->sum_s, row->similarity };
	const long epoch = st->epoch;
	int act;

	*action = ACT_CONTINUE;
	if (hb_live_policy_block(pol, st, &b, &act, next, row->decision, sizeof(row->decision), err) < 0)
		return -1;
	if (act == HB_LIVE_DONE) {
		snprintf(seg->ended, sizeof(seg->ended), "trained %ld epochs (%ld iterations)", st->epoch, st->iteration);
		seg->done = 1;
		*action = ACT_DONE;
	} else if (act == HB_LIVE_MOVE || (relaunch_always && st->epoch != epoch)) {
		snprintf(seg->ended, sizeof(seg->ended), "epoch %ld ended: %s", st->epoch,
			 act == HB_LIVE_MOVE ? "the auto-scaler chose another allocation" : "relaunch at every epoch end");
		*action = ACT_RELAUNCH;
	} else if (act == HB_LIVE_INPLACE) {
		*action = ACT_INPLACE;
	}
	if (act == HB_LIVE_INPLACE && *action != ACT_INPLACE)
		hb_live_plan_free(next); /* a relaunch plans again from the state */
	return 0;
}

/* Rank 0 after a block: one progress line on stderr at an epoch's end or
 * when o->progress_s has passed since the last (hb_live_opts). */
static void progress_line(const struct hb_live_policy *pol, const struct hb_live_segment *seg,
			  const struct hb_live_plan *plan, const struct hb_live_row *row, long epoch_before,
			  double started, double *last, double every)
{
	double now = hb_live_wall_now();
	int epoch_end = seg->st.epoch != epoch_before;

	if (every < 0 || (!epoch_end && now - *last < every))
		return;
	*last = now;
	fprintf(stderr, "live: launch %d: %s %ld of %ld, iteration %ld, B_G %ld on %d GPUs, %.1f ms per iteration, "
		"loss %.4g, %.0f s since the launch\n", seg->segment, epoch_end ? "ended epoch" : "epoch",
		epoch_end ? seg->st.epoch : seg->st.epoch + 1, pol->par.epochs, seg->st.iteration, plan->global_batch,
		plan->nslots, 1e3 * row->measured_s, row->loss, now - started);
	fflush(stderr);
}

int hb_live_segment_run(const struct hb_ar_team *t, const struct hb_catalog *cat, struct hb_live_policy *pol,
			const struct hb_live_opts *o, struct hb_live_segment *seg, const char *ckpt_dir,
			int relaunch_always, struct hb_error *err)
{
	struct hb_live_plan plan = { 0 }, next = { 0 };
	struct hb_live_rank *c = NULL;
	struct hb_live_opts ro = *o;
	struct hb_live_result *r = calloc(1, sizeof(*r));
	char change[16] = "";
	double change_s = NAN;
	long first_it = 0;
	double started = hb_live_wall_now(), last_line = started;
	int rc = r ? 0 : hb_runtime_error(err, "live: out of memory");

	if (rc == 0 && t->rank == 0) {
		rc = hb_live_policy_config(pol, &seg->st, &plan, err);
		first_it = seg->st.iteration;
	}
	if (hb_ar_team_agree(t, rc, err) < 0 || bcast_plan(t, &plan, err) < 0)
		goto fail;
	hb_ar_team_bcast(t, &first_it, (int)sizeof(first_it));
	ro.metrics_always = 1;
	ro.metrics_every = 0;
	if (hb_live_rank_open(t, cat, &plan, &ro, &c, err) < 0)
		goto fail;
	if (first_it > 0 && hb_live_rank_load(c, ckpt_dir, 1, err) < 0)
		goto fail;
	if (t->rank == 0) {
		hb_strlcpy(change, seg->change, sizeof(change));
		change_s = hb_live_wall_now() - seg->spawn_wall + seg->save_s;
	}
	for (;;) {
		struct hb_live_row row;
		long n = 0;
		int adapt = 0, action = ACT_CONTINUE;

		if (t->rank == 0)
			n = hb_live_policy_next(pol, &adapt); /* to the next epoch end or adaptation point */
		hb_ar_team_bcast(t, &n, (int)sizeof(n));
		hb_ar_team_bcast(t, &adapt, (int)sizeof(adapt));
		if (hb_live_rank_block(c, 0, (int)n, 0, adapt, r, err) < 0)
			goto fail;
		rc = 0;
		if (t->rank == 0) {
			long epoch = seg->st.epoch;

			block_row(pol, seg, &plan, r, adapt, &row);
			hb_strlcpy(row.change, change, sizeof(row.change));
			row.change_s = change_s;
			change[0] = '\0';
			change_s = NAN;
			rc = decide(pol, seg, n, &row, relaunch_always, &next, &action, err);
			if (rc == 0)
				rc = hb_live_segment_add_row(seg, &row, err);
			if (rc == 0)
				progress_line(pol, seg, &plan, &row, epoch, started, &last_line, o->progress_s);
		}
		if (hb_ar_team_agree(t, rc, err) < 0)
			goto fail;
		hb_ar_team_bcast(t, &action, (int)sizeof(action));
		if (action == ACT_INPLACE) {
			double cost;

			if (bcast_plan(t, &next, err) < 0 || hb_live_rank_reconfigure(c, &next, &cost, err) < 0)
				goto fail;
			hb_live_plan_free(&plan);
			plan = next;
			memset(&next, 0, sizeof(next));
			hb_strlcpy(change, "inplace", sizeof(change));
			change_s = cost;
		} else if (action == ACT_RELAUNCH || action == ACT_DONE) {
			double t0 = hb_live_wall_now();

			if (hb_live_rank_save(c, ckpt_dir, 1, err) < 0)
				goto fail;
			if (t->rank == 0)
				seg->save_s = hb_live_wall_now() - t0;
			break;
		}
	}
	hb_live_rank_close(c);
	hb_live_plan_free(&plan);
	free(r);
	return 0;
fail:
	hb_live_rank_close(c);
	hb_live_plan_free(&plan);
	hb_live_plan_free(&next);
	free(r);
	return -1;
}
