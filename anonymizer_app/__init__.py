"""The Anonymizer Django app.

Importing this package imports nothing else: the engine (``anonymizer_app.engine``) must load
without Django or Celery. The Celery app (``anonymizer_app.celery``) is loaded by the app config's
``ready()`` whenever Django starts (web server, manage.py, tests), so that ``@shared_task`` binds to
it; a worker started with ``celery -A anonymizer_app worker`` finds ``anonymizer_app.celery.app``
by itself (Celery looks for a ``celery`` submodule of the package named by -A).
"""
