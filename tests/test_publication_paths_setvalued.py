"""One set-valued specification, three ways in, one publication: the web job (its records download), the CLI
(`manage.py anonymize --transactions` with --out and --report) and the engine API (pipeline.run with a
TransactionSet) publish byte-identical records and equal reports (the run's wall-clock time aside), on the
seeds' worked examples; and a table with a set-valued column (mixed mode) gives equal set-column reports
through the web job and the CLI."""

from __future__ import annotations

import io
import json

import pytest
from anonymizer_helpers import make_dataset
from django.core.management import call_command
from setvalued_helpers import (
    BASKETS,
    FIGURE_22,
    FOOD,
    MILK,
    PAYMENTS,
    TABLE_19,
    item_hierarchy,
    transaction_dataset,
)

from anonymizer_app.engine import read_hierarchy
from anonymizer_app.engine.run.pipeline import run
from anonymizer_app.engine.run.spec import RunSpec, TransactionSet
from anonymizer_app.engine.setvalued import parse_transactions
from anonymizer_app.models import Job
from anonymizer_app.services import exports, jobs, setvalued

pytestmark = pytest.mark.django_db

CASES = {
    "milk": (MILK, "milk.txt", False, "apriori", FOOD),
    "table 19": (TABLE_19, "t19.txt", True, "apriori", FIGURE_22),
    "table 16": (PAYMENTS, "payments.txt", True, "dynamic", None),
}


def timeless(report: dict) -> dict:
    return {key: value for key, value in report.items() if key != "seconds"}


@pytest.mark.parametrize("case", CASES)
def test_web_cli_and_engine_publish_the_same_records_and_report(client_alice, user, tmp_path, case):
    text, filename, record_id, algorithm, hierarchy_text = CASES[case]
    (tmp_path / filename).write_text(text)
    # the web job
    ds = transaction_dataset(user, text, filename, record_id=record_id)
    hierarchy = item_hierarchy(user, hierarchy_text) if hierarchy_text else None
    job = jobs.run_job(setvalued.create_set_job(ds, algorithm, 2, 2, True, hierarchy))
    assert job.status == Job.SUCCEEDED, job.message
    web = client_alice.get(f"/jobs/{job.pk}/result/records.txt").content.decode()
    # the CLI
    args = [str(tmp_path / filename), "--transactions", "--k", "2", "--m", "2", "--set-algorithm", algorithm,
            "--out", str(tmp_path / "out.txt"), "--report", str(tmp_path / "r.json"), "--quiet"]
    if record_id:
        args.append("--record-id")
    if hierarchy_text:
        (tmp_path / "h.csv").write_text(hierarchy_text)
        args += ["--item-hierarchy", str(tmp_path / "h.csv")]
    call_command("anonymize", *args, stdout=io.StringIO(), stderr=io.StringIO())
    cli = (tmp_path / "out.txt").read_text()
    # the engine API
    tx = parse_transactions(text.splitlines(), ",", has_id=record_id)
    tree = read_hierarchy(tmp_path / "h.csv", "items") if hierarchy_text else None
    publication = run(RunSpec.build(TransactionSet(tx, 2, algorithm, tree, True, ",", ds.name), k=2))
    engine = "".join(exports.transaction_lines(publication.table, ","))
    assert web == cli == engine
    cli_report = json.loads((tmp_path / "r.json").read_text())
    web_report = job.result.report
    for report in (cli_report, web_report, publication.report):  # the input's name is the only other difference
        report["layout"].pop("name")
    assert timeless(web_report) == timeless(cli_report) == timeless(json.loads(json.dumps(publication.report)))


def test_mixed_mode_web_and_cli_report_the_same_set_column(client_alice, user, tmp_path, monkeypatch):
    from anonymizer_helpers import run_jobs_synchronously

    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user, BASKETS, "baskets.csv", roles={"id": "identifying", "age": "quasi-identifying",
                                                           "sex": "quasi-identifying"})
    setvalued.mark_set_column(ds, "basket", "|")
    client_alice.post(f"/datasets/{ds.pk}/run/", {"algorithm": "datafly", "k": 3, "suppression_percent": 0,
                                                  "set-m": 2, "set-set_algorithm": "dynamic"})
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED, job.message
    (tmp_path / "baskets.csv").write_text(BASKETS)
    call_command("anonymize", str(tmp_path / "baskets.csv"), "--identifier", "id", "--qi", "age", "--qi", "sex",
                 "--set-column", "basket", "--item-delimiter", "|", "--m", "2", "--set-algorithm", "dynamic",
                 "--algorithm", "datafly", "--k", "3", "--out", str(tmp_path / "o.csv"), "--report",
                 str(tmp_path / "r.json"), "--quiet", stdout=io.StringIO(), stderr=io.StringIO())
    web = client_alice.get(f"/jobs/{job.pk}/result/anonymized.csv").content.decode()
    assert web == (tmp_path / "o.csv").read_text()
    assert job.result.report["set_column"] == json.loads((tmp_path / "r.json").read_text())["set_column"]
