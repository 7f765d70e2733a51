"""An independent recheck of the SDC gate's promises, sharing no code with the engine: runs are made through the API
(the way a user makes them), the published CSV is downloaded, and plain Python loops recount it.

- local suppression to k (after recoding, or alone): every published record is compatible with at least k - 1
  other records on the key variables, a missing cell ('*', empty) matching any value (sdcMicro's rule);
- microaggregation to k: every published vector of the aggregated numeric variables occurs at least k times;
- a table with a person-id column: SDC methods are refused, naming the method.

Tables: sdcMicro's testdata (samples of 250 records, several seeds) and Adult (samples of 200 records)."""

from __future__ import annotations

import csv
import io
import random
from collections import Counter
from pathlib import Path

import pytest
from api_helpers import api_for, eager_celery, upload  # noqa: F401

from anonymizer_app.models import Job

pytestmark = pytest.mark.django_db

HERE = Path(__file__).resolve().parent
TESTDATA = HERE / "sdcmicro_reference" / "testdata.csv"
ADULT = HERE.parent / "anonymizer_app" / "demo_data" / "adult" / "adult.csv"
TD_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
ADULT_KEYS = ["sex", "age", "race", "marital-status"]
MISSING = {"", "*", "NA"}


def sample(path: Path, rows: int, seed: int) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="") as f:
        reader = csv.reader(f, delimiter=";" if ";" in f.readline() else ",")
        f.seek(0)
        header = [h.strip() for h in next(reader)]
        body = [[c.strip() for c in row] for row in reader if row]
    random.Random(seed).shuffle(body)
    return header, body[:rows]


def as_csv(header: list[str], rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode()


def published(api, job_id: str) -> tuple[list[str], list[list[str]]]:
    r = api.get(f"/api/v1/runs/{job_id}/download/", {"format": "csv"})
    assert r.status_code == 200, r.content[:300]
    text = (b"".join(r.streaming_content) if r.streaming else r.content).decode()
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]


def compatible_counts(rows: list[list[str]], keys: list[int]) -> list[int]:
    """For each record, how many OTHER records agree with it on every key (a missing cell on either side agrees)."""
    counts = []
    for i, a in enumerate(rows):
        n = 0
        for j, b in enumerate(rows):
            if i == j:
                continue
            if all(a[c] in MISSING or b[c] in MISSING or a[c] == b[c] for c in keys):
                n += 1
        counts.append(n)
    return counts


def make_dataset(api, header, rows, keys, extra_roles=()) -> int:
    r = upload(api, as_csv(header, rows), "sample.csv")
    assert r.status_code == 201, r.content
    ds = r.json()["id"]
    roles = [{"name": c, "role": "quasi-identifying"} for c in keys] + list(extra_roles)
    r = api.patch(f"/api/v1/datasets/{ds}/columns/", {"columns": roles})
    assert r.status_code == 200, r.content
    return ds


def run(api, ds, algorithm, k, fields) -> str:
    r = api.post("/api/v1/runs/", {"dataset": ds, "algorithm": algorithm, "k": k, "suppression_percent": 0,
                                   "fields": fields})
    assert r.status_code == 201, r.content
    job = Job.objects.get(pk=r.json()["id"])
    assert job.status == Job.SUCCEEDED, job.message
    return str(job.pk)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_local_suppression_alone_on_testdata(user, eager_celery, seed, k):  # noqa: F811
    api = api_for(user)
    header, rows = sample(TESTDATA, 250, seed)
    ds = make_dataset(api, header, rows, TD_KEYS)
    job = run(api, ds, "full-domain", 1, {"option:full-domain:levels": ",".join("0" * len(TD_KEYS)),
                                          "sdc:local_suppression:enabled": True, "sdc:local_suppression:k": k})
    out_header, out = published(api, job)
    keys = [out_header.index(c) for c in TD_KEYS]
    assert len(out) == len(rows)  # local suppression blanks cells, it removes no record
    counts = compatible_counts(out, keys)
    violations = [(i, c) for i, c in enumerate(counts) if c < k - 1]
    assert not violations, violations[:10]
    # and the suppression did something: the input itself was not k-anonymous
    assert min(compatible_counts(rows, [header.index(c) for c in TD_KEYS])) < k - 1


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("k", [3, 4])
def test_recoding_plus_local_suppression_on_adult(user, eager_celery, seed, k):  # noqa: F811
    """Age recoded one level up a masking hierarchy (39 -> 3#), then local suppression to k; the CSV must hold
    k with a missing cell as a wildcard."""
    api = api_for(user)
    header, rows = sample(ADULT, 200, seed)
    ds = make_dataset(api, header, rows, ADULT_KEYS)
    r = api.post("/api/v1/hierarchies/build/", {"dataset": ds, "column": "age", "builder": "masking",
                                                "options": {"mask": "#"}})
    assert r.status_code == 201, r.content
    job = run(api, ds, "full-domain", 1, {"option:full-domain:levels": "0,1,0,0",
                                          "sdc:local_suppression:enabled": True, "sdc:local_suppression:k": k,
                                          "sdc_seed": seed})
    out_header, out = published(api, job)
    keys = [out_header.index(c) for c in ADULT_KEYS]
    ages = [r[out_header.index("age")] for r in out]
    assert all(a in MISSING or a.endswith("#") for a in ages), ages[:10]  # the recoding is in the release
    counts = compatible_counts(out, keys)
    assert not [c for c in counts if c < k - 1]


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("k", [3, 5])
def test_microaggregation_vectors_occur_k_times(user, eager_celery, seed, k):  # noqa: F811
    api = api_for(user)
    header, rows = sample(TESTDATA, 200, seed)
    ds = make_dataset(api, header, rows, ["sex"], [{"name": c, "role": "insensitive"}
                                                   for c in ("expend", "income", "savings")])
    job = run(api, ds, "full-domain", 1, {"option:full-domain:levels": "0",
                                          "sdc:microaggregation:enabled": True,
                                          "sdc:microaggregation:variables": "expend,income,savings",
                                          "sdc:microaggregation:k": k})
    out_header, out = published(api, job)
    cols = [out_header.index(c) for c in ("expend", "income", "savings")]
    vectors = Counter(tuple(float(r[c]) for c in cols) for r in out)
    assert sum(vectors.values()) == len(rows)
    assert min(vectors.values()) >= k, sorted(vectors.values())[:5]
    # the numbers did change (the vectors of the input were mostly unique)
    assert len(vectors) < len({tuple(r[header.index(c)] for c in ("expend", "income", "savings")) for r in rows})


@pytest.mark.parametrize("method,fields", [
    ("Local suppression", {"sdc:local_suppression:enabled": True, "sdc:local_suppression:k": 3}),
    ("Microaggregation", {"sdc:microaggregation:enabled": True, "sdc:microaggregation:variables": "income",
                          "sdc:microaggregation:k": 3}),
])
def test_person_id_table_refuses_sdc_methods_by_name(user, eager_celery, method, fields):  # noqa: F811
    api = api_for(user)
    header, rows = sample(TESTDATA, 120, 0)
    ds = make_dataset(api, header, rows, TD_KEYS[:3], [{"name": "ori_hid", "role": "person id"},
                                                       {"name": "income", "role": "insensitive"}])
    before = Job.objects.count()
    r = api.post("/api/v1/runs/", {"dataset": ds, "algorithm": "full-domain", "k": 1, "suppression_percent": 0,
                                   "fields": {"option:full-domain:levels": "0,0,0", **fields}})
    assert r.status_code == 400, r.content
    detail = str(r.json())
    assert method in detail and "person id" in detail, detail
    assert Job.objects.count() == before
