"""_capi: the C API of api/hetbatch.h through cffi (ABI mode).

cffi releases the GIL around every call into the library, so a simulation
run from one thread leaves the interpreter to the others.  The library
serialises its own calls (a mutex: the commands share stdio), so two
threads calling hetbatch at once take turns.  The declarations below are
those of api/hetbatch.h; python/tests/test_capi.py checks that they stay
so.
"""
import os
import threading

import cffi

CDEF = """
#define HETBATCH_OK 0
#define HETBATCH_ERR -1
#define HETBATCH_ERUNTIME 1
#define HETBATCH_EINPUT 2
#define HETBATCH_EINTR 3
typedef struct hetbatch hetbatch;
hetbatch *hetbatch_open(void);
void hetbatch_close(hetbatch *h);
const char *hetbatch_version(void);
int hetbatch_set_seed(hetbatch *h, long seed);
const char *hetbatch_errmsg(const hetbatch *h);
int hetbatch_errcode(const hetbatch *h);
const char *hetbatch_output(const hetbatch *h);
size_t hetbatch_output_len(const hetbatch *h);
const char *hetbatch_log(const hetbatch *h);
int hetbatch_catalog(hetbatch *h, const char *kind, const char *name);
int hetbatch_plan(hetbatch *h, const char *cluster, const char *model, long gbs, const char *const *opts);
int hetbatch_sim_job(hetbatch *h, const char *cluster, const char *models, const char *policies, const char *out,
                     const char *const *opts);
int hetbatch_sim_trace(hetbatch *h, const char *cluster, const char *trace, const char *policies, const char *out,
                       const char *const *opts);
int hetbatch_sweep(hetbatch *h, const char *config, const char *out, const char *const *opts);
int hetbatch_results(hetbatch *h, const char *dir);
int hetbatch_command(hetbatch *h, const char *const *argv);
struct hb_plugin;
int hetbatch_register_policies(hetbatch *h, const struct hb_plugin *pl, const char *origin);
int hetbatch_unregister_policies(hetbatch *h, const struct hb_plugin *pl);
"""

# include/hetbatch/policy.h, version 1: what a Python policy (policy.py)
# fills and calls.  python/tests/test_capi.py checks the fields against the
# header.
POLICY_CDEF = """
struct hb_sim;
struct hb_sim_job;
struct hb_error;
struct hb_pknob {
    const char *name;
    const char *key;
    const char *sweep;
    int type;
    size_t offset;
    double min, max;
    const char *unit;
    const char *what;
    const char *const *words;
    const char *metavar;
    const char *help;
    unsigned flags;
};
struct hb_pknob_table {
    const struct hb_pknob *knobs;
    size_t size;
    const void *defaults;
};
struct hb_arbiter_ops {
    const char *name;
    const char *summary;
    int (*init)(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err);
    void (*free)(void *state);
    int (*on_arrival)(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err);
    int (*on_finish)(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err);
    double (*round_s)(const struct hb_sim *sim, const void *state);
    int (*on_round)(struct hb_sim *sim, void *state, struct hb_error *err);
    void (*offer)(const struct hb_sim *sim, const void *state, const struct hb_sim_job *job, int *offer,
                  int *max_gpus);
    int (*on_release)(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err);
    int (*on_revoke)(struct hb_sim *sim, void *state, const int *need, struct hb_error *err);
    int (*on_requeue)(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err);
    int (*on_capacity)(struct hb_sim *sim, void *state, struct hb_error *err);
    const char *no_capacity;
};
struct hb_plugin_policy {
    const char *name;
    const char *summary;
    const char *agent_of;
    const struct hb_arbiter_ops *arbiter;
    const struct hb_pknob_table *options;
};
struct hb_policy_api;
struct hb_plugin {
    int api_version;
    const char *name;
    const struct hb_plugin_policy *policies;
    const struct hb_policy_api **api;
};
struct hb_policy_api {
    int version;
    double (*now)(const struct hb_sim *sim);
    int (*nnodes)(const struct hb_sim *sim);
    int (*node_gpus)(const struct hb_sim *sim, int node);
    int (*node_free)(const struct hb_sim *sim, int node);
    int (*cluster_gpus)(const struct hb_sim *sim);
    int (*online_gpus)(const struct hb_sim *sim);
    int (*njobs)(const struct hb_sim *sim);
    struct hb_sim_job *(*job)(struct hb_sim *sim, int id);
    int (*job_id)(const struct hb_sim_job *job);
    const char *(*job_name)(const struct hb_sim_job *job);
    int (*job_state)(const struct hb_sim_job *job);
    double (*job_arrival_s)(const struct hb_sim_job *job);
    int (*job_gpus)(const struct hb_sim *sim, const struct hb_sim_job *job);
    int (*job_held)(const struct hb_sim_job *job);
    double (*job_attained_gpu_s)(const struct hb_sim *sim, const struct hb_sim_job *job);
    double (*job_progress)(const struct hb_sim_job *job);
    int (*place)(const struct hb_sim *sim, int n, int *grant);
    int (*start_job)(struct hb_sim *sim, struct hb_sim_job *job, const int *grant, struct hb_error *err);
    int (*regrant)(struct hb_sim *sim, struct hb_sim_job *job, const int *grant, struct hb_error *err);
    int (*drop_job)(struct hb_sim *sim, struct hb_sim_job *job, const char *why, struct hb_error *err);
    void (*note)(struct hb_sim *sim, const struct hb_sim_job *job, const char *kind, const char *text);
    int (*error)(struct hb_error *err, const char *msg);
};
"""

