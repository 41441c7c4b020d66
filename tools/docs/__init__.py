"""Generators of the documentation's figures: benchmark tables and screenshots."""
