#!/usr/bin/env python3
"""Run a command REPEATS times; print its median wall time and peak memory.

    measure.py LABEL REPEATS [--timeout S] -- COMMAND [ARGS...]

Prints one row: label, median wall seconds, min and max, the median CPU
seconds (user + system: what a shared machine does not inflate) and the
largest peak resident set (ru_maxrss of the child, from wait4, so per run and
not cumulative).  The command's stdout is discarded; a failing run stops the
benchmark with its stderr.  A run that passes --timeout is killed and the
row says "> S s" (the repeats stop there).
"""
import os
import statistics
import subprocess
import sys
import time


def run_once(cmd, timeout):
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if timeout and time.monotonic() - t0 > timeout:
            proc.kill()
            _, status, usage = os.wait4(proc.pid, 0)
            proc.stderr.close()
            return None, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0
        time.sleep(0.02)
    wall = time.monotonic() - t0
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.stderr.write(err)
        sys.exit("measure.py: %s exited %d" % (" ".join(cmd), proc.returncode))
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0  # KiB -> MiB


def main():
    args = sys.argv[1:]
    if len(args) < 4:
        sys.exit(__doc__)
    label, reps, args = args[0], int(args[1]), args[2:]
    timeout = None
    if args[0] == "--timeout":
        timeout, args = float(args[1]), args[2:]
    if not args or args[0] != "--" or len(args) < 2:
        sys.exit(__doc__)
    cmd = args[1:]
    walls, cpus, rss = [], [], []
    for _ in range(reps):
        w, c, m = run_once(cmd, timeout)
        rss.append(m)
        if w is None:
            print("%-44s %9s %9s %9s %9.1f %10.1f" % (label, "> %g" % timeout, "-", "-", c, max(rss)), flush=True)
            return
        walls.append(w)
        cpus.append(c)
    print("%-44s %9.2f %9.2f %9.2f %9.2f %10.1f" % (label, statistics.median(walls), min(walls), max(walls),
                                                    statistics.median(cpus), max(rss)), flush=True)


if __name__ == "__main__":
    main()
