"""`python -m benchmarks.coldstart NAME [--quick]`: in this fresh process, compile the primal,
then time the first gradient call (build + compile + run, or a load from the on-disk cache
when ENZYME_PY_CACHE_DIR is set). Prints one JSON line."""
import importlib
import json
import sys
import time


def main(argv):
    name = argv[0]
    quick = "--quick" in argv
    t0 = time.perf_counter()
    mod = importlib.import_module(f"benchmarks.workloads.{name}")
    inst = mod.setup(quick=quick)
    inst.reset()
    inst.primal()
    t1 = time.perf_counter()
    inst.reset()
    inst.compile()
    tc = time.perf_counter()
    inst.grad()
    t2 = time.perf_counter()
    from enzyme_py import disk_cache
    print(json.dumps({"workload": name, "setup_and_primal_s": t1 - t0,
                      "grad_first_call_s": t2 - t1, "compile_s": tc - t1,
                      "disk_cache": dict(disk_cache.stats)}))


if __name__ == "__main__":
    main(sys.argv[1:])
