"""k-map against a population table from the run form (/datasets/<id>/run/, model:kmap_table:*) and from
`manage.py anonymize --kmap-population K` (--population FILE or --research-column COL). Ten people in three
zones; the research subset is rows 0, 3 and 6. Every figure is counted by hand below (each QI's default
hierarchy is value -> *):

    row  zone sex  research          (zone, sex)   classes holding a research record (population records)
    0    z1   M    yes               raw:          (z1,M) 2, (z2,F) 2, (z3,M) 1  -> 2-map fails on (z3,M)
    1    z1   M                      zone *:       (*,M) 4, (*,F) 6              -> holds
    2    z1   F                      sex *:        (z1,*) 3, (z2,*) 3, (z3,*) 4  -> holds (smallest 3)
    3    z2   F    yes
    4    z2   F
    5    z2   M
    6    z3   M    yes
    7-9  z3   F
"""

from __future__ import annotations

import io

import pandas as pd
import pytest
from anonymizer_helpers import make_dataset, run_jobs_synchronously
from django.core.management import CommandError, call_command
from django.utils.html import escape

from anonymizer_app.models import Job
from anonymizer_app.services import results
from anonymizer_app.services.population import RESEARCH_MARKER

ROWS = [("z1", "M"), ("z1", "M"), ("z1", "F"), ("z2", "F"), ("z2", "F"), ("z2", "M"), ("z3", "M"), ("z3", "F"),
        ("z3", "F"), ("z3", "F")]
RESEARCH = [0, 3, 6]
ROLES = {"zone": "quasi-identifying", "sex": "quasi-identifying"}
POPULATION = "zone,sex\n" + "".join(f"{z},{s}\n" for z, s in ROWS)
STUDY = "zone,sex\n" + "".join(f"{ROWS[i][0]},{ROWS[i][1]}\n" for i in RESEARCH)


def post(client, ds, population, k_map=2, **fields):
    data = {"algorithm": "flash", "k": 1, "suppression_percent": 0, "sensitive": "",
            "model:kmap_table:enabled": "on", "model:kmap_table:kmap_table_k": k_map,
            "model:kmap_table:population": "" if population is None else population.pk, **fields}
    return client.post(f"/datasets/{ds.pk}/run/", data)


@pytest.fixture
def pair(user):
    population = make_dataset(user, POPULATION, "population.csv", roles=ROLES, name="Population")
    study = make_dataset(user, STUDY, "study.csv", roles=ROLES, name="Study")
    return study, population


def published_classes(output: pd.DataFrame) -> dict:
    """Per published (zone, sex), the population records it matches, counted here on the population rows."""
    population = pd.DataFrame(ROWS, columns=["zone", "sex"])
    sizes = {}
    for zone, sex in output[["zone", "sex"]].itertuples(index=False):
        match = population[((population["zone"] == zone) | (zone == "*")) & ((population["sex"] == sex) | (sex == "*"))]
        sizes[(zone, sex)] = len(match)
    return sizes


@pytest.mark.django_db
def test_the_form_offers_k_map_with_the_population_choice(client_alice, pair):
    study, population = pair
    html = client_alice.get(f"/datasets/{study.pk}/run/").content.decode()
    assert 'name="model:kmap_table:enabled"' in html and "k-map (population table)" in html
    assert 'name="model:kmap_table:kmap_table_k"' in html
    assert f'<option value="{population.pk}">this dataset within the population Population (10 rows)</option>' in html


