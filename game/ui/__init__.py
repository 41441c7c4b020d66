"""What the player sees and does outside the world: the window, the chat box, the pause
menu, and the view states handed to the renderer."""
