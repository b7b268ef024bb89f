"""enzyme_py as a GradBench tool (tool/) and a runner that plays GradBench's CLI (runner.py)."""
