"""Locust users for benchmarks/bench_load.py: people browsing, uploading Adult and running jobs.

Each simulated user logs in with its own account (load-<n>, made by bench_load.py with the demo data
loaded), then, weighted: browses the dataset list, a dataset, its columns, the jobs list, a job and
its result (most requests); uploads the Adult CSV; runs Flash or Datafly k=5 on the demo Adult
dataset and polls the job until it ends. Job latency (submit to a final state) is recorded as its
own request type "JOB", so the page percentiles stay page percentiles.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import time
from pathlib import Path

from locust import HttpUser, between, events, task

ADULT = Path(os.environ.get("LOAD_ADULT_CSV", Path(__file__).resolve().parents[2] / "shared/datasets/adult/adult.csv"))
PASSWORD = os.environ.get("LOAD_PASSWORD", "load-password-1")
USERS = int(os.environ.get("LOAD_USERS", "20"))
JOB_TIMEOUT = 300.0
_numbers = itertools.count()
DATASET_LINK = re.compile(r'href="/datasets/(\d+)/"')
DATASET_PAGE = re.compile(r"/datasets/\d+/$")
# the jobs list links a finished job to its result, others to their page
JOB_LINK = re.compile(r'href="/jobs/([0-9a-f-]{36})/(result/)?"')


class Steward(HttpUser):
    wait_time = between(1, 3)

    def on_start(self) -> None:
        self.username = f"load-{next(_numbers) % USERS}"
        self.client.get("/accounts/login/", name="login page")
        self.client.post("/accounts/login/", {"username": self.username, "password": PASSWORD,
                                              "csrfmiddlewaretoken": self._csrf()}, name="log in")
        page = self.client.get("/", name="datasets").text
        self.datasets = [int(d) for d in dict.fromkeys(DATASET_LINK.findall(page))]
        self.adult = self._adult_dataset()

    def _csrf(self) -> str:
        return self.client.cookies.get("csrftoken", "")

    def _adult_dataset(self) -> int | None:
        for ds in self.datasets:
            if "Adult" in self.client.get(f"/datasets/{ds}/", name="dataset").text[:4000]:
                return ds
        return None

    @task(6)
    def browse_datasets(self) -> None:
        self.client.get("/", name="datasets")
        for ds in self.datasets[:2]:
            self.client.get(f"/datasets/{ds}/", name="dataset")
            self.client.get(f"/datasets/{ds}/columns/", name="columns")
            self.client.get(f"/datasets/{ds}/run/", name="run form")

    @task(4)
    def browse_jobs(self) -> None:
        page = self.client.get("/jobs/", name="jobs").text
        for job in list(dict.fromkeys(job for job, _ in JOB_LINK.findall(page)))[:2]:
            detail = self.client.get(f"/jobs/{job}/", name="job")
            if f"/jobs/{job}/result/" in detail.text:
                self.client.get(f"/jobs/{job}/result/", name="result")

    @task(1)
    def upload_adult(self) -> None:
        with ADULT.open("rb") as fh:
            with self.client.post("/datasets/upload/", {"csrfmiddlewaretoken": self._csrf(), "name": "Adult (load)"},
                                  files={"file": ("adult.csv", fh, "text/csv")}, name="upload Adult",
                                  catch_response=True) as r:
                if not DATASET_PAGE.search(r.url or ""):  # a refused upload comes back to the upload form
                    r.failure(f"not stored: ended on {r.url} (HTTP {r.status_code})")

    @task(2)
    def run_job(self) -> None:
        if self.adult is None:
            return
        algorithm = "flash" if time.monotonic_ns() % 2 else "datafly"
        start = time.perf_counter()
        r = self.client.post(f"/datasets/{self.adult}/run/", {
            "csrfmiddlewaretoken": self._csrf(), "algorithm": algorithm, "k": 5, "suppression_percent": 4, "suppressed_rows": "remove",
            "sensitive": "occupation"}, name="submit job", allow_redirects=False)
        match = re.search(r"/jobs/([0-9a-f-]{36})/", r.headers.get("Location", ""))
        if r.status_code != 302 or not match:
            events.request.fire(request_type="JOB", name=f"{algorithm} k=5 on Adult", response_time=0,
                                response_length=0, exception=RuntimeError(f"not queued: HTTP {r.status_code}"))
            return
        job, status = match.group(1), ""
        while time.perf_counter() - start < JOB_TIMEOUT:
            status = self.client.get(f"/jobs/{job}/status/", name="job status").json().get("status", "")
            if status in ("succeeded", "failed", "cancelled"):
                break
            time.sleep(0.7)  # as the job page polls (static/js/job.js)
        error = None if status == "succeeded" else RuntimeError(f"job ended {status or 'never'}")
        events.request.fire(request_type="JOB", name=f"{algorithm} k=5 on Adult",
                            response_time=(time.perf_counter() - start) * 1000, response_length=0, exception=error)


# Every page request's time, written at the end, so that bench_load.py computes exact percentiles
# over all pages together (locust's aggregate row would mix in the JOB latencies).
PAGE_TIMES: list[tuple[str, float, bool]] = []


@events.request.add_listener
def _record(request_type, name, response_time, exception=None, **_kwargs) -> None:
    if request_type != "JOB":
        PAGE_TIMES.append((f"{request_type} {name}", float(response_time), exception is None))


@events.quitting.add_listener
def _write(environment, **_kwargs) -> None:
    target = os.environ.get("LOAD_TIMES_FILE")
    if target:
        Path(target).write_text(json.dumps(PAGE_TIMES))
