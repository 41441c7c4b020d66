"""What villagers decide to do: the options open to them, the rules, the model's choice."""
