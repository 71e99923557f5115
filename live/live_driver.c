/*
 * live_driver.c: the mpirun loop of adaptive live runs, their trajectory
 * file and the simulator beside them (live_driver.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "allreduce.h"   /* hb_ar_launched_by_mpirun */
#include "fileio.h"
#include "live_driver.h"
#include "live_signal.h"
#include "policy.h"      /* struct hb_policy */
#include "profdb.h"
#include "sim.h"
#include "strutil.h"

#define MAX_LAUNCHER_WORDS 32

/* Run argv, wait; returns its exit status (128 + signal when killed), or
 * -1 with err filled when it could not start.  A signal another process
 * sent the driver goes on to the child once (mpirun ends its ranks); one
 * from the terminal reached the child already (live_signal.h). */
static int spawn_wait(char *const *argv, struct hb_error *err)
{
	const struct timespec tick = { 0, 50000000 }; /* 50 ms */
	pid_t pid, got;
	int status, forwarded = 0;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return hb_runtime_error(err, "live: cannot start %s: %s", argv[0], strerror(errno));
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "hetbatch: error: live: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	/* polled: the handler restarts waitpid (SA_RESTART), so a blocking
	 * one would not return to pass the signal on */
	while ((got = waitpid(pid, &status, WNOHANG)) == 0 || (got < 0 && errno == EINTR)) {
		if (hb_live_signal() && hb_live_signal_sent() && !forwarded) {
			kill(pid, hb_live_signal());
			forwarded = 1;
		}
		nanosleep(&tick, NULL);
	}
	if (got < 0)
		return hb_runtime_error(err, "live: waiting for %s: %s", argv[0], strerror(errno));
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static int alloc_total(const struct hb_live_pstate *st)
{
	int g = 0;

	for (int i = 0; i < st->nnodes; i++)
		g += st->alloc[i];
	return g;
}

int hb_live_drive_setup(struct hb_live_drive_opts *d, const char *cmd, const char *unit, struct hb_error *err)
{
	char sub[4096];
	ssize_t n;

	if (hb_ar_launched_by_mpirun())
		return hb_input_error(err, "%s: start it without mpirun (the driver launches mpirun itself, once "
				      "per %s)", cmd, unit);
	if (hb_live_signals_catch() != 0)
		return hb_runtime_error(err, "live: cannot catch signals: %s", strerror(errno));
	n = readlink("/proc/self/exe", d->self, sizeof(d->self) - 1);
	if (n <= 0)
		return hb_runtime_error(err, "live: cannot find this executable (/proc/self/exe)");
	d->self[n] = '\0';
	snprintf(sub, sizeof(sub), "%s/state", d->dir);
	return hb_mkdir_p(sub, err);
}

int hb_live_launch(const struct hb_live_drive_opts *d, int nranks, char *const *extra, int nextra,
		   struct hb_error *err)
{
	char launcher[1024], np[16], seed[32];
	char *argv[MAX_LAUNCHER_WORDS + 16 + 256];
	int n = 0, rc;

	if (d->nargs + nextra > 256)
		return hb_input_error(err, "live: %d arguments (at most 256)", d->nargs + nextra);
	hb_strlcpy(launcher, d->launcher, sizeof(launcher));
	for (char *w = strtok(launcher, " \t"); w; w = strtok(NULL, " \t")) {
		if (n == MAX_LAUNCHER_WORDS)
			return hb_input_error(err, "--launcher '%s': more than %d words", d->launcher,
					      MAX_LAUNCHER_WORDS);
		argv[n++] = w;
	}
	if (n == 0)
		return hb_input_error(err, "--launcher is empty");
	snprintf(np, sizeof(np), "%d", nranks);
	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)d->seed);
	argv[n++] = "-np";
	argv[n++] = np;
	argv[n++] = (char *)d->self;
	if (d->quiet)
		argv[n++] = "-q";
	argv[n++] = "--seed";
	argv[n++] = seed;
	argv[n++] = "live";
	for (int i = 0; i < d->nargs; i++)
		argv[n++] = d->args[i];
	for (int i = 0; i < nextra; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	/* As root, Open MPI's mpirun refuses to start unless told twice; these
	 * two variables are how (other MPIs ignore them).  The user running
	 * hetbatch as root already chose to; a launcher of their own may still
	 * say otherwise with its own flags. */
	if (getuid() == 0) {
		setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
		setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
	}
	if (hb_live_signal())
		return hb_fail(err, HB_EINTR, "interrupted by %s", hb_live_signal_name(hb_live_signal()));
	rc = spawn_wait(argv, err);
	if (rc < 0)
		return -1;
	if (hb_live_signal())
		return hb_fail(err, HB_EINTR, "interrupted by %s", hb_live_signal_name(hb_live_signal()));
	if (rc != 0)
		return hb_runtime_error(err, "live: the launch on %d ranks exited with status %d (%s)", nranks, rc,
					rc == 127 ? "the launcher was not found; see --launcher" : "its ranks said why above");
	return 0;
}

