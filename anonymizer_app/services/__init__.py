"""What views, Celery tasks and management commands do with the database and the stored files, on top
of the engine; kept apart from views so that the web app, the worker and the CLI share one code path.
One module per concern (import the module, e.g. ``from anonymizer_app.services import jobs``):

- storage: where files live (uploads, tables, results, lattice caches, staging, editor sessions, pending
  uploads) and the one way they are located, read, written (0600) and deleted (``*_files``, delete_names)
- ingestion: a table file sniffed and parsed in pieces, written to Parquet
- datasets: datasets created and re-read, their columns described, their rows and configuration
- jobs: jobs validated, created, queued and run (JOB_HANDLERS: Job.kind -> handler), their progress
- runs: the handler of "run" and "lattice-keep" jobs: a job's RunSpec through the pipeline, stored
- population: a population table for δ-presence and k-map (the research subset matched into the population)
- results: stored results read back (rows, columns, sensitive table) and the report's figures
- exports: the CSV download (formulas neutralized) and the run configuration as JSON
- comparison: several algorithms for several k ("comparison" jobs and manage.py compare)
- experiment: homogeneous ECs against k ("experiment" jobs)
- erasure: datasets, jobs, hierarchies and accounts deleted with every file behind them (files follow their
  rows however they are deleted), the retention purge, the sweep of files no object owns
- at_rest: the SQLite database and the media folder private to the server's user
"""
