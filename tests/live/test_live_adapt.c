/*
 * test_live_adapt.c: adaptive live runs, `hetbatch live --policy P`, on the
 * cpu backend under mpirun --oversubscribe (the driver launches mpirun
 * itself).
 *
 *  - jabas on cpu-2x2 (analytic profiles, so the decisions are the same on
 *    every machine; B_G^init 64 runs best on one node): with gamma 1 every measured
 *    similarity (< 1) asks for a larger batch, so the global batch changes
 *    in place at adaptation points (at least twice, on the same ranks); at
 *    an epoch end the auto-scaler moves from one node to both and the run
 *    checkpoints and relaunches on 4 ranks, continuing at the next
 *    iteration; the loss falls; the simulator, replaying the measured batch
 *    trajectory, agrees on the batch and the GPUs at every block; the
 *    prediction rows exist.
 *  - a relaunch at every epoch end (the agent rebuilt by replay in each
 *    launch) makes the same decisions as the run that relaunched once.
 *  - simigrad: DDP on every GPU, the batch changes in place.
 *  - schedule replay: the simulator's SimiGrad and OptPerf (unequal local
 *    batches) configurations of one job, in order.
 *  - refusals: the driver under mpirun, a missing --db, an unknown policy,
 *    a policy whose agent needs what a live run does not measure.
 *
 * Skipped (77) where mpirun cannot start two processes here.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cli_run.h"

static const char *flags;
static char launcher[256];

/* One trajectory.csv row (the leading fields). */
struct row {
	int launch;
	long epoch, iteration;
	int iters;
	long gbs;
	int gpus;
	char change[16];
	double loss;
};

/* Split one CSV line at commas outside quotes; returns the field count. */
static int fields(char *line, char **f, int max)
{
	int n = 0, q = 0;

	f[n++] = line;
	for (char *p = line; *p && n < max; p++) {
		if (*p == '"')
			q = !q;
		else if (*p == ',' && !q) {
			*p = '\0';
			f[n++] = p + 1;
		}
	}
	return n;
}

/* trajectory.csv of run directory dir into rows (at most max); the count. */
static int read_trajectory(const char *dir, struct row *rows, int max)
{
	size_t len;
	char *text = slurp_in(dir, "trajectory.csv", &len), *line, *save = NULL;
	int n = 0;

	line = strtok_r(text, "\n", &save); /* header */
	assert_non_null(strstr(line, "launch,epoch,iteration,iters,global_batch,gpus"));
	assert_non_null(strstr(line, ",error_pct,"));
	while ((line = strtok_r(NULL, "\n", &save)) && n < max) {
		char *f[32];
		int k = fields(line, f, 32);

		assert_int_equal(k, 19);
		for (int i = 0; i < k; i++) /* what was not measured is empty (docs/outputs.md) */
			assert_true(strstr(f[i], "nan") == NULL || f[i][0] == '"');
		rows[n].launch = atoi(f[0]);
		rows[n].epoch = atol(f[1]);
		rows[n].iteration = atol(f[2]);
		rows[n].iters = atoi(f[3]);
		rows[n].gbs = atol(f[4]);
		rows[n].gpus = atoi(f[5]);
		snprintf(rows[n].change, sizeof(rows[n].change), "%s", f[13]);
		rows[n].loss = atof(f[17]);
		n++;
	}
	free(text);
	return n;
}

/* 1 if the file holds needle (freed, unlike a bare slurp). */
static int has(const char *path, const char *needle)
{
	size_t len;
	char *text = slurp(path, &len);
	int found = strstr(text, needle) != NULL;

	free(text);
	return found;
}

static void profile_once(void)
{
	static int done;

	if (done)
		return;
	/* analytic profiles: the policy's decisions do not depend on this
	 * machine's speed (measured ones would move the auto-scaler) */
	assert_int_equal(run("profile --analytic --gpus cpu --models cifar10 --db cpu.db"), 0);
	done = 1;
}

