"""policy: cluster arbiters written in Python, run by the C engine.

A subclass of hetbatch.Policy has the callbacks of the C arbiter table
(struct hb_arbiter_ops, include/hetbatch/policy.h; docs/policies.md):

    class LAS(hetbatch.Policy):
        name = "las-py"                   # as --policy names it
        agent = "fifo"                    # the built-in job agent its jobs run
        round_s = 300.0                   # seconds between on_round calls (0: none)
        def __init__(self, sim): ...      # init: once per run, every job added
        def on_arrival(self, sim, job):   # required
        def on_round(self, sim): ...

    hetbatch.register_policy(LAS)
    hetbatch.sim("demo", trace="t.csv", policies="las-py,tiresias")

register_policy builds the descriptor a plugin file exports (struct
hb_plugin) in memory, with a cffi callback for each method the class
defines, and hands it to the library (hetbatch_register_policies), which
checks it as it checks a --policy-plugin file.  A run makes one instance
of the class (its state, as init's is in C), passes it a Sim, and calls
its methods from the engine's thread with the GIL taken; an exception in a
method stops the run, and the hetbatch.Error that the call raises has it
as its __cause__.  Methods reach the engine only through Sim and Job,
whose calls are those of struct hb_policy_api.
"""
import traceback

from . import _capi
from ._capi import ffi

PENDING, RUNNING, RESTARTING, DONE, SUSPENDED, DROPPED = range(6)
API_VERSION = 1  # HB_POLICY_API_VERSION of include/hetbatch/policy.h
# enum hb_pknob_type and HB_PKNOB_SHARED_ONLY of the same header
_FLAG, _DOUBLE, _INT = 0, 3, 4
_SHARED_ONLY = 1

# Methods a subclass may define, and the C callback type of each.
_CALLBACKS = {
    "on_arrival": "int(struct hb_sim *, void *, struct hb_sim_job *, struct hb_error *)",
    "on_finish": "int(struct hb_sim *, void *, struct hb_sim_job *, struct hb_error *)",
    "on_release": "int(struct hb_sim *, void *, struct hb_sim_job *, struct hb_error *)",
    "on_requeue": "int(struct hb_sim *, void *, struct hb_sim_job *, struct hb_error *)",
    "on_round": "int(struct hb_sim *, void *, struct hb_error *)",
    "on_capacity": "int(struct hb_sim *, void *, struct hb_error *)",
    "on_revoke": "int(struct hb_sim *, void *, const int *, struct hb_error *)",
}


class Knob:
    """An option of a Python policy (struct hb_pknob): a `sim` option
    --NAME (the key of Policy.options), a results key and a sweep knob, as
    a built-in policy's options are.  The type is the default's: a float
    (a number in [min, max]), an int (an integer in [min, max]) or a bool
    (a flag given without a value).  The run's values are the instance's
    `opts` dict, by the same names, when __init__ runs."""

    def __init__(self, default, help, min=None, max=None, unit=None, key=None, sweep=None, metavar=None):
        if isinstance(default, bool):
            self.type = _FLAG
        elif isinstance(default, int):
            self.type = _INT
        elif isinstance(default, float):
            self.type = _DOUBLE
        else:
            raise TypeError("Knob: the default must be a float, an int or a bool, got %r" % (default,))
        if self.type != _FLAG and (min is None or max is None or not min <= default <= max):
            raise ValueError("Knob: a number needs min <= default <= max, got %r <= %r <= %r" % (min, default, max))
        self.default, self.help, self.min, self.max = default, help, min, max
        self.unit, self.key, self.sweep, self.metavar = unit, key, sweep, metavar


class EngineError(RuntimeError):
    """A call of Sim failed in the engine (its message is already the
    run's); letting it propagate stops the run with that message."""


