/*
 * live.c: `mpirun -np N hetbatch live --plan PLAN.json`: run a plan's
 * configuration on real devices and compare each rank's and the critical
 * path's measured iteration time with the plan's prediction (JABAS Table
 * 6's comparison).  The work is live/live.c's; this file parses
 * options, starts the MPI team, prints the table on rank 0 and writes the
 * prediction rows (--db) and the results directory (--out).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allreduce.h"   /* defines: hb_ar_team */
#include "catalog.h"
#include "cli.h"
#include "cli_profiles.h" /* defines: hb_cli_profile_uses_json */
#include "fileio.h"
#include "hb_config.h"   /* defines: HB_VERSION */
#include "json.h"
#include "live.h"
#include "live_adapt.h"  /* hb_cli_live_adapt: --policy */
#include "live_schedule.h" /* hb_cli_live_schedule: --schedule */
#include "perfmodel.h"   /* defines: hb_perf_load, hb_perf_iter_time */
#include "default_db.h" /* defines: hb_is_default_profdb, hb_user_profdb_for_writing */
#include "profdb.h"
#include "strutil.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mpirun -np N hetbatch live --plan PLAN.json [--method iidp|ddp|optperf]\n"
		"                    [--backend cpu|cuda] [--iters N] [--warmup N] [--scale F]\n"
		"                    [--mem-limit SIZE] [--db FILE] [--out DIR] [--timeout S]\n"
		"                    [--checkpoint DIR [--resume]] [--task teacher|fixed]\n"
		"                    [--label-noise S] [--metrics-every P] [--map SPEC]\n"
		"       hetbatch live --policy NAME --model M --cluster C\n"
		"                    --db FILE --out DIR [--epochs N] [--dataset-size N]\n"
		"                    [--interval P] [--gamma G] [--alpha A] [--min-gbs N]\n"
		"                    [--max-gbs N] [--gbs N] [--launcher CMD]\n"
		"                    [--relaunch-every-epoch] [--max-launches N]\n"
		"       hetbatch live --schedule RESULTS_DIR --job ID [--policy P] --db FILE\n"
		"                    --out DIR [--iters-per-config N] [--max-configs N]\n"
		"\n"
		"Execute one configuration of a plan ('hetbatch plan --json') on real devices:\n"
		"one MPI rank per GPU of the configuration (rank r takes the plan's r-th GPU,\n"
		"so on one host a plan's nodes are groups of consecutive ranks).  Each rank\n"
		"runs its VSWs (threads with their own streams) at the plan's local batch\n"
		"with its GA micro-steps on the model's synthetic training step (the\n"
		"profiler's workload, real gradients), sums the VSWs' gradients, scales them\n"
		"by its share of the global batch, all-reduces every gradient bucket in\n"
		"reduction order (MPI on cpu), updates each bucket as its all-reduce ends\n"
		"(overlapping weight sync) or after the last (sequential), and copies the\n"
		"weights to its other VSWs.  It prints, per rank and for the critical path,\n"
		"the plan's predicted iteration time beside the measured median and the\n"
		"error, as JABAS Table 6 does.\n"
		"\n"
		"Options:\n"
		"  --plan FILE       plan from 'hetbatch plan --json' (required); its relative\n"
		"                    \"profiles\" path is read from the plan's directory\n"
		"  --method M        iidp (default), ddp or optperf: which row of the plan\n"
		"  --backend B       cpu (default) or cuda\n"
		"  --iters N         timed iterations (default 20)\n"
		"  --warmup N        iterations before timing (default 3)\n"
		"  --scale F         workload width scale; use the scale the plan's profiles\n"
		"                    were measured at (default: the scale of the run that\n"
		"                    measured the plan's GPU in --db, else 1)\n"
		"  --mem-limit SIZE  cpu: memory budget per rank (default: the GPU's catalog\n"
		"                    memory); suffixes K, M, G\n"
		"  --db FILE         profile database for the prediction rows (default: the\n"
		"                    plan's \"profiles\" file; either must exist, it is never\n"
		"                    created); a different one also predicts\n"
		"                    every GPU again from its rows (per GPU: the perf model's\n"
		"                    iteration time with the slot's local batch, VSWs and GA;\n"
		"                    critical path: the slowest GPU)\n"
		"  --out DIR         also write DIR/live.csv and DIR/summary.json (with the\n"
		"                    profiles the prediction read: docs/outputs.md)\n"
		"  --timeout S       a rank that makes no progress for S seconds in its own\n"
		"                    work names itself and its host; ranks waiting S s (and\n"
		"                    2 s grace) for one that is stopped, hung or dead name\n"
		"                    it: they poll and send each other heartbeats, and the\n"
		"                    lowest waiting rank names those that sent none.  Exit 1\n"
		"                    (default 300; 0: never).  mpirun ends the run at once\n"
		"                    when a rank dies; its own message names the rank\n"
		"  --task T          teacher (default): learn a fixed teacher network of the\n"
		"                    same architecture from fresh seeded batches, targets with\n"
		"                    Gaussian label noise; fixed: the profiler's two random\n"
		"                    batches per VSW\n"
		"  --label-noise S   teacher: noise sigma (default 0.1; the loss cannot fall\n"
		"                    below S^2/2)\n"
		"  --metrics-every P measure, every P timed iterations, the gradient similarity\n"
		"                    of the two halves of the workers (JABAS/SimiGrad) and the\n"
		"                    gradient noise scale (McCandlish, Pollux), outside the\n"
		"                    timed part (default 5; 0: off)\n"
		"  --map SPEC        which host runs which plan node: node0=HOST,node1=HOST\n"
		"                    (a node's GPUs go to that host's ranks in rank order);\n"
		"                    default: on one host, consecutive ranks in plan order;\n"
		"                    across hosts, the host named like the node\n"
		"  --checkpoint DIR  at the end, every rank writes DIR/rank-R.ckpt (weights,\n"
		"                    optimizer state, step, iteration and data position,\n"
		"                    atomically, with a checksum)\n"
		"  --resume          continue from the checkpoints in --checkpoint DIR: the\n"
		"                    same configuration continues bit-identically\n"
		"\n"
		"Adaptive runs (--policy; start them without mpirun: the driver launches\n"
		"'LAUNCHER -np G hetbatch live ...' once per allocation).  The policy's agent\n"
		"is the simulator's own (sim --policy NAME), hosted for one job on the\n"
		"dedicated cluster: every P iterations it gets the measured similarity of the\n"
		"two halves of the workers and may change the configuration in place (new\n"
		"batch, VSWs, GA); at every epoch end it may pick another allocation, which is\n"
		"a checkpoint and a relaunch (the relaunched driver rebuilds the agent by\n"
		"replaying the measured blocks).  jabas: the allocation with the least\n"
		"predicted epoch time, SimiGrad's rule (Phi < gamma: B_G x (1 + alpha), Phi >\n"
		"gamma: x (1 - alpha)) with IIDP configurations, the forecast of the next\n"
		"epoch's B_G picking the allocation.  simigrad: the same rule with DDP on\n"
		"every GPU.  static: DDP at one B_G.  DIR/trajectory.csv gets a row per block\n"
		"of iterations (batch, GPUs, configuration, predicted and measured time,\n"
		"similarity, loss, the cost of each change, the agent's words);\n"
		"DIR/compare.csv puts the simulator's run of the same job (same profiles and\n"
		"knobs, the measured batch trajectory replayed) beside it; DIR/summary.json\n"
		"the totals, the parameters and the profiles read; the prediction rows go\n"
		"into --db.\n"
		"  --policy NAME     a policy that runs live (listed below; with --schedule:\n"
		"                    which run of the results directory)\n"
		"  --model M, --cluster C  catalog names or JSON files of your own\n"
		"  --epochs N        epochs to train (default 2)\n"
		"  --dataset-size N  samples per epoch (default: the model's)\n"
		"  --interval P, --gamma G, --alpha A, --min-gbs N, --max-gbs N\n"
		"                    the policy's knobs (default: the model's on the cluster)\n"
		"  --gbs N           the job's requested global batch, as a trace's: static\n"
		"                    runs it (default: --min-gbs); jabas and simigrad start\n"
		"                    at --min-gbs, as their papers do\n"
		"  --launcher CMD    how to start ranks (default $HB_MPIRUN, else mpirun);\n"
		"                    e.g. 'mpirun --oversubscribe'.  As root it sets\n"
		"                    OMPI_ALLOW_RUN_AS_ROOT=1 and ..._CONFIRM=1 for it, which\n"
		"                    Open MPI needs to start as root\n"
		"  --relaunch-every-epoch  relaunch at every epoch end, also when the\n"
		"                    allocation stays (measures the restart cost)\n"
		"  --max-launches N  stop a run that relaunches more often (default 100)\n"
		"\n");
	fprintf(out, "Policies --policy takes (the simulator's registry, 'hetbatch sim --help'):\n");
	hb_live_policy_list(out);
	fprintf(out,
		"  Before the first launch a dry run of the whole run (predicted times, no\n"
		"  similarity) still refuses an agent above that reads what a live run does\n"
		"  not measure (the simulated gradient noise scale) or applies a configuration\n"
		"  no rank executes; the message says which, and exit status is 2.\n"
		"\n"
		"Schedule replay (--schedule): the configurations 'hetbatch sim --out DIR'\n"
		"gave job ID, in order (IIDP, DDP, and OptPerf with each GPU's own local\n"
		"batch), each for N timed iterations after one warm-up; in place while the\n"
		"GPU count stays, a checkpoint and relaunch when it changes.  It prints,\n"
		"per configuration, the simulator's iteration time beside the measured\n"
		"one.  Simulate with profiles of these devices at the same --scale.\n"
		"  --iters-per-config N  timed iterations per configuration (default 10)\n"
		"  --max-configs N   only the first N configurations\n"
		"\n"
		"  -h, --help        this help\n"
		"\n"
		"As root (the README's setting), Open MPI's mpirun refuses to start: give it\n"
		"--allow-run-as-root, or export OMPI_ALLOW_RUN_AS_ROOT=1 and\n"
		"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1.  The --policy driver sets both itself.\n"
		"\n"
		"Examples:\n"
		"  hetbatch profile --backend cpu --models cifar10 --scale 0.02 --db cpu.db\n"
		"  hetbatch profile --analytic --gpus cpu --models cifar10 --db cpu.db\n"
		"  hetbatch plan --cluster cpu-2x2 --model cifar10 --gbs 128 --db cpu.db --json > p.json\n"
		"  mpirun --oversubscribe -np 4 hetbatch live --plan p.json --scale 0.02\n"
		"  hetbatch live --policy jabas --model cifar10 --cluster cpu-2x2 --db cpu.db \\\n"
		"      --scale 0.02 --dataset-size 4096 --epochs 3 --interval 4 --out run\n"
		"  hetbatch sim --cluster cpu-2x2 --model cifar10 --policy jabas --db cpu.db --out s\n"
		"  hetbatch live --schedule s --job 0 --db cpu.db --scale 0.02 --out replay\n"
		"\n"
		"Signals: SIGINT, SIGHUP or SIGTERM end a run within about a second with one\n"
		"line.  Open MPI's mpirun (4.1) passes each to the ranks as SIGTERM; rank 0\n"
		"says where it stopped, the ranks exit 143 and mpirun exits 1 (its own status).\n"
		"The --policy and --schedule drivers pass a signal sent to them on to their\n"
		"mpirun, say which launch it stopped and exit 130 (SIGINT), 129 (SIGHUP) or\n"
		"143 (SIGTERM).  --policy prints a progress line on stderr at every epoch's\n"
		"end and at most every $HETBATCH_STATUS_SECONDS (default 30; none under -q).\n"
		"\n"
		"Exit status: 0 ok, 1 runtime failure (a rank failed: the message names it),\n"
		"2 usage error or a plan that does not fit (rank count, memory, names),\n"
		"128 + the signal as above.\n");
}

