"""The HTTP API, mounted at ``/api/v1/`` (docs/guide/http-api.md): token-authenticated JSON over Django REST
framework, described by an OpenAPI 3 schema (drf-spectacular) at ``/api/v1/schema/`` with a docs page at
``/api/v1/docs/`` (Swagger UI from drf-spectacular-sidecar, nothing fetched from a CDN).

The API is a thin layer over ``anonymizer_app/services``: an upload goes through the web upload's ingestion,
a run through the run form and its pre-flight checks, a job through the one pipeline and its publishing gate.
Every object is looked up with ``owner=request.user``, so another account's is a 404 (never a 403 that would
tell it exists); no key is a 401.

Adding endpoints (another app or concern):
  1. write the views in a module of their own (DRF ``APIView`` subclasses; authentication and the
     ``IsAuthenticated`` permission come from ``settings.REST_FRAMEWORK``, so nothing to repeat), with
     ``@extend_schema`` on each method so the schema says what goes in and out (request serializer,
     responses including 400/404 as ``api.serializers.ApiErrorSerializer``);
  2. give that module (or a sibling ``api_urls.py``) a ``urlpatterns`` list of relative paths;
  3. add one line to ``CONCERNS`` in ``anonymizer_app/api/urls.py``: ``("sources/", "myapp.api_urls")``.
The endpoints then appear under ``/api/v1/<prefix>`` and in the schema and docs page; the schemathesis test
(tests/test_api_schema.py) exercises them with a valid key: they must answer no 5xx and match the schema.
Errors are JSON: ``{"detail": "...", "errors": {field: [messages]}}`` (``api/errors.py``).
"""
