"""The "?" of a result card opens its help on click or by keyboard, not on hover only (issue 29, item 11): a
details element whose summary is the "?" (named for screen readers) and whose text is the card's help."""

import html as html_lib
import re

import pytest
from anonymizer_helpers import finished_job, make_dataset

from anonymizer_app.engine.measure.figure_catalogue import FIGURES

pytestmark = pytest.mark.django_db


def test_every_card_s_help_opens_on_click_and_by_keyboard(client_alice, user):
    job = finished_job(make_dataset(user), k=2, suppression_limit=0.5, sensitive="disease")
    page = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    cards = re.findall(r'<div class="card stat[^"]*" id="stat-([a-z_]+)"', page)
    assert {"ncp", "equivalence_classes"} <= set(cards)
    for key in cards:
        card = page[page.index(f'id="stat-{key}"'):][:3000]
        label = html_lib.unescape(re.search(r'class="stat-label">([^<]*?) <', card).group(1))
        match = re.search(r'<details class="stat-help"><summary class="info-dot">\?<span class="visually-hidden"> How '
                          r'([^<]*) is computed</span></summary><span class="stat-help-text">How it is computed: '
                          r'([^<]*)</span></details>', card)
        assert match, key
        assert html_lib.unescape(match.group(1)) == label
        assert html_lib.unescape(match.group(2)) == FIGURES[key].help, key
    assert 'aria-hidden="true">?</span>' not in page  # the hover-only "?" is gone