int hb_live_drive(const struct hb_live_drive_opts *d, struct hb_live_policy *pol, struct hb_live_segment *all,
		  struct hb_error *err)
{
	struct hb_live_segment seg = { 0 };
	char why[256], in[4096], out[4096];
	int rc = -1;

	memset(all, 0, sizeof(*all));
	hb_strlcpy(seg.policy, hb_live_policy_name(pol), sizeof(seg.policy));
	hb_strlcpy(all->policy, seg.policy, sizeof(all->policy));
	if (hb_live_policy_start(pol, &seg.st, why, sizeof(why), err) < 0)
		return -1;
	hb_strlcpy(seg.change, "start", sizeof(seg.change));
	if (!d->quiet)
		printf("live: %s\n", why);
	for (int k = 0;; k++) {
		struct hb_live_segment res;

		if (k >= d->max_segments) {
			hb_runtime_error(err, "live: %d launches and the run is not done (--max-launches)", k);
			goto out;
		}
		seg.segment = k;
		snprintf(in, sizeof(in), "%s/state/launch-%d.json", d->dir, k);
		snprintf(out, sizeof(out), "%s/state/launch-%d.out.json", d->dir, k);
		seg.spawn_wall = hb_live_wall_now();
		if (hb_live_segment_write(in, &seg, err) < 0)
			goto out;
		if (!d->quiet)
			printf("live: launch %d: %d ranks from iteration %ld, epoch %ld, B_G %ld\n", k, alloc_total(&seg.st),
			       seg.st.iteration, seg.st.epoch, seg.st.global_bs);
		char *extra[4] = { "--segment", in, "--segment-out", out };

		if (hb_live_launch(d, alloc_total(&seg.st), extra, 4, err) < 0 || hb_live_segment_read(out, &res, err) < 0) {
			if (k > 0)
				hb_error_prefix(err, "launch %d (results so far in %s/trajectory.csv)", k, d->dir);
			else
				hb_error_prefix(err, "launch 0 (no block finished; nothing in %s yet)", d->dir);
			goto out;
		}
		for (int i = 0; i < res.nrows; i++)
			if (hb_live_segment_add_row(all, &res.rows[i], err) < 0) {
				hb_live_segment_free(&res);
				goto out;
			}
		free(res.rows);
		res.rows = NULL;
		res.nrows = res.cap_rows = 0;
		hb_live_segment_free(&seg);
		seg = res;
		hb_strlcpy(seg.change, "relaunch", sizeof(seg.change));
		if (hb_live_write_trajectory(d->dir, all, err) < 0)
			goto out;
		if (!d->quiet)
			printf("live: launch %d ended: %s\n", k, seg.ended);
		if (seg.done)
			break;
	}
	all->st = seg.st;
	memset(&seg.st, 0, sizeof(seg.st));
	all->done = 1;
	all->segment = seg.segment;
	hb_strlcpy(all->ended, seg.ended, sizeof(all->ended));
	rc = 0;
out:
	hb_live_segment_free(&seg);
	return rc;
}

