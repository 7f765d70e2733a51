"""The policies endpoints of the HTTP API; the API's URLs include them under policies/."""

from django.urls import path

from policies import api

urlpatterns = [
    path("", api.PolicyList.as_view(), name="api-policies"),
    path("import/", api.PolicyImport.as_view(), name="api-policy-import"),
    path("<int:policy_id>/", api.PolicyDetail.as_view(), name="api-policy"),
    path("<int:policy_id>/export/", api.PolicyExport.as_view(), name="api-policy-export"),
    path("<int:policy_id>/check/", api.PolicyCheck.as_view(), name="api-policy-check"),
    path("<int:policy_id>/apply/", api.PolicyApply.as_view(), name="api-policy-apply"),
]
