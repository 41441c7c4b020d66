"""Where villagers' words come from, and how they reach the screen.

Pure game logic: no pygame, no wall clock, nothing that waits.
"""
