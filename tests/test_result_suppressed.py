"""Suppressed records on the result page say what became of them, as the run's option chose: removed from the
release (the default) or published with every quasi-identifier '*'. The card says it, the side-by-side view
shows every dataset row (a removed one beside 'removed from the release', never silently missing), the legend's
suppressed style appears only when a record is suppressed, and the download panel offers to leave out only the
'*' rows that are in the release."""

import re

import pytest
from anonymizer_helpers import finished_job, make_dataset

from anonymizer_app.services import jobs, results

pytestmark = pytest.mark.django_db


def table(html: str, element_id: str) -> str:
    start = html.index(f'id="{element_id}"')
    return re.sub(r">\s+<", "><", html[start:html.index("</table>", start)])


def squeeze(html: str) -> str:
    return re.sub(r"\s+", " ", html)


def test_removed_suppressed_records(client_alice, user):
    job = finished_job(make_dataset(user), k=2, suppression_limit=0.25, sensitive="disease")
    report = job.result.report
    assert (report["suppressed"], report["publishing"]["suppressed_rows"]) == (2, "remove")
    published = set(results.load_output(job.result)[0].attrs["rows"].tolist())
    removed = [r + 1 for r in range(8) if r not in published]
    assert len(removed) == 2
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    card = html[html.index('id="stat-suppressed"'):]
    card = card[:card.index('<div class="card stat', 10)]
    assert "2 of 8 records (25%) were suppressed: removed from the release (not in the download)." in card
    assert "replaced by" not in card
    original, anonymized = table(html, "original-table"), table(html, "anonymized-table")
    # every one of the 8 dataset rows on both sides, in order
    assert re.findall(r'<td class="num muted">(\d+)', original) == [str(i) for i in range(1, 9)]
    assert re.findall(r'<td class="num muted">(\d+)', anonymized) == [str(i) for i in range(1, 9)]
    for number in removed:
        assert f'<tr class="suppressed"><td class="num muted">{number}</td>' in original
        assert (f'<tr class="suppressed" title="suppressed record: removed from the release"><td class="num muted">'
                f'{number}<span class="sup-mark" aria-label="suppressed">⊘</span></td><td class="removed-row" '
                f'colspan="5">suppressed: removed from the release</td></tr>') in anonymized
    legend = squeeze(html[html.index('id="legend-suppressed"'):])
    assert legend.startswith('id="legend-suppressed"><span class="swatch suppressed"></span> suppressed record '
                             '(removed from the release, shown here with its original values)</span>')
    downloads = squeeze(html[html.index('id="downloads"'):html.index("</section>", html.index('id="downloads"'))])
    assert 'name="drop_suppressed"' not in downloads
    assert "The 2 suppressed records are already left out of this release." in downloads


def test_kept_suppressed_records(client_alice, user):
    ds = make_dataset(user)
    job = jobs.run_job(jobs.create_job(ds, "datafly", 2, 0.25, "disease", {"suppressed_rows": "keep"}))
    report = job.result.report
    assert job.status == job.SUCCEEDED, job.message
    assert (report["suppressed"], report["publishing"]["suppressed_published"]) == (2, 2)
    output, suppressed = results.load_output(job.result)
    kept = [i + 1 for i in range(len(output)) if suppressed[i]]
    assert len(output) == 8 and len(kept) == 2
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert ("2 of 8 records (25%) were suppressed: published with every quasi-identifier replaced by "
            "&#x27;*&#x27;.") in html
    anonymized = table(html, "anonymized-table")
    assert re.findall(r'<td class="num muted">(\d+)', anonymized) == [str(i) for i in range(1, 9)]
    for number in kept:
        row = anonymized[anonymized.index(f'<td class="num muted">{number}<span class="sup-mark"'):]
        row = row[:row.index("</tr>")]
        assert row.count(">*<") == 3  # age, zip, sex
    assert anonymized.count('title="suppressed record: published with every quasi-identifier \'*\'"') == 2
    assert "removed-row" not in anonymized
    legend = squeeze(html[html.index('id="legend-suppressed"'):])
    assert "suppressed record (published with all quasi-identifiers '*')" in legend
    downloads = squeeze(html[html.index('id="downloads"'):html.index("</section>", html.index('id="downloads"'))])
    assert ('<input type="checkbox" name="drop_suppressed" value="1" id="dl-drop-suppressed"> Leave out the 2 '
            'suppressed records') in downloads


def test_no_suppressed_record_no_suppressed_style(client_alice, user):
    job = finished_job(make_dataset(user), k=2, suppression_limit=0.0, sensitive="disease")
    assert job.result.report["suppressed"] == 0
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert 'id="legend-suppressed"' not in html and 'class="suppressed"' not in html
    assert 'name="drop_suppressed"' not in html and "already left out" not in html
    # k=2: "1 other", never "1 others"; the limit of 0 records
    assert "every published record shares its quasi-identifiers with at least 1 other</div>" in html
    assert "at least 1 other (k asked: 2)" in html and "1 others" not in html
    assert "limit: 0 records (0%)" in html