static void csv_text(char *dst, size_t n, const char *src)
{
	size_t j = 0;

	/* a field with commas or quotes goes in quotes, quotes doubled */
	if (j + 1 < n)
		dst[j++] = '"';
	for (const char *p = src; *p && j + 3 < n; p++) {
		if (*p == '"')
			dst[j++] = '"';
		dst[j++] = *p;
	}
	if (j + 1 < n)
		dst[j++] = '"';
	dst[j] = '\0';
}

/* v as a CSV number into b (%.9g), or empty when it does not exist (NaN,
 * infinite), as docs/outputs.md's conventions say. */
static const char *num(char b[32], double v)
{
	if (!isfinite(v))
		b[0] = '\0';
	else
		snprintf(b, 32, "%.9g", v);
	return b;
}

int hb_live_write_trajectory(const char *dir, const struct hb_live_segment *all, struct hb_error *err)
{
	size_t cap = 512 + (size_t)all->nrows * 1400, len = 0;
	char *buf = malloc(cap), path[4096];
	int rc;

	if (!buf)
		return hb_runtime_error(err, "live: out of memory");
	len += (size_t)snprintf(buf, cap, "launch,epoch,iteration,iters,global_batch,gpus,alloc,method,config,"
				"predicted_s,measured_s,error_pct,block_s,change,change_s,similarity,noise_scale,loss,"
				"decision\n");
	for (int i = 0; i < all->nrows; i++) {
		const struct hb_live_row *r = &all->rows[i];
		char cfg[600], dec[600], n[9][32];

		csv_text(cfg, sizeof(cfg), r->config);
		csv_text(dec, sizeof(dec), r->decision);
		/* error_pct: percent, as the tables print it */
		len += (size_t)snprintf(buf + len, cap - len, "%d,%ld,%ld,%d,%ld,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,"
					"%s,%s,%s,%s\n", r->segment, r->epoch, r->iteration, r->iters, r->global_bs,
					r->ngpus, r->alloc, r->method, cfg, num(n[0], r->predicted_s),
					num(n[1], r->measured_s), num(n[2], 100 * (r->measured_s / r->predicted_s - 1)),
					num(n[3], r->sum_s), r->change, num(n[4], r->change_s), num(n[5], r->similarity),
					num(n[6], r->noise_scale), num(n[7], r->loss), dec);
	}
	snprintf(path, sizeof(path), "%s/trajectory.csv", dir);
	rc = hb_write_file_atomic(path, buf, len, err);
	free(buf);
	return rc;
}

/* The batch trajectory as a replay file: one point per block, where the
 * batch changes. */
static int write_schedule(const char *path, const struct hb_live_segment *all, struct hb_error *err)
{
	size_t cap = 64 + (size_t)all->nrows * 48, len = 0;
	char *buf = malloc(cap);
	long last = -1;
	int rc;

	if (!buf)
		return hb_runtime_error(err, "live: out of memory");
	len += (size_t)snprintf(buf, cap, "step,global_batch\n");
	for (int i = 0; i < all->nrows; i++)
		if (all->rows[i].global_bs != last) {
			last = all->rows[i].global_bs;
			len += (size_t)snprintf(buf + len, cap - len, "%ld,%ld\n", all->rows[i].iteration, last);
		}
	rc = hb_write_file_atomic(path, buf, len, err);
	free(buf);
	return rc;
}

/* The simulator's sample in force at iteration it (the last whose
 * iteration count is <= it), or NULL. */
static const struct hb_sim_sample *sample_at(const struct hb_sim *sim, double it)
{
	const struct hb_sim_sample *best = NULL;

	for (size_t i = 0; i < sim->nsamples; i++)
		if (sim->samples[i].job == 0 && sim->samples[i].iters <= it + 1e-9)
			best = &sim->samples[i];
	return best;
}

