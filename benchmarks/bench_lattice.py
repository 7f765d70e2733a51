#!/usr/bin/env python3
"""Lattice algorithms benchmark (issue 4): Flash, exhaustive, Incognito, Samarati, k-Optimize on Adult.

    .venv/bin/python benchmarks/bench_lattice.py [--shared ../shared] [--repeat 5] [--skip-large] [--kopt-budget 60]

"search s" is the algorithm's own time (FullDomainRecoding.info search_seconds, i.e. what ARX reports);
"engine s" the whole engine.anonymize() (encoding, search, output, verification). Medians of --repeat.
The 1,000,000-row resample is benchmarks/out/adult_1000000.csv (made by bench_datafly.py's helper).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

QI8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


def load(engine, path: Path, hier: Path, qis: list[str]):
    frame, _ = engine.read_table(path)
    roles = {c: "quasi-identifying" for c in qis}
    if "occupation" not in qis:
        roles["occupation"] = "sensitive"
    hs = {c: engine.read_hierarchy(hier / f"adult_hierarchy_{c}.csv", c) for c in qis}
    return engine.Table(frame, roles), hs


def case(engine, table, hs, algorithm, k, supp, repeat, options=None):
    engine_s, search_s, result = [], [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = engine.anonymize(table, hs, algorithm, k=k, suppression_limit=supp, options=options or {})
        engine_s.append(time.perf_counter() - t0)
        search_s.append(result.search.get("search_seconds", float("nan")))
    s = result.search
    return {"search": statistics.median(search_s), "engine": statistics.median(engine_s),
            "checked": s.get("nodes_checked", s.get("nodes_visited")), "lattice": s.get("lattice_size", "-"),
            "metric": result.metrics["discernibility"], "levels": "".join(str(v) for v in result.transformation.values()),
            "note": s.get("result", "")}


def cli_process(hier: Path, repeat: int) -> dict:
    """Wall time of the whole `manage.py anonymize` process (imports, reading, Flash, writing), median."""
    out = REPO / "benchmarks" / "out"
    out.mkdir(parents=True, exist_ok=True)
    args = [sys.executable, str(REPO / "manage.py"), "anonymize", str(hier / "adult.csv"), "--sensitive", "occupation",
            "--algorithm", "flash", "--k", "5", "--out", str(out / "cli_flash.csv"), "--quiet"]
    for q in QI8:
        args += ["--qi", q, "--hierarchy", f"{q}={hier / f'adult_hierarchy_{q}.csv'}"]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(args, check=True, cwd=REPO, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
        times.append(time.perf_counter() - t0)
    return {"search": float("nan"), "engine": statistics.median(times), "checked": "-", "lattice": "-", "metric": 0,
            "levels": "", "note": f"whole process, median of {repeat} (min {min(times):.3f} s)"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--kopt-budget", type=float, default=60.0)
    a = ap.parse_args()
    from anonymizer_app import engine

    hier = a.shared / "datasets" / "adult"
    adult = hier / "adult.csv"
    t8, h8 = load(engine, adult, hier, QI8)
    t9, h9 = load(engine, adult, hier, QI8 + ["occupation"])
    rows = []

    def add(label, *args, repeat=a.repeat, options=None):
        print(f"running {label} ...", file=sys.stderr)
        rows.append((label, case(engine, *args, repeat=repeat, options=options)))

    add("Flash 8 QIs k=5 0%", t8, h8, "flash", 5, 0.0)
    print("running the CLI process ...", file=sys.stderr)
    rows.append(("CLI process: Flash 8 QIs k=5 0%", cli_process(hier, a.repeat)))
    add("Flash 9 QIs k=5 0%", t9, h9, "flash", 5, 0.0)
    add("Flash 9 QIs k=5 4%", t9, h9, "flash", 5, 0.04)
    add("Exhaustive 9 QIs k=5 0% (12,960 nodes)", t9, h9, "exhaustive", 5, 0.0, repeat=1)
    add("Exhaustive 9 QIs k=5 4%", t9, h9, "exhaustive", 5, 0.04, repeat=1)
    add("Incognito 8 QIs k=5 0%", t8, h8, "incognito", 5, 0.0)
    add("Samarati 8 QIs k=5 0%", t8, h8, "samarati", 5, 0.0, repeat=1)
    for k in (5, 10, 50):
        add(f"Flash 8 QIs k={k} 0% (for k-Optimize)", t8, h8, "flash", k, 0.0, repeat=1)
        try:
            add(f"k-Optimize 8 QIs k={k} 0%", t8, h8, "koptimize", k, 0.0, repeat=1,
                options={"time_budget": a.kopt_budget})
        except engine.InputError as exc:  # the api cannot carry interval hierarchies yet
            from support import problem_for

            from anonymizer_app.engine.algorithms.koptimize import TIME_BUDGET, solve
            print(f"  ({exc}; running the search directly)", file=sys.stderr)
            t0 = time.perf_counter()
            out = solve(problem_for(engine, t8, h8, k, 0.0, {TIME_BUDGET.name: a.kopt_budget}))
            rows.append((f"k-Optimize 8 QIs k={k} 0% (search only)", {
                "search": out["info"]["search_seconds"], "engine": time.perf_counter() - t0,
                "checked": out["info"]["nodes_visited"], "lattice": f"2^{out['info']['cut_points']}",
                "metric": out["info"]["optimum_value"], "levels": f"{out['info']['cuts_chosen']} cuts",
                "note": out["info"]["result"]}))
    if not a.skip_large:
        large = REPO / "benchmarks" / "out" / "adult_1000000.csv"
        if not large.exists():
            from bench_datafly import ensure_large
            large = ensure_large(a.shared, 1_000_000)
        tl, hl = load(engine, large, hier, QI8)
        add("Flash 1M rows 8 QIs k=5 0%", tl, hl, "flash", 5, 0.0, repeat=1)
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB (whole process)")
    header = ("case", "search s", "engine s", "checked", "lattice", "discernibility", "levels", "note")
    table = [header] + [(lab, f"{r['search']:.3f}", f"{r['engine']:.3f}", str(r["checked"]), str(r["lattice"]),
                         f"{r['metric']:,}", r["levels"], r["note"]) for lab, r in rows]
    widths = [max(len(x[i]) for x in table) for i in range(len(header))]
    for line in table:
        print("  ".join(x.ljust(w) for x, w in zip(line, widths)))


if __name__ == "__main__":
    main()
