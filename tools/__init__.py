"""Benchmarks and utilities. Nothing in game/ or ai/ imports them."""
