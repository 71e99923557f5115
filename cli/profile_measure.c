/*
 * profile_measure.c: the measuring modes of `hetbatch profile`:
 *
 *   hetbatch profile --backend cuda|cpu [--models LIST] [--local-bs LIST]
 *                    [--max-vsw N] [--warmup N] [--iters N] [--scale F]
 *                    [--gpu-name NAME] [--device N] [--mem-limit SIZE]
 *                    [--no-cupti] [--resume] [--db FILE]
 *   hetbatch profile --compare [--db FILE]
 *
 * The work is profiler/measure.c's; this file parses options, prints the
 * device, a table line per measured point and a summary, and for
 * --compare puts the analytic model's prediction beside every measured
 * compute row.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analytic.h"
#include "catalog.h"
#include "cli.h"
#include "cli_profiles.h" /* hb_cli_note_user_db */
#include "default_db.h" /* defines: hb_user_profdb_for_writing */
#include "interrupt.h"
#include "measure.h"
#include "profdb.h"
#include "progress.h"
#include "strutil.h"

#define MAX_NAMES 256

void hb_profile_measure_usage(FILE *out)
{
	fprintf(out,
		"Measuring mode: time the synthetic training step of each catalog model on a\n"
		"real device, as JABAS's profilers do, into the profile database:\n"
		"  hetbatch profile --backend cuda|cpu [--models LIST] [--local-bs LIST]\n"
		"                   [--max-vsw N] [--warmup N] [--iters N] [--scale F]\n"
		"                   [--gpu-name NAME] [--device N] [--mem-limit SIZE]\n"
		"                   [--no-cupti] [--resume] [--share K] [--db FILE]\n"
		"  memory:  for each local batch (multiples of the model's min_lbs), the most\n"
		"           VSWs that fit, capped at min(host cores / devices, 10) as the\n"
		"           artifact caps it; stops at the first batch where none fits\n"
		"  compute: per local batch, n_vsw in {1, n_max/2 when n_max > 3, n_max}:\n"
		"           warm-up then measured iterations, phases data, fwd, bwd (with the\n"
		"           local aggregation), update, copy; source cupti (CUPTI kernel\n"
		"           intervals), events (CUDA events, --no-cupti) or cpu\n"
		"  bucket:  the workload's gradient buckets in reduction order\n"
		"  --backend B       cuda (one CUDA stream per VSW; needs a GPU: 'no CUDA\n"
		"                    device' otherwise) or cpu (one thread per VSW, OpenBLAS)\n"
		"  --models LIST     catalog models (default: all)\n"
		"  --local-bs LIST   local batches to search and measure, ascending (default:\n"
		"                    memory on every multiple of min_lbs; compute on every one\n"
		"                    that fits (16 at most, geometric) for cuda, on min_lbs x\n"
		"                    {1, 2} for cpu)\n"
		"  --max-vsw N       VSW cap instead of min(cores / devices, 10)\n"
		"  --warmup N        warm-up iterations (default cuda 10, cpu 1)\n"
		"  --iters N         measured iterations (default cuda 90, cpu 5)\n"
		"  --scale F         shrink every layer width by F in (0, 1] so a model fits a\n"
		"                    CPU or a small GPU (rows keep the model's name; the run\n"
		"                    row records the scale; default 1)\n"
		"  --gpu-name NAME   catalog GPU to store the rows under (default: the device\n"
		"                    name through the catalog's aliases; cpu: \"cpu\")\n"
		"  --device N        CUDA device ordinal (default 0)\n"
		"  --mem-limit SIZE  cpu: the memory budget that plays the device's memory\n"
		"                    (default: the catalog GPU's memory, 4G for \"cpu\");\n"
		"                    cuda: a cap below the device; suffixes K, M, G, T (2^10)\n"
		"  --no-cupti        cuda: time with CUDA events only (source events)\n"
		"  --resume          continue the newest run with the same backend, device,\n"
		"                    GPU name and scale: skip points it already measured\n"
		"  --share K         cpu: measure each point while K - 1 copies of the same\n"
		"                    work run beside it, as K ranks of a live run on this host\n"
		"                    share its cores (mpirun -np 4 on 2 cores: --share 2 under\n"
		"                    taskset on one core, or --share 4 on the whole host); the\n"
		"                    device is then 1 of K sharing, and the run row says so;\n"
		"                    give it its own --db (default 1: alone)\n"
		"\n"
		"Comparing mode: the analytic model beside every measured compute row:\n"
		"  hetbatch profile --compare [--db FILE]\n");
}