class Job:
    """One job of the run, as struct hb_policy_api shows it.  id, name,
    arrival_s and gpus (its request, or the largest node's count) are fixed;
    state, held, attained_gpu_s and progress are read when asked."""
    __slots__ = ("_p", "_sim", "id", "name", "arrival_s", "gpus")

    def __init__(self, sim, p):
        api = sim._api
        self._p, self._sim = p, sim
        self.id = api.job_id(p)
        self.name = ffi.string(api.job_name(p)).decode()
        self.arrival_s = api.job_arrival_s(p)
        self.gpus = api.job_gpus(sim._p, p)

    @property
    def state(self):
        """PENDING, RUNNING, RESTARTING, DONE, SUSPENDED or DROPPED."""
        return self._sim._api.job_state(self._p)

    @property
    def holds(self):
        """Whether it holds GPUs now (RUNNING or RESTARTING)."""
        return self._sim._api.job_state(self._p) in (RUNNING, RESTARTING)

    @property
    def held(self):
        return self._sim._api.job_held(self._p)

    @property
    def attained_gpu_s(self):
        """GPU-seconds held so far, restarts included."""
        return self._sim._api.job_attained_gpu_s(self._sim._p, self._p)

    @property
    def progress(self):
        """Fraction of its training done, in [0, 1]."""
        return self._sim._api.job_progress(self._p)

    def __repr__(self):
        return "Job(%d, %r)" % (self.id, self.name)


class Sim:
    """The run a policy's callbacks act on: the cluster, the jobs, and the
    engine's services (place, start, regrant, drop, note).  GPU lists
    (grants) have one entry per node."""

    def __init__(self, api, p):
        self._api, self._p = api, p
        self._err = ffi.NULL  # the running callback's struct hb_error
        self.nnodes = api.nnodes(p)
        self.cluster_gpus = api.cluster_gpus(p)
        self.node_gpus = [api.node_gpus(p, i) for i in range(self.nnodes)]
        self._grant = ffi.new("int[]", max(self.nnodes, 1))
        self._none = ffi.new("int[]", max(self.nnodes, 1))
        self.jobs = [Job(self, api.job(p, i)) for i in range(api.njobs(p))]

    @property
    def now(self):
        """Simulated time, s."""
        return self._api.now(self._p)

    @property
    def online_gpus(self):
        """GPUs online now (the cluster's less what --capacity withdrew)."""
        return self._api.online_gpus(self._p)

    def node_free(self, node):
        return self._api.node_free(self._p, node)

    def job(self, id):
        return self.jobs[id]

    def place(self, n):
        """A gang placement of n free GPUs, fewest nodes first (a list,
        one entry per node), or None when n GPUs are not free."""
        if not self._api.place(self._p, int(n), self._grant):
            return None
        return list(self._grant[0:self.nnodes])

    def _check(self, rc):
        if rc < 0:
            raise EngineError("the engine refused the call (the run's error says why)")

    def _grant_of(self, grant):
        if len(grant) != self.nnodes:
            raise ValueError("a grant has one entry per node (%d), got %d" % (self.nnodes, len(grant)))
        for i, g in enumerate(grant):
            self._grant[i] = g
        return self._grant

    def start(self, job, grant):
        """Start a PENDING job on grant (GPUs per node, all free)."""
        self._check(self._api.start_job(self._p, job._p, self._grant_of(grant), self._err))

    def regrant(self, job, grant):
        """Change a started job's grant (charged as a restart); all zeros
        suspends it, a grant on a suspended job resumes it."""
        self._check(self._api.regrant(self._p, job._p, self._grant_of(grant), self._err))

    def suspend(self, job):
        self._check(self._api.regrant(self._p, job._p, self._none, self._err))

    def drop(self, job, why):
        """Reject a PENDING job that has arrived: it never runs."""
        self._check(self._api.drop_job(self._p, job._p, str(why).encode(), self._err))

    def note(self, job, kind, text):
        """Record an event of job (None: the cluster) in the results."""
        self._api.note(self._p, ffi.NULL if job is None else job._p, str(kind).encode(), str(text).encode())


class Policy:
    """Base class of a Python policy; see the module's documentation.
    Attributes: name (required), summary, agent (the built-in policy whose
    job agent runs: "fifo" keeps each job's GPUs and batch, "pollux" tunes
    its batch), round_s, no_capacity (why it cannot run with --capacity,
    or None), options ({"NAME": Knob(...)}: its `sim --NAME` options; a
    run's values are self.opts).  Define on_arrival(sim, job) and any of on_finish,
    on_round(sim), on_release, on_requeue, on_capacity(sim),
    on_revoke(sim, need)."""
    name = None
    summary = ""
    agent = "fifo"
    round_s = 0.0
    no_capacity = None
    options = {}  # option name ("las-py-round") -> Knob
    opts = {}     # the run's option values, by the same names (set before __init__)

    def __init__(self, sim):
        pass


