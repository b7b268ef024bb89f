"""Write the text GradBench's lstm eval reads (`evals/lstm/data/lstm_full.txt`, which a GradBench
checkout without its data lacks) from ADBench's LSTM input files, whose `sequence` is the same
text's first characters as rows of bits (4,096 characters in lstm_l*_c4096.txt: run the eval
with `--eval-arg=-c --eval-arg=1024 --eval-arg=4096`).

    python -m benchmarks.gradbench.lstm_text --gradbench PATH [--adbench DIR]
"""
import argparse
import os
from pathlib import Path

from ..workloads.lstm import read_lstm


def decode(sequence) -> str:
    return "".join(chr(int("".join(str(int(v)) for v in row), 2)) for row in sequence)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--gradbench", type=Path, required=True)
    ap.add_argument("--adbench", type=Path,
                    default=Path(os.environ.get("ADBENCH_DATA", Path(__file__).resolve().parents[3]
                                                / "shared" / "data" / "adbench")))
    args = ap.parse_args(argv)
    text = decode(read_lstm(str(args.adbench / "lstm" / "lstm_l2_c4096.txt"))[3])
    out = args.gradbench / "evals" / "lstm" / "data" / "lstm_full.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf8")
    print(f"wrote {len(text)} characters to {out}")


if __name__ == "__main__":
    main()