struct printer {
	const struct hb_cli *cli;
	struct hb_progress prog;
	int header;
};

static void on_device(void *ctx, const struct hb_device_info *info, const char *gpu, int cap, int64_t run_id)
{
	(void)ctx;
	printf("device: %s (%s backend%s%s%s%s), stored as catalog GPU '%s', %.0f MiB, VSW cap %d, run %lld\n",
	       info->name, info->backend, info->driver[0] ? ", driver " : "", info->driver,
	       info->runtime[0] ? ", CUDA runtime " : "", info->runtime, gpu, info->total_bytes / 1048576.0, cap,
	       (long long)run_id);
	if (info->blas[0])
		printf("blas: %s\n", info->blas);
}

static void on_memory(void *ctx, const struct hb_workload *w, const int *lbs, const int *n_max, int n)
{
	struct printer *p = ctx;
	int last = 0;

	for (int i = 0; i < n; i++)
		if (n_max[i] > 0)
			last = i;
	printf("\n%s: %s workload, %.3g params, %.3g forward FLOP/sample, %d layers, %d buckets, scale %g%s%s\n",
	       w->model, w->arch, w->params, w->flops_per_sample, w->nlayers, w->nbuckets, w->scale,
	       w->note[0] ? "; " : "", w->note);
	if (n == 0 || n_max[0] == 0)
		printf("  memory: does not fit at local batch %d even with one VSW\n", n ? lbs[0] : 0);
	else
		printf("  memory: %d local batches searched, n_max %d at %d ... %d at %d%s\n", n, n_max[0], lbs[0],
		       n_max[last], lbs[last], n_max[n - 1] == 0 ? "" : " (grid end: all fit)");
	p->header = 0;
}

static void on_point(void *ctx, const struct hb_compute_row *r, const struct hb_runner_result *res, int stored)
{
	struct printer *p = ctx;

	hb_progress_finish(&p->prog);
	if (!p->header) {
		printf("  %6s %4s %9s %9s %9s %9s %9s %10s %10s %9s\n", "lbs", "vsw", "data_ms", "fwd_ms", "bwd_ms",
		       "upd_ms", "copy_ms", "iter_ms", "samples/s", "mem_MiB");
		p->header = 1;
	}
	if (!stored) {
		printf("  %6d %4d  (already measured in this run: skipped)\n", r->local_bs, r->n_vsw);
		return;
	}
	printf("  %6d %4d %9.3f %9.3f %9.3f %9.3f %9.3f %10.3f %10.1f %9.1f\n", r->local_bs, r->n_vsw,
	       1e3 * r->data_s, 1e3 * r->fwd_s, 1e3 * r->bwd_s, 1e3 * r->update_s, 1e3 * r->copy_s, 1e3 * r->total_s,
	       (double)r->local_bs * r->n_vsw / r->total_s, r->mem_bytes / 1048576.0);
	if (res && res->traced && p->cli->log.level >= HB_LOG_INFO)
		printf("         cupti vs events: largest gap %.1f %%, %ld records dropped, %ld unattributed\n",
		       100 * res->max_gap, res->dropped, res->unattributed);
}

static void on_progress(void *ctx, const char *model, int done, int total)
{
	struct printer *p = ctx;

	if (done == 1 || p->prog.total != total)
		hb_progress_start_mode(&p->prog, model, total, hb_cli_status(p->cli), p->cli->status_period_s);
	hb_progress_update(&p->prog, done);
}

