"""Release policies: named, versioned run configurations re-applied to new batches (see docs/policies.md)."""
