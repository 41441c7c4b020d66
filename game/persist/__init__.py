"""Saving the village between sessions: the SQLite save file, its lock, and the autosave."""
