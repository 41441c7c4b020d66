"""The peer runtime designs the benchmarks measure the game's runtime against."""
