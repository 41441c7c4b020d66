"""Where the player's intent comes from: the keyboard, or the scripted bot in headless runs."""