/* Simulated time when the job reached iteration it: the sample's time
 * plus the iterations since at its rate (restart pauses inside are
 * counted by the sample that follows them). */
static double sim_time_at(const struct hb_sim *sim, double it)
{
	const struct hb_sim_sample *s = sample_at(sim, it);

	return s ? s->t + (it - s->iters) * s->iter_s : NAN;
}

int hb_live_compare_sim(const char *dir, struct hb_live_policy *pol, const char *dbpath, uint64_t seed,
			const struct hb_live_segment *all, double *sim_s, struct hb_error *err)
{
	const struct hb_policy *policy = pol->par.policy;
	struct hb_profdb *db = NULL;
	struct hb_sim sim;
	struct hb_sim_opts so;
	char sched[4096], path[4096], *buf = NULL;
	size_t cap, len = 0;
	double live_s = 0;
	int id, rc = -1, inited = 0;

	*sim_s = NAN;
	if (!policy)
		return hb_runtime_error(err, "live: no policy");
	snprintf(sched, sizeof(sched), "%s/schedule.csv", dir);
	if (write_schedule(sched, all, err) < 0)
		return -1;
	hb_sim_opts_default(&so);
	so.seed = seed;
	so.interval = pol->par.p;
	so.replay = sched; /* read by the agents whose batch it sets (sim.h hb_sim_replay_gbs) */
	so.quiet = 1;
	if (hb_profdb_open(dbpath, 1, &db, err) < 0)
		return -1;
	if (hb_sim_init(&sim, pol->cat, pol->cl, db, policy->name, &so, err) < 0)
		goto out;
	inited = 1;
	/* the catalog's entry (the simulator indexes its models by it), which
	 * the live backend made the run's model (live_agent.h), and the job's
	 * request as the backend's job has it */
	if (hb_sim_add_job(&sim, hb_catalog_model(pol->cat, pol->model.name), policy->agent, 0.0, &id, err) < 0)
		goto out;
	if (pol->par.init_gbs > 0)
		hb_sim_job_request(&sim.jobs[id], 0, pol->par.init_gbs);
	if (hb_sim_run(&sim, err) < 0)
		goto out;
	cap = 256 + (size_t)all->nrows * 256;
	buf = malloc(cap);
	if (!buf) {
		hb_runtime_error(err, "live: out of memory");
		goto out;
	}
	len += (size_t)snprintf(buf, cap, "iteration,live_global_batch,sim_global_batch,live_gpus,sim_gpus,"
				"live_predicted_s,live_measured_s,sim_iter_s,live_elapsed_s,sim_elapsed_s\n");
	for (int i = 0; i < all->nrows; i++) {
		const struct hb_live_row *r = &all->rows[i];
		const struct hb_sim_sample *s = sample_at(&sim, (double)r->iteration);

		char n[5][32];

		len += (size_t)snprintf(buf + len, cap - len, "%ld,%ld,%ld,%d,%d,%s,%s,%s,%s,%s\n", r->iteration,
					r->global_bs, s ? s->global_bs : 0L, r->ngpus, s ? s->ngpus : 0,
					num(n[0], r->predicted_s), num(n[1], r->measured_s), num(n[2], s ? s->iter_s : NAN),
					num(n[3], live_s), num(n[4], sim_time_at(&sim, (double)r->iteration)));
		live_s += r->sum_s + (isfinite(r->change_s) ? r->change_s : 0);
	}
	if (all->nrows > 0)
		*sim_s = sim_time_at(&sim, (double)(all->rows[all->nrows - 1].iteration + all->rows[all->nrows - 1].iters));
	snprintf(path, sizeof(path), "%s/compare.csv", dir);
	rc = hb_write_file_atomic(path, buf, len, err);
out:
	if (rc < 0)
		hb_error_prefix(err, "live: the simulator beside the run");
	free(buf);
	if (inited)
		hb_sim_free(&sim);
	hb_profdb_close(db);
	return rc;
}
