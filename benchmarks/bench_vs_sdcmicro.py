"""Equality and speed against sdcMicro itself (issue 31): MDAV, SUDA2, local suppression and the individual risk
of the engine next to sdcMicro's own output on its shipped data, then both timed on resampled tables.

    .venv/bin/python benchmarks/bench_vs_sdcmicro.py --sdc-lib /tmp/sdcpeer/lib [--rows 10000,100000]
        [--mdav-up-to 100000] [--independent] [--peer-timeout 900] [--skip-timing]

The peer is not part of this repository (sdcMicro is GPL-2; nothing of it is vendored here). Build it once from
its public source, outside the checkout (Debian 12 packages; R 4.2 is enough):

    apt-get install -y r-base-core r-base-dev r-cran-rcpp r-cran-data.table r-cran-car r-cran-cardata \\
        r-cran-ggplot2 r-cran-mass r-cran-e1071 r-cran-robustbase r-cran-cluster r-cran-vim r-cran-haven \\
        r-cran-xtable r-cran-knitr r-cran-rmarkdown r-cran-shiny r-cran-dt r-cran-rhandsontable r-cran-httr \\
        r-cran-jsonlite
    git clone https://github.com/sdcTools/sdcMicro /tmp/sdcpeer/src
    # Debian has no r-cran-prettydoc (only the report's HTML theme uses it): drop it from the package's imports
    sed -i '/prettydoc/d' /tmp/sdcpeer/src/NAMESPACE
    sed -i '/^    prettydoc,$/d; s/VIM (>= 4.7.0)/VIM/' /tmp/sdcpeer/src/DESCRIPTION
    mkdir -p /tmp/sdcpeer/lib && R CMD INSTALL --no-test-load --no-docs --library=/tmp/sdcpeer/lib /tmp/sdcpeer/src

The R side is a short driver written by this script (it only calls sdcMicro's exported functions
``microaggregation(method="mdav")``, ``suda2``, ``localSuppression``, ``freqCalc``/``indivRisk``); its timings
are R's ``system.time`` of that one call (CPU = user + system, wall = elapsed), the engine's are the same call in
this process, both without reading the CSV. Numbers are compared as written by R with 17 significant digits.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from anonymizer_app.engine.measure.risk.sdc_frequencies import key_codes, sample_frequencies  # noqa: E402
from anonymizer_app.engine.measure.risk.sdc_individual import individual_risk  # noqa: E402
from anonymizer_app.engine.measure.risk.suda2 import suda2  # noqa: E402
from anonymizer_app.engine.sdc.local_suppression import suppress_locally  # noqa: E402
from anonymizer_app.engine.sdc.microaggregation import microaggregate  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "sdcmicro"
TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
TESTDATA_NUM = ["expend", "income", "savings"]

# our own driver: read the CSV, time one sdcMicro call, write its result with full precision
R_DRIVER = r"""
args <- commandArgs(trailingOnly=TRUE)
.libPaths(c(Sys.getenv("SDC_LIB"), .libPaths()))
suppressMessages(library(sdcMicro))
task <- args[1]; x <- read.csv(args[2], check.names=FALSE); vars <- strsplit(args[3], ",")[[1]]; out <- args[5]
full <- function(v) sprintf("%.17g", v)
if (task == "mdav") {
  tm <- system.time(r <- microaggregation(x, variables=vars, aggr=as.integer(args[4]), method="mdav"))
  write.csv(as.data.frame(lapply(r$mx[, vars, drop=FALSE], full)), out, row.names=FALSE)
} else if (task == "suda2") {
  for (v in vars) x[[v]] <- as.numeric(x[[v]])
  tm <- system.time(r <- suda2(x, variables=vars))
  write.csv(data.frame(score=full(r$score), dis=full(r$disScore)), out, row.names=FALSE)
} else if (task == "ls") {
  for (v in vars) x[[v]] <- as.factor(x[[v]])
  tm <- system.time(r <- localSuppression(x[, vars], keyVars=vars, k=as.integer(args[4])))
  write.csv(r$xAnon, out, row.names=FALSE)
} else if (task == "risk") {
  tm <- system.time({f <- freqCalc(x, keyVars=vars, w=args[4])
                     ir <- indivRisk(f, method="approx", qual=1, survey=TRUE)})
  write.csv(data.frame(fk=f$fk, Fk=full(f$Fk), rk=full(ir$rk)), out, row.names=FALSE)
}
cat("TIME", tm[["user.self"]] + tm[["sys.self"]], tm[["elapsed"]], "\n")
"""


class Peer:
    def __init__(self, lib: str, rscript: str, workdir: Path, timeout: float) -> None:
        self.lib, self.rscript, self.workdir, self.timeout = lib, rscript, workdir, timeout
        self.driver = workdir / "driver.R"
        self.driver.write_text(R_DRIVER)

    def run(self, task: str, csv: Path, variables: list[str], arg: str) -> tuple[pd.DataFrame, float, float] | None:
        out = self.workdir / f"peer_{task}.csv"
        try:
            done = subprocess.run([self.rscript, str(self.driver), task, str(csv), ",".join(variables), arg,
                                   str(out)], capture_output=True, text=True, timeout=self.timeout,
                                  env={**os.environ, "SDC_LIB": self.lib})
        except subprocess.TimeoutExpired:
            return None
        line = [s for s in done.stdout.splitlines() if s.startswith("TIME")]
        if done.returncode or not line:
            raise RuntimeError(f"sdcMicro {task} failed: {done.stderr[-2000:]}")
        _, cpu, wall = line[0].split()
        return pd.read_csv(out), float(cpu), float(wall)

    def result(self, task: str, csv: Path, variables: list[str], arg: str) -> pd.DataFrame:
        got = self.run(task, csv, variables, arg)
        if got is None:
            raise RuntimeError(f"sdcMicro {task} on {csv.name} took longer than {self.timeout} s")
        return got[0]


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def first_difference(ours: Any, theirs: Any, rel: float = 0.0) -> str:
    ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    same = (ours == theirs) | (np.isnan(ours) & np.isnan(theirs))
    if rel:
        same |= np.abs(ours - theirs) <= rel * np.maximum(np.abs(ours), np.abs(theirs))
    if same.all():
        return "equal"
    i = int(np.flatnonzero(~same.ravel())[0])
    return (f"{int((~same).sum())} of {same.size} differ; first at flat index {i}: "
            f"ours {ours.ravel()[i]!r}, sdcMicro {theirs.ravel()[i]!r}")


def equality(peer: Peer) -> None:
    print("== equality on sdcMicro's shipped data ==", flush=True)
    micro = pd.read_csv(DATA / "microData.csv")
    mdav_cases = [("testdata", DATA / "testdata.csv", TESTDATA_NUM),
                  ("microData", DATA / "microData.csv", ["one", "two", "three", "four", "five"]),
                  ("Tarragona", DATA / "Tarragona.csv", list(pd.read_csv(DATA / "Tarragona.csv").columns)),
                  ("CASCrefmicrodata", DATA / "CASCrefmicrodata.csv",
                   list(pd.read_csv(DATA / "CASCrefmicrodata.csv").columns))]
    del micro
    for name, csv, variables in mdav_cases:
        frame = pd.read_csv(csv)
        for k in (3, 5):
            outcome = microaggregate(frame, variables, k=k)
            aggregated = outcome.frame[variables].to_numpy(dtype=float)
            theirs = peer.result("mdav", csv, variables, str(k))
            # sdcMicro returns no groups: its groups are the rows sharing one aggregated vector
            their_groups = theirs.round(6).astype(str).agg("|".join, axis=1).factorize()[0]
            pairs = pd.DataFrame({"ours": outcome.details["group of row"]["all"], "theirs": their_groups})
            partition = "same groups" if len(pairs.drop_duplicates()) == pairs["ours"].nunique() == \
                pairs["theirs"].nunique() else "DIFFERENT groups"
            exact = first_difference(aggregated, theirs.to_numpy(dtype=float))
            close = first_difference(aggregated, theirs.to_numpy(dtype=float), rel=1e-12)
            print(f"MDAV {name} ({len(variables)} vars) k={k}: {partition}; values bitwise {exact}; within 1e-12 relative: {close}",
                  flush=True)
    for name, csv, keys in [("testdata", DATA / "testdata.csv", TESTDATA_KEYS),
                            ("testdata2", DATA / "testdata2.csv", ["urbrur", "roof", "walls", "water", "sex"]),
                            ("free1", DATA / "free1.csv", ["REGION", "SEX", "AGE", "MARSTAT", "KINDPERS", "EDUC1"])]:
        frame = pd.read_csv(csv)
        scores = suda2(frame, keys)
        theirs = peer.result("suda2", csv, keys, "0")
        print(f"SUDA2 {name} ({len(keys)} keys): score {first_difference(scores.score, theirs['score'])}; "
              f"DIS score {first_difference(scores.dis_score, theirs['dis'], rel=1e-12)}", flush=True)
    csv = DATA / "testdata.csv"
    frame = pd.read_csv(csv)
    for k in (2, 3, 5):
        suppressed = suppress_locally(frame, TESTDATA_KEYS, k=k)
        theirs = peer.result("ls", csv, TESTDATA_KEYS, str(k))
        ours_na = suppressed.frame[TESTDATA_KEYS].isna().to_numpy() & ~frame[TESTDATA_KEYS].isna().to_numpy()
        theirs_na = theirs[TESTDATA_KEYS].isna().to_numpy() & ~frame[TESTDATA_KEYS].isna().to_numpy()
        counts_ours = [int(c) for c in ours_na.sum(axis=0)]
        counts_theirs = [int(c) for c in theirs_na.sum(axis=0)]
        print(f"local suppression testdata 7 keys k={k}: per key ours {counts_ours} sdcMicro {counts_theirs}; "
              f"suppressed cells {first_difference(ours_na, theirs_na)}", flush=True)
    freq = sample_frequencies(key_codes(frame, TESTDATA_KEYS), frame["sampling_weight"].to_numpy(dtype=float))
    rk = individual_risk(freq.fk, freq.Fk, "approx", 1.0)
    theirs = peer.result("risk", csv, TESTDATA_KEYS, "sampling_weight")
    print(f"fk testdata: {first_difference(freq.fk, theirs['fk'])}; Fk: {first_difference(freq.Fk, theirs['Fk'])}; "
          f"indivRisk approx: bitwise {first_difference(rk, theirs['rk'])}, "
          f"within 1e-12 relative {first_difference(rk, theirs['rk'], rel=1e-12)}", flush=True)


def speed(peer: Peer, sizes: list[int], workdir: Path, mdav_up_to: int, independent: bool) -> None:
    how = "each column resampled on its own" if independent else "rows resampled with replacement"
    print(f"== speed: testdata, {how} (seed 1), cores={os.cpu_count()} ==", flush=True)
    base = pd.read_csv(DATA / "testdata.csv")
    rng = np.random.default_rng(1)
    microaggregate(base.head(200), TESTDATA_NUM, k=3)  # load the compiled MDAV loop outside the timings
    print(f"{'method':<28}{'rows':>9}{'ours cpu':>10}{'ours wall':>10}{'sdc cpu':>10}{'sdc wall':>10}  load  equal",
          flush=True)
    for rows in sizes:
        frame = base.iloc[rng.integers(0, len(base), rows)].reset_index(drop=True)
        if independent:  # every column drawn on its own: many rare and unique key combinations
            frame = pd.DataFrame({c: base[c].to_numpy()[rng.integers(0, len(base), rows)] for c in base.columns})
        csv = workdir / f"testdata_{rows}.csv"
        frame.to_csv(csv, index=False)
        cases = [("MDAV k=3 (3 vars)", "mdav", TESTDATA_NUM, "3",
                  lambda f=frame: microaggregate(f, TESTDATA_NUM, k=3).frame[TESTDATA_NUM].to_numpy(dtype=float)),
                 ("SUDA2 (7 keys)", "suda2", TESTDATA_KEYS, "0", lambda f=frame: suda2(f, TESTDATA_KEYS).score),
                 ("local suppression k=3", "ls", TESTDATA_KEYS, "3",
                  lambda f=frame: suppress_locally(f, TESTDATA_KEYS, k=3).frame[TESTDATA_KEYS].isna().to_numpy())]
        for label, task, variables, arg, ours_fn in cases:
            if task == "mdav" and rows > mdav_up_to:  # both sides are O(n²/k)
                continue
            ours, cpu, wall = timed(ours_fn)
            got = peer.run(task, csv, variables, arg)
            if got is None:
                print(f"{label:<28}{rows:>9}{cpu:>10.2f}{wall:>10.2f}{'>timeout':>20}  {os.getloadavg()[0]:4.1f}",
                      flush=True)
                continue
            theirs, pcpu, pwall = got
            if task == "mdav":
                same = first_difference(ours, theirs.to_numpy(dtype=float), rel=1e-12)
            elif task == "suda2":
                same = first_difference(ours, theirs["score"])
            else:
                same = first_difference(ours, theirs[TESTDATA_KEYS].isna().to_numpy())
            print(f"{label:<28}{rows:>9}{cpu:>10.2f}{wall:>10.2f}{pcpu:>10.2f}{pwall:>10.2f}  "
                  f"{os.getloadavg()[0]:4.1f}  {same}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sdc-lib", required=True, help="the R library directory where sdcMicro is installed")
    ap.add_argument("--rscript", default="Rscript")
    ap.add_argument("--rows", default="10000,100000")
    ap.add_argument("--peer-timeout", type=float, default=900.0, help="seconds for one sdcMicro call")
    ap.add_argument("--mdav-up-to", type=int, default=100_000, help="time MDAV (O(n²/k)) up to this many rows")
    ap.add_argument("--independent", action="store_true",
                    help="resample every column on its own (rare key combinations) instead of whole rows")
    ap.add_argument("--skip-equality", action="store_true")
    ap.add_argument("--skip-timing", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        peer = Peer(args.sdc_lib, args.rscript, Path(tmp), args.peer_timeout)
        if not args.skip_equality:
            equality(peer)
        if not args.skip_timing:
            speed(peer, [int(r) for r in args.rows.split(",")], Path(tmp), args.mdav_up_to, args.independent)


if __name__ == "__main__":
    main()
