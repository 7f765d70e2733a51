"""The API's URLs (mounted at /api/v1/ by anonymizer_app/urls.py): one include per concern, each module
exposing ``urlpatterns``; the schema and its docs page. To add a concern, add a line to CONCERNS (see the
package docstring)."""

from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from .schema import not_found

CONCERNS = [
    ("registry/", "anonymizer_app.api.registry"),
    ("datasets/", "anonymizer_app.api.datasets"),
    ("hierarchies/", "anonymizer_app.api.hierarchies"),
    ("runs/", "anonymizer_app.api.runs"),
    ("runs/", "anonymizer_app.api.solutions"),  # GET runs/<a>/compare/<b>/, runs/<id>/lattice-compare/
    ("runs/", "anonymizer_app.api.statistics"),  # GET runs/<id>/statistics/
    ("runs/", "anonymizer_app.api.model_utility"),  # POST/GET runs/<id>/utility/
    ("lattice/", "anonymizer_app.api.lattice"),
    ("dp/", "anonymizer_app.api.dp"),
    ("safepub/", "anonymizer_app.api.safepub"),
    ("synthesis/", "anonymizer_app.api.synthesis"),  # POST synthesis/datasets/<id>/, GET synthesis/<job>/
    ("sdc-risk/", "anonymizer_app.api.sdc_risk_jobs"),  # POST sdc-risk/datasets/<id>/, sdc-risk/runs/<job>/
    ("items/", "anonymizer_app.api.items"),
    ("comparisons/", "anonymizer_app.api.comparisons"),
    ("sql/", "anonymizer_app.api.sql"),
    ("dicom/", "anonymizer_app.api.dicom"),
    ("repositories/", "anonymizer_app.api.repositories"),
    ("sources/", "anonymizer_app.api.sources"),
    ("policies/", "policies.api_urls"),
    ("keys/", "anonymizer_app.api.identifiers"),
]

urlpatterns = [path(prefix, include(module)) for prefix, module in CONCERNS] + [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # the split view serves its start-up script as a file (?script), so the page runs under the CSP
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    # anything else under /api/v1/ (an id that is not a number, a path that does not exist) is a JSON 404,
    # not the site's HTML page
    re_path(r"^.*$", not_found),
]
