"""The policies endpoints of the HTTP API; anonymizer_app/api/urls.py includes them under policies/. A policy id
is any run of digits, signed too (re_path, not <int:>): a non-existent id is the API's JSON 404, never the HTML
page of an unmatched URL."""

from django.urls import path, re_path

from policies import api

ID = r"^(?P<policy_id>-?[0-9]+)/"

urlpatterns = [
    path("", api.PolicyList.as_view(), name="api-policies"),
    path("import/", api.PolicyImport.as_view(), name="api-policy-import"),
    re_path(ID + r"$", api.PolicyDetail.as_view(), name="api-policy"),
    re_path(ID + r"export/$", api.PolicyExport.as_view(), name="api-policy-export"),
    re_path(ID + r"check/$", api.PolicyCheck.as_view(), name="api-policy-check"),
    re_path(ID + r"apply/$", api.PolicyApply.as_view(), name="api-policy-apply"),
]
