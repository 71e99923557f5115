/*
 * capture.c: stdout and stderr of one embedded call, into memory
 * (capture.h says why assigning the stream variables is the way).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"

static const int caught_signals[3] = { SIGINT, SIGTERM, SIGHUP };

void hb_capture_free(struct hb_capture *cap)
{
	free(cap->out);
	free(cap->err);
	cap->out = cap->err = NULL;
	cap->out_len = cap->err_len = 0;
}

int hb_capture_begin(struct hb_capture *cap, struct hb_signals *sig, struct hb_error *err)
{
	hb_capture_free(cap);
	cap->fout = open_memstream(&cap->out, &cap->out_len);
	cap->ferr = cap->fout ? open_memstream(&cap->err, &cap->err_len) : NULL;
	if (!cap->ferr) {
		int e = errno;

		if (cap->fout)
			fclose(cap->fout);
		hb_capture_free(cap);
		return hb_runtime_error(err, "cannot catch the command's output: %s", strerror(e));
	}
	for (int i = 0; i < 3; i++)
		sigaction(caught_signals[i], NULL, &sig->old[i]);
	/* what the caller buffered goes out first, where it was meant to */
	fflush(stdout);
	fflush(stderr);
	cap->saved_out = stdout;
	cap->saved_err = stderr;
	stdout = cap->fout;
	stderr = cap->ferr;
	return 0;
}

void hb_capture_end(struct hb_capture *cap, const struct hb_signals *sig)
{
	stdout = cap->saved_out;
	stderr = cap->saved_err;
	/* fclose sets out/err and their lengths to the final buffers */
	fclose(cap->fout);
	fclose(cap->ferr);
	cap->fout = cap->ferr = NULL;
	for (int i = 0; i < 3; i++)
		sigaction(caught_signals[i], &sig->old[i], NULL);
}

int hb_capture_set_output(struct hb_capture *cap, const char *text, struct hb_error *err)
{
	hb_capture_free(cap);
	cap->out = strdup(text);
	if (!cap->out)
		return hb_runtime_error(err, "out of memory");
	cap->out_len = strlen(text);
	return 0;
}
