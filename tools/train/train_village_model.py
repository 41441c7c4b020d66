"""Train the village adapter: a LoRA on Gemma 3 270M, from the hand-written corpus.

    make train                                   # the full run (about 25 minutes, 2 cores)
    python tools/train/train_village_model.py --limit 64 --epochs 1 --out /tmp/lora

Steps, each logged with its wall time:

1. Load the packaged GGUF into transformers (dequantised to fp32) and check it against
   llama.cpp on a few prompts: the top next token must agree.
2. Render every corpus record into the exact prompt the game builds
   (:func:`game.dialogue.corpus.record_prompt`); the target is the line and its closing
   quote, tokenised as llama.cpp continues the prompt.
3. Train a LoRA on the attention and MLP projections (never embeddings or the LM head)
   with a fixed seed. The loss is taken only at the line's tokens, and the 262k-token
   vocabulary projection runs only there: it is the largest single cost on a CPU.
4. Write the adapter as GGUF (:mod:`tools.train.lora_gguf`) and a manifest: base model
   sha256, corpus sha256, settings, loss per epoch, held-out loss and wall time.

Needs the ``train`` extra (torch, transformers, peft, gguf); ``make train`` installs it
into a virtual environment of its own, so the game never needs it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch
    from peft import PeftModel
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ai.config import EXAMPLES_PER_BARK, ModelConfig  # noqa: E402
from ai.model import prepare_packaged_model, sha256_file  # noqa: E402
from game.assets import ASSETS_DIR  # noqa: E402
from game.decisions.policy import place_name  # noqa: E402
from game.decisions.situations import Situation, SituationWorld, load_situations  # noqa: E402
from game.dialogue.corpus import (  # noqa: E402
    CorpusRecord,
    CorpusWorld,
    corpus_world,
    game_asks,
    load_corpus,
    record_prompt,
    record_spec,
    split,
    training_line,
)
from game.dialogue.examples import (  # noqa: E402
    ExampleBank,
    example_block,
    record_moment,
)
from game.sim.cast import load_cast  # noqa: E402
from game.sim.events import Trigger  # noqa: E402
from game.sim.level import load_level  # noqa: E402
from tools.train.lora_gguf import write_lora_gguf  # noqa: E402

logger = logging.getLogger("train")

TARGET_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
CHECK_PROMPTS = (
    'Lines spoken by villagers in Millbrook.\nMarta the baker (hit by a crate): "',
    "Note: Brann remembers: the traveller bumped into them.\n"
    'Brann the blacksmith (the traveller walks up): "',
    'Player: "Where is the well?"\nSela the guard (replying to the traveller): "',
)


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything that decides the adapter, written into its manifest."""

    rank: int = 16
    alpha: int = 32
    epochs: int = 1
    batch: int = 8
    lr: float = 3e-4
    warmup_steps: int = 20
    seed: int = 1234
    threads: int = 2
    limit: int = 0
    # The decisions are seen this many times an epoch: with one pass, the village model
    # chose the right action on 75% of the evaluation's situations, against 91% after two.
    decision_repeats: int = 2
    # Corpus lines a bark's prompt shows (game.dialogue.examples), as the game's
    # generation.examples (none by default); with some, one bark in this many is trained
    # without them, so that the adapter still writes when there are none (a trigger the
    # corpus has no lines for).
    examples: int = EXAMPLES_PER_BARK
    bare_one_in: int = 6
    # The projections adapted in every layer. Each costs llama.cpp two small matrix
    # products a token, so fewer decode faster (tools/train/bench_adapter_speed.py).
    modules: tuple[str, ...] = TARGET_MODULES


@dataclass(frozen=True, slots=True)
class Example:
    """One record as tokens: the prompt, then the target (line and closing quote)."""

    prompt: list[int]
    target: list[int]


