"""The simulation: pymunk world, level, villagers, errands and events.

Nothing here imports pygame or reads the wall clock; time is an integer tick.
"""
