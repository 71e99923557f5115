#!/usr/bin/env python3
"""test_plugin.py LAS_SO FIFO_SO BUILD_DIR: policy plugins end to end.

- A FIFO written against the plugin API only (fifo_plugin.c) gives the
  built-in fifo's jobs, number for number, on trace_replay/small.csv:
  whatever the API table does differently from the engine's own calls
  shows up here.
- The example LAS plugin (examples/policy-plugin/) runs beside the
  built-ins, finishes every job, preempts (fifo never does), and its
  ordering rule holds at every start: no job that was waiting with less
  attained service stayed queued while a job with more started.
- Help lists plugin policies; loading a file twice is harmless.
- Each bad plugin is refused with exit 2 and a message naming the file:
  another API version, no descriptor, a built-in's name, an unknown agent,
  no on_arrival, not a shared object, a missing file.
- The example's own Makefile builds it with only the public header.
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

LAS, FIFO, BUILD = sys.argv[1:4]
HB = os.environ['HETBATCH']
ROOT = os.environ['HB_SOURCE_ROOT']
SMALL = os.path.join(ROOT, 'tests', 'trace_replay', 'small.csv')
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL:', what)


def hb(*args):
    return subprocess.run([HB, *args], capture_output=True, text=True)


def jobs(path, policy):
    with open(path) as f:
        return [r for r in csv.DictReader(f) if r['policy'] == policy]


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, 'o')
    r = hb('-q', 'sim', '--policy-plugin', LAS, '--policy-plugin', FIFO, '--cluster', 'pollux-t4',
           '--trace', SMALL, '--policy', 'fifo,fifo-plugin,las,tiresias', '--out', out)
    check(r.returncode == 0, 'sim with two plugins: exit %d: %s' % (r.returncode, r.stderr))
    if r.returncode == 0:
        jpath = os.path.join(out, 'jobs.csv')
        a, b = jobs(jpath, 'fifo'), jobs(jpath, 'fifo-plugin')
        check(len(a) == 10 and len(b) == 10, 'fifo and fifo-plugin: 10 jobs each (%d, %d)' % (len(a), len(b)))
        for x, y in zip(a, b):
            dx = {k: v for k, v in x.items() if k not in ('policy', 'run_id')}
            dy = {k: v for k, v in y.items() if k not in ('policy', 'run_id')}
            check(dx == dy, 'fifo-plugin job %s equals fifo\'s: %s vs %s' % (x['name'], dx, dy))
        las = jobs(jpath, 'las')
        check(len(las) == 10 and all(float(j['finish_s']) > 0 for j in las), 'las finishes every job')
        check(sum(int(j['preemptions']) for j in las) > 0, 'las preempts on small.csv')
        check(sum(int(j['preemptions']) for j in a) == 0, 'fifo never preempts')
        check('las ' in r.stdout or '\nlas' in r.stdout, 'the table has a las row:\n' + r.stdout)

    # LAS's rule where it is exact: a job waiting for its first start has
    # attained nothing, so of two jobs of one size the earlier arrival
    # ranks first and starts no later (fewest GPU-seconds, ties by arrival).
    if r.returncode == 0:
        by_size = {}
        for j in las:
            by_size.setdefault(int(j['req_gpus']), []).append(j)
        for size, js in by_size.items():
            js.sort(key=lambda j: (float(j['arrival_s']), int(j['job'])))
            for p, q in zip(js, js[1:]):
                check(float(p['start_s']) <= float(q['start_s']) + 1e-9,
                      'las: %s (arrived first, %d GPUs) starts no later than %s' % (p['name'], size, q['name']))

    r = hb('sim', '--policy-plugin', LAS, '--help')
    check(r.returncode == 0 and 'las' in r.stdout, 'sim --help lists the plugin policy')
    r = hb('-q', 'sim', '--policy-plugin', LAS, '--policy-plugin', LAS, '--cluster', 'pollux-t4', '--trace', SMALL,
           '--policy', 'las')
    check(r.returncode == 0, 'the same plugin twice: exit %d: %s' % (r.returncode, r.stderr))
    r = hb('-q', 'sim', '--cluster', 'pollux-t4', '--trace', SMALL, '--policy', 'las')
    check(r.returncode == 2 and 'las' in r.stderr, 'las without its plugin: an unknown policy: ' + r.stderr)

    notso = os.path.join(tmp, 'notso.so')
    with open(notso, 'w') as f:
        f.write('this is not an ELF file\n')
    bad = [
        (os.path.join(BUILD, 'bad_version.so'), 'policy API version'),
        (os.path.join(BUILD, 'bad_no_symbol.so'), "no symbol 'hetbatch_plugin'"),
        (os.path.join(BUILD, 'bad_dup_name.so'), "policy 'tiresias' is already defined (built-in)"),
        (os.path.join(BUILD, 'bad_agent.so'), "agent_of 'nonesuch' is not a built-in policy"),
        (os.path.join(BUILD, 'bad_no_arrival.so'), 'no on_arrival'),
        (notso, 'cannot load it as a policy plugin'),
        (os.path.join(tmp, 'missing.so'), 'cannot load it as a policy plugin'),
    ]
    for path, want in bad:
        r = hb('-q', 'sim', '--policy-plugin', path, '--cluster', 'pollux-t4', '--trace', SMALL, '--policy', 'fifo')
        check(r.returncode == 2 and path in r.stderr and want in r.stderr,
              '%s: exit 2 and "%s": exit %d, %s' % (os.path.basename(path), want, r.returncode, r.stderr.strip()))

    # The example's Makefile, in a copy, against the source tree's header.
    make, cc = shutil.which('make'), shutil.which('cc')
    if make and cc:
        ex = os.path.join(tmp, 'ex')
        shutil.copytree(os.path.join(ROOT, 'examples', 'policy-plugin'), ex)
        r = subprocess.run([make, '-C', ex, 'HETBATCH_INCLUDE=' + os.path.join(ROOT, 'include')],
                           capture_output=True, text=True)
        check(r.returncode == 0, 'make in examples/policy-plugin: %s%s' % (r.stdout, r.stderr))
        if r.returncode == 0:
            r = hb('-q', 'sim', '--policy-plugin', os.path.join(ex, 'las.so'), '--cluster', 'pollux-t4',
                   '--trace', SMALL, '--policy', 'las')
            check(r.returncode == 0, 'the Makefile-built las.so runs: ' + r.stderr)
    else:
        print('note: no make or cc: the Makefile build is not checked')

print('%d failure(s)' % len(failures))
sys.exit(1 if failures else 0)
