"""Zerostall: a physics village whose villagers talk without ever stalling the game."""
