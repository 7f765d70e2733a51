"""Reading users' files: tables (CSV/TSV/Excel) and bounded JSON."""
