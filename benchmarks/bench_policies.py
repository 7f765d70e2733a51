#!/usr/bin/env python3
"""Release policies on Adult (issue 15, "Done when"): what re-applying a saved policy to a new batch costs.

    .venv/bin/python benchmarks/bench_policies.py [--shared ../shared] [--repeat 3]

Adult (../shared/datasets/adult, 30,162 rows) is split at the middle; the policy is Flash, k=5, distinct
2-diversity on occupation, 4% suppression, the five QIs sex, age, race, marital-status, education with ARX's
hierarchies embedded (what "Save as policy" writes for that run). Without the database (the CLI's path, which
builds the RunSpec the web app and the API build):

- the policy file: its size, and the time to read and validate it (policy_file.loads: JSON, the registries,
  every embedded hierarchy parsed);
- the schema check of half 2 against it (policy_file.schema_report: types, new values counted per column);
- `manage.py anonymize half2.csv --policy FILE --out OUT` as a child process (wall time, the interpreter and
  Django's start included), against the same run given by flags (--qi/--hierarchy/--l ...): the two outputs
  must be byte-identical, the difference in time is what the policy adds.

Minimum and median of --repeat interleaved runs (after one untimed run of each) are printed; the shared 2-core
machine makes single figures noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")

QI = ("sex", "age", "race", "marital-status", "education")


def policy_of(adult: Path) -> dict:
    from policies import policy_file

    header = (adult / "adult.csv").read_text(encoding="utf-8").split("\n", 1)[0].split(";")
    columns = []
    for name in header:
        hierarchy = None
        if name in QI:
            text = (adult / f"adult_hierarchy_{name}.csv").read_text(encoding="utf-8")
            hierarchy = {"name": f"adult {name}", "rows": policy_file.rows_of_text(text, ";")}
        role = "quasi-identifying" if name in QI else "sensitive" if name == "occupation" else "insensitive"
        columns.append({"name": name, "role": role, "type": "integer" if name == "age" else "string",
                        "hierarchy": hierarchy})
    return {"format": "anonymizer-policy", "version": 1, "name": "adult quarterly", "columns": columns,
            "algorithm": "flash", "k": 5, "suppression_limit": 0.04, "sensitive": "occupation",
            "models": [{"model": "distinct-l-diversity", "l": 2, "column": "occupation"}]}


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def show(label: str, seconds: list[float]) -> None:
    print(f"{label:<58} min {min(seconds):7.3f} s   median {statistics.median(seconds):7.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--shared", default=str(REPO.parent / "shared"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import django

    django.setup()
    import pandas as pd

    from anonymizer_app import engine
    from policies import policy_file

    adult = Path(args.shared) / "datasets" / "adult"
    lines = (adult / "adult.csv").read_text(encoding="utf-8").splitlines()
    half = len(lines[1:]) // 2
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        half2 = tmp / "half2.csv"
        half2.write_text("\n".join([lines[0], *lines[1 + half:]]) + "\n", encoding="utf-8")
        text = policy_file.dumps(policy_file.validate(policy_of(adult)))
        (tmp / "policy.json").write_text(text, encoding="utf-8")
        print(f"Adult half 2: {len(lines) - 1 - half:,} rows; policy file {len(text.encode()):,} bytes "
              f"({sum(len(c['hierarchy']['rows']) for c in json.loads(text)['columns'] if c['hierarchy'])} "
              f"hierarchy rows embedded)")
        show("read and validate the policy file", timed(lambda: policy_file.loads(text), args.repeat))
        frame = pd.read_csv(half2, sep=";", dtype=str, keep_default_na=False)
        policy = policy_file.loads(text)
        types = {c: engine.infer_type(frame[c]) for c in frame.columns}
        show("schema check of half 2 (types, new values)",
             timed(lambda: policy_file.schema_report(policy, list(frame.columns), types, lambda c: frame[c]),
                   args.repeat))
        cli = [sys.executable, "manage.py", "anonymize", str(half2), "--quiet"]
        by_policy = [*cli, "--policy", str(tmp / "policy.json"), "--out", str(tmp / "policy.csv")]
        flags = [*cli, "--algorithm", "flash", "--k", "5", "--suppression", "0.04", "--sensitive", "occupation",
                 "--l", "2", "--out", str(tmp / "flags.csv")]
        for name in QI:
            flags += ["--qi", name, "--hierarchy", f"{name}={adult / f'adult_hierarchy_{name}.csv'}"]

        def run(argv):
            subprocess.run(argv, cwd=REPO, check=True)

        run(by_policy)  # a first run of each, not timed: bytecode caches written, files in the page cache
        run(flags)
        a, b = [], []
        for _ in range(args.repeat):  # interleaved: the shared machine's load falls on both alike
            a += timed(lambda: run(by_policy), 1)
            b += timed(lambda: run(flags), 1)
        show("manage.py anonymize --policy (child process)", a)
        show("manage.py anonymize with the same run as flags", b)
        same = (tmp / "policy.csv").read_bytes() == (tmp / "flags.csv").read_bytes()
        print(f"outputs byte-identical: {same}; {(tmp / 'policy.csv').read_text().count(chr(10)) - 1:,} rows "
              f"published")


if __name__ == "__main__":
    main()