#define HOST_LEN 64

/* The node a --map spec ("node0=hostA,node1=hostB") gives a host, or NULL. */
static const char *map_host(const char *spec, const char *node, char *buf, size_t n)
{
	size_t nl = strlen(node);

	for (const char *p = spec; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		if (strncmp(p, node, nl) == 0 && p[nl] == '=') {
			size_t len = strcspn(p + nl + 1, ",");

			if (len >= n)
				len = n - 1;
			memcpy(buf, p + nl + 1, len);
			buf[len] = '\0';
			return buf;
		}
	}
	return NULL;
}

/*
 * Which GPU slot each rank runs, so that rank r runs p->slots[r] after the
 * permutation (the same on every rank).  One host: ranks in plan order.
 * Several hosts: each plan node runs on the host --map names for it, or on
 * the host of the same name; its slots go to that host's ranks in rank
 * order.  hosts[] holds every rank's host name (HOST_LEN bytes each).
 */
static int map_slots(struct hb_live_plan *p, const char *spec, const char *hosts, int nranks, struct hb_error *err)
{
	struct hb_live_slot *sorted;
	int *taken, one_host = 1, placed = 0;

	for (int r = 1; r < nranks; r++)
		if (strcmp(hosts + r * HOST_LEN, hosts) != 0)
			one_host = 0;
	if ((one_host && !spec) || nranks != p->nslots)
		return 0;  /* consecutive ranks (a wrong count is refused later, with its own message) */
	sorted = calloc((size_t)nranks, sizeof(*sorted));
	taken = calloc((size_t)nranks, sizeof(*taken));
	if (!sorted || !taken) {
		free(sorted);
		free(taken);
		return hb_runtime_error(err, "live: out of memory");
	}
	for (int s = 0; s < p->nslots; s++) {
		char buf[HOST_LEN];
		const char *host = spec ? map_host(spec, p->slots[s].node, buf, sizeof(buf)) : p->slots[s].node;
		int r = 0;

		if (!host) {
			free(sorted);
			free(taken);
			return hb_input_error(err, "--map '%s' says nothing of node %s", spec, p->slots[s].node);
		}
		while (r < nranks && (taken[r] || strcmp(hosts + r * HOST_LEN, host) != 0))
			r++;
		if (r == nranks) {
			free(sorted);
			free(taken);
			return hb_input_error(err, "node %s of the plan needs a rank on host '%s'%s, and none is left "
					      "(ranks run on %s%s); say which host runs which node with --map "
					      "node0=HOST,node1=HOST", p->slots[s].node, host, spec ? "" : " (its own name)",
					      hosts, nranks > 1 ? ", ..." : "");
		}
		taken[r] = 1;
		sorted[r] = p->slots[s];
		placed++;
	}
	memcpy(p->slots, sorted, (size_t)placed * sizeof(*sorted));
	free(sorted);
	free(taken);
	return 0;
}

