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
"""

ffi = cffi.FFI()
ffi.cdef(CDEF)


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
    return ffi.NULL if s is None else str(s).encode()


def call(fn_name, *args, opts=None, seed=None):
    """Run lib.FN(handle, *args, opts): the output text, or Error."""
    h = _handle()
    if seed is not None:
        if lib.hetbatch_set_seed(h, int(seed)) != 0:
            raise InputError(ffi.string(lib.hetbatch_errmsg(h)).decode(), 2)
    keep, arr = _strings(opts)
    cargs = [_cstr(a) if not isinstance(a, int) else a for a in args]
    fn = getattr(lib, fn_name)
    if opts is None and fn_name in ("hetbatch_catalog", "hetbatch_results"):
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
        if code == lib.HETBATCH_EINTR:
            raise KeyboardInterrupt(msg)
        raise (InputError if code == lib.HETBATCH_EINPUT else Error)(msg, code, log)
    n = lib.hetbatch_output_len(h)
    return ffi.unpack(lib.hetbatch_output(h), n).decode(errors="replace"), log


def version():
    return ffi.string(lib.hetbatch_version()).decode()
