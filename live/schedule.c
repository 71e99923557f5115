/*
 * schedule.c: one job's configuration events of a simulator results.db as
 * live plans (schedule.h).
 *
 * An event's text is read from its end, since the reason in front may say
 * anything: the suffix follows the last "; B_L ", and the human part
 * before it ends in "; B_G N, K GPUs, T s/iter: LAYOUT".  Every number is
 * parsed strictly, every node must be one of the run's catalog cluster
 * (and, in lbs, one of the alloc's, with a batch per GPU), and the rebuilt
 * slots must hold the event's GPUs and B_G exactly.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"       /* hb_db_open, hb_db_prepare */
#include "fileio.h"   /* hb_path_is_dir, hb_path_exists */
#include "schedule.h"
#include "strutil.h"  /* hb_parse_long_range, hb_parse_double, hb_strlcpy */

/* ---- one event ------------------------------------------------------------ */

/* The event being read, for messages and node lookups. */
struct ev {
	const char *db;          /* results.db */
	long seq;
	const struct hb_catalog *cat;
	const struct hb_cluster *cl;
	struct hb_error *err;
};

/* One entry of an IIDP layout: `gpus` GPUs of `node`. */
struct iidp_entry {
	int node, gpus, vsw, ga;
};

static int bad_event(const struct ev *e, const char *fmt, ...) HB_PRINTF(2, 3);

