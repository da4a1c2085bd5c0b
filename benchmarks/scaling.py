"""Per-file time as a file grows: `chatbound check --no-cache` on generated modules of 800, 1,600,
3,200 and 6,700 lines, in two shapes, printing seconds per 1,000 lines for each size and the
ratio of the largest to the smallest (target: at most 1.5 for both shapes).

- `chat classes`: many small chat classes, each keeping `self.history`, appending and sending it
  whole (16 lines a class): a finding, with its fix and projection, every 16 lines.
- `mostly other code`: the same module with one chat class in fifty, the rest plain code of the
  same length: few findings, much code to read.

    python benchmarks/scaling.py [--runs 3]

Each figure is the best of `--runs` cold runs of the command (the whole process, as a user
runs it), less the best run on a module of one line (start-up: importing the rules, reading
the settings), so that a fixed cost does not flatter the larger files; every size is measured
in the same invocation, so that a busy machine slows all alike.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES = (800, 1_600, 3_200, 6_700)
TARGET = 1.5

CHAT = """

class Chat{i}:
    def __init__(self, client):
        self.client = client
        self.history = [{{"role": "system", "content": "You are helper {i}."}}]

    def ask(self, text):
        self.history.append({{"role": "user", "content": text}})
        reply = self.client.chat.completions.create(model="gpt-4o", messages=self.history)
        answer = reply.choices[0].message.content
        self.history.append({{"role": "assistant", "content": answer}})
        return answer
"""
PLAIN = """

class Ledger{i}:
    def __init__(self, rows):
        self.rows = list(rows)
        self.total = 0

    def add(self, amount, note=""):
        self.rows.append({{"amount": amount, "note": note}})
        self.total += amount
        if self.total > 1_000_000:
            raise ValueError("over the limit")
        return self.total
"""


def module(lines: int, chat_every: int) -> str:
    blocks = [CHAT.format(i=i) if i % chat_every == 0 else PLAIN.format(i=i) for i in range(lines // 16)]
    return "from openai import OpenAI\n" + "".join(blocks)


def cold(path: Path, runs: int) -> float:
    command = [sys.executable, "-m", "chatbound", "check", "--no-cache", "--exit-zero", "-q", str(path)]
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as folder:
        empty = Path(folder) / "empty.py"
        empty.write_text("from openai import OpenAI\n")
        start_up = cold(empty, args.runs)
        print(f"start-up (a one-line module): {start_up:.2f} s, taken off every figure")
        for shape, every in (("chat classes", 1), ("mostly other code", 50)):
            per_k = {}
            for lines in SIZES:
                path = Path(folder) / f"m{lines}_{every}.py"
                path.write_text(module(lines, every))
                real = len(path.read_text().splitlines())
                per_k[lines] = max(cold(path, args.runs) - start_up, 0.0) / real * 1000
            ratio = per_k[SIZES[-1]] / per_k[SIZES[0]]
            failed |= ratio > TARGET
            figures = ", ".join(f"{lines:,} lines {per_k[lines]:.3f} s" for lines in SIZES)
            print(
                f"{shape}: seconds per 1,000 lines: {figures}; {SIZES[-1]:,}/{SIZES[0]} = {ratio:.2f} "
                f"(target <= {TARGET})"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
