"""The run form's help matches the chosen l-diversity variant: one help per variant for a parameter the
variants read differently (static/js/run_help.js shows the chosen one's)."""

import pytest
from anonymizer_helpers import make_dataset

pytestmark = pytest.mark.django_db


def test_each_l_variant_has_its_own_help(client_alice, user):
    ds = make_dataset(user)
    html = client_alice.get(f"/datasets/{ds.pk}/run/").content.decode()
    assert ('<div class="help" data-variant-help="distinct"><strong>distinct:</strong> distinct sensitive values '
            'every class must hold</div>') in html
    assert ('<div class="help" data-variant-help="entropy"><strong>entropy:</strong> the entropy of every '
            "class&#x27;s sensitive values must be at least ln l</div>") in html
    assert 'data-variant-help="recursive"' in html
    # the entropy help is no longer the one help of l
    assert html.count("must be at least ln l") == 1
    assert "/static/js/run_help.js" in html


def test_the_experiment_page_speaks_plainly(client_alice, user):
    ds = make_dataset(user)
    html = client_alice.get(f"/datasets/{ds.pk}/experiment/").content.decode()
    assert "seed-001" not in html and "How many groups give away a sensitive value" in html