/* This rank's host name; HB_LIVE_FAKE_HOSTS="a,a,b,b" gives rank r the r-th
 * name instead (tests of the mapping on one machine). */
static void my_host(int rank, char *out)
{
	const char *fake = getenv("HB_LIVE_FAKE_HOSTS");

	memset(out, 0, HOST_LEN);
	if (fake) {
		const char *p = fake;

		for (int i = 0; i < rank && p; i++)
			p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
		if (p) {
			size_t len = strcspn(p, ",");

			memcpy(out, p, len < HOST_LEN - 1 ? len : HOST_LEN - 1);
			return;
		}
	}
	if (gethostname(out, HOST_LEN - 1) != 0)
		snprintf(out, HOST_LEN, "unknown");
}

/*
 * With a --db other than the plan's own profiles: predict every slot again
 * from that database (per GPU: hb_perf_iter_time with the slot's local
 * batch, VSWs and GA on the allocation the plan uses; the critical path is
 * the slowest GPU), so a plan made from analytic profiles can be checked
 * against profiles measured on these devices.  The cluster must be a
 * catalog name (a user's cluster file is not in the plan).
 */
static int repredict(struct hb_live_plan *p, const struct hb_catalog *cat, const char *dbpath, struct hb_error *err)
{
	const struct hb_cluster *cl = hb_catalog_cluster(cat, p->cluster);
	const struct hb_model *m = hb_catalog_model(cat, p->model);
	struct hb_profdb *db = NULL;
	struct hb_perf perf;
	struct hb_perf_opts po;
	int *alloc, *node_of, rc = -1;

	if (!cl || !m)
		return hb_input_error(err, "--db %s: to predict again, the plan's cluster '%s' and model '%s' must be "
				      "catalog names", dbpath, p->cluster, p->model);
	alloc = calloc((size_t)cl->nnodes, sizeof(*alloc));
	node_of = calloc((size_t)p->nslots, sizeof(*node_of));
	if (!alloc || !node_of) {
		free(alloc);
		free(node_of);
		return hb_runtime_error(err, "live: out of memory");
	}
	for (int s = 0; s < p->nslots; s++) {
		node_of[s] = -1;
		for (int i = 0; i < cl->nnodes; i++)
			if (strcmp(cl->nodes[i].name, p->slots[s].node) == 0)
				node_of[s] = i;
		if (node_of[s] < 0) {
			hb_input_error(err, "%s: node %s is not a node of cluster %s", p->path, p->slots[s].node,
				       cl->name);
			goto out;
		}
		alloc[node_of[s]]++;
	}
	hb_perf_opts_default(&po);
	if (hb_profdb_open(dbpath, 1, &db, err) < 0 || hb_perf_load(db, cat, cl, m, &po, &perf, err) < 0)
		goto out;
	p->pred_iter_s = 0;
	for (int s = 0; s < p->nslots; s++) {
		struct hb_live_slot *sl = &p->slots[s];

		if (hb_perf_iter_time(&perf, alloc, node_of[s], sl->local_bs, sl->n_vsw, sl->n_ga, &sl->pred_iter_s,
				      err) < 0) {
			hb_error_prefix(err, "--db %s: node %s, local batch %d, %d VSWs, GA %d", dbpath, sl->node,
					sl->local_bs, sl->n_vsw, sl->n_ga);
			hb_perf_free(&perf);
			goto out;
		}
		if (sl->pred_iter_s > p->pred_iter_s)
			p->pred_iter_s = sl->pred_iter_s;
	}
	hb_perf_free(&perf);
	hb_strlcpy(p->profiles, dbpath, sizeof(p->profiles));
	rc = 0;
out:
	hb_profdb_close(db);
	free(alloc);
	free(node_of);
	return rc;
}

