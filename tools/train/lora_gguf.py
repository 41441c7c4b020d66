"""Write a PEFT LoRA on Gemma 3 as a GGUF adapter that llama.cpp loads.

The same layout as llama.cpp's own ``convert_lora_to_gguf.py``: for each adapted
weight ``blk.N.<name>.weight`` two tensors, ``.lora_a`` (rank x in) and ``.lora_b``
(out x rank), and the metadata ``general.type = adapter``, ``adapter.type =
lora`` and ``adapter.lora.alpha``. llama.cpp checks each pair against the base
weight's shape when it loads the file.

The tensors are f32, not the converter's f16: the 252 small products llama.cpp adds to
each token then skip converting the activations, and decode ran at 0.931x the base
model's speed against 0.883x with f16, in one run (``tools/train/bench_adapter_speed.py``).
The file is twice the size, 15 MB.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

# Hugging Face module names of Gemma 3 and their GGUF tensor names.
_NAMES = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}
_PEFT = re.compile(r".*layers\.(\d+)\.(self_attn\.\w+|mlp\.\w+)\.lora_([AB])\.default\.weight$")


def gguf_tensor_name(peft_name: str) -> str:
    """``...layers.3.self_attn.q_proj.lora_A.default.weight`` -> ``blk.3.attn_q.weight.lora_a``."""
    match = _PEFT.match(peft_name)
    if match is None or match.group(2) not in _NAMES:
        raise ValueError(f"not a LoRA weight of an adapted Gemma 3 projection: {peft_name}")
    layer, module, part = match.groups()
    return f"blk.{layer}.{_NAMES[module]}.weight.lora_{part.lower()}"


def write_lora_gguf(path: Path, weights: Mapping[str, torch.Tensor], alpha: float) -> None:
    """Write ``weights`` (PEFT parameter name -> tensor) to ``path``."""
    import gguf
    import numpy as np

    writer = gguf.GGUFWriter(str(path), "gemma3")
    writer.add_string(gguf.Keys.General.TYPE, gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, alpha)
    for name in sorted(weights):
        array = weights[name].float().cpu().numpy().astype(np.float32)
        writer.add_tensor(gguf_tensor_name(name), array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
