"""The table model: tables, generalization hierarchies and their builders, missing values, orders."""