/* The scale of the run that measured (gpu, model) in db, 0 if none. */
static double measured_scale(const char *dbpath, const char *gpu, const char *model)
{
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };
	struct hb_compute_row *rows = NULL;
	struct hb_run_info run;
	int n = 0, found = 0;
	double scale = 0;

	if (hb_path_exists(dbpath) && hb_profdb_open(dbpath, 1, &db, &err) == 0 &&
	    hb_profdb_get_compute(db, gpu, model, &rows, &n, &err) == 0 && n > 0 && rows[0].run_id &&
	    hb_profdb_get_run(db, rows[0].run_id, &run, &found, &err) == 0 && found)
		scale = run.scale;
	free(rows);
	hb_profdb_close(db);
	return scale;
}

/* v as a CSV number (%.9g) into b, or empty (JSON: null) when it does not
 * exist, as docs/outputs.md's conventions say. */
static const char *num(char b[32], double v, const char *none)
{
	if (!isfinite(v))
		snprintf(b, 32, "%s", none);
	else
		snprintf(b, 32, "%.9g", v);
	return b;
}

/* summary.json: the run, the prediction it checked and what produced both
 * (issue 39 item 1): the database the prediction read ("profiles", the
 * plan's or --db's) with the rows it holds per GPU type x model
 * ("profile_sources", as sim's "profiles"), and the plan's own
 * "profile_sources", the rows the plan was made from, when it has them,
 * so a changed database shows as a changed digest. */
static int write_summary(const char *path, const struct hb_live_plan *p, const struct hb_live_opts *o,
			 const struct hb_live_result *r, const char *dbpath, struct hb_error *err)
{
	cJSON *doc = cJSON_CreateObject(), *plan = NULL, *uses = NULL;
	const char **gpus = calloc((size_t)(p->nslots > 0 ? p->nslots : 1), sizeof(*gpus));
	int rc = -1;

	if (!doc || !gpus) {
		hb_runtime_error(err, "live: out of memory");
		goto out;
	}
	cJSON_AddStringToObject(doc, "format", "hetbatch-live/1");
	cJSON_AddStringToObject(doc, "version", HB_VERSION);
	cJSON_AddStringToObject(doc, "plan", p->path);
	cJSON_AddStringToObject(doc, "method", p->method);
	cJSON_AddStringToObject(doc, "model", p->model);
	cJSON_AddStringToObject(doc, "cluster", p->cluster);
	cJSON_AddNumberToObject(doc, "ranks", r->nranks);
	cJSON_AddNumberToObject(doc, "global_batch", (double)p->global_batch);
	cJSON_AddStringToObject(doc, "backend", o->backend);
	hb_json_add_num(doc, "scale", o->scale);
	cJSON_AddNumberToObject(doc, "warmup", o->warmup);
	cJSON_AddNumberToObject(doc, "iters", o->iters);
	cJSON_AddNumberToObject(doc, "seed", (double)o->seed);
	hb_json_add_num(doc, "predicted_s", p->pred_iter_s);
	hb_json_add_num(doc, "measured_s", r->critical_s);
	hb_json_add_num(doc, "error_pct", 100 * (r->critical_s / p->pred_iter_s - 1));
	hb_json_add_num(doc, "loss_first", r->loss_first);
	hb_json_add_num(doc, "loss_last", r->loss_last);
	if (dbpath) {
		for (int k = 0; k < p->nslots; k++)
			gpus[k] = p->slots[k].gpu;
		cJSON_AddStringToObject(doc, "profiles", dbpath);
		if (!(uses = hb_cli_profile_uses_json(dbpath, gpus, p->nslots, p->model, err)))
			goto out;
		cJSON_AddItemToObject(doc, "profile_sources", uses);
	} else {
		cJSON_AddNullToObject(doc, "profiles");
	}
	/* the plan's record of what it was made from (plan --out), read from
	 * the file once more here rather than kept in struct hb_live_plan:
	 * plans are copied by value (live.c, live_segment.c), so they own no
	 * JSON tree; a plan that is gone by now just lacks the key */
	if ((plan = hb_json_load_file(p->path, err))) {
		const cJSON *ps = cJSON_GetObjectItemCaseSensitive(plan, "profile_sources");

		if (cJSON_IsArray(ps))
			cJSON_AddItemToObject(doc, "plan_profile_sources", cJSON_Duplicate(ps, 1));
	}
	rc = hb_json_write_file(path, doc, err);
out:
	cJSON_Delete(plan);
	cJSON_Delete(doc);
	free(gpus);
	return rc;
}

