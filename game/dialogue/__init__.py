"""Where villagers' words come from, and how they reach the screen.

Game logic without pygame. Nothing here waits, with one deliberate exception: the
naive sync mode in ``pacing.py``, which exists to show what waiting costs. The wall
clock is read only to time the main thread's AI work and by that one mode.
"""
