/*
 * test_profdb_concurrent.c: several processes creating and writing one new
 * profile database at the same time (issue 16 item 3).
 *
 * Before the schema was created under the write lock, two processes that
 * opened the same new file both saw user_version 0 and both ran the
 * CREATE TABLEs: one failed with "table run already exists" (19 of 30
 * import pairs), and switching a new file to WAL could fail with "database
 * is locked".  Here WRITERS processes are released at once (a pipe closed
 * by the parent) onto a file that does not exist yet; each opens it
 * read-write (creating or migrating it), then writes TXNS transactions of
 * ROWS compute rows and one run row under keys of its own.  Every process
 * must exit 0 and every row must be there; ROUNDS fresh files.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "profdb.h"
#include "strutil.h"

#define WRITERS 4
#define ROUNDS 12
#define TXNS 5
#define ROWS 20

static char tmpdir[256];

/* One writer: wait for the start signal, then open and write.  Returns the
 * process's exit status (0 ok), printing the error otherwise. */
static int writer(const char *path, int id, int start_fd)
{
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };
	char c;

	/* blocks until the parent closes the write end: everyone starts together */
	while (read(start_fd, &c, 1) < 0 && errno == EINTR)
		;
	if (hb_profdb_open(path, 0, &db, &err) < 0)
		goto fail;
	for (int t = 0; t < TXNS; t++) {
		struct hb_run_info run;
		int64_t run_id;

		memset(&run, 0, sizeof(run));
		hb_strlcpy(run.kind, "test", sizeof(run.kind));
		if (hb_profdb_begin(db, &err) < 0 || hb_profdb_add_run(db, &run, &run_id, &err) < 0)
			goto fail;
		for (int r = 0; r < ROWS; r++) {
			struct hb_compute_row row;

			memset(&row, 0, sizeof(row));
			snprintf(row.gpu, sizeof(row.gpu), "gpu-w%d", id);
			hb_strlcpy(row.model, "resnet50", sizeof(row.model));
			hb_strlcpy(row.source, "events", sizeof(row.source));
			row.local_bs = 1 + t * ROWS + r; /* a key of this writer's own */
			row.n_vsw = 1;
			row.fwd_s = row.bwd_s = row.total_s = 0.01 * (r + 1);
			row.run_id = run_id;
			if (hb_profdb_put_compute(db, &row, &err) < 0)
				goto fail;
		}
		if (hb_profdb_commit(db, &err) < 0)
			goto fail;
	}
	hb_profdb_close(db);
	return 0;
fail:
	fprintf(stderr, "writer %d: %s\n", id, err.msg);
	hb_profdb_close(db);
	return 1;
}

static void test_concurrent_first_use(void **state)
{
	(void)state;
	for (int round = 0; round < ROUNDS; round++) {
		char path[512];
		int fds[2], status;
		pid_t pids[WRITERS];
		struct hb_profdb *db = NULL;
		struct hb_error err = { 0 };
		long n;

		snprintf(path, sizeof(path), "%s/new-%d.db", tmpdir, round);
		unlink(path);
		assert_int_equal(pipe(fds), 0);
		for (int w = 0; w < WRITERS; w++) {
			pids[w] = fork();
			assert_true(pids[w] >= 0);
			if (pids[w] == 0) {
				close(fds[1]);
				_exit(writer(path, w, fds[0]));
			}
		}
		close(fds[0]);
		close(fds[1]); /* go */
		for (int w = 0; w < WRITERS; w++) {
			assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				fail_msg("round %d: writer %d failed (status 0x%x)", round, w, status);
		}
		/* every row of every writer arrived, once */
		assert_int_equal(hb_profdb_open(path, HB_PROFDB_READONLY, &db, &err), 0);
		assert_int_equal(hb_profdb_count(db, "run", &n, &err), 0);
		assert_int_equal(n, WRITERS * TXNS);
		assert_int_equal(hb_profdb_count(db, "compute", &n, &err), 0);
		assert_int_equal(n, WRITERS * TXNS * ROWS);
		for (int w = 0; w < WRITERS; w++) {
			struct hb_compute_row *rows = NULL;
			char gpu[32];
			int nr = 0;

			snprintf(gpu, sizeof(gpu), "gpu-w%d", w);
			assert_int_equal(hb_profdb_get_compute(db, gpu, "resnet50", &rows, &nr, &err), 0);
			assert_int_equal(nr, TXNS * ROWS);
			for (int i = 0; i < nr; i++)
				assert_int_equal(rows[i].local_bs, i + 1);
			free(rows);
		}
		hb_profdb_close(db);
		/* the rollback journal leaves nothing beside the file */
		{
			static const char *const suffix[] = { "-wal", "-shm", "-journal" };

			for (int k = 0; k < 3; k++) {
				char side[600];

				snprintf(side, sizeof(side), "%s%s", path, suffix[k]);
				if (access(side, F_OK) == 0)
					fail_msg("round %d: %s left behind", round, side);
			}
		}
		unlink(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_concurrent_first_use),
	};
	int rc;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-test-profdb-conc-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(tmpdir);
	return rc;
}
