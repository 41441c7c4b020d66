"""Playing without a window: a scripted bot plays, and a report comes out."""
