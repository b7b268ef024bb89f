"""Run a GradBench eval against one or more tools, as GradBench's Rust CLI does.

    python -m benchmarks.gradbench.runner --gradbench PATH --eval lse --tool enzyme_py manual jax

The eval and the tool are two processes; every line the eval writes goes to the tool and every
reply goes back, each recorded in a log with the time since the start (GradBench's log format:
`{"elapsed": {"nanoseconds": N}, "message": ...}` then `... "response": ...}`). The table gives, per
function and input, the mean of the tool's "evaluate" timings (GradBench's classic scorer) and the
eval's validity.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def eval_command(gradbench, python, name, args):
    return [python, str(gradbench / f"python/gradbench/gradbench/evals/{name}/run.py"), *args]


def tool_command(gradbench, python, tool):
    """The command and working directory of a tool, as GradBench's Dockerfiles start them."""
    if tool == "enzyme_py":
        return [sys.executable, "-m", "benchmarks.gradbench.tool"], REPO
    if tool in ("manual", "finite"):    # GradBench's C++ tools: hand-written, finite differences
        return [python, "python/gradbench/gradbench/cpp.py", tool], gradbench
    if tool in ("jax", "pytorch"):
        return [python, f"python/gradbench/gradbench/tools/{tool}/run.py"], gradbench
    raise SystemExit(f"unknown tool {tool!r}: enzyme_py, manual, finite, jax or pytorch")


def relay(eval_proc, tool_proc, log, echo=print):
    """Pass messages between the two processes until the eval ends; return the records."""
    start = time.perf_counter_ns()
    records, pending = [], {}
    for line in eval_proc.stdout:
        sent = time.perf_counter_ns() - start
        log.write(f'{{ "elapsed": {{ "nanoseconds": {sent} }}, "message": {line.strip()} }}\n')
        message = json.loads(line)
        tool_proc.stdin.write(line if line.endswith("\n") else line + "\n")
        tool_proc.stdin.flush()
        if message["kind"] == "end":
            break
        reply = tool_proc.stdout.readline()
        if not reply:
            raise RuntimeError(f"tool exited before answering message {message['id']}")
        got = time.perf_counter_ns() - start
        log.write(f'{{ "elapsed": {{ "nanoseconds": {got} }}, "response": {reply.strip()} }}\n')
        response = json.loads(reply)
        record = note(message, response, records, pending)
        if message["kind"] in ("define", "evaluate"):
            records[-1]["wall"] = (got - sent) / 1e9
        if record is not None and echo:
            echo(describe(record))
        eval_proc.stdin.write(reply)
        eval_proc.stdin.flush()
    return records


def note(message, response, records, pending):
    kind = message["kind"]
    if kind in ("define", "evaluate"):
        record = {"id": message["id"], "kind": kind, "module": message["module"],
                  "function": message.get("function", ""),
                  "description": message.get("description", ""),
                  "success": response.get("success", False), "error": response.get("error"),
                  "seconds": mean_evaluate(response.get("timings") or []), "valid": None}
        records.append(record)
        pending[message["id"]] = record
        return record if kind == "define" or not record["success"] else None
    if kind == "analysis":
        record = pending.get(message["of"])
        if record is not None:
            record["valid"] = message["valid"]
            record["analysis_error"] = message.get("error")
            return record
    return None


def mean_evaluate(timings):
    ns = [t["nanoseconds"] for t in timings if t["name"] == "evaluate"]
    return sum(ns) / len(ns) / 1e9 if ns else None


def describe(record):
    mark = {True: "ok", False: "INVALID", None: "FAILED" if not record["success"] else ""}
    took = f"{record['seconds'] * 1e3:10.3f} ms" if record["seconds"] is not None else " " * 13
    text = (f"[{record['id']:3}] {record['kind']:8} {record['module']}::{record['function']:10} "
            f"{record['description'][:18]:18} {took}  (wall {record['wall']:.2f} s) "
            f"{mark[record['valid']]}")
    error = record.get("analysis_error") or record.get("error")
    return text + (f"\n{error}" if error else "")


