"""Helpers shared by the benchmark scripts in scripts/."""
