"""One figure reads the same everywhere (issue 29): a real run (the Adult demo with its hierarchies, Flash, k=5,
distinct 2-diversity and t-closeness on occupation) rendered through every surface — the result page's cards
and "All metrics", the risk page, the release report, the API's labels and the command line's summaries — shows
each figure with the catalogue's label and the catalogue's text (engine.measure.figure_catalogue)."""

from __future__ import annotations

import html as html_lib
import io
import json
import re

import pytest
from api_helpers import api_for
from django.core.management import call_command

from anonymizer_app.demo import DEMO_DIR, DEMOS, load_demo
from anonymizer_app.engine.measure.figure_catalogue import (
    FIGURES,
    RUN_METRICS,
    format_check,
    format_figure,
    format_kind,
)
from anonymizer_app.services import jobs

pytestmark = pytest.mark.django_db

MODELS = [{"model": "distinct-l-diversity", "l": 2, "column": "occupation"},
          {"model": "t-closeness", "t": 0.3, "column": "occupation"}]
# the figures a run's risk page shows beside the run's own (same definition, the published rows, no suppression)
RISK_SHARED = ["equivalence_classes", "min_class_size", "sample_uniques", "prosecutor_risk_highest",
               "prosecutor_risk_average", "records_at_risk", "marketer_risk"]


def text(fragment: str) -> str:
    """A piece of HTML as read: tags dropped, entities decoded, spaces collapsed."""
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def element(page: str, element_id: str, end: str) -> str:
    start = page.index(">", page.index(f'id="{element_id}"')) + 1
    return page[start:page.index(end, start)]


@pytest.fixture
def run(user):
    """The Adult demo run (the media folder is each test's: one test walks every surface)."""
    adult = load_demo(user)[0]
    job = jobs.run_job(jobs.create_job(adult, "flash", 5, 0.0, "occupation", {}, MODELS))
    assert job.result is not None, job.error
    return user, job


def expected(report: dict) -> dict[str, tuple[str, str, str]]:
    """key -> (label, text before, text after) as the catalogue words and formats them."""
    after, before = report["metrics"], report["metrics_before"]
    return {key: (FIGURES[key].label, format_figure(key, before.get(key)), format_figure(key, after.get(key)))
            for key in RUN_METRICS if key in after}


def test_the_run_has_every_kind_of_figure(run):
    report = run[1].result.report
    assert set(RUN_METRICS) <= set(report["metrics"])  # utility, risk, classes, homogeneity (a sensitive column)
    assert [c["model"] for c in report["model_checks"]] == ["k-anonymity", "distinct-l-diversity", "t-closeness"]
    # the catalogue's kinds: percentages for risks and shares, separators for counts, fixed decimals for ratios
    assert format_figure("marketer_risk", 0.4988) == "49.9%" and format_figure("records_at_risk", 0) == "0%"
    assert format_figure("discernibility", 179042686) == "179,042,686"
    assert format_figure("ncp", 0.45) == "0.450" and format_figure("mean_class_size", 16.0666) == "16.1"
    assert format_figure("l", 2.0) == "2" and format_kind("ratio", None) == "—"


def check_result_page_cards_and_all_metrics(client, run):
    job = run[1]
    page = client.get(f"/jobs/{job.pk}/result/").content.decode()
    want = expected(job.result.report)
    for key, (label, before, after) in want.items():
        row = text(element(page, f"metric-{key}", "</tr>"))
        assert row.startswith(f"{label} {before} {after}"), (key, row)
    # the readings quote the figures as the figures read: the mean EC size in "about ... records per group"
    classes = text(element(page, "metric-equivalence_classes", "</tr>"))
    assert f"(about {want['mean_class_size'][2]} records per group)" in classes, classes
    cards = [k for k in want if f'id="stat-{k}"' in page]
    assert {"equivalence_classes", "ncp", "prosecutor_risk_highest", "records_at_risk"} <= set(cards)
    for key in cards:
        card = page[page.index(f'id="stat-{key}"'):][:3000]
        shown = (re.search(r'class="stat-label">([^<]*?) <', card).group(1),
                 re.search(r'class="stat-before" title="before">([^<]*) →<', card).group(1),
                 re.search(r'class="after">([^<]*)<', card).group(1))
        assert tuple(map(html_lib.unescape, shown)) == want[key], (key, shown)
    k = job.result.report["k_achieved"]
    assert text(element(page, "k-achieved", "</span>")).endswith(format_figure("k_achieved", k))
    model_cards = page[page.index('id="model-cards"'):]
    for i, check in enumerate(job.result.report["model_checks"], start=1):
        card = text(element(model_cards, f"model-{i}", "</div>\n    </div>"))
        assert f"{check['value_label']}: {format_check(check)}" in card, card


def check_risk_page(client, run):
    job = run[1]
    page = client.get(f"/jobs/{job.pk}/result/risk/").content.decode()
    table = element(page, "risk-before-after", "</table>")
    want = expected(job.result.report)
    for key in RISK_SHARED:
        label, before, after = want[key]
        row = text(element(table, f"risk-{key}", "</tr>"))
        assert row == f"{label} {before} {after}", (key, row)


def check_release_report(client, run):
    job = run[1]
    page = client.get(f"/jobs/{job.pk}/result/release-report/").content.decode()
    want = expected(job.result.report)
    shown = [k for k in want if f'id="figure-{k}"' in page]
    assert len(shown) >= 12
    for key in shown:
        label, before, after = want[key]
        row = text(element(page, f"figure-{key}", "</tr>"))
        assert re.match(rf"{re.escape(label)} {re.escape(before)}( \w+)? {re.escape(after)}( \w+)? ", row), (key, row)
    k = job.result.report["k_achieved"]
    assert f"(reached: {format_figure('k_achieved', k)})" in page
    for check in job.result.report["model_checks"]:
        assert f"{html_lib.escape(check['value_label'])}: {format_check(check)}" in page