int hb_cmd_profile_measure(int argc, char **argv, struct hb_cli *cli)
{
	enum { OPT_BACKEND = 256, OPT_MODELS, OPT_LBS, OPT_MAXVSW, OPT_WARMUP, OPT_ITERS, OPT_SCALE, OPT_GPUNAME,
	       OPT_DEVICE, OPT_MEMLIMIT, OPT_NOCUPTI, OPT_RESUME, OPT_SHARE, OPT_DB };
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "models", required_argument, NULL, OPT_MODELS },
		{ "local-bs", required_argument, NULL, OPT_LBS },
		{ "max-vsw", required_argument, NULL, OPT_MAXVSW },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "iters", required_argument, NULL, OPT_ITERS },
		{ "scale", required_argument, NULL, OPT_SCALE },
		{ "gpu-name", required_argument, NULL, OPT_GPUNAME },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "mem-limit", required_argument, NULL, OPT_MEMLIMIT },
		{ "no-cupti", no_argument, NULL, OPT_NOCUPTI },
		{ "resume", no_argument, NULL, OPT_RESUME },
		{ "share", required_argument, NULL, OPT_SHARE },
		{ "db", required_argument, NULL, OPT_DB },
		{ NULL, 0, NULL, 0 },
	};
	struct hb_measure_req req = { .scale = 1, .warmup = -1, .iters = -1, .trace = 1, .seed = cli->seed };
	struct hb_measure_stats st;
	struct printer pr = { .cli = cli };
	char *models[MAX_NAMES], *lbs_items[HB_MEASURE_MAX_LBS];
	int lbs[HB_MEASURE_MAX_LBS];
	const char *dbpath = NULL;
	char user_db[4096];
	struct hb_catalog cat = { 0 };
	struct hb_error err = { 0 };
	struct hb_profdb *db = NULL;
	double t0;
	long v;
	int c, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case OPT_BACKEND: req.backend = optarg; break;
		case OPT_MODELS:
			if ((req.nmodels = hb_split_list(optarg, models, MAX_NAMES)) < 0)
				return hb_cli_usage(cli, "profile", "--models: a comma-separated list of at most %d "
						    "names, no empty items", MAX_NAMES);
			req.models = (const char *const *)models;
			break;
		case OPT_LBS:
			if ((req.nlbs = hb_split_list(optarg, lbs_items, HB_MEASURE_MAX_LBS)) < 0)
				return hb_cli_usage(cli, "profile", "--local-bs: a comma-separated list of at most %d "
						    "numbers", HB_MEASURE_MAX_LBS);
			for (int i = 0; i < req.nlbs; i++) {
				if (hb_parse_long_range(lbs_items[i], 1, 1 << 24, &v) < 0 ||
				    (i > 0 && v <= lbs[i - 1]))
					return hb_cli_usage(cli, "profile", "--local-bs: '%s' is not a positive "
							    "integer above the previous one", lbs_items[i]);
				lbs[i] = (int)v;
			}
			req.lbs = lbs;
			break;
		case OPT_MAXVSW:
			if (hb_parse_long_range(optarg, 1, HB_RUNNER_MAX_VSW, &v) < 0)
				return hb_cli_usage(cli, "profile", "--max-vsw '%s': an integer in 1..%d", optarg,
						    HB_RUNNER_MAX_VSW);
			req.max_vsw = (int)v;
			break;
		case OPT_WARMUP:
			if (hb_parse_long_range(optarg, 0, 100000, &v) < 0)
				return hb_cli_usage(cli, "profile", "--warmup '%s': an integer in 0..100000", optarg);
			req.warmup = (int)v;
			break;
		case OPT_ITERS:
			if (hb_parse_long_range(optarg, 1, 1000000, &v) < 0)
				return hb_cli_usage(cli, "profile", "--iters '%s': an integer in 1..1000000", optarg);
			req.iters = (int)v;
			break;
		case OPT_SCALE:
			if (hb_parse_double(optarg, &req.scale) < 0 || !(req.scale > 0 && req.scale <= 1))
				return hb_cli_usage(cli, "profile", "--scale '%s': a number in (0, 1]", optarg);
			break;
		case OPT_GPUNAME: req.gpu_name = optarg; break;
		case OPT_DEVICE:
			if (hb_parse_long_range(optarg, 0, 1024, &v) < 0)
				return hb_cli_usage(cli, "profile", "--device '%s': an integer in 0..1024", optarg);
			req.device = (int)v;
			break;
		case OPT_MEMLIMIT:
			if (hb_parse_size(optarg, &req.mem_limit) < 0)
				return hb_cli_usage(cli, "profile", "--mem-limit '%s': a positive size such as 512M, "
						    "4G or 1e9", optarg);
			break;
		case OPT_NOCUPTI: req.trace = 0; break;
		case OPT_RESUME: req.resume = 1; break;
		case OPT_SHARE:
			if (hb_parse_long_range(optarg, 1, HB_MEASURE_MAX_SHARE, &v) < 0)
				return hb_cli_usage(cli, "profile", "--share '%s': an integer in 1..%d", optarg,
						    HB_MEASURE_MAX_SHARE);
			req.share = (int)v;
			break;
		case OPT_DB: dbpath = optarg; break;
		default:
			return hb_cli_bad_option(cli, "profile", argc, argv, opts);
		}
	}
	if (optind < argc)
		return hb_cli_usage(cli, "profile", "unexpected argument '%s'", argv[optind]);
	if (!req.backend)
		return hb_cli_usage(cli, "profile", "--backend cuda|cpu is required to measure");
	if (strcmp(req.backend, "cpu") != 0 && strcmp(req.backend, "cuda") != 0)
		return hb_cli_usage(cli, "profile", "--backend '%s': cuda or cpu", req.backend);
	if (hb_catalog_load_builtin(&cat, &err) < 0)
		return hb_cli_fail(cli, &err);
	for (int i = 0; i < req.nmodels; i++)
		if (!hb_catalog_model(&cat, req.models[i])) {
			char hint[256];

			hb_catalog_suggest(&cat, 'm', req.models[i], hint, sizeof(hint));
			hb_catalog_free(&cat);
			return hb_cli_usage(cli, "profile", "--models: unknown model '%s' (see 'hetbatch catalog "
					    "models')%s", req.models[i], hint);
		}
	if (req.gpu_name && !hb_catalog_gpu(&cat, req.gpu_name)) {
		char hint[256];

		hb_catalog_suggest(&cat, 'g', req.gpu_name, hint, sizeof(hint));
		hb_catalog_free(&cat);
		return hb_cli_usage(cli, "profile", "--gpu-name: unknown GPU '%s' (see 'hetbatch catalog gpus')%s",
				    req.gpu_name, hint);
	}
	req.hooks = (struct hb_measure_hooks){ .ctx = &pr, .on_device = on_device, .on_memory = on_memory,
					       .on_point = on_point, .on_progress = on_progress };
	t0 = hb_now();
	/* SIGINT/SIGTERM/SIGHUP: stop between points (interrupt.h) */
	hb_interrupt_catch();
	rc = 0;
	if (!dbpath) {
		rc = hb_user_profdb_for_writing(user_db, sizeof(user_db), &err);
		dbpath = user_db;
	}
	if (rc == 0)
		rc = hb_profdb_open(dbpath, 0, &db, &err);
	/* one measuring run per database at a time (profdb.h) */
	if (rc == 0 && (rc = hb_profdb_lock_measuring(db, &err)) < 0)
		hb_profdb_close(db);
	if (rc == 0) {
		rc = hb_measure_run(&cat, &req, db, &st, &err);
		hb_progress_finish(&pr.prog);
		hb_profdb_close(db);
	}
	hb_catalog_free(&cat);
	if (rc < 0 && hb_interrupted())
		return hb_cli_interrupted(cli, "profile", "the points measured so far are in %s ('--resume' goes on)",
					  dbpath);
	if (rc < 0)
		return hb_cli_fail(cli, &err);
	printf("\n%s: run %lld%s (%s on %s as '%s', source %s): %ld compute, %ld memory, %ld bucket rows for %d "
	       "models in %.1f s",
	       dbpath, (long long)st.run_id, st.resumed ? " resumed" : "", req.backend, st.device, st.gpu, st.source,
	       st.compute_rows, st.memory_rows, st.bucket_rows, st.models, hb_now() - t0);
	if (st.skipped)
		printf(", %ld points already measured", st.skipped);
	printf("\n");
	if (st.infeasible)
		printf("%d models do not fit even min_lbs with one VSW (memory row max_vsw 0)\n", st.infeasible);
	if (st.dropped)
		printf("warning: CUPTI dropped %ld activity records; the run row says so and its times may be short\n",
		       st.dropped);
	printf("multi-GPU all-reduce curves: mpirun -np N hetbatch profile allreduce --backend %s, or hetbatch "
	       "import nccl-tests\n", req.backend);
	if (dbpath == user_db)
		hb_cli_note_user_db(cli, dbpath);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* --compare                                                                */

