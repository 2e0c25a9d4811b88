"""The papers' experiments, one module per paper; each writes a tidy per-instance table first."""