def corpus_sha256(folder: Path) -> str:
    """One hash over every corpus file, in name order."""
    digest = hashlib.sha256()
    for file in sorted(folder.glob("*.jsonl")):
        digest.update(file.name.encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()


def _examples(
    records: tuple[CorpusRecord, ...],
    tokenizer: PreTrainedTokenizerBase,
    world: CorpusWorld,
    shown: Callable[[CorpusRecord], str],
) -> list[Example]:
    out = []
    for record in records:
        text = record_prompt(record, world, shown(record))
        prompt = tokenizer(text, add_special_tokens=True).input_ids
        target = tokenizer(training_line(record) + '"', add_special_tokens=False).input_ids
        out.append(Example(prompt, target))
    return out


def _decision_examples(
    situations: tuple[Situation, ...], tokenizer: PreTrainedTokenizerBase, world: SituationWorld
) -> list[Example]:
    out = []
    for situation in situations:
        prompt = tokenizer(world.prompt(situation), add_special_tokens=True).input_ids
        target = tokenizer(world.answer(situation), add_special_tokens=False).input_ids
        out.append(Example(prompt, target))
    return out


def _check_against_llama(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, gguf: Path
) -> list[dict[str, object]]:
    """The top next token of each check prompt, from both implementations; they must agree."""
    import llama_cpp
    import numpy as np
    import torch
    from llama_cpp import Llama

    llm = Llama(str(gguf), n_ctx=512, n_threads=1, logits_all=False, verbose=False)
    rows: list[dict[str, object]] = []
    for prompt in CHECK_PROMPTS:
        ids = tokenizer(prompt, add_special_tokens=True).input_ids
        tokens = llm.tokenize(prompt.encode())
        if list(tokens) != list(ids):
            raise SystemExit(f"tokenisers disagree on {prompt!r}: {ids[:8]} vs {tokens[:8]}")
        llm.reset()
        llm.eval(tokens)
        last = llama_cpp.llama_get_logits_ith(llm.ctx, -1)
        theirs = int(np.argmax(np.ctypeslib.as_array(last, shape=(llm.n_vocab(),))))
        with torch.no_grad():
            ours = int(model(torch.tensor([ids])).logits[0, -1].argmax())
        rows.append(
            {
                "prompt": prompt[-40:],
                "transformers": tokenizer.decode([ours]),
                "llama_cpp": tokenizer.decode([theirs]),
                "agree": ours == theirs,
            }
        )
        logger.info(
            "check %r: transformers %r, llama.cpp %r",
            prompt[-30:],
            tokenizer.decode([ours]),
            tokenizer.decode([theirs]),
        )
    del llm
    if not all(row["agree"] for row in rows):
        raise SystemExit("transformers and llama.cpp disagree on the top token: not training")
    return rows


def _batches(examples: list[Example], size: int, rng: random.Random) -> list[list[Example]]:
    """Batches of similar length (less padding), in random order."""
    ordered = sorted(examples, key=lambda e: len(e.prompt) + len(e.target) + rng.random())
    batches = [ordered[i : i + size] for i in range(0, len(ordered), size)]
    rng.shuffle(batches)
    return batches


def _loss(model: PeftModel, batch: list[Example], pad_id: int) -> torch.Tensor:
    """Mean cross-entropy over the target tokens; the LM head runs only there."""
    import torch

    length = max(len(e.prompt) + len(e.target) for e in batch)
    ids = torch.full((len(batch), length), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), length), dtype=torch.long)
    rows, cols, labels = [], [], []
    for i, example in enumerate(batch):
        seq = example.prompt + example.target
        ids[i, : len(seq)] = torch.tensor(seq)
        mask[i, : len(seq)] = 1
        start = len(example.prompt)
        for j, token in enumerate(example.target):
            rows.append(i)
            cols.append(start + j - 1)  # the position whose output predicts this token
            labels.append(token)
    body = model.base_model.model.model
    hidden = body(input_ids=ids, attention_mask=mask).last_hidden_state
    picked = hidden[torch.tensor(rows), torch.tensor(cols)]
    logits = model.base_model.model.lm_head(picked)
    return torch.nn.functional.cross_entropy(logits.float(), torch.tensor(labels))


def _evaluate(model: PeftModel, examples: list[Example], pad_id: int, size: int) -> float:
    import torch

    if not examples:
        return float("nan")
    total = weight = 0.0
    with torch.no_grad():
        for i in range(0, len(examples), size):
            batch = examples[i : i + size]
            n = sum(len(e.target) for e in batch)
            total += float(_loss(model, batch, pad_id)) * n
            weight += n
    return total / weight