static int bad_event(const struct ev *e, const char *fmt, ...)
{
	char why[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return hb_input_error(e->err, "%s: event seq %ld: %s", e->db, e->seq, why);
}

/* End s at the first delim and return the text after it; NULL (s kept)
 * when delim is absent. */
static char *split_at(char *s, const char *delim)
{
	char *d = strstr(s, delim);

	if (!d)
		return NULL;
	*d = '\0';
	return d + strlen(delim);
}

static char *last_of(char *s, const char *needle)
{
	char *hit = NULL;

	for (char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		hit = p;
	return hit;
}

static int whole(const struct ev *e, const char *what, const char *s, long lo, long hi, long *out)
{
	if (hb_parse_long_range(s, lo, hi, out) < 0)
		return bad_event(e, "malformed number: %s '%s' (a whole number from %ld to %ld expected)", what, s, lo,
				 hi);
	return 0;
}

static int real(const struct ev *e, const char *what, const char *s, int positive, double *out)
{
	if (hb_parse_double(s, out) < 0 || (positive ? !(*out > 0) : !(*out >= 0)))
		return bad_event(e, "malformed number: %s '%s' (a %s number expected)", what, s,
				 positive ? "positive" : "non-negative");
	return 0;
}

static int node_index(const struct hb_cluster *cl, const char *name)
{
	for (int i = 0; i < cl->nnodes; i++)
		if (strcmp(cl->nodes[i].name, name) == 0)
			return i;
	return -1;
}

static int find_node(const struct ev *e, const char *what, const char *name, int *node)
{
	if ((*node = node_index(e->cl, name)) < 0)
		return bad_event(e, "%s: node '%s' is not in cluster %s", what, name, e->cl->name);
	return 0;
}

/* "node0=2 node1=2" into alloc[nnodes]. */
static int read_alloc(const struct ev *e, char *s, int *alloc)
{
	char *next;

	if (!*s)
		return bad_event(e, "the alloc is empty");
	for (char *tok = s; tok; tok = next) {
		char *eq;
		long n;
		int node;

		if ((next = strchr(tok, ' ')))
			*next++ = '\0';
		if (!(eq = strrchr(tok, '=')) || eq == tok)
			return bad_event(e, "malformed alloc entry '%s' (NODE=GPUS expected)", tok);
		*eq = '\0';
		if (find_node(e, "alloc", tok, &node) < 0 || whole(e, "alloc GPUs", eq + 1, 1, INT_MAX, &n) < 0)
			return -1;
		if (alloc[node] > 0)
			return bad_event(e, "alloc: node '%s' is named twice", tok);
		if (n > e->cl->nodes[node].ngpus)
			return bad_event(e, "alloc: %ld GPUs on node '%s', which has %d in cluster %s", n, tok,
					 e->cl->nodes[node].ngpus, e->cl->name);
		alloc[node] = (int)n;
	}
	return 0;
}

/* "fast=83,82 slow=30,30" (modified in place): each GPU's local batch, a
 * node's in the order of its GPUs, into lbs[gpus] in cluster node order
 * (a node's alloc[i] GPUs together, as the slots).  Every node of the
 * alloc, and only those, with one batch per GPU. */
static int read_lbs(const struct ev *e, char *s, const int *alloc, int *lbs)
{
	int *first = calloc((size_t)e->cl->nnodes, sizeof(*first));
	int *named = calloc((size_t)e->cl->nnodes, sizeof(*named));
	char *next;
	int rc = -1;

	if (!first || !named) {
		hb_runtime_error(e->err, "%s: out of memory", e->db);
		goto out;
	}
	for (int i = 0, at = 0; i < e->cl->nnodes; i++) {
		first[i] = at;
		at += alloc[i];
	}
	if (!*s) {
		bad_event(e, "lbs is empty");
		goto out;
	}
	for (char *tok = s; tok; tok = next) {
		char *eq, *num, *comma;
		int node, k = 0;

		if ((next = strchr(tok, ' ')))
			*next++ = '\0';
		if (!(eq = strrchr(tok, '=')) || eq == tok || !eq[1]) {
			bad_event(e, "malformed lbs entry '%s' (NODE=B,B,... expected: one local batch per GPU)", tok);
			goto out;
		}
		*eq = '\0';
		if (find_node(e, "lbs", tok, &node) < 0)
			goto out;
		if (named[node]++) {
			bad_event(e, "lbs: node '%s' is named twice", tok);
			goto out;
		}
		if (alloc[node] == 0) {
			bad_event(e, "lbs: node '%s' is not in the alloc", tok);
			goto out;
		}
		for (num = eq + 1; num; num = comma, k++) {
			long b;

			if ((comma = strchr(num, ',')))
				*comma++ = '\0';
			if (whole(e, "lbs local batch", num, 1, INT_MAX, &b) < 0)
				goto out;
			if (k < alloc[node])
				lbs[first[node] + k] = (int)b;
		}
		if (k != alloc[node]) {
			bad_event(e, "lbs: node '%s' has %d local batches, the alloc %d GPUs", tok, k, alloc[node]);
			goto out;
		}
	}
	for (int i = 0; i < e->cl->nnodes; i++)
		if (alloc[i] > 0 && !named[i]) {
			bad_event(e, "lbs: node '%s' of the alloc has no local batches", e->cl->nodes[i].name);
			goto out;
		}
	rc = 0;
out:
	free(first);
	free(named);
	return rc;
}

/* One "NODE:KGPU,VSW:v,GA:g" (modified in place). */
static int read_iidp_entry(const struct ev *e, char *s, struct iidp_entry *x)
{
	char text[256], *vsw, *ga, *colon;
	size_t len;
	long n;

	hb_strlcpy(text, s, sizeof(text));
	if (!(vsw = split_at(s, ",VSW:")) || !(ga = split_at(vsw, ",GA:")) || !(colon = strrchr(s, ':')) ||
	    (len = strlen(colon + 1)) < 4 || strcmp(colon + 1 + len - 3, "GPU") != 0)
		return bad_event(e, "malformed layout entry '%s' ('NODE:KGPU,VSW:v,GA:g' expected)", text);
	*colon = '\0';
	colon[len - 2] = '\0'; /* drop "GPU" */
	if (find_node(e, "layout", s, &x->node) < 0 || whole(e, "layout GPUs", colon + 1, 1, INT_MAX, &n) < 0)
		return -1;
	x->gpus = (int)n;
	if (whole(e, "layout VSW", vsw, 1, INT_MAX, &n) < 0)
		return -1;
	x->vsw = (int)n;
	if (whole(e, "layout GA", ga, 0, INT_MAX - 1, &n) < 0)
		return -1;
	x->ga = (int)n;
	return 0;
}

/* "['node0:2GPU,VSW:1,GA:0', 'node1:2GPU,VSW:2,GA:1']" (modified in place)
 * into *entries (malloc'd, *n of them). */
static int read_iidp(const struct ev *e, char *layout, struct iidp_entry **entries, int *n)
{
	char *p = layout + 1;

	*entries = NULL;
	*n = 0;
	if (*p == ']')
		return bad_event(e, "the layout has no GPUs");
	for (;;) {
		char *close;
		struct iidp_entry *grown;

		if (*p != '\'' || !(close = strchr(p + 1, '\'')))
			return bad_event(e, "malformed IIDP layout at '%s' (an entry 'NODE:KGPU,VSW:v,GA:g' expected)", p);
		*close = '\0';
		if (!(grown = realloc(*entries, (size_t)(*n + 1) * sizeof(**entries))))
			return hb_runtime_error(e->err, "%s: out of memory", e->db);
		*entries = grown;
		if (read_iidp_entry(e, p + 1, &grown[(*n)++]) < 0)
			return -1;
		p = close + 1;
		if (strncmp(p, ", ", 2) == 0)
			p += 2;
		else if (strcmp(p, "]") == 0)
			return 0;
		else
			return bad_event(e, "malformed IIDP layout at '%s' (', ' or ']' expected)", p);
	}
}

/* The GA steps of a data-parallel layout: the number after ", GA ". */
static int read_ddp_ga(const struct ev *e, const char *layout, int *ga)
{
	const char *g = strstr(layout, ", GA ");
	char num[32];
	size_t len;
	long n;

	if (!g)
		return bad_event(e, "the layout '%s' is neither IIDP (['NODE:KGPU,VSW:v,GA:g', ...]) nor data parallel "
				 "(..., GA n, ...)", layout);
	g += 5;
	len = strcspn(g, ",");
	if (len >= sizeof(num))
		len = sizeof(num) - 1;
	memcpy(num, g, len);
	num[len] = '\0';
	if (whole(e, "layout GA", num, 0, INT_MAX - 1, &n) < 0)
		return -1;
	*ga = (int)n;
	return 0;
}

static void set_slot(struct hb_live_slot *s, const struct ev *e, int node, int vsw, int ga, int lbs, double iter_s)
{
	const struct hb_node *nd = &e->cl->nodes[node];

	hb_strlcpy(s->node, nd->name, sizeof(s->node));
	hb_strlcpy(s->gpu, e->cat->gpus[nd->gpu].name, sizeof(s->gpu));
	s->n_vsw = vsw;
	s->n_ga = ga;
	s->local_bs = lbs;
	s->pred_iter_s = iter_s;
}

/* The slots of a configuration, in cluster node order (an IIDP node's
 * entries in layout order); alloc and the event's GPU count agree.
 * Without IIDP entries every GPU is one VSW with ddp_ga GA steps, at
 * gpu_lbs[slot] when given (unequal local batches), else at lbs. */
static int build_slots(const struct ev *e, struct hb_live_plan *p, const int *alloc, int gpus, int lbs,
		       const int *gpu_lbs, int ddp_ga, const struct iidp_entry *entries, int nentries)
{
	int *laid = NULL;

	if (!(p->slots = calloc((size_t)gpus, sizeof(*p->slots))))
		return hb_runtime_error(e->err, "%s: out of memory", e->db);
	if (entries) {
		if (!(laid = calloc((size_t)e->cl->nnodes, sizeof(*laid))))
			return hb_runtime_error(e->err, "%s: out of memory", e->db);
		for (int k = 0; k < nentries; k++)
			laid[entries[k].node] += entries[k].gpus;
		for (int i = 0; i < e->cl->nnodes; i++)
			if (laid[i] != alloc[i]) {
				int n = laid[i];

				free(laid);
				return bad_event(e, "node '%s': the layout has %d GPUs, the alloc %d", e->cl->nodes[i].name,
						 n, alloc[i]);
			}
		free(laid);
	}
	for (int i = 0; i < e->cl->nnodes; i++) {
		if (!entries) {
			for (int k = 0; k < alloc[i]; k++, p->nslots++)
				set_slot(&p->slots[p->nslots], e, i, 1, ddp_ga, gpu_lbs ? gpu_lbs[p->nslots] : lbs,
					 p->pred_iter_s);
			continue;
		}
		for (int j = 0; j < nentries; j++)
			for (int k = 0; entries[j].node == i && k < entries[j].gpus; k++)
				set_slot(&p->slots[p->nslots++], e, i, entries[j].vsw, entries[j].ga, lbs, p->pred_iter_s);
	}
	return 0;
}

/* The configuration of one event's text (modified in place). */
static int read_config(const struct ev *e, char *text, int iidp_ows, struct hb_live_sched_cfg *c)
{
	struct hb_live_plan *p = &c->plan;
	char *suffix = last_of(text, "; B_L "), *head, *alloc_s, *lbs_s, *iter, *iter_s, *gpus_s, *note_s, *layout;
	long lbs, gbs, gpus;
	int *alloc = NULL, *gpu_lbs = NULL, ddp_ga = 0, nentries = 0, optperf, rc = -1;
	struct iidp_entry *entries = NULL;
	double samples = 0, note_iter_s;

	if (!suffix)
		return bad_event(e, "no '; B_L N, alloc ..., iteration N, iter_s T' at the end: the results were written "
				 "by an older hetbatch; run the simulation again");
	*suffix = '\0';
	suffix += strlen("; B_L ");
	if (!(alloc_s = split_at(suffix, ", alloc ")) || !(iter = split_at(alloc_s, ", iteration ")) ||
	    !(iter_s = split_at(iter, ", iter_s ")))
		return bad_event(e, "malformed suffix ('; B_L N, alloc NODE=GPUS ..., iteration N, iter_s T' expected)");
	lbs_s = split_at(alloc_s, ", lbs ");
	if (whole(e, "B_L", suffix, 0, INT_MAX, &lbs) < 0 || real(e, "iteration", iter, 0, &c->iteration) < 0 ||
	    real(e, "iter_s", iter_s, 1, &c->sim_iter_s) < 0)
		return -1;
	if (lbs == 0 && !lbs_s)
		return bad_event(e, "B_L 0 (unequal local batches) without ', lbs NODE=B,B ...' after the alloc: each "
				 "GPU's local batch is not recorded (an older hetbatch wrote it); run the simulation "
				 "again");
	if (lbs > 0 && lbs_s)
		return bad_event(e, "B_L %ld with ', lbs %s': per-GPU local batches go with B_L 0 only", lbs, lbs_s);
	if (!(head = last_of(text, "; B_G ")))
		return bad_event(e, "no '; B_G N, K GPUs, T s/iter: LAYOUT' before the suffix");
	head += strlen("; B_G ");
	if (!(gpus_s = split_at(head, ", ")) || !(note_s = split_at(gpus_s, " GPUs, ")) ||
	    !(layout = split_at(note_s, " s/iter: ")))
		return bad_event(e, "malformed 'B_G N, K GPUs, T s/iter: LAYOUT'");
	if (whole(e, "B_G", head, 1, LONG_MAX, &gbs) < 0 || whole(e, "GPUs", gpus_s, 1, INT_MAX, &gpus) < 0 ||
	    real(e, "s/iter", note_s, 0, &note_iter_s) < 0)
		return -1;
	/* OptPerf's layout is for people (it may be cut): the suffix has it all */
	optperf = strncmp(layout, "OptPerf ", 8) == 0;
	if (lbs_s && !optperf)
		return bad_event(e, "per-GPU local batches (lbs) with the layout '%s', which is not OptPerf's", layout);
	if (!optperf && strlen(layout) >= 3 && strcmp(layout + strlen(layout) - 3, "...") == 0)
		return bad_event(e, "the layout was cut (it ends in \"...\"): the configuration cannot be rebuilt");

	snprintf(p->path, sizeof(p->path), "%.480s event %ld", e->db, e->seq);
	hb_strlcpy(p->config, layout, sizeof(p->config));
	p->global_batch = gbs;
	p->pred_iter_s = c->sim_iter_s;
	if (!(alloc = calloc((size_t)e->cl->nnodes, sizeof(*alloc))))
		return hb_runtime_error(e->err, "%s: out of memory", e->db);
	if (read_alloc(e, alloc_s, alloc) < 0)
		goto out;
	{
		long held = 0;

		for (int i = 0; i < e->cl->nnodes; i++)
			held += alloc[i];
		if (held != gpus) {
			bad_event(e, "the alloc holds %ld GPUs, the event says %ld GPUs", held, gpus);
			goto out;
		}
	}
	if (optperf) {
		/* Cannikin: one replica per GPU, no accumulation, and OptPerf
		 * (solver/optperf.h) has no overlapping weight sync */
		hb_strlcpy(p->method, "optperf", sizeof(p->method));
		p->ows = 0;
		if (lbs_s) {
			if (!(gpu_lbs = calloc((size_t)gpus, sizeof(*gpu_lbs)))) {
				hb_runtime_error(e->err, "%s: out of memory", e->db);
				goto out;
			}
			if (read_lbs(e, lbs_s, alloc, gpu_lbs) < 0)
				goto out;
		}
	} else if (layout[0] == '[') {
		hb_strlcpy(p->method, "iidp", sizeof(p->method));
		p->ows = iidp_ows;
		if (read_iidp(e, layout, &entries, &nentries) < 0)
			goto out;
	} else {
		hb_strlcpy(p->method, "ddp", sizeof(p->method));
		p->ows = 0;
		if (read_ddp_ga(e, layout, &ddp_ga) < 0)
			goto out;
	}
	if (build_slots(e, p, alloc, (int)gpus, (int)lbs, gpu_lbs, ddp_ga, entries, nentries) < 0)
		goto out;
	for (int i = 0; i < p->nslots; i++)
		samples += (double)p->slots[i].local_bs * p->slots[i].n_vsw * (p->slots[i].n_ga + 1.0);
	if (samples != (double)gbs) {
		bad_event(e, "the GPUs' local batches add up to %.0f samples, the event says B_G %ld", samples, gbs);
		goto out;
	}
	rc = 0;
out:
	free(entries);
	free(gpu_lbs);
	free(alloc);
	return rc;
}

int hb_live_schedule_config(const char *src, long seq, const struct hb_catalog *cat, const struct hb_cluster *cl,
			    const char *text, int iidp_ows, struct hb_live_sched_cfg *c, struct hb_error *err)
{
	struct ev e = { .db = src, .seq = seq, .cat = cat, .cl = cl, .err = err };
	char *copy = malloc(strlen(text) + 1);
	int rc;

	memset(c, 0, sizeof(*c));
	if (!copy)
		return hb_runtime_error(err, "%s: out of memory", src);
	strcpy(copy, text);
	rc = read_config(&e, copy, iidp_ows, c);
	free(copy);
	return rc;
}

/* ---- the run ----------------------------------------------------------------- */

static int db_read_error(sqlite3 *db, const char *path, const char *what, struct hb_error *err)
{
	return hb_runtime_error(err, "%s: %s: %s", path, what, sqlite3_errmsg(db));
}

/* 1 when the database has table `name`. */
static int has_table(sqlite3 *db, const char *path, const char *name, struct hb_error *err)
{
	sqlite3_stmt *st;
	int rc;

	/* a view counts: `events` is one over `event` since issue 43, a table before */
	if (hb_db_prepare(db, "SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?1", &st, err) <
	    0)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_read_error(db, path, "read the schema", err);
	return rc == SQLITE_ROW;
}

static void col_text(sqlite3_stmt *st, int col, char *dst, size_t size)
{
	const unsigned char *s = sqlite3_column_text(st, col);

	hb_strlcpy(dst, s ? (const char *)s : "", size);
}

/* Append "run N (policy P, model M)" of a runs row to a ", " list. */
static void list_run(char *list, size_t size, sqlite3_stmt *st)
{
	char policy[HB_NAME_MAX], model[HB_NAME_MAX];
	size_t used = strlen(list);

	col_text(st, 1, policy, sizeof(policy));
	col_text(st, 2, model, sizeof(model));
	if (used + 1 < size)
		snprintf(list + used, size - used, "%srun %d (policy %s, model %s)", used ? ", " : "",
			 sqlite3_column_int(st, 0), policy, model);
}

/* The run holding the job (of `policy` when given): fills run_id, policy,
 * model and cluster of s. */
static int pick_run(sqlite3 *db, const char *policy, struct hb_live_sched *s, struct hb_error *err)
{
	sqlite3_stmt *st;
	char all[512] = "", match[512] = "", name[HB_NAME_MAX];
	int rc, nall = 0, nmatch = 0;

	if (hb_db_prepare(db, "SELECT run_id, policy, model, cluster FROM runs WHERE run_id IN "
			      "(SELECT run_id FROM events WHERE job = ?1) ORDER BY run_id", &st, err) < 0)
		return -1;
	sqlite3_bind_int(st, 1, s->job);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		nall++;
		list_run(all, sizeof(all), st);
		col_text(st, 1, name, sizeof(name));
		if (policy && !hb_strcaseeq(name, policy)) /* policy names match in any case */
			continue;
		if (nmatch++ == 0) {
			s->run_id = sqlite3_column_int(st, 0);
			hb_strlcpy(s->policy, name, sizeof(s->policy));
			col_text(st, 2, s->model, sizeof(s->model));
			col_text(st, 3, s->cluster, sizeof(s->cluster));
		}
		list_run(match, sizeof(match), st);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_read_error(db, s->db, "read runs", err);
	if (nall == 0)
		return hb_input_error(err, "%s: no run has job %d", s->db, s->job);
	if (nmatch == 0)
		return hb_input_error(err, "%s: no run of policy '%s' has job %d; the runs that have it: %s", s->db, policy,
				      s->job, all);
	if (nmatch > 1 && !policy)
		return hb_input_error(err, "%s: %d runs have job %d: %s; pass --policy to pick one", s->db, nmatch, s->job,
				      match);
	if (nmatch > 1)
		return hb_input_error(err, "%s: %d runs of policy '%s' have job %d: %s; replay needs one run per policy "
				      "(simulate one model per results directory)", s->db, nmatch, policy, s->job, match);
	return 0;
}

/* The job's own model (jobs.model: a trace mixes models) when the jobs
 * table has it; else the run's. */
static int job_model(sqlite3 *db, struct hb_live_sched *s, struct hb_error *err)
{
	sqlite3_stmt *st;
	int rc = has_table(db, s->db, "jobs", err);

	if (rc <= 0)
		return rc;
	if (hb_db_prepare(db, "SELECT model FROM jobs WHERE run_id = ?1 AND job = ?2", &st, err) < 0)
		return -1;
	sqlite3_bind_int(st, 1, s->run_id);
	sqlite3_bind_int(st, 2, s->job);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
		col_text(st, 0, s->model, sizeof(s->model));
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_read_error(db, s->db, "read jobs", err);
	return 0;
}

static int read_configs(sqlite3 *db, const struct hb_catalog *cat, const struct hb_cluster *cl, int iidp_ows,
			struct hb_live_sched *s, struct hb_error *err)
{
	sqlite3_stmt *st;
	int rc, cap = 0;

	if (hb_db_prepare(db, "SELECT seq, t, kind, detail FROM events WHERE run_id = ?1 AND job = ?2 AND kind IN "
			      "('start', 'reconfig', 'restart') ORDER BY seq", &st, err) < 0)
		return -1;
	sqlite3_bind_int(st, 1, s->run_id);
	sqlite3_bind_int(st, 2, s->job);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *detail = sqlite3_column_text(st, 3);
		struct ev e = { .db = s->db, .seq = (long)sqlite3_column_int64(st, 0), .cat = cat, .cl = cl, .err = err };
		struct hb_live_sched_cfg *c;
		char *text;

		if (s->ncfgs == cap) {
			int ncap = cap ? 2 * cap : 16;
			struct hb_live_sched_cfg *grown = realloc(s->cfgs, (size_t)ncap * sizeof(*grown));

			if (!grown) {
				sqlite3_finalize(st);
				return hb_runtime_error(err, "%s: out of memory", s->db);
			}
			s->cfgs = grown;
			cap = ncap;
		}
		c = &s->cfgs[s->ncfgs++];
		memset(c, 0, sizeof(*c));
		c->seq = e.seq;
		c->t = sqlite3_column_double(st, 1);
		col_text(st, 2, c->kind, sizeof(c->kind));
		hb_strlcpy(c->plan.model, s->model, sizeof(c->plan.model));
		hb_strlcpy(c->plan.cluster, s->cluster, sizeof(c->plan.cluster));
		if (!(text = malloc(detail ? strlen((const char *)detail) + 1 : 1))) {
			sqlite3_finalize(st);
			return hb_runtime_error(err, "%s: out of memory", s->db);
		}
		strcpy(text, detail ? (const char *)detail : "");
		rc = read_config(&e, text, iidp_ows, c);
		free(text);
		if (rc < 0) {
			sqlite3_finalize(st);
			return -1;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_read_error(db, s->db, "read events", err);
	if (s->ncfgs == 0)
		return hb_input_error(err, "%s: run %d (policy %s): job %d has no start, reconfig or restart event", s->db,
				      s->run_id, s->policy, s->job);
	return 0;
}

int hb_live_schedule_load(const char *results, const char *policy, int job, const struct hb_catalog *cat,
			  int iidp_ows, struct hb_live_sched *out, struct hb_error *err)
{
	const struct hb_cluster *cl;
	sqlite3 *db = NULL;
	int rc = -1, tables;

	memset(out, 0, sizeof(*out));
	out->job = job;
	if (strlen(results) + sizeof("/results.db") > sizeof(out->db))
		return hb_input_error(err, "%s: path too long", results);
	if (hb_path_is_dir(results))
		snprintf(out->db, sizeof(out->db), "%s/results.db", results);
	else
		hb_strlcpy(out->db, results, sizeof(out->db));
	if (!hb_path_exists(out->db))
		return hb_input_error(err, "%s: no such file (a results directory of 'hetbatch sim --out DIR' or its "
				      "results.db expected)", out->db);
	if (hb_db_open(out->db, HB_DB_READONLY, &db, err) < 0)
		return -1;
	if ((tables = has_table(db, out->db, "runs", err)) < 0) {
		if ((sqlite3_errcode(db) & 0xff) == SQLITE_NOTADB)
			hb_input_error(err, "%s: not an SQLite database (a results.db of 'hetbatch sim --out DIR' "
				       "expected)", out->db);
		goto out;
	}
	if (tables == 1 && (tables = has_table(db, out->db, "events", err)) < 0)
		goto out;
	if (tables == 0) {
		hb_input_error(err, "%s: not a simulator results database (it has no runs or events table)", out->db);
		goto out;
	}
	if (pick_run(db, policy, out, err) < 0 || job_model(db, out, err) < 0)
		goto out;
	if (!(cl = hb_catalog_cluster(cat, out->cluster))) {
		hb_input_error(err, "%s: run %d's cluster '%s' is not a catalog cluster: replay needs one to know each "
			       "node's GPU type", out->db, out->run_id, out->cluster);
		goto out;
	}
	rc = read_configs(db, cat, cl, iidp_ows, out, err);
out:
	hb_db_close(db);
	if (rc < 0)
		hb_live_schedule_free(out);
	return rc;
}

void hb_live_schedule_free(struct hb_live_sched *s)
{
	for (int i = 0; i < s->ncfgs; i++)
		hb_live_plan_free(&s->cfgs[i].plan);
	free(s->cfgs);
	s->cfgs = NULL;
	s->ncfgs = 0;
}
