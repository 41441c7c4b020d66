"""Benchmarks and profilers: each writes its figures as JSON under bench/."""
