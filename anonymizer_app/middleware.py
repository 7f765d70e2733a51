"""Responses that carry a user's data are not kept by browsers or shared caches."""

from __future__ import annotations


class NoStoreMiddleware:
    """``Cache-Control: no-store`` on every response to a signed-in user (pages, JSON, downloads: they hold
    the user's tables) and on every non-static response; static files keep their own caching."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.path.startswith("/static/"):
            return response
        user = getattr(request, "user", None)
        if (user is not None and user.is_authenticated) or "Cache-Control" not in response:
            response["Cache-Control"] = "no-store"
        return response
