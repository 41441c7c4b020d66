"""Zerostall: a physics village whose villagers talk without ever stalling the game."""

import os

# On import, pygame names the X11 window class (what task bars group and label windows by)
# after the script, "__main__.py" for ``python -m game``, unless this is already set.
os.environ.setdefault("SDL_VIDEO_X11_WMCLASS", "Zerostall")