static int write_outputs(const char *dir, const struct hb_live_plan *p, const struct hb_live_opts *o,
			 const struct hb_live_result *r, const char *dbpath, struct hb_error *err)
{
	char path[4096], *buf, nb[8][32];
	size_t cap = 4096 + (size_t)r->nranks * 256, len = 0;
	int rc;

	if (hb_mkdir_p(dir, err) < 0)
		return -1;
	buf = malloc(cap);
	if (!buf)
		return hb_runtime_error(err, "live: out of memory");
	/* error_pct in percent, the unit the table prints (measured / predicted - 1) */
	len += (size_t)snprintf(buf + len, cap - len, "rank,node,gpu,n_vsw,n_ga,local_batch,predicted_s,measured_s,"
				"compute_s,error_pct\n");
	for (int k = 0; k < r->nranks; k++) {
		const struct hb_live_slot *s = &p->slots[k];

		len += (size_t)snprintf(buf + len, cap - len, "%d,%s,%s,%d,%d,%d,%.9g,%.9g,%.9g,%.4f\n", k, s->node,
					s->gpu, s->n_vsw, s->n_ga, s->local_bs, s->pred_iter_s, r->rank_iter_s[k],
					r->rank_compute_s[k], 100 * (r->rank_iter_s[k] / s->pred_iter_s - 1));
	}
	len += (size_t)snprintf(buf + len, cap - len, "critical,,,,,,%.9g,%.9g,,%.4f\n", p->pred_iter_s, r->critical_s,
				100 * (r->critical_s / p->pred_iter_s - 1));
	snprintf(path, sizeof(path), "%s/live.csv", dir);
	rc = hb_write_file_atomic(path, buf, len, err);
	if (rc == 0) {
		snprintf(path, sizeof(path), "%s/summary.json", dir);
		rc = write_summary(path, p, o, r, dbpath, err);
	}
	free(buf);
	if (rc == 0 && r->nmetrics > 0) {
		size_t mcap = 128 + (size_t)r->nmetrics * 200;
		char *m = malloc(mcap);

		if (!m)
			return hb_runtime_error(err, "live: out of memory");
		/* estimator: "workers" (the VSWs' gradients of one iteration) or
		 * "differenced" (one worker: this and the previous iteration's) */
		len = (size_t)snprintf(m, mcap, "iteration,loss,similarity,noise_scale,grad_sqr,trace_sigma,b_small,"
				       "b_big,estimator\n");
		for (int i = 0; i < r->nmetrics; i++) {
			const struct hb_live_metric *x = &r->metrics[i];

			len += (size_t)snprintf(m + len, mcap - len, "%ld,%s,%s,%s,%s,%s,%s,%s,%s\n", x->iter,
						num(nb[0], x->loss, ""), num(nb[1], x->similarity, ""),
						num(nb[2], x->gns.noise_scale, ""), num(nb[3], x->gns.grad_sqr, ""),
						num(nb[4], x->gns.trace_sigma, ""), num(nb[5], x->gns.b_small, ""),
						num(nb[6], x->gns.b_big, ""), x->differenced ? "differenced" : "workers");
		}
		snprintf(path, sizeof(path), "%s/metrics.csv", dir);
		rc = hb_write_file_atomic(path, m, len, err);
		free(m);
	}
	return rc;
}

static void print_table(const struct hb_live_plan *p, const struct hb_live_result *r)
{
	double sum = 0;

	printf("live: %s, %s configuration (%s), %d ranks, global batch %ld, %s weight sync\n", p->model, p->method,
	       p->config, r->nranks, p->global_batch, p->ows ? "overlapping" : "sequential");
	printf("%-5s %-10s %-8s %4s %4s %6s %12s %12s %12s %8s\n", "rank", "node", "gpu", "vsw", "ga", "local",
	       "pred_ms", "meas_ms", "compute_ms", "error");
	for (int k = 0; k < r->nranks; k++) {
		const struct hb_live_slot *s = &p->slots[k];
		double e = r->rank_iter_s[k] / s->pred_iter_s - 1;

		printf("%-5d %-10s %-8s %4d %4d %6d %12.3f %12.3f %12.3f %+7.1f%%\n", k, s->node, s->gpu, s->n_vsw,
		       s->n_ga, s->local_bs, 1e3 * s->pred_iter_s, 1e3 * r->rank_iter_s[k], 1e3 * r->rank_compute_s[k],
		       100 * e);
		sum += fabs(e);
	}
	printf("%-5s %-10s %-8s %4s %4s %6s %12.3f %12.3f %12s %+7.1f%%\n", "crit", "", "", "", "", "",
	       1e3 * p->pred_iter_s, 1e3 * r->critical_s, "", 100 * (r->critical_s / p->pred_iter_s - 1));
	printf("mean absolute error over ranks %.1f %%; loss %.6g -> %.6g (rank 0)\n", 100 * sum / r->nranks,
	       r->loss_first, r->loss_last);
	if (r->nmetrics > 0) {
		const struct hb_live_metric *a = &r->metrics[0], *b = &r->metrics[r->nmetrics - 1];

		printf("gradient similarity %.3f -> %.3f, noise scale %.4g -> %.4g samples (%d %s; "
		       "--out writes them all)\n", a->similarity, b->similarity, a->gns.noise_scale, b->gns.noise_scale,
		       r->nmetrics, hb_plural(r->nmetrics, "measurement", "measurements"));
	}
}