def run_one(gradbench, python, name, eval_args, tool, log_path, timeout):
    command, cwd = tool_command(gradbench, python, tool)
    env = dict(os.environ, PYTHONPATH=str(gradbench / "python/gradbench"))
    tool_env = dict(os.environ) if tool == "enzyme_py" else env
    print(f"== {name} with {tool}", flush=True)
    with open(log_path, "w") as log, \
         subprocess.Popen(command, cwd=cwd, env=tool_env, text=True, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE) as tool_proc, \
         subprocess.Popen(eval_command(gradbench, python, name, eval_args), cwd=gradbench,
                          env=env, text=True, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE) as eval_proc:
        try:
            records = relay(eval_proc, tool_proc, log)
        finally:
            for proc in (eval_proc, tool_proc):
                proc.stdin.close()
            for proc in (eval_proc, tool_proc):
                try:
                    proc.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
    return records


def table(results):
    """Rows per (function, description); columns per tool: time (ms) and validity."""
    tools = list(results)
    keyed = {t: {key: r for key, r in with_keys(rs)} for t, rs in results.items()}
    keys = list(dict.fromkeys(k for rows in keyed.values() for k in rows))
    head = f"{'function':12} {'input':18}" + "".join(f" {t:>16}" for t in tools)
    if len(tools) > 1:
        head += "".join(f" {tools[0] + '/' + t:>18}" for t in tools[1:])
    lines = [head]
    for key in keys:
        cells, times = [], []
        for t in tools:
            r = keyed[t].get(key)
            times.append(r["seconds"] if r else None)
            cells.append(cell(r))
        line = f"{key[0]:12} {key[1][:18]:18}" + "".join(f" {c:>16}" for c in cells)
        for other in times[1:]:
            ratio = (f"{times[0] / other:.2f}x" if times[0] and other else "-")
            line += f" {ratio:>18}"
        lines.append(line)
    return "\n".join(lines)


def with_keys(records):
    """(function, description, k) for the k-th evaluate of that function and description."""
    seen = {}
    for r in records:
        if r["kind"] == "evaluate":
            base = (r["function"], r["description"])
            seen[base] = seen.get(base, -1) + 1
            yield (*base, seen[base]), r


def cell(record):
    if record is None:
        return "-"
    if not record["success"]:
        return "failed"
    mark = {True: "", False: " invalid", None: " ?"}[record["valid"]]
    return f"{record['seconds'] * 1e3:.3f} ms{mark}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gradbench", type=Path, required=True, help="a GradBench checkout")
    parser.add_argument("--eval", required=True)
    parser.add_argument("--tool", nargs="+", default=["enzyme_py"])
    parser.add_argument("--python", default=os.environ.get("GRADBENCH_PYTHON", sys.executable),
                        help="Python with numpy and pydantic (and jax) for GradBench's evals")
    parser.add_argument("--min-runs", type=int)
    parser.add_argument("--min-seconds", type=float)
    parser.add_argument("--eval-arg", action="append", default=[],
                        help="passed to the eval unchanged, e.g. --eval-arg=-n --eval-arg=1000")
    parser.add_argument("--log-dir", type=Path, default=REPO / "benchmarks/out/gradbench")
    parser.add_argument("--timeout", type=float, default=30)
    args = parser.parse_args(argv)
    eval_args = list(args.eval_arg)
    if args.min_runs is not None:
        eval_args += ["--min-runs", str(args.min_runs)]
    if args.min_seconds is not None:
        eval_args += ["--min-seconds", str(args.min_seconds)]
    args.log_dir.mkdir(parents=True, exist_ok=True)
    gradbench = args.gradbench.resolve()
    results = {}
    for tool in args.tool:
        log_path = args.log_dir / f"{args.eval}-{tool}.jsonl"
        results[tool] = run_one(gradbench, args.python, args.eval, eval_args, tool, log_path,
                                args.timeout)
        print(f"log: {log_path}")
    print(table(results))
    bad = [t for t, rs in results.items()
           if not rs or any(not r["success"] or r["valid"] is False for r in rs)]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
