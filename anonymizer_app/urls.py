"""Root URL configuration."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path("hierarchies/", include("hierarchy_editor.urls")),
    path("policies/", include("policies.urls")),
    path("api/v1/", include("anonymizer_app.api.urls")),  # the HTTP API (anonymizer_app/api)
    path("", include("anonymizer_app.app_urls")),
]
