"""An end-to-end run through the HTTP API on the Adult table (docs/guide/http-api.md): upload adult.csv, set the
roles, upload ARX's hierarchies for the quasi-identifiers, run Flash with k=5, poll until it ends, fetch the
report and the anonymized CSV. Prints what each step took.

    python docs/api_example.py --url http://127.0.0.1:8000 --key anon_... \\
        --data ../shared/datasets/adult --out adult-k5.csv

The key comes from the account page (API keys). Only ``requests`` is needed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import requests

QIS = ("sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation")
SENSITIVE = "salary-class"


class Api:
    def __init__(self, url: str, key: str, session: requests.Session | None = None):
        self.base = url.rstrip("/") + "/api/v1/"
        self.http = session or requests.Session()
        self.http.headers["Authorization"] = f"Bearer {key}"

    def call(self, method: str, path: str, expect: int = 200, **kwargs) -> requests.Response:
        r = self.http.request(method, self.base + path, timeout=600, **kwargs)
        if r.status_code != expect:
            detail = r.json().get("detail") if r.headers.get("Content-Type", "").startswith("application/json") \
                else r.text[:300]
            raise SystemExit(f"{method} {path}: HTTP {r.status_code}: {detail}")
        return r


def run(url: str, key: str, data: Path, out: Path | None = None, k: int = 5, session=None,
        log=print) -> dict:
    """The whole flow; returns the timings (seconds), the report and the CSV text."""
    api, timings = Api(url, key, session), {}

    def step(name: str, started: float) -> None:
        timings[name] = time.perf_counter() - started
        log(f"{name:<24} {timings[name]:8.2f} s")

    t = time.perf_counter()
    with open(data / "adult.csv", "rb") as f:
        dataset = api.call("POST", "datasets/", 201, files={"file": ("adult.csv", f, "text/csv")},
                           data={"name": "Adult (API example)"}).json()
    step("upload", t)
    log(f"  dataset {dataset['id']}: {dataset['n_rows']} rows, {dataset['n_columns']} columns")

    t = time.perf_counter()
    changes = [{"name": c, "role": "quasi-identifying"} for c in QIS] + [{"name": SENSITIVE, "role": "sensitive"}]
    api.call("PATCH", f"datasets/{dataset['id']}/columns/", json={"columns": changes})
    step("roles", t)

    t = time.perf_counter()
    for column in QIS:
        path = data / f"adult_hierarchy_{column}.csv"
        with open(path, "rb") as f:
            h = api.call("POST", "hierarchies/", 201, files={"file": (path.name, f, "text/csv")},
                         data={"dataset": dataset["id"], "column": column}).json()
        if h.get("warning"):
            raise SystemExit(f"{path.name}: {h['warning']}")
    step("hierarchies", t)

    t = time.perf_counter()
    job = api.call("POST", "runs/", 201, json={"dataset": dataset["id"], "algorithm": "flash", "k": k,
                                               "suppression_percent": 5, "sensitive": SENSITIVE}).json()
    last = None
    while not job["finished_job"]:
        if (job["status"], job["phase"]) != last:
            last = (job["status"], job["phase"])
            log(f"  {job['status']}: {job['phase'] or '…'} ({job['progress'] * 100:.0f}%)")
        time.sleep(0.5)
        job = api.call("GET", f"runs/{job['id']}/").json()
    step("run (submit to done)", t)
    if job["status"] != "succeeded":
        raise SystemExit(f"the run {job['status']}: {job['message']}")

    t = time.perf_counter()
    report = api.call("GET", f"runs/{job['id']}/report/").json()
    step("report", t)
    t = time.perf_counter()
    csv_text = api.call("GET", f"runs/{job['id']}/download/").text
    step("download CSV", t)
    if out is not None:
        out.write_text(csv_text, encoding="utf-8")
    log(f"  k reached {report.get('k_achieved')}, verified {report.get('verified')}, "
        f"suppressed {report.get('suppressed')}, NCP {report.get('metrics', {}).get('ncp')}")
    log(f"{'total':<24} {sum(timings.values()):8.2f} s")
    return {"timings": timings, "report": report, "csv": csv_text, "job": job, "dataset": dataset}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the server's base URL")
    parser.add_argument("--key", required=True, help="an API key from the account page")
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "datasets"
                        / "adult", help="the folder holding adult.csv and adult_hierarchy_<column>.csv")
    parser.add_argument("--out", type=Path, help="where to write the anonymized CSV")
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args(argv)
    run(args.url, args.key, args.data, args.out, args.k)
    return 0


if __name__ == "__main__":
    sys.exit(main())
