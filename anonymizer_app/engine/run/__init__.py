"""The run: its specification, the stages, the publishing gate, the result, the report, the pipeline."""
