"""policies:detail: the versions newest first with what each does, the releases in order; the owner only."""

from __future__ import annotations

import pytest
from policies_helpers import small_job

from policies import services

pytestmark = pytest.mark.django_db


def test_versions_and_releases(client_alice, user):
    job = small_job(user)
    v1 = services.save_from_job(job, "small", "<script>x</script>")
    services.save_from_job(job, "small")
    r = client_alice.get(f"/policies/{v1.policy.pk}/")
    assert r.status_code == 200
    html = r.content.decode()
    assert html.index('id="version-2"') < html.index('id="version-1"')
    assert "&lt;script&gt;x&lt;/script&gt;" in html and "<script>x</script>" not in html
    assert "datafly, k=2, suppression limit 25%" in html
    assert "<dt>Privacy models</dt><dd>distinct l-diversity (l=2) on disease</dd>" in html
    assert "Not applied yet." in html
    assert f'href="/policies/{v1.policy.pk}/versions/1/export/"' in html


def test_other_user_gets_404(client, user, other_user):
    v = services.save_from_job(small_job(user), "small")
    client.force_login(other_user)
    assert client.get(f"/policies/{v.policy.pk}/").status_code == 404


def test_it_requires_login(client, user):
    v = services.save_from_job(small_job(user), "small")
    assert client.get(f"/policies/{v.policy.pk}/")["Location"].startswith("/accounts/login/")
