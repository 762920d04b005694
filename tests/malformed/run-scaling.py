#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Time noplab on N and 4N tiny symbols and check the growth stays near linear.

Usage: run-scaling.py NOPLAB WORKDIR

For each pathological shape mkmanysyms.py writes (distinct functions, aliases at one
address, size-0 labels, nested extents), runs `noplab scan` and `noplab layout --jcc` on a
file with N symbols and one with 4N, and fails when the 4N run takes more than 8 times as
long as the N run (linear is 4x, quadratic 16x; the bound is generous for a shared, noisy
machine).  Times are CPU seconds of the child (robust on a shared machine), less the time
the same command needs for a file with 10 symbols (process start-up, ASan's shadow memory),
so the ratio compares the work that grows.  The 4N run is killed when its wall time passes a few times that bound, so a quadratic case
fails in bounded time.
A ratio over the bound is measured again once before it counts (noise on a busy machine).
"""
import os
import subprocess
import sys
import time

BOUND = 8.0
# (command, extra args, kind, N): N is chosen so the N run takes ~0.3-1 s of CPU under ASan
CASES = [
    ("scan", [], "funcs", 25000),
    ("scan", [], "aliases", 25000),
    ("scan", [], "labels", 25000),
    ("scan", [], "overlap", 25000),
    ("layout", ["--jcc"], "funcs", 25000),
    ("layout", ["--jcc"], "labels", 25000),
    ("layout", ["--jcc"], "overlap", 5000),
]


def run(cmd, limit):
    """CPU seconds (user + system, all threads) the command used; None when it failed or
    ran past limit seconds of wall time.  CPU time, not wall time: the machine is shared."""
    err = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "scaling-err.%d" % os.getpid()), "w+")
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    t = time.monotonic()
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - t > limit:
            p.kill()
            os.wait4(p.pid, 0)
            err.close()
            return None, "killed after %.1f s" % limit
        time.sleep(0.01)
    err.seek(0)
    text = err.read()
    err.close()
    os.unlink(err.name)
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1) or "Sanitizer" in text or "runtime error" in text:
        return None, "exit %d: %s" % (code, text.strip().splitlines()[:3])
    return ru.ru_utime + ru.ru_stime, ""


def main():
    noplab, work = sys.argv[1], sys.argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    os.makedirs(work, exist_ok=True)
    files = {}
    fails = 0
    for cmd, extra, kind, n in CASES:
        for k in (n, 4 * n):
            path = os.path.join(work, "%s-%d.o" % (kind, k))
            if path not in files:
                subprocess.run([sys.executable, os.path.join(here, "mkmanysyms.py"), str(k), kind,
                                path], check=True)
                files[path] = os.path.getsize(path)
        tiny = os.path.join(work, "%s-10.o" % kind)
        if tiny not in files:
            subprocess.run([sys.executable, os.path.join(here, "mkmanysyms.py"), "10", kind, tiny],
                           check=True)
            files[tiny] = os.path.getsize(tiny)
        t0, why = run([noplab, cmd] + extra + [tiny], 60)
        if t0 is None:
            print("FAIL %s %s %s (10 symbols): %s" % (cmd, " ".join(extra), kind, why))
            fails += 1
            continue
        small = os.path.join(work, "%s-%d.o" % (kind, n))
        big = os.path.join(work, "%s-%d.o" % (kind, 4 * n))
        for attempt in (1, 2):
            t1, why = run([noplab, cmd] + extra + [small], 120)
            if t1 is None:
                break
            # the growing part: at least 50 ms, so that timer noise cannot make a ratio
            grow1 = max(t1 - t0, 0.05)
            t4, why = run([noplab, cmd] + extra + [big], 3 * (t0 + BOUND * grow1) + 5)
            if t4 is not None and t4 - t0 <= BOUND * grow1:
                break
            if t4 is None and attempt == 1:
                continue
        if t1 is None or t4 is None:
            print("FAIL %s %s %s: %s" % (cmd, " ".join(extra), kind, why or "?"))
            fails += 1
            continue
        ratio = (t4 - t0) / grow1
        verdict = "ok" if ratio <= BOUND else "FAIL"
        if verdict == "FAIL":
            fails += 1
        print("%-4s %-6s %-5s %-8s base %5.2f s  N=%-6d %6.2f s  4N: %6.2f s  ratio %5.2f (bound %.0f)"
              % (verdict, cmd, " ".join(extra), kind, t0, n, t1, t4, ratio, BOUND))
    print("%d cases, %d failures" % (len(CASES), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
