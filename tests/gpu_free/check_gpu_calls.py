#!/usr/bin/env python3
"""check_gpu_calls.py: every CUDA, CUPTI, NCCL and cuBLAS call's result is used.

The GPU paths have never run on a GPU (issue 45), so an error they drop is
an error nobody will see on the first run: a failed cudaSetDevice makes the
next call act on the wrong device, a failed flush makes a trace look
complete.  This checker finds every call of a function named cuda*, cu*,
cupti*, nccl* or cublas* (a capital letter after the prefix, so the
project's own cuda_fail() or cupti_error() are not taken for the library's),
of the project's launchers hbk_* (they return the launch's cudaError_t), and
of the lazily loaded cuBLAS table (cublas_lazy.h: `cb->create(...)`,
`s->cb->sgemm(...)`), and reports those whose result is discarded: the call
is the whole expression statement.  A call inside a condition, an
assignment, a return, another call's arguments or a macro's (CUDA_TRY) is
checked.

Escape: `(void)cudaFree(p);` with a comment on the same line or the line
above saying why the result may be ignored (teardown, clearing the last
error).  Escapes are listed in the output; one without a comment fails.

Limits, by design: a token-level scan, not a C parser.  Preprocessor lines
are skipped (a macro's body is checked where it is used), as are calls
through other function pointers.  A call that is one operand of a comma
expression statement would be missed; the profiler has none.

usage: check_gpu_calls.py [--root DIR] [--list] [FILE...]
  --root DIR   the repository (default: the one holding this file); without
               FILEs the profiler's GPU sources are checked: profiler/*cuda*,
               kernels.cu, allreduce_nccl.c, cupti.c, inject.c, cublas_lazy.c
               (a named one that is missing fails: it was renamed)
  --list       also list every call seen, with its line and how it is used
  --self-test  check the checker on C snippets (unchecked calls reported,
               checked forms and commented escapes not)
Exit status: 0 every call checked, 1 an unchecked call or an unexplained
escape, 2 usage error or a missing file.
"""
import glob
import os
import re
import sys
import tempfile

# The library prefixes: cudaMalloc, cuInit, cuptiActivityEnable, ncclAllReduce,
# cublasSgemm; the project's launchers hbk_fill ... (kernels.h).
GPU_NAME = re.compile(r"^(?:cuda|cu|cupti|nccl|cublas)[A-Z]\w*$|^hbk_\w+$")
# The cuBLAS entry points are reached through struct hb_cublas pointers,
# which device_cuda.c names cb (a local, or struct hb_stream's field).
TABLE_NAMES = {"cb"}
NAMED = ["kernels.cu", "allreduce_nccl.c", "cupti.c", "inject.c", "cublas_lazy.c"]
CONTROL = {"if", "while", "for", "switch"}

TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+) | (?P<nl>\n)
  | (?P<lcom>//[^\n]*) | (?P<bcom>/\*.*?\*/)
  | (?P<str>"(?:\\.|[^"\\\n])*") | (?P<chr>'(?:\\.|[^'\\\n])*')
  | (?P<id>[A-Za-z_]\w*) | (?P<num>\.?\d[\w.]*)
  | (?P<op>->|::|\.\.\.|<<|>>|&&|\|\||[-+*/%=!<>&|^]=|\+\+|--|.)