def check_api_labels(run):
    user, job = run
    body = api_for(user).get(f"/api/v1/runs/{job.pk}/report/").json()
    assert body["metrics"] == job.result.report["metrics"]  # the raw values stay
    rows = {r["key"]: r for r in body["figures"]}
    for key, (label, before, after) in expected(job.result.report).items():
        r = rows[key]
        assert (r["label"], r["before_text"], r["after_text"]) == (label, before, after), key
        assert r["after"] == job.result.report["metrics"][key]
    assert rows["k_achieved"]["after_text"] == format_figure("k_achieved", job.result.report["k_achieved"])
    assert body["model_checks"] == job.result.report["model_checks"]
    checks = [r for r in body["figures"] if r["key"].startswith("check:")]
    assert [(r["label"], r["after_text"]) for r in checks] == [
        (f"{c['describe']}: {c['value_label']}", format_check(c)) for c in job.result.report["model_checks"]]
    risk = api_for(user).post(f"/api/v1/runs/{job.pk}/risk/", {}, format="json").json()
    after = {r["key"]: (r["label"], r["text"]) for r in risk["figures"]["after"]}
    for key in RISK_SHARED:
        label, _, text_after = expected(job.result.report)[key]
        assert after[key] == (label, text_after), key


def check_command_line(run, tmp_path):
    """The same run from the command line (the demo's hierarchy files): the same figures, the same lines."""
    job = run[1]
    _, file, roles, hierarchies = DEMOS[0]
    qis = [c for c, r in roles.items() if r.value == "quasi-identifying"]
    args = [str(DEMO_DIR / file), "--sensitive", "occupation", "--algorithm", "flash", "--k", "5", "--suppression", "0",
            "--l", "2", "--t", "0.3", "--out", str(tmp_path / "out.csv"), "--report", str(tmp_path / "r.json")]
    for q in qis:
        args += ["--qi", q, "--hierarchy", f"{q}={DEMO_DIR / hierarchies[q][0]}"]
    out = io.StringIO()
    call_command("anonymize", *args, stdout=out, stderr=io.StringIO())
    cli_report = json.loads((tmp_path / "r.json").read_text())
    assert cli_report["metrics"] == pytest.approx(job.result.report["metrics"])  # the same run
    lines = out.getvalue().splitlines()
    for key, (label, before, after) in expected(job.result.report).items():
        assert any(re.fullmatch(rf"  {re.escape(label)} +{re.escape(before)} -> {re.escape(after)}", ln)
                   for ln in lines), (key, label, after)
    for check in job.result.report["model_checks"]:
        assert f"  {check['describe']}: holds ({check['value_label']}: {format_check(check)})" in lines

    # manage.py risk on the published table: the risk page's "after" column, line by line
    risk_out = io.StringIO()
    call_command("risk", str(tmp_path / "out.csv"), "--qi", ",".join(qis), stdout=risk_out)
    risk_lines = risk_out.getvalue().splitlines()
    want = expected(job.result.report)
    for key in ["equivalence_classes", "sample_uniques", "prosecutor_risk_highest", "prosecutor_risk_average",
                "records_at_risk", "marketer_risk"]:
        label, _, after = want[key]
        assert any(re.match(rf"{re.escape(label)} +{re.escape(after)}( |$)", ln) for ln in risk_lines), (key, after)


def test_every_surface_reads_each_figure_the_same(client_alice, run, tmp_path):
    check_result_page_cards_and_all_metrics(client_alice, run)
    check_risk_page(client_alice, run)
    check_release_report(client_alice, run)
    check_api_labels(run)
    check_command_line(run, tmp_path)


def test_safepub_parameters_read_the_same_on_the_result_page_and_the_command_line(tmp_path):
    """ε, δ and SafePub's derived β: the result page's SafePub card (its template, with the run's report) and
    the command line's summary give the catalogue's texts."""
    import numpy as np
    import pandas as pd
    from django.template.loader import render_to_string

    rng = np.random.default_rng(3)
    pd.DataFrame({"age": rng.integers(20, 80, 1500), "sex": rng.choice(["M", "F"], 1500)}).to_csv(
        tmp_path / "t.csv", index=False)
    out = io.StringIO()
    call_command("anonymize", str(tmp_path / "t.csv"), "--qi", "age", "--qi", "sex", "--algorithm", "safepub",
                 "--epsilon", "3", "--delta", "0.01", "--seed", "8", "--safepub-steps", "5",
                 "--out", str(tmp_path / "o.csv"), "--report", str(tmp_path / "r.json"), stdout=out, stderr=io.StringIO())
    s = json.loads((tmp_path / "r.json").read_text())["search"]
    summary = out.getvalue().splitlines()[0]
    epsilon, delta, beta = (format_figure("epsilon", s["epsilon"]), format_figure("delta", s["delta"]),
                            format_figure("sampling_beta", s["beta"]))
    assert (f"SafePub: ε={epsilon} (ε_anon={format_figure('epsilon', s['epsilon_anon'])}, "
            f"ε_search={format_figure('epsilon', s['epsilon_search'])}), δ={delta}, β={beta}, ") in summary
    card = render_to_string("anonymizer/_safepub_result.html", {"s": s})
    assert f'<dd id="safepub-epsilon">{epsilon}</dd>' in card and f'<dd id="safepub-delta">{delta}</dd>' in card
    assert f'<dd id="safepub-beta">{beta}</dd>' in card
    assert epsilon == "3" and delta == "0.01" and beta == format_kind("parameter", s["beta"])
