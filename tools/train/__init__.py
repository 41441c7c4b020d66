"""Training the village adapter: its decision corpus, the LoRA, its GGUF, and how it compares."""
