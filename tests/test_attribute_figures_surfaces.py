"""Per-attribute figures (issue 30) in the API's run report and in the release report: per quasi-identifier its
level, ARX's Loss, NCP, height and the shares published as '*' and suppressed, each with the figure catalogue's
label and text; the '*' and suppressed shares recounted here from the published rows."""

import re

import pytest
from anonymizer_helpers import people_dataset
from api_helpers import api_for

from anonymizer_app.engine.measure.figure_catalogue import ATTRIBUTE_FIGURES, FIGURES, format_figure
from anonymizer_app.services import jobs, results

pytestmark = pytest.mark.django_db


@pytest.fixture
def job(user):
    return jobs.run_job(jobs.create_job(people_dataset(user, hierarchies=False), "flash", 3, 0.05, "disease",
                                        {"metric": "loss"}))


def test_the_api_gives_each_quasi_identifiers_figures(job, user, other_user):
    body = api_for(user).get(f"/api/v1/runs/{job.pk}/report/").json()
    report = job.result.report
    frame, _ = results.load_output(job.result)
    n, suppressed = report["input_records"], report["suppressed"]
    assert [a["qi"] for a in body["attribute_figures"]] == report["quasi_identifiers"]
    for row, a in zip(report["attributes"], body["attribute_figures"]):
        assert [f["key"] for f in a["figures"]] == [key for key, _ in ATTRIBUTE_FIGURES]
        by_key = {f["key"]: f for f in a["figures"]}
        for key, source in ATTRIBUTE_FIGURES:
            assert by_key[key]["value"] == row[source]
            assert by_key[key]["label"] == FIGURES[key].label
            assert by_key[key]["text"] == format_figure(key, row[source])
        assert by_key["qi_level"]["value"] == report["transformation"][a["qi"]]
        assert by_key["qi_star_share"]["value"] == pytest.approx(sum(str(c) == "*" for c in frame[a["qi"]]) / n)
        assert by_key["qi_suppressed_share"]["value"] == pytest.approx(suppressed / n)
    # another user's run: 404, nothing of it
    assert api_for(other_user).get(f"/api/v1/runs/{job.pk}/report/").status_code == 404


def test_the_release_report_lists_the_figures_per_quasi_identifier(job, client_alice):
    html = client_alice.get(f"/jobs/{job.pk}/result/release-report/").content.decode()
    start = html.index('id="report-attributes"')
    table = re.sub(r">\s+<", "><", html[start:html.index("</table>", start)])
    header = "".join(f'<th scope="col" class="num" title="{FIGURES[key].help}">{FIGURES[key].label}</th>'
                     for key, _ in ATTRIBUTE_FIGURES).replace("'", "&#x27;")
    assert header in table
    for i, row in enumerate(job.result.report["attributes"], start=1):
        cells = "".join(f'<td class="num">{format_figure(key, row[source])}</td>' for key, source in ATTRIBUTE_FIGURES)
        assert f'<tr id="report-attribute-{i}"><th scope="row">{row["qi"]}</th>{cells}</tr>' in table


def test_no_per_attribute_figures_for_a_multidimensional_recoding(user):
    job = jobs.run_job(jobs.create_job(people_dataset(user, hierarchies=False), "mondrian", 3, 0.05, "disease", {}))
    body = api_for(user).get(f"/api/v1/runs/{job.pk}/report/").json()
    assert body["attribute_figures"] == []
