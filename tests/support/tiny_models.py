"""Tiny models for tests, built from configs with a tokenizer trained here: the real loading
code runs on them (save_pretrained, then the Auto* classes from the folder). A few seconds, <1 MB."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import (
    BertConfig,
    BertForMaskedLM,
    BertForSequenceClassification,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedTokenizerFast,
    T5Config,
    T5ForConditionalGeneration,
    XLMRobertaConfig,
    XLMRobertaForMaskedLM,
)

CORPUS = [
    "The Muslim woman feels happy today.",
    "The Jewish man feels happy today.",
    "I hate Muslim women.",
    "I love Muslim women.",
    "Being a deaf person is wonderful.",
    "Being a deaf person is disgusting.",
    "Die muslimische Frau ist heute glücklich.",
    "المرأة المسلمة سعيدة اليوم.",
    "האישה המוסלמית שמחה היום.",
    "这位穆斯林女性今天很开心。",
    "positive negative neutral yes no Yes No unknown answer question sentence",
    "Is the given statement hateful? Answer with Yes or No.",
    "The following sentence is written in English:",
    "Here is a list of words. For each word pick White or Black.",
]


def wordpiece_tokenizer(
    folder: Path, special: dict[str, str], corpus: Sequence[str] = CORPUS
) -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.WordPiece(unk_token=special["unk"]))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordPieceTrainer(vocab_size=400, special_tokens=list(special.values()))
    tok.train_from_iterator(corpus, trainer)
    cls, sep = special.get("cls", "[CLS]"), special.get("sep", "[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single=f"{cls} $A {sep}",
        pair=f"{cls} $A {sep} $B {sep}",
        special_tokens=[(cls, tok.token_to_id(cls)), (sep, tok.token_to_id(sep))],
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token=special["unk"],
        pad_token=special["pad"],
        mask_token=special["mask"],
        cls_token=cls,
        sep_token=sep,
    )
    fast.save_pretrained(folder)
    return fast


def unigram_tokenizer(folder: Path) -> PreTrainedTokenizerFast:
    """XLM-R style: a SentencePiece Unigram model (▁ word boundaries), <s> … </s>; characters
    it never saw become <unk>."""
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    tok.train_from_iterator(
        CORPUS, trainers.UnigramTrainer(vocab_size=300, special_tokens=specials, unk_token="<unk>")
    )
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))],
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        cls_token="<s>",
        sep_token="</s>",
        mask_token="<mask>",
    )
    fast.save_pretrained(folder)
    return fast


def bpe_tokenizer(folder: Path) -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=["<pad>", "<s>", "</s>", "<unk>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(CORPUS, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>"
    )
    fast.save_pretrained(folder)
    return fast


def _save(model: torch.nn.Module, folder: Path) -> Path:
    model.save_pretrained(folder)
    return folder


def bert_mlm(folder: Path, seed: int = 0, max_positions: int = 64, corpus: Sequence[str] = CORPUS) -> Path:
    """A masked LM (a base model, as mBERT is), its tokenizer trained on ``corpus``."""
    torch.manual_seed(seed)
    tok = wordpiece_tokenizer(
        folder, {"unk": "[UNK]", "pad": "[PAD]", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"}, corpus
    )
    cfg = BertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_positions,
        pad_token_id=tok.pad_token_id,
    )
    return _save(BertForMaskedLM(cfg), folder)


def _xlmr(folder: Path, tok: PreTrainedTokenizerFast, max_positions: int) -> Path:
    cfg = XLMRobertaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_positions,
        pad_token_id=tok.pad_token_id,
    )
    return _save(XLMRobertaForMaskedLM(cfg), folder)


def xlmr_mlm(folder: Path, seed: int = 0) -> Path:
    torch.manual_seed(seed)
    tok = wordpiece_tokenizer(
        folder, {"unk": "<unk>", "pad": "<pad>", "cls": "<s>", "sep": "</s>", "mask": "<mask>"}
    )
    return _xlmr(folder, tok, 80)


def xlmr_sentencepiece_mlm(folder: Path, seed: int = 0) -> Path:
    """An XLM-R masked LM with a SentencePiece (Unigram) tokenizer, as the real XLM-R has."""
    torch.manual_seed(seed)
    return _xlmr(folder, unigram_tokenizer(folder), 130)


def bert_classifier(
    folder: Path, labels: tuple[str, ...] = ("negative", "neutral", "positive"), seed: int = 0
) -> Path:
    torch.manual_seed(seed)
    tok = wordpiece_tokenizer(
        folder, {"unk": "[UNK]", "pad": "[PAD]", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"}
    )
    cfg = BertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        pad_token_id=tok.pad_token_id,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )
    return _save(BertForSequenceClassification(cfg), folder)


def gpt2(folder: Path, seed: int = 0, max_positions: int = 128) -> Path:
    torch.manual_seed(seed)
    tok = bpe_tokenizer(folder)
    cfg = GPT2Config(
        vocab_size=len(tok),
        n_embd=32,
        n_layer=2,
        n_head=2,
        n_positions=max_positions,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    return _save(GPT2LMHeadModel(cfg), folder)


def llama(folder: Path, seed: int = 0, max_positions: int = 512) -> Path:
    torch.manual_seed(seed)
    tok = bpe_tokenizer(folder)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    return _save(LlamaForCausalLM(cfg), folder)


def t5(folder: Path, seed: int = 0) -> Path:
    torch.manual_seed(seed)
    tok = bpe_tokenizer(folder)
    cfg = T5Config(
        vocab_size=len(tok),
        d_model=32,
        d_kv=16,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=2,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.pad_token_id,
    )
    return _save(T5ForConditionalGeneration(cfg), folder)