static void test_jabas(void **state)
{
	struct row r[256];
	size_t len;
	char dbp[600], *cmp, *line, *save = NULL;
	int n, rc, inplace = 0, relaunch = -1, lines = 0;

	(void)state;
	profile_once();
	rc = run("live --policy jabas --model cifar10 --cluster cpu-2x2 --db cpu.db --out jr --epochs 3 "
		 "--dataset-size 2048 --min-gbs 64 --scale 0.05 --interval 4 --gamma 1 --alpha 0.5 --launcher '%s'", launcher);
	if (rc != 0)
		fail_msg("exit %d\n%s\n%s", rc, slurp(outf, &len), slurp(errf, &len));
	/* progress on stderr: a line at every epoch's end at least */
	if (!has(errf, "live: launch 0: ended epoch 1 of 3, iteration ") || !has(errf, "ended epoch 3 of 3"))
		fail_msg("no progress lines:\n%s", slurp(errf, &len));
	n = read_trajectory("jr", r, 256);
	assert_true(n >= 4);
	assert_int_equal(r[0].launch, 0);
	assert_int_equal(r[0].iteration, 0);
	assert_string_equal(r[0].change, "start");
	for (int i = 1; i < n; i++) {
		/* every iteration runs once, launches in order */
		assert_int_equal(r[i].iteration, r[i - 1].iteration + r[i - 1].iters);
		assert_true(r[i].launch == r[i - 1].launch || r[i].launch == r[i - 1].launch + 1);
		if (strcmp(r[i].change, "inplace") == 0 && r[i].launch == r[i - 1].launch) {
			assert_int_equal(r[i].gpus, r[i - 1].gpus);
			if (r[i].gbs != r[i - 1].gbs)
				inplace++;
		}
		if (strcmp(r[i].change, "relaunch") == 0) {
			/* a relaunch starts a launch, at an epoch boundary */
			assert_int_equal(r[i].launch, r[i - 1].launch + 1);
			assert_true(r[i].epoch == r[i - 1].epoch + 1);
			relaunch = i;
		} else {
			assert_int_equal(r[i].launch, r[i - 1].launch);
		}
	}
	if (inplace < 2)
		fail_msg("the global batch changed in place %d times", inplace);
	if (relaunch < 0)
		fail_msg("no relaunch at an epoch end");
	/* the auto-scaler moved the run to another allocation there */
	assert_true(r[relaunch].gpus != r[relaunch - 1].gpus);
	assert_true(r[n - 1].gbs > r[0].gbs);
	if (!(r[n - 1].loss < r[0].loss))
		fail_msg("loss did not fall: %g -> %g", r[0].loss, r[n - 1].loss);
	assert_true(has(outf, "in-place changes"));
	/* the simulator replayed the measured batches and chose the same GPUs */
	cmp = slurp_in("jr", "compare.csv", &len);
	line = strtok_r(cmp, "\n", &save);
	assert_non_null(strstr(line, "iteration,live_global_batch,sim_global_batch,live_gpus,sim_gpus"));
	while ((line = strtok_r(NULL, "\n", &save))) {
		long it, lb, sb;
		int lg, sg;

		assert_int_equal(sscanf(line, "%ld,%ld,%ld,%d,%d", &it, &lb, &sb, &lg, &sg), 5);
		assert_int_equal(it, r[lines].iteration);
		assert_int_equal(lb, sb);
		assert_int_equal(lg, sg);
		lines++;
	}
	assert_int_equal(lines, n);
	free(cmp);
	assert_true(exists_in("jr", "schedule.csv"));
	assert_true(exists_in("jr/checkpoint", "rank-0.ckpt"));
	/* what produced it (issue 39 item 1): policy, seed, version, the
	 * profiles and their rows per GPU type x model, the parameters */
	{
		char *sum = slurp_in("jr", "summary.json", &len);

		assert_non_null(sum);
		assert_non_null(strstr(sum, "\"format\":\t\"hetbatch-live-policy/1\""));
		assert_non_null(strstr(sum, "\"policy\":\t\"jabas\""));
		assert_non_null(strstr(sum, "\"version\":"));
		assert_non_null(strstr(sum, "\"seed\":"));
		assert_non_null(strstr(sum, "\"profiles\":\t\"cpu.db\""));
		assert_non_null(strstr(sum, "\"profile_sources\":"));
		assert_non_null(strstr(sum, "\"gpu\":\t\"cpu\""));
		assert_non_null(strstr(sum, "\"digest\":"));
		assert_non_null(strstr(sum, "\"gamma\":\t1"));
		assert_non_null(strstr(sum, "\"epochs\":\t3"));
		free(sum);
	}
	snprintf(dbp, sizeof(dbp), "%s/cpu.db", tmpdir);
	assert_true(cli_query(dbp, "SELECT count(*) FROM prediction WHERE run_id = (SELECT max(id) FROM run) "
			      "AND predicted_s > 0 AND measured_s > 0") >= 4);
	assert_no_temporaries("jr");
}