ffi = cffi.FFI()
ffi.cdef(CDEF.replace("struct hb_plugin;\n", "") + POLICY_CDEF)


def _library_path():
    """The shared object installed beside this file, or $HETBATCH_LIBRARY
    (a libhetbatch.so built elsewhere, for working on the package)."""
    path = os.environ.get("HETBATCH_LIBRARY")
    if path:
        return path
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libhetbatch.so")


def _load():
    path = _library_path()
    if not os.path.exists(path):
        raise ImportError(
            "hetbatch: %s is missing: this is the source folder python/hetbatch, not the installed package "
            "(pip install ./python, then run Python outside python/), or set $HETBATCH_LIBRARY" % path)
    return ffi.dlopen(path)


lib = _load()


class Error(Exception):
    """A hetbatch call failed: str(e) is hetbatch's message (what the
    command prints after "hetbatch: error: "); e.code is 1 (the work
    failed), 2 (bad input: fix it and retry); e.log what it printed before."""

    def __init__(self, message, code=1, log=""):
        super().__init__(message)
        self.message = message
        self.code = code
        self.log = log


class InputError(Error, ValueError):
    """Bad options or input data (code 2); also a ValueError."""


_tls = threading.local()

# Exceptions raised by Python policies' methods during the running call
# (policy.py): the call's Error is raised from the first.  The library
# runs one call at a time, so one list serves every thread.
pending_causes = []


def _handle():
    """One C session per Python thread: a handle's output and message are
    the last call's, so threads must not share one."""
    h = getattr(_tls, "handle", None)
    if h is None:
        raw = lib.hetbatch_open()
        if raw == ffi.NULL:
            raise MemoryError("hetbatch_open: out of memory")
        h = ffi.gc(raw, lib.hetbatch_close)
        _tls.handle = h
    return h


def _strings(words):
    """A NULL-terminated char *[] for words (kept alive by the returned
    tuple's first element), or NULL for no words."""
    if not words:
        return (None, ffi.NULL)
    keep = [ffi.new("char[]", str(w).encode()) for w in words]
    arr = ffi.new("const char *[]", keep + [ffi.NULL])
    return (keep, arr)


def _cstr(s):
    return ffi.NULL if s is None else s if isinstance(s, ffi.CData) else str(s).encode()


# Calls whose last argument is not an opts array.
_NO_OPTS = ("hetbatch_catalog", "hetbatch_results", "hetbatch_register_policies", "hetbatch_unregister_policies")


def call(fn_name, *args, opts=None, seed=None):
    """Run lib.FN(handle, *args, opts): the output text, or Error."""
    h = _handle()
    if seed is not None:
        if lib.hetbatch_set_seed(h, int(seed)) != 0:
            raise InputError(ffi.string(lib.hetbatch_errmsg(h)).decode(), 2)
    keep, arr = _strings(opts)
    cargs = [_cstr(a) if not isinstance(a, int) else a for a in args]
    fn = getattr(lib, fn_name)
    del pending_causes[:]
    if opts is None and fn_name in _NO_OPTS:
        rc = fn(h, *cargs)
    else:
        rc = fn(h, *cargs, arr)
    if seed is not None:
        lib.hetbatch_set_seed(h, 1)
    del keep
    log = ffi.string(lib.hetbatch_log(h)).decode(errors="replace")
    if rc != 0:
        code = lib.hetbatch_errcode(h)
        msg = ffi.string(lib.hetbatch_errmsg(h)).decode(errors="replace")
        cause = pending_causes[0] if pending_causes else None
        del pending_causes[:]
        if code == lib.HETBATCH_EINTR:
            raise KeyboardInterrupt(msg)
        raise (InputError if code == lib.HETBATCH_EINPUT else Error)(msg, code, log) from cause
    n = lib.hetbatch_output_len(h)
    return ffi.unpack(lib.hetbatch_output(h), n).decode(errors="replace"), log


def version():
    return ffi.string(lib.hetbatch_version()).decode()


# They are hetbatch.Error and hetbatch.InputError to their users.
Error.__module__ = InputError.__module__ = "hetbatch"