@pytest.mark.django_db
def test_k_map_against_a_population_dataset(client_alice, pair, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    study, population = pair
    r = post(client_alice, study, population)
    job = Job.objects.get()
    assert r.status_code == 302 and job.status == Job.SUCCEEDED, job.message
    assert job.models == [{"model": "k-map-population-table", "kmap_table_k": 2, "column": RESEARCH_MARKER}]
    output, suppressed = results.load_output(job.result)
    assert len(output) == 3 and not suppressed.any() and RESEARCH_MARKER not in output.columns
    # Flash (discernibility) takes sex -> *: classes of 3, 3, 4 (9 + 9 + 16) beat zone -> * (4, 6: 16 + 36)
    assert output[["zone", "sex"]].to_numpy().tolist() == [["z1", "*"], ["z2", "*"], ["z3", "*"]]
    assert published_classes(output) == {("z1", "*"): 3, ("z2", "*"): 3, ("z3", "*"): 4}
    check = next(c for c in job.result.report["model_checks"] if c["model"] == "k-map-population-table")
    assert check["holds"] is True and check["value"] == 3
    assert job.result.report["research_subset"]["research_records"] == 3
    page = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert "2-map against the population table" in page
    assert "Anonymized within the population <strong>Population</strong>" in page
    assert "keep only the 3 records of the research subset" in page


@pytest.mark.django_db
def test_k_map_above_the_population_is_refused_before_the_run(client_alice, pair, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    study, population = pair
    r = post(client_alice, study, population, k_map=11)
    assert r.status_code == 200 and Job.objects.count() == 0
    assert escape("k-map: k=11 but the population table holds only 10 records") in r.content.decode()


@pytest.mark.django_db
def test_k_map_on_a_zero_one_column(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    text = "zone,sex,study\n" + "".join(f"{z},{s},{int(i in RESEARCH)}\n" for i, (z, s) in enumerate(ROWS))
    ds = make_dataset(user, text, "marked.csv", roles=ROLES)
    r = post(client_alice, ds, None, **{"model:kmap_table:column": "study"})
    assert r.status_code == 302
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED, job.message
    output, _ = results.load_output(job.result)
    assert "study" not in output.columns and len(output) == 3


@pytest.mark.django_db
def test_two_models_on_different_research_subsets_are_refused(client_alice, pair):
    study, population = pair
    r = post(client_alice, study, population, **{"model:delta:enabled": "on", "model:delta:delta_min": 0,
                                                 "model:delta:delta_max": 1, "model:delta:population": ""})
    assert r.status_code == 200 and Job.objects.count() == 0
    assert escape("δ-presence and k-map (population table) apply to one research subset") in r.content.decode()


def run_cli(*args) -> tuple[int, str]:
    """In-process: (exit status, the error message)."""
    try:
        call_command("anonymize", *map(str, args), stdout=io.StringIO(), stderr=io.StringIO())
    except CommandError as exc:
        return exc.returncode, str(exc)
    return 0, ""


def test_the_cli_with_a_population_file(tmp_path):
    (tmp_path / "pop.csv").write_text(POPULATION)
    (tmp_path / "study.csv").write_text(STUDY)
    out = tmp_path / "out.csv"
    report = tmp_path / "r.json"
    code, err = run_cli(tmp_path / "study.csv", "--qi", "zone", "--qi", "sex", "--k", "1", "--algorithm", "flash",
                        "--kmap-population", "2", "--population", tmp_path / "pop.csv", "--out", out,
                        "--report", report, "--quiet")
    assert code == 0, err
    written = pd.read_csv(out, dtype=str)
    assert written.to_numpy().tolist() == [["z1", "*"], ["z2", "*"], ["z3", "*"]]
    assert published_classes(written) == {("z1", "*"): 3, ("z2", "*"): 3, ("z3", "*"): 4}


def test_the_cli_with_a_research_column_and_the_raw_node(tmp_path):
    text = "zone,sex,study\n" + "".join(f"{z},{s},{'yes' if i in RESEARCH else 'no'}\n" for i, (z, s) in enumerate(ROWS))
    (tmp_path / "pop.csv").write_text(text)
    out = tmp_path / "out.csv"
    # the raw table breaks 2-map on (z3,M): one population record
    code, err = run_cli(tmp_path / "pop.csv", "--qi", "zone", "--qi", "sex", "--k", "1", "--algorithm", "full-domain",
                        "--levels", "0,0", "--kmap-population", "2", "--research-column", "study", "--out", out)
    assert code == 1 and "2-map against the population table" in err and not out.exists()
    # a third may be suppressed (the budget is a share of the 3 research records: definitions.md, "The unit
    # counted"): the research record of (z3,M), row 6, is suppressed; the others are published raw
    code, err = run_cli(tmp_path / "pop.csv", "--qi", "zone", "--qi", "sex", "--k", "1", "--algorithm", "full-domain",
                        "--levels", "0,0", "--suppression", "0.34", "--kmap-population", "2",
                        "--research-column", "study", "--out", out, "--quiet")
    assert code == 0, err
    assert pd.read_csv(out, dtype=str).to_numpy().tolist() == [["z1", "M"], ["z2", "F"]]


@pytest.mark.parametrize("args,message", [
    (["--kmap-population", "2"], "--kmap-population needs the research subset: --population FILE or "
                                 "--research-column COL"),
    (["--kmap-population", "0", "--research-column", "study"], "kmap_table_k must be at least 1, got 0"),
    (["--kmap-population", "11", "--research-column", "study"],
     "k-map: k=11 but the population table holds only 10 records"),
])
def test_the_cli_refuses_bad_flags(tmp_path, args, message):
    text = "zone,sex,study\n" + "".join(f"{z},{s},{int(i in RESEARCH)}\n" for i, (z, s) in enumerate(ROWS))
    (tmp_path / "pop.csv").write_text(text)
    out = tmp_path / "out.csv"
    code, err = run_cli(tmp_path / "pop.csv", "--qi", "zone", "--qi", "sex", "--k", "1", *args, "--out", out)
    assert code == 2 and message in err and not out.exists()