/* A relaunch rebuilds the agent by replaying the measured blocks
 * (live/live_policy.h): relaunching at every epoch end makes the decisions
 * of test_jabas's run, which relaunched once (batch, GPUs and
 * configuration of every block; gamma 1 asks for a larger batch whatever
 * the similarity measures). */
static void test_jabas_relaunch_same(void **state)
{
	static const char *args = "--model cifar10 --cluster cpu-2x2 --db cpu.db --epochs 3 --dataset-size 2048 "
				  "--min-gbs 64 --scale 0.05 --interval 4 --gamma 1 --alpha 0.5";
	struct row a[256], b[256];
	size_t len;
	char *ta, *tb, *la, *lb, *sa = NULL, *sb = NULL;
	int na, nb, relaunches = 0;

	(void)state;
	profile_once();
	if (!exists_in("jr", "trajectory.csv") &&
	    run("live --policy jabas %s --out jr --launcher '%s'", args, launcher) != 0)
		fail_msg("%s", slurp(errf, &len));
	if (run("live --policy jabas %s --out jr2 --relaunch-every-epoch --launcher '%s'", args, launcher) != 0)
		fail_msg("%s\n%s", slurp(outf, &len), slurp(errf, &len));
	na = read_trajectory("jr", a, 256);
	nb = read_trajectory("jr2", b, 256);
	assert_int_equal(na, nb);
	for (int i = 0; i < na; i++) {
		assert_int_equal(a[i].iteration, b[i].iteration);
		assert_int_equal(a[i].iters, b[i].iters);
		assert_int_equal(a[i].gbs, b[i].gbs);
		assert_int_equal(a[i].gpus, b[i].gpus);
		relaunches += strcmp(b[i].change, "relaunch") == 0;
	}
	assert_int_equal(relaunches, 2); /* after epochs 1 and 2 */
	/* and the same configurations (the config column), line by line */
	ta = slurp_in("jr", "trajectory.csv", &len);
	tb = slurp_in("jr2", "trajectory.csv", &len);
	la = strtok_r(ta, "\n", &sa);
	lb = strtok_r(tb, "\n", &sb);
	while ((la = strtok_r(NULL, "\n", &sa)) && (lb = strtok_r(NULL, "\n", &sb))) {
		char *fa[32], *fb[32];

		assert_int_equal(fields(la, fa, 32), fields(lb, fb, 32));
		assert_string_equal(fa[8], fb[8]);
	}
	free(ta);
	free(tb);
}

static void test_simigrad(void **state)
{
	struct row r[256];
	size_t len;
	int n, rc, changes = 0;

	(void)state;
	profile_once();
	rc = run("live --policy simigrad --model cifar10 --cluster cpu-2x2 --db cpu.db --out sr --epochs 1 "
		 "--dataset-size 1024 --scale 0.05 --interval 2 --gamma 1 --alpha 0.5 --launcher '%s'", launcher);
	if (rc != 0)
		fail_msg("exit %d\n%s\n%s", rc, slurp(outf, &len), slurp(errf, &len));
	n = read_trajectory("sr", r, 256);
	for (int i = 0; i < n; i++) {
		assert_int_equal(r[i].gpus, 4);  /* SimiGrad: every GPU, all the time */
		assert_int_equal(r[i].launch, 0);
		if (i > 0 && r[i].gbs != r[i - 1].gbs) {
			assert_string_equal(r[i].change, "inplace");
			changes++;
		}
	}
	assert_true(changes >= 1);
}

