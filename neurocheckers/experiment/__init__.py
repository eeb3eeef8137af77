"""Experiments: configs, run folders (metrics, lineage, checkpoints) and sweeps of many runs."""