int hb_cmd_profile_compare(const char *dbpath, struct hb_cli *cli)
{
	struct hb_catalog cat = { 0 };
	struct hb_error err = { 0 };
	struct hb_profdb *db = NULL;
	struct hb_compute_row *rows = NULL;
	int n = 0, shown = 0, rc = 1;
	double sum_abs = 0, worst = 0;

	if (hb_catalog_load_builtin(&cat, &err) < 0)
		return hb_cli_fail(cli, &err);
	if (hb_profdb_open(dbpath, 1, &db, &err) < 0 || hb_profdb_list_measured(db, &rows, &n, &err) < 0)
		goto fail;
	if (n == 0) {
		printf("%s: no measured compute rows (sources torch, cupti, events, cpu); run 'hetbatch profile --backend "
		       "...' first\n", dbpath);
		rc = 0;
		goto out;
	}
	printf("%-10s %-12s %6s %4s %7s %11s %11s %8s %11s %11s %8s\n", "GPU", "MODEL", "LBS", "VSW", "SOURCE",
	       "FB_MEAS_MS", "FB_PRED_MS", "FB_ERR", "IT_MEAS_MS", "IT_PRED_MS", "IT_ERR");
	for (int i = 0; i < n; i++) {
		const struct hb_compute_row *r = &rows[i];
		const struct hb_gpu *g = hb_catalog_gpu(&cat, r->gpu);
		const struct hb_model *m = hb_catalog_model(&cat, r->model);
		struct hb_run_info run;
		struct hb_workload w = { 0 };
		struct hb_model scaled;
		struct hb_compute_row pred;
		int found = 0;
		double fb_m, fb_p, e_fb, e_it;

		if (!g || !m) {
			printf("%-10s %-12s %6d %4d  (not in the catalog: skipped)\n", r->gpu, r->model, r->local_bs,
			       r->n_vsw);
			continue;
		}
		if (r->run_id && hb_profdb_get_run(db, r->run_id, &run, &found, &err) < 0)
			goto fail;
		if (hb_workload_build(m, found && run.scale > 0 ? run.scale : 1.0, &w, &err) < 0)
			goto fail;
		hb_measure_scaled_model(m, &w, &scaled);
		hb_workload_free(&w);
		if (hb_analytic_compute(g, &scaled, r->local_bs, r->n_vsw, &pred, NULL, &err) < 0)
			goto fail;
		fb_m = r->fwd_s + r->bwd_s;
		fb_p = pred.fwd_s + pred.bwd_s;
		e_fb = (fb_p - fb_m) / fb_m;
		e_it = (pred.total_s - r->total_s) / r->total_s;
		printf("%-10s %-12s %6d %4d %7s %11.3f %11.3f %+7.1f%% %11.3f %11.3f %+7.1f%%\n", r->gpu, r->model,
		       r->local_bs, r->n_vsw, r->source, 1e3 * fb_m, 1e3 * fb_p, 100 * e_fb, 1e3 * r->total_s,
		       1e3 * pred.total_s, 100 * e_it);
		sum_abs += fabs(e_it);
		if (fabs(e_it) > fabs(worst))
			worst = e_it;
		shown++;
	}
	if (shown)
		printf("\n%d rows: mean |error| of the iteration time %.1f %%, worst %+.1f %%.  FB: forward + backward; "
		       "IT: the whole iteration (measured: wall time; predicted: data + fwd + bwd + update + copy).\n"
		       "The analytic model sees the workload at the run's scale (its parameters, FLOPs and "
		       "activations).\n", shown, 100 * sum_abs / shown, 100 * worst);
	rc = 0;
	goto out;
fail:
	rc = hb_cli_fail(cli, &err);
out:
	free(rows);
	hb_profdb_close(db);
	hb_catalog_free(&cat);
	return rc;
}
