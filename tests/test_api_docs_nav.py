"""The HTTP API's docs are reachable from every page (the footer) and lead back to the site (issue 29, item 11:
they were linked from the account page only, with no way back)."""

import pytest

pytestmark = pytest.mark.django_db


def test_the_footer_links_the_api_docs_and_the_docs_link_back(client_alice):
    page = client_alice.get("/").content.decode()
    assert '<a href="/api/v1/docs/" id="footer-api-docs">HTTP API</a>' in page
    assert '<a href="/definitions/">Definitions</a>' in page
    docs = client_alice.get("/api/v1/docs/").content.decode()
    assert 'id="api-docs-nav"' in docs and '<a href="/">← Anonymizer</a>' in docs
    assert '<a href="/accounts/">Your API keys</a>' in docs
    assert 'id="swagger-ui"' in docs