class _Registration:
    """A class's descriptor and everything it points to, kept alive while
    the library holds it."""

    def __init__(self, cls):
        self.cls = cls
        self.runs = {}  # address -> handle of each live run (kept alive until free)
        self.keep = []
        api_slot = ffi.new("const struct hb_policy_api *[1]")
        self.api_slot = api_slot
        ops = ffi.new("struct hb_arbiter_ops *")
        name = self._str(cls.name)
        ops.name = name
        ops.summary = self._str(cls.summary or cls.name)
        ops.init = self._cb("int(struct hb_sim *, const void *, void **, struct hb_error *)", self._init)
        ops.free = self._cb("void(void *)", self._free)
        ops.round_s = self._cb("double(const struct hb_sim *, const void *)", self._round_s)
        for meth, ctype in _CALLBACKS.items():
            if callable(getattr(cls, meth, None)):
                setattr(ops, meth, self._cb(ctype, self._method(meth)))
        if cls.no_capacity:
            ops.no_capacity = self._str(cls.no_capacity)
        pols = ffi.new("struct hb_plugin_policy[2]")
        pols[0].name = name
        pols[0].summary = self._str(cls.summary or "%s (Python)" % cls.name)
        pols[0].agent_of = self._str(cls.agent)
        pols[0].arbiter = ops
        pols[0].options = self._options(cls.options or {})
        self.desc = ffi.new("struct hb_plugin *")
        self.desc.api_version = API_VERSION
        self.desc.name = self._str("python:" + cls.__qualname__)
        self.desc.policies = pols
        self.desc.api = api_slot
        self.keep += [ops, pols]
        self.origin = "python:%s.%s" % (cls.__module__, cls.__qualname__)

    def _options(self, options):
        """The knob table of options: each value in an 8-byte slot of the
        options struct (a double, or an int), in the dict's order.  Classes
        that share one options dict (a subclass that inherits it) share its
        table, as C policies of one arbiter share theirs, so their options
        do not clash."""
        if not options:
            return ffi.NULL
        if id(options) in _tables and _tables[id(options)][0] is options:
            _, table, self.knobs = _tables[id(options)]
            return table
        n = len(options)
        keep = []

        def cstr(text):
            c = ffi.new("char[]", str(text).encode())
            keep.append(c)
            return c

        knobs = ffi.new("struct hb_pknob[]", n + 1)
        defaults = ffi.new("char[]", 8 * n)
        self.knobs = []  # (name, type, offset)
        for i, (name, k) in enumerate(options.items()):
            if not isinstance(k, Knob):
                raise _capi.InputError("register_policy: %s.options[%r] is not a hetbatch.Knob" % (
                    self.cls.__qualname__, name), 2)
            kn = knobs[i]
            kn.name = cstr(name)
            under = name.replace("-", "_")
            kn.key = cstr(k.key or (under + ("_" + k.unit if k.unit else "")))
            kn.sweep = cstr(k.sweep or under)
            kn.type, kn.offset = k.type, 8 * i
            kn.help = cstr(k.help)
            kn.flags = _SHARED_ONLY  # an arbiter's option means something only in a trace replay
            if k.type == _DOUBLE:
                ffi.cast("double *", defaults + 8 * i)[0] = k.default
            else:
                ffi.cast("int *", defaults + 8 * i)[0] = int(k.default)
            if k.type != _FLAG:
                kn.min, kn.max = k.min, k.max
                kn.metavar = cstr(k.metavar or ("S" if k.unit == "s" else "N"))
                if k.unit:
                    kn.unit = cstr(k.unit)
            self.knobs.append((name, k.type, 8 * i))
        table = ffi.new("struct hb_pknob_table *")
        table.knobs, table.size, table.defaults = knobs, 8 * n, defaults
        keep += [knobs, defaults, table]
        _tables[id(options)] = (options, table, self.knobs)  # for the process: a registered policy may hold it
        _keep_tables.append(keep)
        return table

    def _values(self, opts):
        """The run's option values from its options struct (NULL: defaults)."""
        if not getattr(self, "knobs", None):
            return {}
        base = ffi.cast("char *", opts)
        out = {}
        for name, typ, off in self.knobs:
            if opts == ffi.NULL:
                out[name] = self.cls.options[name].default
            elif typ == _DOUBLE:
                out[name] = ffi.cast("double *", base + off)[0]
            else:
                v = ffi.cast("int *", base + off)[0]
                out[name] = bool(v) if typ == _FLAG else v
        return out

    def _str(self, s):
        c = ffi.new("char[]", str(s).encode())
        self.keep.append(c)
        return c

    def _cb(self, ctype, fn):
        c = ffi.callback(ctype, fn)
        self.keep.append(c)
        return c

    def _fail(self, err, where, exc):
        """Stop the run: the exception becomes the run's message and the
        raised Error's __cause__."""
        if isinstance(exc, EngineError):
            return -1  # the engine filled err
        _capi.pending_causes.append(exc)
        line = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return self.api_slot[0].error(err, ("%s: %s: %s" % (self.cls.name, where, line)).encode())

    def _init(self, sim_p, opts, state, err):
        try:
            sim = Sim(self.api_slot[0], sim_p)
            sim._err = err
            pol = self.cls.__new__(self.cls)
            pol.opts = self._values(opts)
            pol.__init__(sim)
            if not isinstance(pol.round_s, (int, float)) or not pol.round_s >= 0:
                raise ValueError("round_s must be a number of seconds >= 0, got %r" % (pol.round_s,))
            run = (pol, sim)
        except BaseException as e:  # noqa: B036 (KeyboardInterrupt too stops the run, with a message)
            state[0] = ffi.NULL
            return self._fail(err, "__init__", e)
        h = ffi.new_handle(run)
        self.runs[int(ffi.cast("uintptr_t", h))] = h
        state[0] = h
        return 0

    def _free(self, state):
        self.runs.pop(int(ffi.cast("uintptr_t", state)), None)

    def _round_s(self, sim_p, state):
        return float(ffi.from_handle(state)[0].round_s)  # checked by _init

    def _method(self, meth):
        """The C callback of method meth: its arguments after (sim, state)
        and before err made Python's, the method called, 0, or -1 with
        the exception as the run's error."""
        if meth == "on_revoke":
            def args(sim, need):
                return (list(need[0:sim.nnodes]),)
        elif meth in ("on_round", "on_capacity"):
            def args(sim):
                return ()
        else:
            def args(sim, job_p):
                return (sim.jobs[sim._api.job_id(job_p)],)

        def cb(sim_p, state, *rest):
            pol, sim = ffi.from_handle(state)
            err = sim._err = rest[-1]
            try:
                getattr(pol, meth)(sim, *args(sim, *rest[:-1]))
                return 0
            except BaseException as e:  # noqa: B036 (KeyboardInterrupt too stops the run, with a message)
                return self._fail(err, meth, e)

        return cb


