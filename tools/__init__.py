"""Tools in rooms: bench/, peers/, eval/, train/, docs/. Nothing in game/ or ai/ imports them."""
