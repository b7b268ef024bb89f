"""Campaigns: many generated kernels checked in worker processes, with a progress bar and a summary.

Kernel i of a campaign with seed S has seed `kernel_seed(S, i) = S * 1_000_000 + i`; any kernel
can be re-checked alone with `python -m tools.fuzz --one SEED`.

Every kernel is checked in a worker process (spawned, so the parent never loads Numba): a kernel
whose gradient segfaults only kills its worker ("died:<signal>"), one that runs too long is
killed ("timeout"); the worker is replaced and the campaign goes on. Workers are also replaced
every `recycle` kernels, since Numba never frees compiled code.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import re
import signal
import sys
import time
import traceback
import warnings
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import wait
from typing import Dict, List

from ir_passes.rules import registry
from .checker import Settings, check_program, triage
from .exits import MEMCHECK_ENV
from .generator import generate
from .outcome import DISCARD, FAIL, INVALID, PASS, UNSUPPORTED, Outcome


def kernel_seed(campaign_seed: int, i: int) -> int:
    return campaign_seed * 1_000_000 + i


# ---------------------------------------------------------------------------------------------
# worker process
# ---------------------------------------------------------------------------------------------

def _worker_main(conn, settings: Settings, config):
    """Serve requests from the parent: ("seed", s) or ("program", prog) -> outcome dict
    (("die", signum) kills the worker: tests use it)."""
    warnings.simplefilter("ignore")
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # Ctrl-C stops the parent, which stops us
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        what, payload = msg
        if what == "die":            # for tests of the death handling: die by signal `payload`
            os.kill(os.getpid(), payload)
        try:
            if what == "seed":
                prog = generate(payload, config)
            else:
                prog = payload
            out = check_program(prog, settings)
            if out.status == FAIL and what == "seed":
                out.triage = triage(prog, out, settings)
        except Exception as exc:       # a bug in the fuzzer itself
            out = Outcome(INVALID, f"fuzzer:{type(exc).__name__}", traceback.format_exc())
        d = asdict(out)
        d["rules"] = sorted(out.rules)
        conn.send(d)


class Worker:
    """One worker process with a request pipe; restarted on death, timeout or recycling."""

    def __init__(self, ctx, settings, config):
        self.ctx, self.settings, self.config = ctx, settings, config
        self.proc = None
        self.conn = None
        self.done = 0
        self.task = None
        self.started = 0.0
        self.start()

    def start(self):
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker_main, args=(child, self.settings, self.config),
                                     daemon=True)
        env = MEMCHECK_ENV if getattr(self.config, "exits", False) else {}
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)          # the spawned worker's allocators check the heap
        try:
            self.proc.start()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        child.close()
        self.conn = parent
        self.done = 0

    def send(self, task, what, payload):
        self.task = task
        self.started = time.monotonic()
        self.conn.send((what, payload))

    def stop(self, kill=False):
        try:
            if kill:
                self.proc.kill()
            else:
                self.conn.send(None)
        except (OSError, BrokenPipeError):
            pass
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()

    def restart(self, kill=False):
        self.stop(kill)
        self.start()


def _outcome_from(d) -> Outcome:
    d = dict(d)
    d["rules"] = frozenset(d.get("rules", ()))
    return Outcome(**d)


def _death(proc) -> str:
    code = proc.exitcode
    if code is not None and code < 0:
        try:
            return f"died:{signal.Signals(-code).name}"
        except ValueError:
            return f"died:signal{-code}"
    return f"died:exit{code}"


class Pool:
    """Runs tasks (seed or program) on `jobs` workers; yields (task, Outcome) as they finish."""

    def __init__(self, jobs, settings=None, config=None, timeout=180.0, recycle=250):
        self.ctx = mp.get_context("spawn")
        self.settings = settings or Settings()
        self.config = config
        self.timeout = timeout
        self.recycle = recycle
        self.workers = [Worker(self.ctx, self.settings, config) for _ in range(max(1, jobs))]

    def close(self):
        for w in self.workers:
            w.stop()

    def run(self, tasks):
        """tasks: iterable of (key, what, payload) with what "seed" or "program"."""
        tasks = iter(tasks)
        idle = list(self.workers)
        busy: List[Worker] = []
        exhausted = False
        while True:
            while idle and not exhausted:
                try:
                    key, what, payload = next(tasks)
                except StopIteration:
                    exhausted = True
                    break
                w = idle.pop()
                w.send(key, what, payload)
                busy.append(w)
            if not busy:
                return
            now = time.monotonic()
            deadline = min(w.started + self.timeout for w in busy)
            ready = wait([w.conn for w in busy] + [w.proc.sentinel for w in busy],
                         timeout=max(0.05, deadline - now))
            for w in list(busy):
                result = None
                if w.conn in ready:
                    try:
                        result = _outcome_from(w.conn.recv())
                    except (EOFError, OSError):
                        result = None
                if result is None and (w.proc.sentinel in ready or not w.proc.is_alive()):
                    w.proc.join(timeout=1)
                    result = Outcome(FAIL, _death(w.proc), "the worker process died while "
                                     "checking this kernel", time.monotonic() - w.started)
                    w.restart(kill=True)
                elif result is None and time.monotonic() - w.started > self.timeout:
                    result = Outcome(FAIL, "timeout", f"no result after {self.timeout:.0f} s",
                                     time.monotonic() - w.started)
                    w.restart(kill=True)
                if result is None:
                    continue
                busy.remove(w)
                w.done += 1
                if w.done >= self.recycle:
                    w.restart()
                idle.append(w)
                yield w.task, result


# ---------------------------------------------------------------------------------------------
# summary
# ---------------------------------------------------------------------------------------------

@dataclass
class Summary:
    campaign_seed: int
    requested: int
    jobs: int
    generated: int = 0
    status: Counter = field(default_factory=Counter)
    discarded: Counter = field(default_factory=Counter)
    unsupported: Counter = field(default_factory=Counter)
    unsupported_seeds: Dict[str, List[int]] = field(default_factory=lambda: defaultdict(list))
    failures: Dict[str, List[int]] = field(default_factory=lambda: defaultdict(list))
    invalid: Dict[str, List[int]] = field(default_factory=lambda: defaultdict(list))
    triaged: Dict[str, List[int]] = field(default_factory=lambda: defaultdict(list))
    rules: Counter = field(default_factory=Counter)
    forward: Counter = field(default_factory=Counter)
    forward_seeds: Dict[str, List[int]] = field(default_factory=lambda: defaultdict(list))
    kernel_seconds: float = 0.0
    wall: float = 0.0
    interrupted: bool = False

    def add(self, seed, out: Outcome):
        self.generated += 1
        self.status[out.status] += 1
        self.kernel_seconds += out.seconds
        if out.status == DISCARD:
            self.discarded[out.category] += 1
        elif out.status == UNSUPPORTED:
            self.unsupported[out.category] += 1
            ex = self.unsupported_seeds[out.category]
            if len(ex) < 3:
                ex.append(seed)
        elif out.status == FAIL:
            self.failures[out.category].append(seed)
            if out.triage:
                self.triaged[out.triage].append(seed)
        elif out.status == INVALID:
            self.invalid[out.category].append(seed)
        for r in out.rules:
            self.rules[r] += 1
        if out.forward:
            key = out.forward if out.forward.startswith("unsupported") else \
                out.forward.split(":")[0]
            self.forward[key] += 1
            ex = self.forward_seeds[key]
            if key != "checked" and len(ex) < 3:
                ex.append(seed)

    @property
    def checked(self):
        return self.status[PASS] + self.status[FAIL]

    def to_json(self):
        return {
            "campaign_seed": self.campaign_seed, "requested": self.requested, "jobs": self.jobs,
            "generated": self.generated, "checked": self.checked, "passed": self.status[PASS],
            "failed": self.status[FAIL], "discarded": dict(self.discarded),
            "unsupported": dict(self.unsupported),
            "unsupported_examples": {k: v for k, v in self.unsupported_seeds.items()},
            "invalid": {k: v for k, v in self.invalid.items()},
            "failures": {k: v for k, v in self.failures.items()},
            "explained_by_known_bugs": {k: v for k, v in self.triaged.items()}, "rules": dict(self.rules),
            "forward": dict(self.forward),
            "forward_examples": {k: v for k, v in self.forward_seeds.items() if v},
            "wall_seconds": round(self.wall, 1),
            "interrupted": self.interrupted,
            "kernel_seconds": round(self.kernel_seconds, 1),
        }

    def format(self, all_rules=None) -> str:
        L = []
        n = self.generated
        L.append(f"tools.fuzz campaign --seed {self.campaign_seed}: {n} kernels "
                 f"({self.requested} requested{', INTERRUPTED' if self.interrupted else ''}), "
                 f"{self.jobs} worker(s), wall {_hms(self.wall)} "
                 f"({self.wall / max(1, n):.2f} s/kernel wall, "
                 f"{self.kernel_seconds / max(1, n):.2f} s/kernel of checking)")
        L.append(f"  generated      {n:7d}")
        L.append(f"  checked        {self.checked:7d}   (AD result compared: passed "
                 f"{self.status[PASS]}, failed {self.status[FAIL]})")
        L.append(f"  discarded      {self.status[DISCARD]:7d}   (finite differences unreliable)")
        for k, v in self.discarded.most_common():
            L.append(f"    {k:<40} {v:7d}")
        L.append(f"  unsupported    {self.status[UNSUPPORTED]:7d}   (UnsupportedError: not failures)")
        for k, v in self.unsupported.most_common():
            L.append(f"    {v:7d}  {k}   (e.g. seeds {_seeds(self.unsupported_seeds[k], 3)})")
        L.append(f"  invalid        {self.status[INVALID]:7d}   (fuzzer bugs: programs Numba rejects)")
        for k, seeds in sorted(self.invalid.items()):
            L.append(f"    {k:<40} {len(seeds):7d}   seeds {_seeds(seeds)}")
        L.append(f"  FAILURES       {self.status[FAIL]:7d}")
        for k, seeds in sorted(self.failures.items(), key=lambda kv: -len(kv[1])):
            L.append(f"    {k:<40} {len(seeds):7d}   seeds {_seeds(seeds)}")
        if self.triaged:
            L.append("    of which explained by known bugs (the construct removed, they pass):")
            for k, seeds in self.triaged.items():
                L.append(f"      {k:<38} {len(seeds):7d}   seeds {_seeds(seeds)}")
        if all_rules:
            missing = sorted(set(all_rules) - set(self.rules))
            L.append(f"  derivative rules exercised: {len(set(all_rules) & set(self.rules))}/"
                     f"{len(set(all_rules))}" + (f"; never: {', '.join(missing)}" if missing else ""))
        if self.forward:
            L.append("  forward mode (<v, J u> forward vs <J^T v, u> reverse, on checked kernels):")
            for k, v in self.forward.most_common():
                ex = self.forward_seeds.get(k)
                L.append(f"    {v:7d}  {k}" + (f"   (e.g. seeds {_seeds(ex, 3)})" if ex else ""))
        else:
            L.append("  forward mode: no kernel was checked in forward mode (the profile or the "
                     "settings run no forward-vs-reverse check)")
        return "\n".join(L)


def _seeds(seeds, k=8):
    s = ", ".join(str(x) for x in seeds[:k])
    return s + (f", ... (+{len(seeds) - k})" if len(seeds) > k else "")


def _hms(t):
    t = int(round(t))
    h, m, s = t // 3600, t // 60 % 60, t % 60
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s"


class Progress:
    """A one-line progress bar on stderr (a line every 30 s when stderr is not a terminal)."""

    def __init__(self, total, stream=None):
        self.total = total
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.t0 = time.monotonic()
        self.last = 0.0

    def update(self, s: Summary, force=False):
        now = time.monotonic()
        if not force and now - self.last < (0.2 if self.tty else 30.0):
            return
        self.last = now
        done = s.generated
        frac = done / max(1, self.total)
        rate = done / max(1e-9, now - self.t0)
        eta = (self.total - done) / rate if rate > 0 else 0
        bar = "#" * int(30 * frac) + "." * (30 - int(30 * frac))
        line = (f"[{bar}] {done}/{self.total} {rate:.2f}/s eta {_hms(eta)} | pass {s.status[PASS]} "
                f"disc {s.status[DISCARD]} unsup {s.status[UNSUPPORTED]} "
                f"inval {s.status[INVALID]} FAIL {s.status[FAIL]}")
        if self.tty:
            self.stream.write("\r" + line + "\x1b[K")
            if force:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


# rule-table entries that are not float functions (debug info, assumptions, lifetime markers)
_NOT_FLOAT = re.compile(r"llvm\.(dbg|assume|invariant|experimental|lifetime|var\.annotation)|NRT_")


def all_rule_keys():
    """Every key of ir_passes' derivative rule table (empty if it cannot be imported)."""
    try:
        registry._load()
        return sorted({r.key for r in registry.RULES.values() if not _NOT_FLOAT.match(r.key)})
    except Exception:
        return []


