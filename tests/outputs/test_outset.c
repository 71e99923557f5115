/* Unit tests for common/outset.c, tmpfiles.c and interrupt.c: an output
 * set replaced as a whole (issue 16 item 1), the refusal of a directory
 * holding files no run wrote (issue 17 item 4), the lock between two
 * writers (16.4), stale temporaries of dead writers (16.2) and the
 * interrupt flag. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "fileio.h"
#include "interrupt.h"
#include "outset.h"
#include "tmpfiles.h"

static char tmpdir[256];

static void path_of(char *buf, size_t size, const char *rel)
{
	snprintf(buf, size, "%s/%s", tmpdir, rel);
}

static void put(const char *rel, const char *text)
{
	char p[512];
	FILE *f;

	path_of(p, sizeof(p), rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int there(const char *rel)
{
	char p[512];

	path_of(p, sizeof(p), rel);
	return hb_path_exists(p);
}

static char *text_of(const char *rel)
{
	char p[512], *data = NULL;
	struct hb_error err = { 0 };

	path_of(p, sizeof(p), rel);
	assert_int_equal(hb_read_file(p, &data, NULL, &err), 0);
	return data;
}

/* Entries of dir (relative to tmpdir), "." and ".." aside. */
static int count_entries(const char *rel)
{
	char p[512];
	char cmd[600];
	FILE *f;
	int n = -1;

	path_of(p, sizeof(p), rel);
	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", p);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &n), 1);
	pclose(f);
	return n;
}

/* A PID that is certainly dead: a child that exited and was reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

/* Write one set with the given files (name=text pairs) into rel. */
static int write_set(const char *rel, int force, struct hb_error *err, ...)
{
	struct hb_outset os;
	char dir[512];
	va_list ap;
	const char *name;

	path_of(dir, sizeof(dir), rel);
	if (hb_outset_begin(&os, dir, "test", force, err) < 0)
		return -1;
	va_start(ap, err);
	while ((name = va_arg(ap, const char *)) != NULL) {
		const char *text = va_arg(ap, const char *);
		char p[4300];

		snprintf(p, sizeof(p), "%s/%s", os.stage, name);
		assert_int_equal(hb_write_file_atomic(p, text, strlen(text), err), 0);
	}
	va_end(ap);
	return hb_outset_publish(&os, err);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-outset-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return hb_remove_tree(tmpdir);
}

/* A new set, then a second replaces it whole: no file of the first stays,
 * nothing is left beside it. */
static void test_replace_whole(void **state)
{
	struct hb_error err = { 0 };
	char *m;

	(void)state;
	assert_int_equal(write_set("runs/a", 0, &err, "old.csv", "1\n", "both.csv", "old\n", NULL), 0);
	assert_true(there("runs/a/old.csv"));
	m = text_of("runs/a/" HB_OUTSET_MANIFEST);
	assert_non_null(strstr(m, "file old.csv\n"));
	assert_non_null(strstr(m, "file both.csv\n"));
	free(m);
	assert_int_equal(write_set("runs/a", 0, &err, "both.csv", "new\n", "new.csv", "2\n", NULL), 0);
	assert_false(there("runs/a/old.csv"));
	m = text_of("runs/a/both.csv");
	assert_string_equal(m, "new\n");
	free(m);
	assert_int_equal(count_entries("runs/a"), 3); /* both, new, manifest */
	assert_int_equal(count_entries("runs"), 1);   /* no lock, no staging directory */
	/* an empty directory is the command's too */
	{
		char empty[512];

		path_of(empty, sizeof(empty), "empty");
		assert_int_equal(hb_mkdir_p(empty, &err), 0);
	}
	assert_int_equal(write_set("empty", 0, &err, "x.csv", "x\n", NULL), 0);
	assert_true(there("empty/x.csv"));
}

/* A directory holding a file no run wrote is refused, named, untouched;
 * --force replaces it; the current directory never is. */
static void test_refuse_foreign(void **state)
{
	struct hb_error err = { 0 };
	char here[512];

	(void)state;
	assert_int_equal(write_set("own", 0, &err, "a.csv", "a\n", NULL), 0);
	put("own/notes.txt", "mine\n");
	assert_int_equal(write_set("own", 0, &err, "b.csv", "b\n", NULL), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "'notes.txt'"));
	assert_non_null(strstr(err.msg, "--force"));
	assert_true(there("own/notes.txt"));
	assert_true(there("own/a.csv"));
	{
		char stage[64];

		snprintf(stage, sizeof(stage), "own.tmp.%ld", (long)getpid());
		assert_false(there("own.lock")); /* no lock, no staging directory left */
		assert_false(there(stage));
	}
	assert_int_equal(write_set("own", 1, &err, "b.csv", "b\n", NULL), 0);
	assert_false(there("own/notes.txt"));
	assert_true(there("own/b.csv"));

	/* a file where the directory should be */
	put("file", "x");
	assert_int_equal(write_set("file", 1, &err, NULL), -1);
	assert_non_null(strstr(err.msg, "not a directory"));

	/* the current directory, even with force */
	assert_non_null(getcwd(here, sizeof(here)));
	assert_int_equal(chdir(tmpdir), 0);
	{
		struct hb_outset os;

		assert_int_equal(hb_outset_begin(&os, ".", "test", 1, &err), -1);
		assert_int_equal(err.code, HB_EINPUT);
		assert_int_equal(hb_outset_begin(&os, "own/..", "test", 1, &err), -1);
	}
	assert_int_equal(chdir(here), 0);
}