""", re.S | re.X)


class Tok:
    __slots__ = ("kind", "text", "line")

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line

    def __repr__(self):
        return "%s@%d" % (self.text, self.line)


def tokenize(src):
    """Tokens without comments and preprocessor lines; the set of lines
    that carry (part of) a comment; the comments as (first, last line, text)."""
    toks, comment_lines, comments = [], set(), []
    line, bol = 1, True  # bol: only blanks since the start of the line
    pos = 0
    while pos < len(src):
        if bol:
            m = re.match(r"[ \t]*#", src[pos:pos + 200])
            if m:  # a directive, with its continuation lines
                end = pos
                while True:
                    nl = src.find("\n", end)
                    if nl < 0:
                        end = len(src)
                        break
                    if src[nl - 1] != "\\":
                        end = nl
                        break
                    line += 1
                    end = nl + 1
                pos = end
                continue
        m = TOKEN.match(src, pos)
        kind, text = m.lastgroup, m.group()
        pos = m.end()
        if kind == "nl":
            line += 1
            bol = True
            continue
        if kind == "ws":
            continue
        if kind in ("lcom", "bcom"):
            comment_lines.update(range(line, line + text.count("\n") + 1))
            comments.append((line, line + text.count("\n"), text))
            line += text.count("\n")
            continue
        bol = False
        toks.append(Tok("str" if kind in ("str", "chr") else kind, text, line))
    return toks, comment_lines, comments


def statements(toks):
    """Split at ';', '{' and '}' outside parentheses and brackets."""
    out, cur, depth = [], [], 0
    for t in toks:
        if t.text in "([":
            depth += 1
        elif t.text in ")]":
            depth -= 1
        if depth == 0 and t.text in (";", "{", "}"):
            if cur:
                out.append(cur)
            cur = []
            continue
        cur.append(t)
    if cur:
        out.append(cur)
    return out


def close_paren(s, i):
    """Index of the ')' matching the '(' at s[i]."""
    depth = 0
    for j in range(i, len(s)):
        if s[j].text == "(":
            depth += 1
        elif s[j].text == ")":
            depth -= 1
            if depth == 0:
                return j
    return len(s) - 1


def strip_heads(s):
    """The statement without its control headers and labels."""
    while s:
        t = s[0].text
        if t in ("else", "do"):
            s = s[1:]
        elif t in CONTROL and len(s) > 1 and s[1].text == "(":
            s = s[close_paren(s, 1) + 1:]
        elif t in ("case", "default"):
            k = next((i for i, x in enumerate(s) if x.text == ":"), None)
            if k is None:
                return s
            s = s[k + 1:]
        elif s[0].kind == "id" and len(s) > 1 and s[1].text == ":":
            s = s[2:]  # a goto label
        else:
            return s
    return s


def call_at(s, i):
    """The GPU call whose name is s[i] (followed by '('), or None: its name
    and the index where the callee expression starts."""
    t = s[i]
    if t.kind != "id" or i + 1 >= len(s) or s[i + 1].text != "(":
        return None
    prev = s[i - 1] if i > 0 else None
    if prev is not None and prev.text in ("->", "."):
        # a member call: the table's, when the pointer is named cb
        if i >= 2 and s[i - 2].text in TABLE_NAMES:
            k = i - 2
            while k >= 2 and s[k - 1].text in ("->", ".") and s[k - 2].kind == "id":
                k -= 2
            return ("cublas table " + t.text, k)
        return None
    if not GPU_NAME.match(t.text):
        return None
    # a declaration or definition (a type right before the name) is no call
    if prev is not None and (prev.kind == "id" and prev.text not in ("return", "else", "do", "case")
                             or prev.text == "*"):
        return None
    return (t.text, i)


def check_file(path, display):
    with open(path, encoding="utf-8", errors="replace") as f:
        src = f.read()
    toks, comment_lines, comments = tokenize(src)
    calls, unchecked, escapes, unexplained = [], [], [], []
    for s in statements(toks):
        body = strip_heads(s)
        for i in range(len(s)):
            c = call_at(s, i)
            if not c:
                continue
            name, start = c
            end = close_paren(s, i + 1)
            use = "checked"
            # the whole statement is this call: its value is discarded
            if body and body[0] is s[start] and end == len(s) - 1:
                use = "unchecked"
            elif (len(body) >= 3 and [x.text for x in body[:3]] == ["(", "void", ")"]
                  and body[3] is s[start] and end == len(s) - 1):
                lines = range(body[0].line - 1, s[end].line + 1)
                use = "escape" if any(n in comment_lines for n in lines) else "unexplained"
            calls.append((s[i].line, name, use))
            if use == "unchecked":
                unchecked.append((s[i].line, name))
            elif use == "escape":
                escapes.append((s[i].line, name, comment_near(comments, body[0].line, s[end].line)))
            elif use == "unexplained":
                unexplained.append((s[i].line, name))
    return {"file": display, "calls": calls, "unchecked": unchecked, "escapes": escapes,
            "unexplained": unexplained}


def comment_near(comments, first, last):
    """The comment on the statement's lines, else the one ending on the line
    above, squeezed onto one line for the escape list."""
    near = [c for c in comments if c[0] <= last and c[1] >= first] or \
        [c for c in comments if c[1] == first - 1]
    if not near:
        return ""
    text = re.sub(r"^/[/*]|\*/$", "", near[-1][2])
    return " ".join(re.sub(r"^\s*\*(?!/)", "", l).strip() for l in text.split("\n")).strip()


def default_files(root):
    prof = os.path.join(root, "profiler")
    files = sorted(set(glob.glob(os.path.join(prof, "*cuda*"))))
    missing = []
    if not files:
        missing.append("profiler/*cuda*")
    for n in NAMED:
        p = os.path.join(prof, n)
        if os.path.exists(p):
            if p not in files:
                files.append(p)
        else:
            missing.append("profiler/" + n)
    return files, missing


def report(results, listing, out=sys.stdout):
    bad = 0
    w = out.write
    w("%-28s %6s %8s %8s %10s\n" % ("file", "calls", "checked", "escapes", "unchecked"))
    for r in results:
        n_checked = sum(1 for c in r["calls"] if c[2] == "checked")
        w("%-28s %6d %8d %8d %10d\n" % (r["file"], len(r["calls"]), n_checked, len(r["escapes"]),
                                          len(r["unchecked"]) + len(r["unexplained"])))
    for r in results:
        for line, name in r["unchecked"]:
            w("%s:%d: %s: result discarded (check it, or write (void)%s(...) with a comment saying why)\n"
              % (r["file"], line, name, name.split()[-1]))
            bad += 1
        for line, name in r["unexplained"]:
            w("%s:%d: %s: (void) escape without a comment on its line or the line above saying why\n"
              % (r["file"], line, name))
            bad += 1
    w("escapes (results ignored on purpose):\n")
    for r in results:
        for line, name, why in r["escapes"]:
            w("  %s:%d: %s: %s\n" % (r["file"], line, name, why))
    if listing:
        for r in results:
            for line, name, use in r["calls"]:
                w("  %s:%d: %s %s\n" % (r["file"], line, name, use))
    return bad


SELF_TEST_SRC = r'''
#define CUDA_TRY(call, what) do { cudaError_t rc_ = (call); if (rc_) return -1; } while (0)
#define NOT_A_STATEMENT cudaFree(p)
static int ok(void *p, struct hb_stream *s, const struct hb_cublas *cb)
{
	cudaError_t e;
	int n;

	if (cudaSetDevice(0) != cudaSuccess)
		return -1;
	e = cudaMalloc(&p, 16);
	CUDA_TRY(cudaMemset(p, 0, 16), "cudaMemset");
	if ((e = cudaDeviceSynchronize()) != cudaSuccess || cb->create(&s->blas) != 0)
		return e;
	n = ncclGroupEnd() == ncclSuccess ? hbk_fill(s->s, p, 4, 0) : 0;
	(void)cudaFree(p);  /* teardown: nothing to report to */
	/* clearing the last error: its value is the error just reported */
	(void)cudaGetLastError();
	printf("%s\n", cudaGetErrorString(e));  /* an argument: used */
	return cudaStreamSynchronize(s->s);
}
cudaError_t hbk_fill(cudaStream_t s, float *y, long n, float a)
{
	return n > 0 ? launch(s, 1, k_fill, y, n, a) : cudaSuccess;
}
static void bad(void *bad1, struct hb_stream *s, const struct hb_cublas *cb, int x)
{
	cudaMemcpy(bad1, bad1, 4, cudaMemcpyDeviceToDevice);
	if (x)
		ncclAllReduce(bad1, bad1, 1, ncclFloat, ncclSum, comm, stream);
	else
		cuptiActivityFlushAll(0);
	s->cb->destroy(s->blas);
	for (int i = 0; i < x; i++) cudaEventDestroy(ev[i]);
	switch (x) { case 1: cuInit(0); break; default: hbk_scale(s->s, bad1, 1, 2); }
	(void)cudaFree(bad1);
out:
	cudaStreamDestroy(s->s);
}
'''
# the calls of bad() the self-test must report, in order, and nothing else
SELF_TEST_UNCHECKED = ["cudaMemcpy", "ncclAllReduce", "cuptiActivityFlushAll", "cublas table destroy",
                       "cudaEventDestroy", "cuInit", "hbk_scale", "cudaStreamDestroy"]


def self_test():
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "snippet.c")
        with open(p, "w") as f:
            f.write(SELF_TEST_SRC)
        r = check_file(p, "snippet.c")
    lines = SELF_TEST_SRC.split("\n")
    fails = []
    got = [name for _, name in r["unchecked"]]
    if got != SELF_TEST_UNCHECKED:
        fails.append("unchecked calls: got %s, want %s" % (got, SELF_TEST_UNCHECKED))
    first_bad = next(i for i, l in enumerate(lines, 1) if l.startswith("static void bad"))
    if any(line < first_bad for line, _ in r["unchecked"]):
        fails.append("a checked form in ok() was reported: %s" % r["unchecked"])
    if [n for _, n in r["unexplained"]] != ["cudaFree"]:
        fails.append("the uncommented (void)cudaFree(bad1) not reported: %s" % r["unexplained"])
    if sorted(n for _, n, _ in r["escapes"]) != ["cudaFree", "cudaGetLastError"]:
        fails.append("commented escapes: got %s" % r["escapes"])
    names = [n for _, n, _ in r["calls"]]
    if "hbk_fill" in names and names.count("hbk_fill") != 1:
        fails.append("hbk_fill's definition taken for a call: %s" % names)
    if "cudaFree" in names and names.count("cudaFree") != 2:
        fails.append("a call in a #define was counted, or one was missed: %s" % names)
    for f in fails:
        print("self-test: " + f)
    if not fails:
        print("self-test: %d unchecked calls, 1 unexplained escape and 2 escapes found as expected; "
              "%d calls seen" % (len(r["unchecked"]), len(r["calls"])))
    return 1 if fails else 0


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    listing, files = False, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--root" and i + 1 < len(argv):
            root = argv[i + 1]
            i += 1
        elif a == "--list":
            listing = True
        elif a == "--self-test":
            return self_test()
        elif a in ("-h", "--help"):
            print(__doc__.split("usage:")[1].strip())
            return 0
        elif a.startswith("-"):
            print("check_gpu_calls.py: unknown option %s (see --help)" % a, file=sys.stderr)
            return 2
        else:
            files.append(a)
        i += 1
    if files:
        missing = [f for f in files if not os.path.exists(f)]
        pairs = [(f, f) for f in files]
    else:
        found, missing = default_files(root)
        pairs = [(f, os.path.relpath(f, root)) for f in found]
    if missing:
        for m in missing:
            print("check_gpu_calls.py: %s: no such file (renamed? update the list in this checker)" % m,
                  file=sys.stderr)
        return 2
    results = [check_file(p, d) for p, d in pairs]
    bad = report(results, listing)
    total = sum(len(r["calls"]) for r in results)
    print("%d calls in %d files; %d unchecked or unexplained" % (total, len(results), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