def run_campaign(n, seed, jobs=None, settings=None, config=None, timeout=180.0, recycle=250,
                 out_dir=None, progress=True, on_result=None, start=0) -> Summary:
    """Check kernels kernel_seed(seed, start .. n-1); return the Summary. With `out_dir`, every
    failure and invalid program is appended to `out_dir/results.jsonl` as it happens, and the
    summary so far is written to `out_dir/summary.partial.txt` every 10 kernels; every kernel's
    outcome and seconds go to `out_dir/kernels.jsonl`. Ctrl-C (or
    SIGTERM from the command line) stops the campaign early: the summary covers the kernels
    checked so far."""
    jobs = jobs or os.cpu_count() or 1
    summary = Summary(seed, n - start, jobs)
    bar = Progress(n) if progress else None
    t0 = time.monotonic()
    log = times = None
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        log = open(os.path.join(out_dir, "results.jsonl"), "a")
        times = open(os.path.join(out_dir, "kernels.jsonl"), "a")
    pool = Pool(jobs, settings, config, timeout, recycle)
    try:
        tasks = ((kernel_seed(seed, i), "seed", kernel_seed(seed, i)) for i in range(start, n))
        for ks, out in pool.run(tasks):
            summary.add(ks, out)
            summary.wall = time.monotonic() - t0
            if log and out.status in (FAIL, INVALID):
                log.write(json.dumps({"seed": ks, "status": out.status, "category": out.category,
                                      "triage": out.triage, "detail": out.detail}) + "\n")
                log.flush()
            if times:       # every kernel's outcome and checking time (where the time goes)
                times.write(json.dumps({"seed": ks, "status": out.status, "category": out.category,
                                        "forward": out.forward,
                                        "seconds": round(out.seconds, 2)}) + "\n")
                times.flush()
            if on_result:
                on_result(ks, out)
            if bar:
                bar.update(summary)
            if out_dir and summary.generated % 10 == 0:
                write_summary(summary, out_dir, "summary.partial")
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        pool.close()
        if log:
            log.close()
            times.close()
    summary.wall = time.monotonic() - t0
    if bar:
        bar.update(summary, force=True)
    return summary


def write_summary(summary, out_dir, name):
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(summary.to_json(), f, indent=1)
    with open(os.path.join(out_dir, name + ".txt"), "w") as f:
        f.write(summary.format(all_rule_keys()) + "\n")
