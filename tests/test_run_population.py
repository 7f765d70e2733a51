"""δ-presence against a population dataset from the run form: /datasets/<research>/run/ with
model:delta:population = another dataset of the owner. The population is anonymized (the research rows
found in it on the shared columns, services.population.match_research, shared with the CLI's --population) and the
result keeps the research rows only. The δ figures are recounted here with pandas."""

import pandas as pd
import pytest
from anonymizer_helpers import make_dataset, run_jobs_synchronously
from django.utils.html import escape

from anonymizer_app import engine
from anonymizer_app.engine import InputError
from anonymizer_app.models import Job
from anonymizer_app.services import datasets, jobs, results
from anonymizer_app.services.population import RESEARCH_MARKER, match_research

pytestmark = pytest.mark.django_db
ROLES = {"age": "quasi-identifying", "zip": "quasi-identifying", "disease": "sensitive"}
POPULATION = "age,zip,disease\n" + "".join(f"{20 + i % 40},{10000 + i % 7},{['flu', 'cold'][i % 2]}\n"
                                           for i in range(60))
IN_STUDY = [i for i in range(60) if i % 3 == 0][::-1]  # the research subset, in its own (reversed) order


def research_text(rows=IN_STUDY):
    lines = POPULATION.splitlines()
    return "\n".join([lines[0], *(lines[1 + i] for i in rows)]) + "\n"


def post(client, ds, population, dmin=0.1, dmax=0.6, **fields):
    data = {"algorithm": "datafly", "k": 2, "suppression_percent": 0, "sensitive": "disease",
            "model:delta:enabled": "on", "model:delta:delta_min": dmin, "model:delta:delta_max": dmax,
            "model:delta:population": "" if population is None else population.pk, **fields}
    return client.post(f"/datasets/{ds.pk}/run/", data)


@pytest.fixture
def pair(user):
    population = make_dataset(user, POPULATION, "population.csv", roles=ROLES, name="Population")
    research = make_dataset(user, research_text(), "study.csv", roles=ROLES, name="Study")
    return research, population


def test_the_form_offers_the_other_datasets_as_population(client_alice, user, pair):
    research, population = pair
    html = client_alice.get(f"/datasets/{research.pk}/run/").content.decode()
    assert 'name="model:delta:population"' in html
    assert f'<option value="{population.pk}">this dataset within the population Population (60 rows)</option>' in html
    assert f'<option value="{research.pk}">' not in html  # not itself
    assert "a 0/1 column of this dataset" in html