def train(args: argparse.Namespace) -> dict[str, object]:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    settings = Settings(
        rank=args.rank,
        alpha=args.rank * 2,
        epochs=args.epochs,
        batch=args.batch,
        lr=args.lr,
        seed=args.seed,
        threads=args.threads,
        limit=args.limit,
        decision_repeats=args.decision_repeats,
        examples=args.examples,
        modules=args.modules,
    )
    began = time.perf_counter()
    torch.manual_seed(settings.seed)
    torch.set_num_threads(settings.threads)
    rng = random.Random(settings.seed)

    cast = load_cast()
    level = load_level()
    world = corpus_world(cast, level)
    corpus_dir = Path(args.corpus)
    records = load_corpus(cast, corpus_dir)
    # Only what the game can ask: a bark written with memories its prompt never carries
    # would teach a line for a prompt that never comes.
    records = tuple(r for r in records if game_asks(r))
    train_records, held_records = split(records)
    if settings.limit:
        train_records = train_records[: settings.limit]
        held_records = held_records[: max(8, settings.limit // 8)]
    logger.info(
        "corpus: %d records, %d for training, %d held out",
        len(records),
        len(train_records),
        len(held_records),
    )
    decisions_path = Path(args.decisions)
    situations: tuple[Situation, ...] = ()
    if decisions_path.name:
        places = [place_name(d.label) for d in level.decor if d.label]
        situations = load_situations(decisions_path, cast, places)
    train_situations = tuple(s for s in situations if not s.held_out)
    held_situations = tuple(s for s in situations if s.held_out)
    if settings.limit:
        train_situations = train_situations[: settings.limit]
        held_situations = held_situations[: max(8, settings.limit // 8)]
    logger.info(
        "decisions: %d situations, %d for training, %d held out",
        len(situations),
        len(train_situations),
        len(held_situations),
    )

    gguf = prepare_packaged_model(ModelConfig())
    base_sha = sha256_file(gguf)
    logger.info("base model %s (sha256 %s)", gguf, base_sha[:12])
    t = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.float32
    )
    load_s = time.perf_counter() - t
    logger.info("loaded into transformers in %.0f s", load_s)
    checks = _check_against_llama(model, tokenizer, gguf)

    model = get_peft_model(
        model,
        LoraConfig(
            r=settings.rank,
            lora_alpha=settings.alpha,
            lora_dropout=0.0,
            target_modules=list(settings.modules),
            bias="none",
        ),
    )
    decision_world = SituationWorld.of(cast)
    bank = ExampleBank(load_corpus(cast, corpus_dir), world)
    logger.info("example bank: %d lines", len(bank))
    shown_rng = random.Random(settings.seed + 1)

    def shown(record: CorpusRecord) -> str:
        if not settings.examples or record.trigger is Trigger.CHAT:
            return ""
        if shown_rng.randrange(settings.bare_one_in) == 0:
            return ""
        moment = record_moment(record, world)
        spec = record_spec(record, world)
        return example_block(bank.draw(moment, settings.examples, shown_rng, spec))

    train_examples = _examples(train_records, tokenizer, world, shown)
    train_examples += settings.decision_repeats * _decision_examples(
        train_situations, tokenizer, decision_world
    )
    held_examples = _examples(held_records, tokenizer, world, shown)
    held_decisions = _decision_examples(held_situations, tokenizer, decision_world)
    pad_id = int(tokenizer.pad_token_id or 0)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=settings.lr, weight_decay=0.0)
    steps_total = settings.epochs * math.ceil(len(train_examples) / settings.batch)

    def schedule(step: int) -> float:
        if step < settings.warmup_steps:
            return (step + 1) / settings.warmup_steps
        return 0.5 * (1 + math.cos(math.pi * step / max(1, steps_total)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    held_before = _evaluate(model, held_examples, pad_id, 16)
    decisions_before = _evaluate(model, held_decisions, pad_id, 16) if held_decisions else 0.0
    logger.info(
        "held-out loss before training: lines %.3f, decisions %.3f",
        held_before,
        decisions_before,
    )
    epochs: list[dict[str, float]] = []
    step = 0
    for epoch in range(settings.epochs):
        model.train()
        t = time.perf_counter()
        total = 0.0
        batches = _batches(train_examples, settings.batch, rng)
        for i, batch in enumerate(batches):
            loss = _loss(model, batch, pad_id)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            total += float(loss)
            step += 1
            if i % 20 == 0:
                logger.info(
                    "epoch %d step %d/%d loss %.3f (%.1f s/step)",
                    epoch + 1,
                    i,
                    len(batches),
                    float(loss),
                    (time.perf_counter() - t) / (i + 1),
                )
        model.eval()
        held = _evaluate(model, held_examples, pad_id, 16)
        held_d = _evaluate(model, held_decisions, pad_id, 16) if held_decisions else 0.0
        epochs.append(
            {
                "epoch": epoch + 1,
                "train_loss": round(total / len(batches), 4),
                "held_out_loss": round(held, 4),
                "held_out_decision_loss": round(held_d, 4),
                "seconds": round(time.perf_counter() - t, 1),
            }
        )
        logger.info(
            "epoch %d: train loss %.3f, held-out loss %.3f, %.0f s",
            epoch + 1,
            total / len(batches),
            held,
            time.perf_counter() - t,
        )

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    adapter = out / "village-lora.gguf"
    weights = {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}
    write_lora_gguf(adapter, weights, alpha=float(settings.alpha))
    manifest = {
        "version": 1,
        "adapter": adapter.name,
        "adapter_sha256": sha256_file(adapter),
        "base_model": gguf.name,
        "base_sha256": base_sha,
        "corpus_sha256": corpus_sha256(corpus_dir),
        "prompt_style": "village",
        "records": {
            "train": len(train_examples),
            "held_out": len(held_examples),
            "decisions_train": len(train_situations),
            "decisions_held_out": len(held_decisions),
        },
        "decisions_sha256": sha256_file(decisions_path) if situations else "",
        "settings": asdict(settings),
        "target_modules": list(settings.modules),
        "held_out_loss_before": round(held_before, 4),
        "held_out_decision_loss_before": round(decisions_before, 4),
        "epochs": epochs,
        "llama_check": checks,
        "transformers_load_s": round(load_s, 1),
        "wall_s": round(time.perf_counter() - began, 1),
    }
    (out / "village-lora.json").write_text(json.dumps(manifest, indent=2) + "\n")
    logger.info(
        "wrote %s (%d kB) in %.0f s",
        adapter,
        adapter.stat().st_size // 1024,
        time.perf_counter() - began,
    )
    return manifest


def _modules(text: str) -> tuple[str, ...]:
    """``--modules q_proj,v_proj``: the projections named, in the order of TARGET_MODULES."""
    names = {name.strip() for name in text.split(",") if name.strip()}
    unknown = names - set(TARGET_MODULES)
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"name projections among {', '.join(TARGET_MODULES)}; got {text!r}"
        )
    return tuple(name for name in TARGET_MODULES if name in names)


def main() -> None:
    defaults = Settings()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(ROOT / "assets" / "models"))
    parser.add_argument("--corpus", default=str(ASSETS_DIR / "dialogue" / "corpus"))
    parser.add_argument(
        "--decisions",
        default=str(ASSETS_DIR / "dialogue" / "decisions" / "corpus.jsonl"),
        help="decision situations to train on ('' for none)",
    )
    parser.add_argument("--rank", type=int, default=defaults.rank)
    parser.add_argument("--epochs", type=int, default=defaults.epochs)
    parser.add_argument("--batch", type=int, default=defaults.batch)
    parser.add_argument("--lr", type=float, default=defaults.lr)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--threads", type=int, default=defaults.threads)
    parser.add_argument("--limit", type=int, default=0, help="train on this many records only")
    parser.add_argument("--decision-repeats", type=int, default=defaults.decision_repeats)
    parser.add_argument(
        "--examples",
        type=int,
        default=defaults.examples,
        help="corpus lines a bark's prompt shows (as generation.examples)",
    )
    parser.add_argument(
        "--modules",
        type=_modules,
        default=defaults.modules,
        help=f"projections to adapt, comma-separated among {','.join(TARGET_MODULES)}",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    train(args)


if __name__ == "__main__":
    main()
