"""Issue 26's eight-record case through the command line and the HTTP API: 8 population records, 3 in the research
subset, k = 2 and distinct 2-diversity with δ-presence (0, 0.9) or k-map against the population (2). Before the
fix both paths published `30,M,flu / 40,F,flu / 40,F,hiv` (a class of one research record with one disease) and
reported k achieved 4. Now every published class holds at least 2 research records with 2 diseases, recounted
here from the published rows alone, and the report's k figures are the published ones."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest
from api_helpers import api_for, eager_celery, set_roles, upload  # noqa: F401
from test_cli_anonymize import call, read_text_table

from anonymizer_app.models import Job
from anonymizer_app.services import results

ROWS = [("30", "M", "flu", "1"), ("30", "F", "flu", "0"), ("40", "F", "flu", "1"), ("40", "F", "hiv", "1"),
        ("30", "M", "hiv", "0"), ("30", "F", "hiv", "0"), ("40", "M", "flu", "0"), ("40", "M", "hiv", "0")]
CSV = "age,sex,dis,res\n" + "".join(",".join(r) + "\n" for r in ROWS)
MODELS = {"delta": ["--delta-min", "0", "--delta-max", "0.9"], "kmap": ["--kmap-population", "2"]}


def recount(published: list[tuple[str, str, str]]) -> tuple[int, int]:
    """(smallest class, fewest distinct diseases in a class) over the published (age, sex, disease) rows."""
    classes: dict[tuple, list[str]] = defaultdict(list)
    for age, sex, dis in published:
        classes[(age, sex)].append(dis)
    return min(len(v) for v in classes.values()), min(len(set(v)) for v in classes.values())


@pytest.mark.parametrize("algorithm", ["flash", "mondrian", "datafly", "kmember"])
@pytest.mark.parametrize("model", sorted(MODELS))
def test_the_cli_publishes_k_anonymous_and_2_diverse_research_rows(tmp_path, algorithm, model):
    (tmp_path / "pop.csv").write_text(CSV)
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    code, message, _ = call(tmp_path / "pop.csv", "--qi", "age", "--qi", "sex", "--sensitive", "dis",
                            "--research-column", "res", *MODELS[model], "--k", "2", "--l", "2",
                            "--algorithm", algorithm, "--out", out, "--report", report, "--quiet")
    assert code == 0, message
    output = read_text_table(out, ",")
    assert list(output.columns) == ["age", "sex", "dis"]
    published = list(output.itertuples(index=False, name=None))
    assert sorted(r[2] for r in published) == ["flu", "flu", "hiv"]  # the 3 research records, nothing else
    assert recount(published) == (3, 2)  # one class: the 3 research records (2 each would need 2 flu classes)
    rep = json.loads(report.read_text())
    assert (rep["k_achieved"], rep["min_class_size"], rep["equivalence_classes"]) == (3, 3, 1)
    assert all(c["holds"] for c in rep["model_checks"])
    assert rep["research_subset"]["research_records"] == 3 and rep["research_subset"]["written"] == 3


@pytest.mark.django_db
@pytest.mark.parametrize("group,fields", [
    ("delta", {"model:delta:delta_min": 0, "model:delta:delta_max": 0.9}),
    ("kmap_table", {"model:kmap_table:kmap_table_k": 2}),
])
def test_the_api_publishes_k_anonymous_and_2_diverse_research_rows(user, eager_celery, group, fields):  # noqa: F811
    api = api_for(user)
    ds = upload(api, CSV.encode(), "pop.csv").json()
    set_roles(api, ds["id"], qi=("age", "sex"), sensitive=("dis",))
    run = {"dataset": ds["id"], "algorithm": "flash", "k": 2, "suppression_percent": 0, "sensitive": "dis",
           "fields": {"model:l:enabled": True, "model:l:variant": "distinct", "model:l:l": 2, "model:l:column": "dis",
                      f"model:{group}:enabled": True, f"model:{group}:column": "res", **fields}}
    r = api.post("/api/v1/runs/", run)
    assert r.status_code == 201, r.content
    polled = api.get(f"/api/v1/runs/{r.json()['id']}/").json()
    assert polled["status"] == "succeeded", polled
    job = Job.objects.get(pk=r.json()["id"])
    rows, suppressed = results.load_output(job.result)
    kept = rows[~suppressed]
    published = list(zip(kept["age"], kept["sex"], kept["dis"]))
    assert sorted(Counter(d for _, _, d in published).items()) == [("flu", 2), ("hiv", 1)]
    assert recount(published) == (3, 2)
    assert "res" not in rows.columns

