"""The pieces of the content classifier's training tool that need no model."""

from __future__ import annotations

import numpy as np

from ai.content.lexical import hashed_features
from tools.train.content_classifier import WordFeatures, floor_for, splits


def test_every_model_is_cross_validated_on_the_same_folds() -> None:
    first = splits(20, folds=4, repeats=2, seed=3)
    again = splits(20, folds=4, repeats=2, seed=3)
    assert len(first) == 2
    for repeat, same in zip(first, again, strict=True):
        held = np.concatenate([h for _, h in repeat])
        assert sorted(held) == list(range(20))  # each line held out once a repeat
        for (train, out), (train2, out2) in zip(repeat, same, strict=True):
            assert set(train).isdisjoint(out)
            assert np.array_equal(out, out2)
            assert np.array_equal(train, train2)


def test_the_words_model_learns_which_words_are_unfit() -> None:
    fit = [f"The {w} is {a} today." for w in ("bread", "cake", "pie") for a in ("warm", "fresh")]
    unfit = [f"You {w} {a} worm." for w in ("filthy", "rotten", "vile") for a in ("old", "little")]
    texts = fit + unfit
    y = np.array([0.0] * 6 + [1.0] * 6)
    words = WordFeatures(texts)
    w, b = words.fit(np.arange(12), y, lam=1e-6, steps=200)
    logits = words.score(np.arange(12), w, b)
    assert logits[:6].max() < 0 < logits[6:].min()
    # Each line holds each of its buckets once.
    assert len(hashed_features(texts[0])) == int((words.rows == 0).sum())


def test_the_floor_is_the_highest_that_lets_no_refused_unfit_line_by() -> None:
    y = np.array([1.0, 1.0, 0.0, 0.0])
    mixed = np.array([[3.0, -1.0, -4.0, -4.0]])  # the cut is 0: only the first is refused
    by_words = np.array([[-2.0, -9.0, -8.0, -5.0]])
    layer1 = np.array([False, False, False, False])
    assert floor_for(mixed, by_words, [0.0], y, layer1, lost=0) == -2.0
    # The unfit line layer 1 already refuses does not hold the floor down.
    assert floor_for(mixed, by_words, [0.0], y, np.array([True, False, False, False]), 0) == 0.0
    assert floor_for(mixed, by_words, [0.0], y, layer1, lost=1) == 0.0
