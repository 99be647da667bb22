"""One real TRL GRPOTrainer step on the CPU with the SkillRubric reward (the [rl] extra).

The model and tokenizer are built inside the test (random weights, a word-level vocabulary):
nothing is downloaded.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.rl


def _tokenizer() -> Any:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<pad>", "<eos>", "<unk>", "<answer>", "</answer>", "what", "is", "two", "plus",
             "three", "four", "five", "six", "seven", "?", "the", "answer", "4", "5", "6", "7"]
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<eos>",
                                   unk_token="<unk>")


def test_one_grpo_step_with_the_skillrubric_reward(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    import torch
    from datasets import Dataset
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from agentcredit.rewards.hooks import AsyncSkillRubricReward, SkillRubricReward

    torch.manual_seed(0)
    tokenizer = _tokenizer()
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.eos_token_id))
    data = Dataset.from_dict({
        "prompt": ["what is two plus two ?", "what is two plus three ?"] * 2,
        "ground_truth": ["4", "5"] * 2})
    seen: list[list[Any]] = []

    class Recording(SkillRubricReward):
        def __call__(self, prompts: list[Any], completions: list[Any],
                     **kwargs: Any) -> list[float | None]:
            seen.append(completions)
            return super().__call__(prompts, completions, **kwargs)

    sync_reward = Recording()
    async_reward = AsyncSkillRubricReward()
    async_reward.__name__ = "skillrubric_async"  # type: ignore[misc]
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=4,
        max_completion_length=6, max_steps=1, learning_rate=1e-3, logging_steps=1,
        report_to=[], save_strategy="no", use_cpu=True, bf16=False, fp16=False,
        dataloader_num_workers=0, seed=0)
    trainer = GRPOTrainer(model=model, reward_funcs=[sync_reward, async_reward], args=args,
                          train_dataset=data, processing_class=tokenizer)
    trainer.train()
    logged = [h for h in trainer.state.log_history if "loss" in h]
    assert logged and math.isfinite(logged[0]["loss"])
    assert seen and len(seen[0]) == 4 and all(isinstance(c, str) for c in seen[0])
    assert any(k.startswith("rewards/skillrubric") for k in logged[0])