/* `live --schedule ARGS --out OUT`, 2 timed iterations per configuration
 * at scale 0.05; OUT's trajectory rows into r (at most max); the count. */
static int replay(const char *args, const char *out, struct row *r, int max)
{
	size_t len;
	int rc = run("live --schedule %s --out %s --scale 0.05 --iters-per-config 2 --launcher '%s'", args, out,
		     launcher);

	if (rc != 0)
		fail_msg("exit %d\n%s\n%s", rc, slurp(outf, &len), slurp(errf, &len));
	return read_trajectory(out, r, max);
}

/* --schedule: the simulator's configurations for a job, replayed in order. */
static void test_schedule(void **state)
{
	struct row r[64];
	char dbp[600];
	int n;

	(void)state;
	profile_once();
	assert_int_equal(run("sim --cluster cpu-2x2 --model cifar10 --policy jabas,simigrad --db cpu.db --out sim"), 0);
	n = replay("sim --job 0 --policy simigrad --db cpu.db --max-configs 3", "rep", r, 64);
	assert_int_equal(n, 3);
	/* SimiGrad's first moves on this cluster: 128, then 256 and back */
	assert_int_equal(r[0].gbs, 128);
	assert_string_equal(r[0].change, "start");
	for (int i = 0; i < n; i++) {
		assert_int_equal(r[i].gpus, 4);
		assert_int_equal(r[i].iters, 2);
		if (i > 0)
			assert_string_equal(r[i].change, "inplace");
	}
	assert_true(r[1].gbs != r[0].gbs);
	assert_true(has(outf, "mean absolute error of the simulator"));
	snprintf(dbp, sizeof(dbp), "%s/cpu.db", tmpdir);
	assert_true(cli_query(dbp, "SELECT count(*) FROM prediction WHERE run_id = (SELECT max(id) FROM run)") == 3);
	/* two runs hold job 0: which one must be said */
	assert_int_equal(run("live --schedule sim --job 0 --db cpu.db --out rep2 --launcher '%s'", launcher), 2);
	assert_true(has(errf, "--policy"));
	assert_int_equal(run("live --schedule sim --db cpu.db --out rep2"), 2);
}

/* --schedule of OptPerf (Cannikin) on 2 V100 + 2 T4 (analytic profiles of
 * those GPUs; the cpu backend runs every rank): each GPU its own local
 * batch, the batch changed in place. */
static void test_schedule_optperf(void **state)
{
	struct row r[8];
	size_t len;
	char *traj;

	(void)state;
	assert_int_equal(run("profile --analytic --gpus v100,t4 --models cifar10 --db demo.db"), 0);
	assert_int_equal(run("sim --cluster demo --model cifar10 --policy optperf --db demo.db --out simo"), 0);
	assert_int_equal(replay("simo --job 0 --db demo.db --max-configs 2", "repo", r, 8), 2);
	/* the simulator's first two (Cannikin's learning epochs, §4.2): B 128
	 * split evenly, then the B* of epoch 1's proportional model, 210,
	 * split by Eq. 8 (fast 69+69, slow 36+36) */
	assert_int_equal(r[0].gbs, 128);
	assert_int_equal(r[1].gbs, 210);
	assert_string_equal(r[0].change, "start");
	assert_string_equal(r[1].change, "inplace");
	for (int i = 0; i < 2; i++)
		assert_true(r[i].gpus == 4 && r[i].iters == 2);
	traj = slurp_in("repo", "trajectory.csv", &len);
	assert_non_null(strstr(traj, ",optperf,\"OptPerf B 210: fast:2x69 slow:2x36\","));
	free(traj);
}

/* SIGHUP to the driver during its first launch: it passes it on to its
 * mpirun, says so in one line and exits 129; -q: no progress lines. */
