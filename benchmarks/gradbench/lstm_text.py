"""Write the text GradBench's lstm eval reads (`evals/lstm/data/lstm_full.txt`, which a GradBench
checkout without its data lacks) from ADBench's LSTM input files, whose `sequence` is the same
text's first characters as rows of bits (4,096 characters in lstm_l*_c4096.txt). The eval's
largest default size reads 8,192 characters: the characters after ADBench's 4,096 are a
substitute, drawn with seed SEED from the frequencies of the decoded ones (the same alphabet,
so the same 14 bits a character).

    python -m benchmarks.gradbench.lstm_text --gradbench PATH [--adbench DIR] [--chars 8192]
"""
import argparse
import os
from pathlib import Path

import numpy as np

from ..workloads.lstm import read_lstm


def decode(sequence) -> str:
    return "".join(chr(int("".join(str(int(v)) for v in row), 2)) for row in sequence)


SEED = 27


def extend(text: str, chars: int) -> str:
    """`text`, then characters drawn (seed SEED) from its own frequencies, to `chars` in all."""
    if chars <= len(text):
        return text[:chars]
    alphabet, counts = np.unique(np.array(list(text)), return_counts=True)
    rng = np.random.default_rng(SEED)
    return text + "".join(rng.choice(alphabet, chars - len(text), p=counts / counts.sum()))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--gradbench", type=Path, required=True)
    ap.add_argument("--adbench", type=Path,
                    default=Path(os.environ.get("ADBENCH_DATA", Path(__file__).resolve().parents[3]
                                                / "shared" / "data" / "adbench")))
    ap.add_argument("--chars", type=int, default=8192, help="characters in all (the eval's -c)")
    args = ap.parse_args(argv)
    text = extend(decode(read_lstm(str(args.adbench / "lstm" / "lstm_l2_c4096.txt"))[3]),
                  args.chars)
    out = args.gradbench / "evals" / "lstm" / "data" / "lstm_full.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf8")
    print(f"wrote {len(text)} characters to {out}")


if __name__ == "__main__":
    main()
