#!/usr/bin/env python3
"""The .xlsx bomb of issue 10: a ~2.4 MB workbook whose one sheet unpacks to 540 MB of XML (1.77 million rows
of 20 numbers). Builds it (in a temporary folder, deleted at the end), then reads it in a child process the
way an upload is read (engine.read_table with the default caps, as the web app's settings have them) and
prints the reader's answer, the seconds and the child's peak memory (ru_maxrss).

    .venv/bin/python benchmarks/bench_xlsx_bomb.py            # 540 MB of sheet XML
    .venv/bin/python benchmarks/bench_xlsx_bomb.py --xml-mb 60 --dimension

``--dimension`` gives the sheet a declared size (<dimension>, as spreadsheet programs write it); under the
size cap the packing ratio refuses it; ``--no-caps`` reads it with every cap off, to see what the caps save.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

CHILD = """
import sys, time
sys.path.insert(0, {root!r})
from anonymizer_app.engine import read_table
from anonymizer_app.engine.io.reader import Limits
caps = Limits(None, None, None, None, None, None) if {no_caps} else Limits()
raw = open({path!r}, "rb").read()
start = time.perf_counter()
try:
    frame, _ = read_table(raw, "bomb.xlsx", limits=caps)
    print("read", frame.shape)
except Exception as exc:
    print("refused:", exc)
print("seconds %.3f" % (time.perf_counter() - start))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--xml-mb", type=int, default=540)
    parser.add_argument("--dimension", action="store_true")
    parser.add_argument("--no-caps", action="store_true")
    args = parser.parse_args()

    from bad_input_files import xlsx_bomb

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bomb.xlsx"
        started = time.perf_counter()
        rows = (args.xml_mb << 20) // 320  # one row of 20 cells is about 320 bytes of XML
        xlsx_bomb(path, args.xml_mb, dimension=f"A1:T{rows}" if args.dimension else None)
        print(f"built {path.stat().st_size / 2**20:.1f} MB holding {args.xml_mb} MB of sheet XML "
              f"in {time.perf_counter() - started:.1f} s")
        code = CHILD.format(root=str(ROOT), path=str(path), no_caps=args.no_caps)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
        print(out.stdout.strip() or out.stderr.strip())
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(f"peak memory of the reading process: {peak / 1024:.0f} MB")


if __name__ == "__main__":
    main()
