"""Evaluations of what the game does: dialogue, decisions, bubbles, errands and stuck spots."""