int cmd_live(int argc, char **argv, struct hb_cli *cli)
{
	enum { OPT_PLAN = 256, OPT_METHOD, OPT_BACKEND, OPT_ITERS, OPT_WARMUP, OPT_SCALE, OPT_MEM, OPT_DB, OPT_OUT,
	       OPT_TIMEOUT, OPT_CKPT, OPT_RESUME, OPT_TASK, OPT_NOISE, OPT_METRICS, OPT_MAP, OPT_POLICY, OPT_MODEL,
	       OPT_CLUSTER, OPT_EPOCHS, OPT_DATASET, OPT_INTERVAL, OPT_GAMMA, OPT_ALPHA, OPT_MINGBS, OPT_MAXGBS,
	       OPT_GBS, OPT_LAUNCHER, OPT_RELAUNCH, OPT_MAXLAUNCH, OPT_SEGMENT, OPT_SEGMENT_OUT, OPT_SCHEDULE,
	       OPT_JOB, OPT_PERCONFIG, OPT_MAXCONFIGS, OPT_RANGE };
	static const struct option opts[] = {
		{ "plan", required_argument, NULL, OPT_PLAN },
		{ "method", required_argument, NULL, OPT_METHOD },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "iters", required_argument, NULL, OPT_ITERS },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "scale", required_argument, NULL, OPT_SCALE },
		{ "mem-limit", required_argument, NULL, OPT_MEM },
		{ "db", required_argument, NULL, OPT_DB },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "checkpoint", required_argument, NULL, OPT_CKPT },
		{ "resume", no_argument, NULL, OPT_RESUME },
		{ "task", required_argument, NULL, OPT_TASK },
		{ "label-noise", required_argument, NULL, OPT_NOISE },
		{ "metrics-every", required_argument, NULL, OPT_METRICS },
		{ "map", required_argument, NULL, OPT_MAP },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "model", required_argument, NULL, OPT_MODEL },
		{ "cluster", required_argument, NULL, OPT_CLUSTER },
		{ "epochs", required_argument, NULL, OPT_EPOCHS },
		{ "dataset-size", required_argument, NULL, OPT_DATASET },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "gamma", required_argument, NULL, OPT_GAMMA },
		{ "alpha", required_argument, NULL, OPT_ALPHA },
		{ "min-gbs", required_argument, NULL, OPT_MINGBS },
		{ "max-gbs", required_argument, NULL, OPT_MAXGBS },
		{ "gbs", required_argument, NULL, OPT_GBS },
		{ "launcher", required_argument, NULL, OPT_LAUNCHER },
		{ "relaunch-every-epoch", no_argument, NULL, OPT_RELAUNCH },
		{ "max-launches", required_argument, NULL, OPT_MAXLAUNCH },
		{ "segment", required_argument, NULL, OPT_SEGMENT },
		{ "segment-out", required_argument, NULL, OPT_SEGMENT_OUT },
		{ "schedule", required_argument, NULL, OPT_SCHEDULE },
		{ "job", required_argument, NULL, OPT_JOB },
		{ "iters-per-config", required_argument, NULL, OPT_PERCONFIG },
		{ "max-configs", required_argument, NULL, OPT_MAXCONFIGS },
		{ "schedule-range", required_argument, NULL, OPT_RANGE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *plan_path = NULL, *method = "iidp", *dbpath = NULL, *out = NULL, *map = NULL;
	const char *repredict_db = NULL;
	char *hosts = NULL;
	struct hb_live_opts o = { .backend = "cpu", .iters = 20, .warmup = 3, .seed = cli->seed, .timeout_s = 300,
				  .teacher = 1, .label_noise = 0.1, .metrics_every = 5 };
	struct hb_live_plan p = { 0 };
	struct hb_live_result r;
	struct hb_ar_team team;
	struct hb_catalog cat = { 0 };
	struct hb_error err = { 0 };
	char host[64] = "unknown";
	const char *policy = NULL;
	struct hb_live_adapt_args ad = { .launcher = getenv("HB_MPIRUN") ? getenv("HB_MPIRUN") : "mpirun",
					 .max_launches = 100, .par.epochs = 2 };
	struct hb_live_sched_args sa = { .job = -1, .max_configs = 1000000 };
	int per_config = 0, li = 0;
	long v;
	int c, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, &li)) != -1) {
		switch (c) {
		case OPT_PLAN: plan_path = optarg; break;
		case OPT_METHOD: method = optarg; break;
		case OPT_BACKEND: o.backend = optarg; break;
		case OPT_ITERS:
			if (hb_parse_long_range(optarg, 1, 1000000, &v) < 0)
				return hb_cli_usage(cli, "live", "--iters '%s': an integer in 1..1000000", optarg);
			o.iters = (int)v;
			break;
		case OPT_WARMUP:
			if (hb_parse_long_range(optarg, 0, 100000, &v) < 0)
				return hb_cli_usage(cli, "live", "--warmup '%s': an integer in 0..100000", optarg);
			o.warmup = (int)v;
			break;
		case OPT_SCALE:
			if (hb_parse_double(optarg, &o.scale) < 0 || !(o.scale > 0 && o.scale <= 1))
				return hb_cli_usage(cli, "live", "--scale '%s': a number in (0, 1]", optarg);
			break;
		case OPT_MEM:
			if (hb_parse_size(optarg, &o.mem_limit) < 0)
				return hb_cli_usage(cli, "live", "--mem-limit '%s': a positive size such as 512M or 4G",
						    optarg);
			break;
		case OPT_DB: dbpath = optarg; break;
		case OPT_OUT: out = optarg; break;
		case OPT_CKPT: o.ckpt_dir = optarg; break;
		case OPT_MAP: map = optarg; break;
		case OPT_TASK:
			if (strcmp(optarg, "teacher") != 0 && strcmp(optarg, "fixed") != 0)
				return hb_cli_usage(cli, "live", "--task '%s': teacher or fixed", optarg);
			o.teacher = strcmp(optarg, "teacher") == 0;
			break;
		case OPT_NOISE:
			if (hb_parse_double(optarg, &o.label_noise) < 0 || o.label_noise < 0)
				return hb_cli_usage(cli, "live", "--label-noise '%s': a standard deviation >= 0", optarg);
			break;
		case OPT_METRICS:
			if (hb_parse_long_range(optarg, 0, 1000000, &v) < 0)
				return hb_cli_usage(cli, "live", "--metrics-every '%s': an integer >= 0", optarg);
			o.metrics_every = (int)v;
			break;
		case OPT_RESUME: o.resume = 1; break;
		case OPT_POLICY: policy = optarg; break;
		case OPT_MODEL: ad.model = optarg; break;
		case OPT_CLUSTER: ad.cluster = optarg; break;
		case OPT_LAUNCHER: ad.launcher = optarg; break;
		case OPT_RELAUNCH: ad.relaunch_always = 1; break;
		case OPT_SEGMENT: ad.segment_in = optarg; break;
		case OPT_SEGMENT_OUT: ad.segment_out = optarg; break;
		case OPT_SCHEDULE: sa.results = optarg; break;
		case OPT_RANGE: sa.range = optarg; break;
		case OPT_JOB: case OPT_PERCONFIG: case OPT_MAXCONFIGS:
			if (hb_parse_long_range(optarg, c == OPT_JOB ? 0 : 1, 1000000000L, &v) < 0)
				return hb_cli_usage(cli, "live", "--job, --iters-per-config, --max-configs '%s': an integer "
						    "(>= 0 for --job, >= 1 otherwise)", optarg);
			if (c == OPT_JOB)
				sa.job = (int)v;
			else if (c == OPT_PERCONFIG)
				per_config = (int)v;
			else
				sa.max_configs = (int)v;
			break;
		case OPT_EPOCHS: case OPT_INTERVAL: case OPT_MINGBS: case OPT_MAXGBS: case OPT_GBS: case OPT_MAXLAUNCH:
			if (hb_parse_long_range(optarg, 1, 1000000000L, &v) < 0)
				return hb_cli_usage(cli, "live", "--%s '%s': an integer >= 1", opts[li].name, optarg);
			if (c == OPT_EPOCHS)
				ad.par.epochs = v;
			else if (c == OPT_INTERVAL)
				ad.par.p = v;
			else if (c == OPT_MINGBS)
				ad.par.min_gbs = v;
			else if (c == OPT_MAXGBS)
				ad.par.max_gbs = v;
			else if (c == OPT_GBS)
				ad.par.init_gbs = v;
			else
				ad.max_launches = (int)v;
			break;
		case OPT_DATASET: case OPT_GAMMA: case OPT_ALPHA: {
			double x;

			if (hb_parse_double(optarg, &x) < 0 || !(x > 0) || (c == OPT_ALPHA && !(x < 1)))
				return hb_cli_usage(cli, "live", "--%s '%s': a number > 0%s", opts[li].name, optarg,
						    c == OPT_ALPHA ? " and < 1" : "");
			if (c == OPT_DATASET)
				ad.par.dataset = x;
			else if (c == OPT_GAMMA)
				ad.par.gamma = x;
			else
				ad.par.alpha = x;
			break;
		}
		case OPT_TIMEOUT:
			if (hb_parse_double(optarg, &o.timeout_s) < 0 || o.timeout_s < 0)
				return hb_cli_usage(cli, "live", "--timeout '%s': seconds, >= 0 (0: never)", optarg);
			break;
		case 'h': usage(stdout); return 0;
		default:
			return hb_cli_bad_option(cli, "live", argc, argv, opts);
		}
	}
	if (optind < argc)
		return hb_cli_usage(cli, "live", "unexpected argument '%s'", argv[optind]);
	/* the arguments again for the launches of an adaptive run or a replay
	 * (getopt only moves operands, and there are none, so the order is
	 * the user's) */
	ad.args = calloc((size_t)argc + 1, sizeof(char *));
	if (!ad.args)
		return hb_cli_usage(cli, "live", "out of memory");
	for (int i = 1; i < argc; i++)
		ad.args[ad.nargs++] = argv[i];
	if (sa.results) {
		rc = 0;
		if (plan_path || sa.job < 0 || !dbpath || !out)
			rc = hb_cli_usage(cli, "live", "--schedule needs --job ID, --db (profiles) and --out DIR, and no "
					  "--plan");
		else if (o.ckpt_dir || o.resume)
			rc = hb_cli_usage(cli, "live", "--schedule keeps its checkpoints in --out DIR/checkpoint");
		if (rc == 0) {
			sa.policy = policy;
			sa.dbpath = dbpath;
			sa.out = out;
			sa.launcher = ad.launcher;
			sa.segment_out = ad.segment_out;
			sa.args = ad.args;
			sa.nargs = ad.nargs;
			o.iters = per_config ? per_config : 10;
			o.warmup = 1;
			if (!(o.scale > 0))
				o.scale = 1;
			rc = hb_cli_live_schedule(cli, &o, &sa);
		}
		free(ad.args);
		return rc;
	}
	if (policy) {
		rc = 0;
		if (plan_path)
			rc = hb_cli_usage(cli, "live", "--plan and --policy: one or the other");
		else if (!ad.model || !ad.cluster || !dbpath || !out)
			rc = hb_cli_usage(cli, "live", "--policy needs --model, --cluster, --db (profiles) and --out DIR");
		else if (o.ckpt_dir || o.resume)
			rc = hb_cli_usage(cli, "live", "--policy keeps its checkpoints in --out DIR/checkpoint");
		else if (hb_live_policy_parse(policy, &ad.par.policy, &err) < 0)
			rc = hb_cli_usage(cli, "live", "%s", err.msg);
		else if ((ad.segment_in != NULL) != (ad.segment_out != NULL))
			rc = hb_cli_usage(cli, "live", "--segment and --segment-out go together (the driver passes both)");
		if (rc == 0) {
			ad.dbpath = dbpath;
			ad.out = out;
			ad.par.seed = cli->seed;
			if (!(o.scale > 0)) {
				struct hb_catalog c0 = { 0 };
				const struct hb_cluster *cl;

				struct hb_error ignored = { 0 }; /* a bad name is reported by hb_cli_live_adapt */

				const struct hb_model *m;

				if (hb_catalog_load_builtin(&c0, &ignored) == 0 &&
				    hb_catalog_resolve_cluster(&c0, ad.cluster, &cl, &ignored) == 0 &&
				    hb_catalog_resolve_model(&c0, ad.model, &m, &ignored) == 0)
					o.scale = measured_scale(dbpath, c0.gpus[cl->nodes[0].gpu].name, m->name);
				hb_catalog_free(&c0);
				if (!(o.scale > 0))
					o.scale = 1;
			}
			rc = hb_cli_live_adapt(cli, &o, &ad);
		}
		free(ad.args);
		return rc;
	}
	free(ad.args);
	ad.args = NULL;
	if (ad.model || ad.cluster || ad.segment_in || ad.par.epochs != 2 || ad.par.p || ad.par.dataset > 0 ||
	    ad.par.gamma > 0 || ad.par.alpha > 0 || ad.par.min_gbs || ad.par.max_gbs || ad.par.init_gbs ||
	    ad.relaunch_always)
		return hb_cli_usage(cli, "live", "--model, --cluster, --epochs, --dataset-size, --interval, --gamma, "
				    "--alpha, --min-gbs, --max-gbs, --gbs and --relaunch-every-epoch go with --policy");
	if (!plan_path)
		return hb_cli_usage(cli, "live", "--plan FILE is required");
	if (o.resume && !o.ckpt_dir)
		return hb_cli_usage(cli, "live", "--resume continues from --checkpoint DIR; give the directory");
	if (strcmp(o.backend, "cpu") != 0 && strcmp(o.backend, "cuda") != 0)
		return hb_cli_usage(cli, "live", "--backend '%s': cpu or cuda", o.backend);
	if (hb_live_plan_load(plan_path, method, &p, &err) < 0)
		return hb_cli_fail(cli, &err);
	repredict_db = dbpath && (!p.profiles[0] || strcmp(dbpath, p.profiles) != 0) ? dbpath : NULL;
	if (!dbpath && p.profiles[0])
		dbpath = p.profiles;
	/* A database to read must be there before any rank starts: a missing
	 * one was created empty at the end (and the run went on at --scale 1). */
	if (dbpath && !hb_path_exists(dbpath)) {
		if (dbpath == p.profiles)
			hb_input_error(&err, "%s: field 'profiles': '%s': no such profile database (a relative path is "
				       "read from the plan's directory; give --db FILE)", plan_path, dbpath);
		else
			hb_input_error(&err, "--db '%s': no such profile database", dbpath);
		hb_live_plan_free(&p);
		return hb_cli_fail(cli, &err);
	}
	if (!(o.scale > 0)) {
		o.scale = dbpath ? measured_scale(dbpath, p.slots[0].gpu, p.model) : 0;
		if (!(o.scale > 0))
			o.scale = 1;
	}
	if (hb_catalog_load_builtin(&cat, &err) < 0 || (repredict_db && repredict(&p, &cat, repredict_db, &err) < 0)) {
		hb_catalog_free(&cat);
		hb_live_plan_free(&p);
		return hb_cli_fail(cli, &err);
	}
	if (hb_ar_team_start(&team, &argc, &argv, &err) < 0 || hb_live_team_setup(&team, &o, &err) < 0) {
		hb_ar_team_end(&team);
		hb_catalog_free(&cat);
		hb_live_plan_free(&p);
		return hb_cli_fail(cli, &err);
	}
	gethostname(host, sizeof(host) - 1);
	/* every rank learns every rank's host, then places the plan's nodes */
	hosts = calloc((size_t)team.size, HOST_LEN);
	if (!hosts) {
		rc = hb_runtime_error(&err, "live: out of memory");
	} else {
		char mine[HOST_LEN];

		my_host(team.rank, mine);
		hb_ar_team_allgather(&team, mine, HOST_LEN, hosts);
		rc = map_slots(&p, map, hosts, team.size, &err);
		free(hosts);
	}
	if (hb_ar_team_agree(&team, rc, &err) == 0)
		rc = hb_live_run(&team, &cat, &p, &o, &r, &err);
	if (rc == 0 && team.rank == 0) {
		print_table(&p, &r);
		if (dbpath) {
			struct hb_profdb *db = NULL;
			const char *store = dbpath;
			char user_db[4096];

			/* A plan made on the cached analytic database: the rows
			 * go to the user's database (the cache is rebuilt, and
			 * read immutable, so nothing else may write it). */
			if (hb_is_default_profdb(dbpath)) {
				rc = hb_user_profdb_for_writing(user_db, sizeof(user_db), &err);
				store = user_db;
			}
			/* never create the file it read (it was checked above) */
			if (rc == 0)
				rc = hb_profdb_open(store, store == user_db ? 0 : HB_PROFDB_EXISTING, &db, &err);
			if (rc == 0)
				rc = hb_live_store(db, &p, &o, &r, host, &err);
			hb_profdb_close(db);
			if (rc == 0)
				printf("prediction rows: %s\n", store);
		}
		if (rc == 0 && out && (rc = write_outputs(out, &p, &o, &r, repredict_db ? repredict_db : dbpath, &err)) == 0)
			printf("results: %s/live.csv, %s/summary.json%s%s%s\n", out, out, r.nmetrics ? ", " : "",
			       r.nmetrics ? out : "", r.nmetrics ? "/metrics.csv" : "");
	}
	rc = hb_ar_team_agree(&team, rc, &err);
	if (rc < 0) {
		/* rank 0 says it once; the others wait for that at the barrier,
		 * since mpirun ends the job as soon as one rank exits non-zero
		 * and could kill rank 0 before its message is out */
		rc = team.rank == 0 ? hb_cli_fail(cli, &err) : (err.code == HB_EINPUT ? 2 : 1);
		fflush(stderr);
	}
	hb_ar_team_barrier(&team);
	hb_ar_team_end(&team);
	hb_catalog_free(&cat);
	hb_live_plan_free(&p);
	return rc;
}
