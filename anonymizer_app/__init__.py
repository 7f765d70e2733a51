"""The Anonymizer Django app.

Importing this package imports nothing else: the engine (``anonymizer_app.engine``) must load
without Django or Celery. The Celery app (``anonymizer_app.celery``) is loaded by ``tasks.py``
before its ``@shared_task``, so that the task binds to it (a process that queues no job, such as
``manage.py anonymize``, never loads Celery); a worker started with ``celery -A anonymizer_app
worker`` finds ``anonymizer_app.celery.app`` by itself (Celery looks for a ``celery`` submodule of the
package named by -A).
"""