def test_delta_presence_against_a_population_dataset(client_alice, user, pair, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    research, population = pair
    r = post(client_alice, research, population)
    job = Job.objects.get()
    assert r.status_code == 302 and r["Location"] == f"/jobs/{job.pk}/"
    assert job.status == Job.SUCCEEDED, job.message
    assert job.dataset == research and job.config["population"]["dataset"] == population.pk
    assert job.models == [{"model": "delta-presence", "delta_min": 0.1, "delta_max": 0.6,
                           "column": RESEARCH_MARKER}]

    # the population anonymized directly with the engine, the research rows marked by hand
    pop = pd.read_csv(pd.io.common.StringIO(POPULATION), dtype=str)
    marked = pop.assign(**{RESEARCH_MARKER: ["1" if i in IN_STUDY else "0" for i in range(60)]})
    table = datasets.table_from_config(marked, job.config, "Population")
    direct = engine.anonymize(table, {}, "datafly", k=2, sensitive="disease", models=jobs.build_models(job.models))
    # the stored output: exactly the research rows, in the population's order (the one rule of the gate, as
    # the CLI's), no marker column; each row remembers its row in the research dataset for the page
    output, suppressed = results.load_output(job.result)
    in_order = sorted(IN_STUDY)
    assert len(output) == len(IN_STUDY) == 20 and not direct.suppressed.any()
    assert RESEARCH_MARKER not in output.columns
    expected = direct.output.iloc[in_order].drop(columns=[RESEARCH_MARKER]).reset_index(drop=True)
    pd.testing.assert_frame_equal(output.astype(str), expected.astype(str), check_dtype=False)
    assert list(output.attrs["rows"]) == [IN_STUDY.index(i) for i in in_order]

    # δ recounted: per population class, the share of its records that are research records
    out = direct.output[~direct.suppressed]
    share = out.groupby(["age", "zip"])[RESEARCH_MARKER].apply(lambda s: (s == "1").mean())
    assert share.min() >= 0.1 - 1e-12 and share.max() <= 0.6 + 1e-12
    check = next(c for c in job.result.report["model_checks"] if c["model"] == "delta-presence")
    assert check["value"] == pytest.approx([share.min(), share.max()], abs=1e-12)
    assert check["holds"] is True
    # every research row's generalized QIs name a population class holding it
    assert set(map(tuple, output[["age", "zip"]].to_numpy())) <= set(share.index)
    rs = job.result.report["research_subset"]
    assert rs == {"population": "Population", "population_records": 60, "research_records": 20, "written": 20,
                  "suppressed": int(suppressed.sum()), "population_suppressed": int(direct.suppressed.sum()),
        "column": RESEARCH_MARKER}

    page = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert 'id="research-subset"' in page and "keep only the 20 records of the research subset" in page
    assert 'id="download-research-note"' in page
    csv_text = client_alice.get(f"/jobs/{job.pk}/result/anonymized.csv").content.decode()
    assert len(csv_text.strip().splitlines()) == 1 + 20
    assert RESEARCH_MARKER not in csv_text


def test_the_zero_one_column_option_still_works(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    text = "age,zip,research\n" + "".join(f"{20 + i % 40},{10000 + i % 7},{1 if i % 3 == 0 else 0}\n"
                                          for i in range(60))
    ds = make_dataset(user, text, "pop.csv", roles={"age": "quasi-identifying", "zip": "quasi-identifying"})
    r = post(client_alice, ds, None, sensitive="", **{"model:delta:column": "research"})
    assert r.status_code == 302
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED, job.message
    assert "population" not in job.config
    # the research rows only, and never the column that says who is in the study
    assert job.result.report["research_subset"]["research_records"] == 20
    output, _ = results.load_output(job.result)
    assert "research" not in output.columns and len(output) == 20


def test_research_rows_missing_from_the_population_are_refused(client_alice, user):
    population = make_dataset(user, POPULATION, "population.csv", roles=ROLES, name="Population")
    stranger = research_text() + "99,99999,flu\n"
    research = make_dataset(user, stranger, "study.csv", roles=ROLES)
    r = post(client_alice, research, population)
    assert r.status_code == 200 and Job.objects.count() == 0
    assert escape("population Population: 1 of the 21 research records are not in the population "
                  "(matched on age, zip, disease)") in r.content.decode()


def test_a_population_of_another_user_is_not_offered(client_alice, user, other_user, pair):
    research, _ = pair
    foreign = make_dataset(other_user, POPULATION, "population.csv", roles=ROLES)
    r = post(client_alice, research, foreign)
    assert r.status_code == 200 and Job.objects.count() == 0
    assert "Select a valid choice" in r.content.decode()


def test_the_population_must_hold_the_quasi_identifiers(client_alice, user):
    population = make_dataset(user, "age,disease\n" + "".join(f"{20 + i},flu\n" for i in range(10)), "pop.csv",
                              roles={"age": "quasi-identifying", "disease": "sensitive"}, name="Ages")
    research = make_dataset(user, research_text(), "study.csv", roles=ROLES)
    r = post(client_alice, research, population)
    assert r.status_code == 200 and Job.objects.count() == 0
    assert escape("population Ages: no column 'zip' (a quasi-identifier of the research subset)") in r.content.decode()


def test_match_research_pairs_duplicates_once_each():
    population = pd.DataFrame({"a": ["x", "y", "x", "x"], "b": ["1", "2", "1", "3"]})
    research = pd.DataFrame({"a": ["x", "x"], "b": ["1", "1"]})
    marked, positions = match_research(research, population, "m")
    assert list(positions) == [0, 2] and list(marked["m"]) == ["1", "0", "1", "0"]
    with pytest.raises(InputError, match="1 of the 3 research records are not in the population"):
        match_research(pd.concat([research, research.iloc[:1]]), population, "m")
    with pytest.raises(InputError, match="share no column"):
        match_research(pd.DataFrame({"z": ["1"]}), population, "m")


def test_the_configuration_names_the_population(client_alice, user, pair, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    research, population = pair
    post(client_alice, research, population)
    job = Job.objects.get()
    config = client_alice.get(f"/jobs/{job.pk}/config.json").json()
    assert config["population"]["dataset"] == population.pk and config["population"]["research_records"] == 20


def test_a_research_share_outside_the_bounds_is_refused_before_the_run(client_alice, user, pair, monkeypatch):
    # 20 of the 60 population records are in the research subset: with no suppression every class layout keeps
    # the share 1/3 somewhere, outside [0.5, 0.6] (services.jobs checks the models against the population)
    run_jobs_synchronously(monkeypatch)
    research, population = pair
    r = post(client_alice, research, population, dmin=0.5, dmax=0.6)
    assert r.status_code == 200 and Job.objects.count() == 0
    assert escape("delta_min=0.5 and delta_max=0.6 but 0.333 of the population is in the research subset") in \
        r.content.decode()