/* Two writers: the second fails at once naming the first; after the first
 * is done the lock is free again and its file gone. */
static void test_lock(void **state)
{
	struct hb_outset a, b;
	struct hb_error err = { 0 };
	char dir[512], pid[32];

	(void)state;
	path_of(dir, sizeof(dir), "locked");
	assert_int_equal(hb_outset_begin(&a, dir, "test", 0, &err), 0);
	assert_true(there("locked.lock"));
	assert_int_equal(hb_outset_begin(&b, dir, "test", 0, &err), -1);
	assert_int_equal(err.code, HB_ERUNTIME);
	snprintf(pid, sizeof(pid), "(PID %ld)", (long)getpid());
	assert_non_null(strstr(err.msg, pid));
	assert_non_null(strstr(err.msg, "another hetbatch"));
	hb_outset_abort(&a);
	assert_false(there("locked"));      /* abort: nothing published */
	assert_false(there("locked.lock"));
	assert_int_equal(hb_outset_begin(&b, dir, "test", 0, &err), 0);
	assert_int_equal(hb_outset_publish(&b, &err), 0);
	assert_true(there("locked/" HB_OUTSET_MANIFEST));
	assert_false(there("locked.lock"));
}

/* A killed writer's staging directory, its lock file and its temporaries
 * inside an owned set go with the next writer; a live writer's stay. */
static void test_stale(void **state)
{
	struct hb_error err = { 0 };
	char name[128], live[512];
	pid_t dead = dead_pid();

	(void)state;
	assert_int_equal(write_set("st", 0, &err, "a.csv", "a\n", NULL), 0);
	snprintf(name, sizeof(name), "st.tmp.%ld", (long)dead);
	path_of(live, sizeof(live), name);
	assert_int_equal(mkdir(live, 0777), 0);
	snprintf(name, sizeof(name), "st.tmp.%ld/results.db", (long)dead);
	put(name, "half");
	snprintf(name, sizeof(name), "st/results.db.tmp.%ld-journal", (long)dead);
	put(name, "half");
	snprintf(name, sizeof(name), "st.tmp.%ld", (long)getppid()); /* alive */
	path_of(live, sizeof(live), name);
	assert_int_equal(mkdir(live, 0777), 0);
	put("st.lock", "99999999\n"); /* a dead writer's lock file: not held */
	assert_int_equal(write_set("st", 0, &err, "b.csv", "b\n", NULL), 0);
	snprintf(name, sizeof(name), "st.tmp.%ld", (long)dead);
	assert_false(there(name));
	assert_true(hb_path_exists(live));
	assert_int_equal(count_entries("st"), 2); /* b.csv and the manifest */
	assert_false(there("st.lock"));
	rmdir(live);

	/* names */
	assert_int_equal(hb_tmp_name_pid("results.db.tmp.123", NULL), 123);
	assert_int_equal(hb_tmp_name_pid("results.db.tmp.123-wal", NULL), 123);
	assert_int_equal(hb_tmp_name_pid("sim-batch.tmp.77.png", NULL), 77);
	assert_int_equal(hb_tmp_name_pid("a.tmp.5", "a"), 5);
	assert_int_equal(hb_tmp_name_pid("ab.tmp.5", "a"), 0);
	assert_int_equal(hb_tmp_name_pid("a.tmp.5x", NULL), 0);
	assert_int_equal(hb_tmp_name_pid("a.tmp.", NULL), 0);
	assert_int_equal(hb_tmp_name_pid("a.tmp.0", NULL), 0);
	assert_int_equal(hb_tmp_name_pid("notes.txt", NULL), 0);
	assert_true(hb_pid_alive(getpid()));
	assert_false(hb_pid_alive(dead));

	/* hb_atomic_open removes a dead writer's temporary of the same file */
	snprintf(name, sizeof(name), "f.csv.tmp.%ld", (long)dead);
	put(name, "half");
	{
		char p[512];

		path_of(p, sizeof(p), "f.csv");
		assert_int_equal(hb_write_file_atomic(p, "x\n", 2, &err), 0);
	}
	assert_false(there(name));
}

/* The flag: set by SIGINT, SIGTERM or SIGHUP once caught; the error says which. */
static void test_interrupt_flag(void **state)
{
	struct hb_error err = { 0 };

	(void)state;
	assert_int_equal(hb_interrupted(), 0);
	assert_int_equal(hb_interrupt_catch(), 0);
	assert_int_equal(raise(SIGTERM), 0);
	assert_int_equal(hb_interrupted(), SIGTERM);
	assert_int_equal(hb_interrupt_error(&err, "sim"), -1);
	assert_int_equal(err.code, HB_EINTR);
	assert_string_equal(err.msg, "sim: interrupted by SIGTERM");
	assert_string_equal(hb_signal_name(SIGINT), "SIGINT");
	/* SIGHUP is caught as well, like SIGTERM (exit 129 in cli/) */
	assert_int_equal(raise(SIGHUP), 0);
	assert_int_equal(hb_interrupted(), SIGHUP);
	assert_int_equal(hb_interrupt_error(&err, "sweep"), -1);
	assert_string_equal(err.msg, "sweep: interrupted by SIGHUP");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replace_whole), cmocka_unit_test(test_refuse_foreign),
		cmocka_unit_test(test_lock),          cmocka_unit_test(test_stale),
		cmocka_unit_test(test_interrupt_flag),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
