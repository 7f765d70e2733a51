"""One figure reads the same everywhere (issue 29): a real run (the Adult demo with its hierarchies, Flash, k=5,
distinct 2-diversity and t-closeness on occupation) rendered through every surface — the result page's cards
and "All metrics", the risk page, the release report, the API's labels and the command line's summaries — shows
each figure with the catalogue's label and the catalogue's text (engine.measure.figure_catalogue)."""

from __future__ import annotations

import html as html_lib
import io
import itertools
import json
import math
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


# ---- set-valued (k^m) figures: the itemset-support error and the NCP on every surface that shows them --------
MILK = "chocolate milk,graviera,feta\nwhole milk,graviera\nwhole milk,graviera,feta\nchocolate milk,whole milk,feta\n"
FOOD = "chocolate milk;milk;*\nwhole milk;milk;*\ngraviera;cheese;*\nfeta;cheese;*\n"
MILK_TABLE = ("id,age,sex,basket\n1,30,M,chocolate milk|graviera|feta\n2,30,M,whole milk|graviera\n"
              "3,30,M,whole milk|graviera|feta\n4,30,M,chocolate milk|whole milk|feta\n5,40,F,feta|graviera\n"
              "6,40,F,graviera|feta\n")


def support_error(original: list[set[str]], published: list[set[str]], groups: dict[str, set[str]]) -> float:
    """Recounted by brute force: over every itemset of 1 or 2 items of the original, |estimate - true| / true, where
    a published record holding an item's group counts 1/|group| for that item (as the figure's help says)."""
    def weight(item: str, record: set[str]) -> float:
        if item in record:
            return 1.0
        return next((1 / len(members) for g, members in groups.items() if item in members and g in record), 0.0)

    items = sorted(set().union(*original))
    itemsets = [frozenset([a]) for a in items] + [frozenset(p) for p in itertools.combinations(items, 2)]
    errors = []
    for itemset in itemsets:
        true = sum(itemset <= r for r in original)
        if true:
            estimate = sum(math.prod(weight(i, r) for i in itemset) for r in published)
            errors.append(abs(estimate - true) / true)
    return sum(errors) / len(errors)


def cli_summary(*args) -> str:
    out = io.StringIO()
    call_command("anonymize", *map(str, args), stdout=out, stderr=io.StringIO())
    return out.getvalue().splitlines()[0]


def test_set_valued_figures_read_the_same_on_every_surface(client_alice, user, tmp_path, monkeypatch):
    from anonymizer_helpers import make_dataset, run_jobs_synchronously
    from setvalued_helpers import item_hierarchy, transaction_dataset

    from anonymizer_app.models import Job
    from anonymizer_app.services import setvalued

    milk = [set(line.split(",")) for line in MILK.splitlines()]
    groups = {"milk": {"chocolate milk", "whole milk"}}
    published = [{"milk" if i in groups["milk"] else i for i in r} for r in milk]  # Apriori at k=2, m=2
    error = support_error(milk, published, groups)
    # the milk occurrences (5 of 11) cost 2/4 each against the 4-leaf hierarchy
    surfaces_expected = {"support_error": format_figure("support_error", error),
                         "ncp": format_figure("ncp_item_hierarchy", 5 * 0.5 / 11)}
    assert surfaces_expected == {"support_error": f"{error:.3f}", "ncp": "0.227"}

    # a transaction file: the result page's card, its release report, the command line's summary
    food = item_hierarchy(user)
    job = jobs.run_job(setvalued.create_set_job(transaction_dataset(user), "apriori", 2, 2, True, food))
    assert job.result.report["metrics"]["support_error"] == pytest.approx(error, abs=1e-12)
    page = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    card = element(page, "card-support-error", "stat-reading")
    assert text(card).startswith(f"{FIGURES['support_error'].label} (")
    assert re.search(r'class="stat-value">\s*' + re.escape(surfaces_expected["support_error"]) + r"\s*<", card)
    ncp_card = element(page, "card-ncp", "stat-reading")
    assert re.search(r'class="stat-value">\s*' + re.escape(surfaces_expected["ncp"]) + r"\s*<", ncp_card)
    report = client_alice.get(f"/jobs/{job.pk}/result/items-release-report/").content.decode()
    assert text(element(report, "report-figure-support-error", "</tr>")).startswith(
        f"{FIGURES['support_error'].label} {surfaces_expected['support_error']}")
    (tmp_path / "milk.txt").write_text(MILK)
    (tmp_path / "food.csv").write_text(FOOD)
    summary = cli_summary(tmp_path / "milk.txt", "--transactions", "--k", 2, "--m", 2, "--item-hierarchy",
                          tmp_path / "food.csv", "--out", tmp_path / "out.txt")
    assert (f"NCP against the item hierarchy {surfaces_expected['ncp']}, "
            f"itemset-support error {surfaces_expected['support_error']}, ") in summary

    # a table's set-valued column (mixed mode, Datafly k=2 with Apriori k^2): its section on the result page
    # and the command line's summary; the classes (30, M) and (40, F) keep 2.5 of 15 occurrences' cost and
    # (1/3 + 1/2 + 3 x 1/4) / 10 of support error (tests/test_items_run.py)
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user, MILK_TABLE, "milk-table.csv", roles={"id": "identifying", "age": "quasi-identifying",
                                                                  "sex": "quasi-identifying"})
    setvalued.mark_set_column(ds, "basket", "|")
    client_alice.post(f"/datasets/{ds.pk}/run/", {"algorithm": "datafly", "k": 2, "suppression_percent": 0,
                                                  "set-m": 2, "set-set_algorithm": "apriori",
                                                  "set-item_hierarchy": food.pk})
    mixed = Job.objects.get(dataset=ds)
    mixed_error = format_figure("support_error", (1 / 3 + 0.5 + 3 * 0.25) / 10)
    mixed_ncp = format_figure("ncp_item_hierarchy", 2.5 / 15)
    assert (mixed_error, mixed_ncp) == ("0.158", "0.167")
    page = client_alice.get(f"/jobs/{mixed.pk}/result/").content.decode()
    section = element(page, "set-column-result", "</dl>")
    assert re.search(r'<dd id="set-support-error"[^>]*>' + re.escape(mixed_error) + "</dd>", section)
    assert re.search(r'<dd id="set-ncp"[^>]*>' + re.escape(mixed_ncp) + "</dd>", section)
    assert f"{FIGURES['support_error'].label} (10 top itemsets) {mixed_error}" in text(section)
    assert f"{FIGURES['ncp_item_hierarchy'].label} {mixed_ncp}" in text(section)
    (tmp_path / "table.csv").write_text(MILK_TABLE)
    summary = cli_summary(tmp_path / "table.csv", "--identifier", "id", "--qi", "age", "--qi", "sex", "--set-column",
                          "basket", "--m", 2, "--k", 2, "--algorithm", "datafly", "--item-hierarchy", tmp_path / "food.csv", "--set-algorithm", "apriori",
                          "--out", tmp_path / "table-out.csv")
    assert (f"(smallest support 2), NCP against the item hierarchy {mixed_ncp}, "
            f"itemset-support error {mixed_error}") in summary