static void test_driver_signal(void **state)
{
	char cmd[4096], rcfile[600];
	size_t len;
	char *err, *rctext;
	int st, rc, secs;

	(void)state;
	profile_once();
	snprintf(rcfile, sizeof(rcfile), "%s/drv.rc", tmpdir);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && rm -rf hr ready && (HB_LIVE_READY=ready '%s' -q live --policy jabas --model cifar10 "
		 "--cluster cpu-2x2 --db cpu.db --out hr --epochs 100 --dataset-size 2048 --min-gbs 64 --scale 0.05 "
		 "--interval 4 --launcher '%s' >'%s' 2>'%s' & d=$!; n=0; while [ ! -e ready ] && [ $n -lt 600 ]; "
		 "do sleep 0.1; n=$((n+1)); done; kill -HUP $d; t=$(date +%%s); wait $d; r=$?; "
		 "echo $r $(( $(date +%%s) - t )) >'%s')", tmpdir, exe, launcher, outf, errf, rcfile);
	st = system(cmd);
	assert_true(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	rctext = slurp(rcfile, &len);
	assert_int_equal(sscanf(rctext, "%d %d", &rc, &secs), 2);
	err = slurp(errf, &len);
	if (rc != 129 || secs > 10 || !strstr(err, "hetbatch live: launch 0 (") ||
	    !strstr(err, "interrupted by SIGHUP\n") || count_char(err, '\n') != 1)
		fail_msg("exit %d after %d s:\n%s", rc, secs, err);
	free(err);
	free(rctext);
}

static void test_refused(void **state)
{
	(void)state;
	profile_once();
	assert_int_equal(run("live --policy jabas --model cifar10 --cluster cpu-2x2 --out x"), 2);
	assert_true(has(errf, "--db"));
	assert_int_equal(run("live --policy fastest --model cifar10 --cluster cpu-2x2 --db cpu.db --out x"), 2);
	/* the registry's names; Pollux's agent reads the simulated noise
	 * scale: refused before any launch, saying so */
	assert_int_equal(run("live --policy tiresias --model cifar10 --cluster cpu-2x2 --db cpu.db --out x"), 2);
	assert_true(has(errf, "use --policy static"));
	assert_int_equal(run("live --policy pollux --model cifar10 --cluster cpu-2x2 --db cpu.db --out x "
			     "--dataset-size 1024 --launcher /nonexistent/mpirun"), 2);
	assert_true(has(errf, "noise scale"));
	assert_int_equal(run("live --policy jabas --model nope --cluster cpu-2x2 --db cpu.db --out x"), 2);
	assert_int_equal(run("live --plan p.json --policy jabas --model cifar10 --cluster cpu-2x2 --db cpu.db "
			     "--out x"), 2);
	assert_int_equal(run("live --plan p.json --epochs 3"), 2);
	assert_int_equal(run_env("OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_RANK=0", "live --policy jabas --model "
				 "cifar10 --cluster cpu-2x2 --db cpu.db --out x"), 2);
	assert_true(has(errf, "without mpirun"));
	/* a launcher that does not exist: the first launch fails, clearly */
	assert_int_equal(run("live --policy static --model cifar10 --cluster cpu-2x2 --db cpu.db --out y "
			     "--dataset-size 256 --epochs 1 --launcher /nonexistent/mpirun"), 1);
	assert_true(has(errf, "launch 0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_jabas),
		cmocka_unit_test(test_jabas_relaunch_same),
		cmocka_unit_test(test_simigrad),
		cmocka_unit_test(test_driver_signal),
		cmocka_unit_test(test_schedule),
		cmocka_unit_test(test_schedule_optperf),
	};
	int rc;

	if (cli_setup("live_adapt") < 0)
		return 77;
	/* No --allow-run-as-root: as root (CI, the README's setting) the
	 * driver's own launch must get past Open MPI's refusal (issue 39). */
	flags = "--oversubscribe";
	snprintf(launcher, sizeof(launcher), "mpirun %s", flags);
	setenv("OMPI_MCA_plm_rsh_agent", "", 0);
	/* the ranks' leak reports would end the launches under ASan */
	setenv("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1", 1);
	if (system("command -v mpirun >/dev/null 2>&1 && OMPI_MCA_plm_rsh_agent= mpirun -np 2 --oversubscribe "
		   "--allow-run-as-root true >/dev/null 2>&1") != 0) {
		fprintf(stderr, "mpirun cannot start two processes here: skipped\n");
		cli_teardown();
		return 77;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	cli_teardown();
	return rc;
}
