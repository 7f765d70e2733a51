"""Missing cells (blanks, NA markers) are named "(missing)" wherever values are listed, the columns page counts
them per column, and a run's notes give one missing-values line per column, naming it (issue 29, item 7)."""

import pytest

from anonymizer_app.engine import default_hierarchy
from anonymizer_app.engine.model.hierarchy import MISSING_NOTE, with_missing, without_missing
from anonymizer_app.services.datasets import create_dataset, missing_counts
from anonymizer_app.views.charts import MISSING_COLOR, attack_figure, distribution_figure

pytestmark = pytest.mark.django_db

# payor_group: 3 blanks and 1 NA of 7 rows (the most frequent "value"); age: 1 '?'; city: none
DATA = (b"id,payor_group,age,city\n1,,30,Rome\n2,Medicare,41,Milan\n3,,52,Rome\n4,NA,30,Turin\n"
        b"5,Private,?,Rome\n6,,45,Bari\n7,Medicare,33,Rome\n")


@pytest.fixture
def clinic(user):
    return create_dataset(user, DATA, "clinic.csv")


def test_missing_counts_per_column(clinic):
    assert missing_counts(clinic, ["id", "payor_group", "age", "city"]) == {
        "id": 0, "payor_group": 4, "age": 1, "city": 0}


def test_columns_page_counts_and_names_missing(client_alice, clinic):
    html = client_alice.get(f"/datasets/{clinic.pk}/columns/").content.decode()
    assert ">Missing</th>" in html
    cells = html.split('class="num missing-cells">')[1:]
    assert [c.split("</td>")[0] for c in cells] == [
        "0", '<span class="missing-count">4</span>', '<span class="missing-count">1</span>', "0"]
    # the sample chips of payor_group: its values, then the missing value named
    row = html.split("<strong>payor_group</strong>")[1].split("</tr>")[0]
    assert ('<span class="chip">Medicare</span><span class="chip">Private</span><span class="chip">'
            '<span class="missing-value" title="empty cells and NA markers">(missing)</span></span>') in row
    assert "<span class=\"chip\"></span>" not in html


def test_data_preview_names_blank_cells(client_alice, clinic):
    html = client_alice.get(f"/datasets/{clinic.pk}/").content.decode()
    # three blank payor_group cells in the preview's rows 1, 3 and 6
    assert html.count('<span class="missing-value" title="empty cells and NA markers">(missing)</span>') == 3


def test_hierarchy_page_names_missing_row(client_alice, clinic):
    col = clinic.columns.get(name="payor_group")
    html = client_alice.get(f"/hierarchies/dataset/{clinic.pk}/column/{col.pk}/").content.decode()
    table = html.split('class="table table-compact value-labels"')[1].split("</table>")[0]
    first = table.split("<tbody>")[1].split("</tr>")[0]
    # the most frequent value (4 missing cells) is named, not an empty cell
    assert '<code><span class="missing-value" title="empty cells and NA markers">(missing)</span></code>' in first
    assert '<td class="num">4</td>' in first
    assert "<code></code>" not in html


def test_distribution_chart_names_and_greys_missing():
    fig = distribution_figure({"values": ["", "Medicare", "Private"], "counts": [4, 2, 1]},
                              {"values": ["*", ""], "counts": [3, 4]})
    before, after = fig["data"]
    assert before["x"] == ["(missing)", "Medicare", "Private"]
    assert before["marker"]["color"] == [MISSING_COLOR, "#8aa4bf", "#8aa4bf"]
    assert after["x"] == ["*", "(missing)"]
    assert after["marker"]["color"] == ["#2f855a", MISSING_COLOR]


def test_notes_name_the_column_once_each():
    import pandas as pd

    a = with_missing(default_hierarchy("payor_group", pd.Series(["x", "y", ""]), False))
    b = with_missing(default_hierarchy("age", pd.Series(["1", "2", ""]), True))
    notes = [n for h in (a, b) for n in h.notes if MISSING_NOTE in n]
    assert notes == [f"column 'payor_group': {MISSING_NOTE}: a leaf of their own, (null) below the root",
                     f"column 'age': {MISSING_NOTE}: a leaf of their own, (null) below the root"]
    assert not [n for n in without_missing(a).notes if MISSING_NOTE in n]


def test_a_runs_notes_give_one_missing_line_per_column(clinic, client_alice):
    from anonymizer_app.models import Job
    from anonymizer_app.services import jobs

    clinic.columns.filter(name__in=["payor_group", "age"]).update(role="quasi-identifying")
    clinic.columns.filter(name="id").update(role="identifying")
    job = jobs.run_job(jobs.create_job(clinic, "datafly", 2, 0.5))
    assert job.status == Job.SUCCEEDED, job.message
    notes = [n for n in job.result.report["notes"] if MISSING_NOTE in n]
    assert sorted(notes) == sorted([
        f"column 'payor_group': {MISSING_NOTE}: a leaf of their own, (null) below the root",
        f"column 'age': {MISSING_NOTE}: a leaf of their own, (null) below the root"])
    # the result page: the side-by-side view names the blank payor_group cells, the chart draws "(missing)"
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    original = html.split('id="original-table"')[1].split("</table>")[0]
    assert ('<td class="num muted">1</td>\n                <td class="struck">1</td><td><span class="missing-value" '
            'title="empty cells and NA markers">(missing)</span></td><td>30</td><td>Rome</td>') in original
    assert '"(missing)"' in html  # the distribution chart's bar of missing cells, named


def test_attack_chart_names_a_blank_sensitive_value():
    fig = attack_figure({"table_distribution": {"": 0.25, "flu": 0.75}},
                        [{"class": 1, "size": 2, "counts": {"": 2}}])
    blank, flu = fig["data"]
    assert (blank["name"], blank["customdata"], blank["marker"]["color"]) == (
        "(missing)", ["(missing)", "(missing)"], MISSING_COLOR)
    assert blank["y"] == [0.25, 1.0] and flu["name"] == "flu" and flu["y"] == [0.75, 0.0]