_registered = {}  # policy name -> _Registration
_tables = {}      # id(options dict) -> (the dict, its knob table, its slots)
_keep_tables = []  # what those tables point to


def register_policy(cls):
    """Register a hetbatch.Policy subclass: its name joins --policy's for
    every later call (sim, sweep) until unregister_policy.  Registering a
    class of a name registered from Python before replaces that one (a
    notebook's cell run again).  Returns cls, so it serves as a decorator.
    Raises hetbatch.InputError as a --policy-plugin file's faults do (a
    name taken by a built-in, an unknown agent, no on_arrival)."""
    if not (isinstance(cls, type) and issubclass(cls, Policy)):
        raise _capi.InputError("register_policy: %r is not a subclass of hetbatch.Policy" % (cls,), 2)
    if not cls.name:
        raise _capi.InputError("register_policy: %s has no name" % cls.__qualname__, 2)
    if not callable(getattr(cls, "on_arrival", None)):
        raise _capi.InputError("register_policy: %s has no on_arrival(sim, job) method" % cls.__qualname__, 2)
    if cls.name in _registered:
        unregister_policy(cls.name)
    reg = _Registration(cls)
    _capi.call("hetbatch_register_policies", reg.desc, reg.origin)
    _registered[cls.name] = reg
    return cls


def unregister_policy(name):
    """Drop a policy that register_policy registered."""
    reg = _registered.pop(name, None)
    if reg is None:
        raise _capi.InputError("unregister_policy: no Python policy named %r" % name, 2)
    _capi.call("hetbatch_unregister_policies", reg.desc)
