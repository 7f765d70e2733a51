"""What views, Celery tasks and management commands do with the database and the stored files, on top
of the engine; kept apart from views so that the web app, the worker and the CLI share one code path.
One module per concern (import the module, e.g. ``from anonymizer_app.services import jobs``):

- storage: where files live (tables, results, lattice caches, staging) and the one way they are
  located, read, written and deleted (AtomicParquet, delete_job_files, delete_dataset_files)
- ingestion: a table file sniffed and parsed in pieces, written to Parquet
- datasets: datasets created and re-read, their columns described, their rows and configuration
- jobs: jobs validated, created, queued and run (JOB_HANDLERS: Job.kind -> handler), their progress
- runs: the handler of "run" and "lattice-keep" jobs: a job's RunSpec through the pipeline, stored
- population: δ-presence against another dataset (the research subset matched into the population)
- results: stored results read back (rows, columns, sensitive table) and the report's figures
- exports: the CSV download (formulas neutralized) and the run configuration as JSON
- comparison: several algorithms for several k ("comparison" jobs and manage.py compare)
- experiment: homogeneous ECs against k ("experiment" jobs)
"""
